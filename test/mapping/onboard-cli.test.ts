/**
 * `onboard --map`: a customer's own folder (their `clientes.csv` in Windows-1252 with `;`, a title row, Portuguese
 * headers, a footer and internal columns; their `segmentos.csv`) onboarded through one profile per resource, each
 * naming the customer's file in its `sheet`. Each step's journal and summary record its profile; a resume applies
 * the recorded copy, not the file as edited since; undo of the onboarding takes it all back.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { cp1252, readJournalLines, spawnCli, until } from "../import/support.js"
import { put, readJson, readReport, runCli, startTestSandbox, statuses, tempDir } from "../onboard/support.js"
import { brazilianList, cnpj } from "./support.js"

const title = "Relação de clientes ativos - Janeiro/2026"
const header = "Nome;CNPJ;Endereço;Ativo;Segmento;Vendedor;Limite de crédito;Observações"

const customersProfile = {
  resource: "customers",
  sheet: "clientes",
  columns: {
    Nome: "name",
    CNPJ: "cpfCnpj",
    "Endereço": "address",
    Ativo: "active",
    Segmento: "segmentDescription",
    Vendedor: "ignore",
    "Limite de crédito": "ignore",
    "Observações": "ignore"
  },
  fields: { externalId: { compose: "{CNPJ}" }, active: { values: { Sim: "true", "Não": "false" } } },
  alternateKeys: { cpfCnpj: "invalid" }
}
const segmentsProfile = {
  resource: "segments",
  sheet: "segmentos.csv",
  columns: { "Descrição do segmento": "description" }
}

/** The customer's folder: their files and profiles, byte for byte. */
const customerFolder = (dir: string, customers: ReadonlyArray<string>) => {
  const input = Path.join(dir, "cliente-acme")
  mkdirSync(input)
  put(input, "segmentos.csv", cp1252("Descrição do segmento;Responsável\r\nVarejo;Ana\r\nAtacado;Bruno\r\n"))
  put(input, "clientes.csv", brazilianList(title, header, customers))
  writeFileSync(Path.join(dir, "clientes.map.json"), JSON.stringify(customersProfile, null, 2))
  writeFileSync(Path.join(dir, "segmentos.map.json"), JSON.stringify(segmentsProfile, null, 2))
  return input
}

describe("onboard --map", () => {
  it.scopedLive(
    "one profile per step: the customer's own files onboarded, recorded per step, undone",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const input = customerFolder(dir, [
          "Padaria São João;11.222.333/0001-81;Rua Augusta, 100;Sim;Varejo;Ana;5.000,00;",
          "Açougue Boa Vista;45.723.174/0001-10;Av. Paulista, 900;Não;Atacado;Bruno;;Inadimplente desde março",
          "Padaria São João;11222333000181;Rua Augusta, 100;Sim;Varejo;Ana;;"
        ])
        const runDir = Path.join(dir, "run")
        const run = yield* runCli(
          ["onboard", input, "--map", "customers=clientes.map.json", "--map", "segmentos.map.json", "--out", runDir],
          dir,
          sandbox
        )
        assert.strictEqual(run.code, 1, run.stderr)
        assert.match(run.stderr, /segments \(2 rows\) → customers \(3\)/)
        assert.match(run.stderr, /customers: mapping .*clientes\.map\.json/)

        // On the server: what the profiles map, with the segment found by its description; nothing unmapped.
        const customers = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
        const segments = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "segments")
        assert.deepStrictEqual(segments.map((s) => s.description).sort(), ["Atacado", "Varejo"])
        assert.deepStrictEqual(
          customers.map((c) => `${c.externalId}|${c.description}|${c.cpfCnpj}|${c.active}`).sort(),
          [
            "11.222.333/0001-81|Padaria São João|11222333000181|true",
            "45.723.174/0001-10|Açougue Boa Vista|45723174000110|false"
          ]
        )
        const varejo = segments.find((s) => s.description === "Varejo")!
        assert.strictEqual(customers.find((c) => c.description === "Padaria São João")!.segmentId, varejo.id)
        const sent = JSON.stringify(customers)
        for (const unsent of ["Ana", "5.000,00", "Inadimplente", "Total de clientes"]) assert.notInclude(sent, unsent)

        // The report in the customer's own columns and rows; the duplicate refused before sending; footer skipped.
        const report = readReport(Path.join(runDir, "customers"))
        assert.deepStrictEqual(statuses(report), ["3:created", "4:created", "5:invalid"])
        assert.strictEqual(report[0]!["Vendedor"], "Ana")
        assert.match(report[2]!._error!, /repeats row 3/)

        // Each step records its profile: the onboarding's summary, the step's summary and journal.
        const summary = readJson(Path.join(runDir, "summary.json"))
        const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")
        const byResource = Object.fromEntries(summary.steps.map((s: any) => [s.resource, s]))
        assert.strictEqual(byResource.customers.mapping.sha256, sha(Path.join(dir, "clientes.map.json")))
        assert.strictEqual(byResource.segments.mapping.sha256, sha(Path.join(dir, "segmentos.map.json")))
        assert.strictEqual(summary.settings.maps.length, 2)
        const step = readJson(Path.join(runDir, "customers", "summary.json"))
        assert.strictEqual(step.mapping.sha256, byResource.customers.mapping.sha256)
        assert.deepStrictEqual(step.mapping.skippedRows.map((r: any) => r.row), [1, 6])
        const journalHeader = readJournalLines(Path.join(runDir, "customers"))[0]!
        assert.deepStrictEqual(journalHeader.read.map.profile, customersProfile)

        // Undo of the onboarding takes back both steps.
        const undo = yield* runCli(["undo", runDir, "--out", Path.join(dir, "undo")], dir, sandbox)
        assert.strictEqual(undo.code, 0, undo.stderr)
        assert.strictEqual((yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")).length, 0)
        assert.strictEqual((yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "segments")).length, 0)
      }),
    180_000
  )

  it.scopedLive(
    "a profile for a step the folder lacks, or a RESOURCE= that contradicts it, is refused before sending",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const input = customerFolder(dir, ["Padaria São João;11.222.333/0001-81;Rua Augusta, 100;Sim;Varejo;Ana;;"])
        const wrong = yield* runCli(["onboard", input, "--map", "users=clientes.map.json"], dir, sandbox)
        assert.strictEqual(wrong.code, 2, wrong.stderr)
        assert.match(wrong.stderr, /clientes\.map\.json.*the profile is for customers, not users/)
        // Without the customers profile, clientes.csv names no resource.
        const unnamed = yield* runCli(["onboard", input, "--map", "segmentos.map.json"], dir, sandbox)
        assert.strictEqual(unnamed.code, 2, unnamed.stderr)
        assert.match(unnamed.stderr, /"clientes\.csv".*is not a resource name/)
        writeFileSync(Path.join(dir, "users.map.json"), JSON.stringify({ resource: "users", columns: {} }))
        const missing = yield* runCli(
          ["onboard", input, "--map", "clientes.map.json", "--map", "segmentos.map.json", "--map", "users.map.json"],
          dir,
          sandbox
        )
        assert.strictEqual(missing.code, 2, missing.stderr)
        assert.match(missing.stderr, /users\.map\.json.*a profile for users, but .* has no users sheet or file/)
        assert.strictEqual((yield* sandbox.control.requests).filter((e) => e.method !== "GET").length, 0)
      }),
    120_000
  )

  it.scopedLive(
    "resume applies the profile the onboarding recorded, not the file as edited since",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 100 } })
        const dir = yield* tempDir
        const rows = Array.from({ length: 30 }, (_, i) => `Cliente ${i};${cnpj(i + 1)};Rua ${i};Sim;Varejo;Ana;;`)
        const input = customerFolder(dir, rows)
        const runDir = Path.join(dir, "run")
        const args = ["onboard", input, "--map", "clientes.map.json", "--map", "segmentos.map.json", "--out", runDir]
        const first = spawnCli([...args, "--concurrency", "2"], sandbox, dir)
        const journal = Path.join(runDir, "customers", "journal.ndjson")
        const done = () => (existsSync(journal) ? readFileSync(journal, "utf8").split("\"done\"").length - 1 : 0)
        yield* until(() => done() >= 5, 60_000)
        first.child.kill("SIGKILL")
        yield* Effect.promise(() => first.exit)

        // The profile edited on disk meanwhile (names no longer mapped): the resume must not see it.
        writeFileSync(
          Path.join(dir, "clientes.map.json"),
          JSON.stringify({ ...customersProfile, columns: { ...customersProfile.columns, Nome: "ignore" } })
        )
        const resumed = yield* runCli(["resume", runDir], dir, sandbox)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        const customers = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
        assert.strictEqual(customers.length, 30)
        assert.deepStrictEqual(
          customers.map((c) => c.description).sort(),
          rows.map((r) => r.split(";")[0]).sort()
        )
        assert.deepStrictEqual(
          statuses(readReport(Path.join(runDir, "customers"))).filter((s) => !s.endsWith(":created")),
          []
        )
      }),
    180_000
  )
})
