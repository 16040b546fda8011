/**
 * `submit import --map` and `submit onboard --map` on the fleet (PostgreSQL, and Redis where redis-server is
 * installed, as the other fleet tests): the job's stored spec carries the
 * profile's content and sha256, the worker reads the customer's file through that copy (not the profile file, edited
 * after the submit), a file split into parts is split in the customer's columns and each part read through the
 * same profile, and the fetched run's journal and summary record the profile. The fleet's result equals a single
 * `import --map` of the same file into another account.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { acmeFleet, availableBackends, lastJson, startFleetBackend, startWorker, withStore } from "../fleet/support.js"
import { readJournalLines, readReport, readSummary } from "../import/support.js"
import { brazilianList, cnpj } from "./support.js"

const accounts = [
  { apiKey: "fleet-key", apiToken: "fleet-token" },
  { apiKey: "alone-key", apiToken: "alone-token" }
]

const header = "Nome;CNPJ;Endereço;Ativo;Vendedor;Observações"
const profile = {
  resource: "customers",
  columns: {
    Nome: "name",
    CNPJ: "cpfCnpj",
    "Endereço": "address",
    Ativo: "active",
    Vendedor: "ignore",
    "Observações": "ignore"
  },
  fields: { externalId: { compose: "{CNPJ}" }, active: { values: { Sim: "true", "Não": "false" } } },
  alternateKeys: { cpfCnpj: "invalid" }
}

/** A fleet on a throwaway store of `backend` with account `acme` on a fresh sandbox. */
const fleetWithAcme = (backend: (typeof availableBackends)[number]["backend"]) =>
  Effect.gen(function*() {
    const { url } = yield* startFleetBackend(backend)
    return { ...(yield* acmeFleet(url, { accounts })), url }
  })

/** The spec a job was stored with, read through the store's port (either backend). */
const storedSpec = (url: string, job: string) =>
  Effect.map(withStore(url, (store) => store.job(job)), (row) => row.spec)

/** Each test once per backend (`$backend` in its name). */
const each = it.scopedLive.each(availableBackends)

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")

describe("the fleet with a mapping profile", () => {
  each(
    "submit import --map: the stored profile is applied to every part, recorded, and equals a single import --map ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { dir, env, run, sandbox, url } = yield* fleetWithAcme(b.backend)
        // 10 customers in parts of 4; row 10 repeats row 3's CNPJ (another part): invalid, as a single run says.
        const rows = Array.from({ length: 10 }, (_, i) =>
          `Cliente ${i};${cnpj(i === 7 ? 1 : i + 1)};Rua ${i};${i % 2 === 0 ? "Sim" : "Não"};Ana;nota interna ${i}`)
        const file = Path.join(dir, "clientes.csv")
        writeFileSync(file, brazilianList("Clientes - Janeiro/2026", header, rows))
        const profileFile = Path.join(dir, "clientes.map.json")
        const profileText = JSON.stringify(profile, null, 2)
        writeFileSync(profileFile, profileText)

        const submitted = yield* run([
          "submit",
          "import",
          "customers",
          file,
          "--account",
          "acme",
          "--map",
          profileFile,
          "--chunk-rows",
          "4",
          "--json"
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string
        assert.strictEqual(lastJson(submitted.stdout).chunks, 3)
        assert.strictEqual(lastJson(submitted.stdout).invalid, 1)
        // The stored spec carries the profile's content and hash.
        const spec = (yield* storedSpec(url, job)) as { read: { map: { sha256: string; profile: unknown } } }
        assert.strictEqual(spec.read.map.sha256, sha256(profileText))
        assert.deepStrictEqual(spec.read.map.profile, profile)

        // The profile file is edited before any worker runs: the job keeps its copy.
        writeFileSync(profileFile, JSON.stringify({ ...profile, columns: { ...profile.columns, Nome: "ignore" } }))
        const worker = yield* startWorker(["--egress-id", "wmap", "--jobs", "3"], env)
        const waited = yield* run(["wait", job])
        assert.strictEqual(waited.code, 1, `${waited.stderr}\n${worker.stderr()}`)
        const fleetDir = Path.join(dir, "fleet")
        assert.strictEqual((yield* run(["fetch", job, "--out", fleetDir])).code, 0)

        // The same file, imported alone into the other account with the profile as it was.
        writeFileSync(profileFile, profileText)
        const aloneDir = Path.join(dir, "alone")
        const alone = yield* run(
          ["import", "customers", file, "--map", profileFile, "--out", aloneDir, "--base-url", sandbox.url],
          { FSM_API_KEY: accounts[1]!.apiKey, FSM_API_TOKEN: accounts[1]!.apiToken }
        )
        assert.strictEqual(alone.code, 1, alone.stderr)
        const records = (key: string) =>
          Effect.map(
            sandbox.control.records(key, "customers"),
            (rs) =>
              rs.map((c) =>
                `${c.externalId}|${c.description}|${c.cpfCnpj}|${c.active}`
              ).sort()
          )
        const fleetRecords = yield* records(accounts[0]!.apiKey)
        assert.strictEqual(fleetRecords.length, 9)
        assert.include(fleetRecords, `${cnpj(2)}|Cliente 1|${cnpj(2).replace(/\D/g, "")}|false`)
        assert.deepStrictEqual(fleetRecords, yield* records(accounts[1]!.apiKey))
        const everything = JSON.stringify(yield* sandbox.control.records(accounts[0]!.apiKey, "customers"))
        assert.notMatch(everything, /nota interna|"Ana"/)

        // The fetched report: the customer's columns and row numbers, as the single run's.
        const rowsOf = (runDir: string) =>
          readReport(runDir).map((r) => [r._row, r._status, r._error, r["Nome"], r["CNPJ"], r["Vendedor"]])
        const fleetRows = rowsOf(fleetDir)
        assert.deepStrictEqual(fleetRows.map((r) => r[0]), Array.from({ length: 10 }, (_, i) => String(i + 3)))
        assert.strictEqual(fleetRows[7]![1], "invalid")
        assert.include(fleetRows[7]![2], "repeats row 3")
        assert.deepStrictEqual(fleetRows, rowsOf(aloneDir))
        // Its journal and summary record the profile, with the hash of the submitted bytes.
        assert.strictEqual(readJournalLines(fleetDir)[0]!.read.map.sha256, sha256(profileText))
        assert.strictEqual(readSummary(fleetDir).mapping.sha256, sha256(profileText))
      }),
    { timeout: 300_000 }
  )

  each(
    "submit onboard --map: the worker onboards the customer's folder through the profiles the job stored ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { dir, env, run, sandbox, url } = yield* fleetWithAcme(b.backend)
        const input = Path.join(dir, "cliente-acme")
        mkdirSync(input)
        writeFileSync(
          Path.join(input, "clientes.csv"),
          brazilianList("Clientes", header, [`Padaria;${cnpj(5)};Rua A;Sim;Ana;`, `Açougue;${cnpj(6)};Rua B;Não;Bia;x`])
        )
        const profileFile = Path.join(dir, "clientes.map.json")
        const profileText = JSON.stringify({ ...profile, sheet: "clientes" })
        writeFileSync(profileFile, profileText)
        const submitted = yield* run([
          "submit",
          "onboard",
          input,
          "--account",
          "acme",
          "--map",
          `customers=${profileFile}`,
          "--json"
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string
        assert.strictEqual(
          ((yield* storedSpec(url, job)) as { maps: Array<{ sha256: string }> }).maps[0]!.sha256,
          sha256(profileText)
        )
        writeFileSync(profileFile, "{ not a profile any more")
        const worker = yield* startWorker(["--egress-id", "wmap2", "--jobs", "1"], env)
        const waited = yield* run(["wait", job])
        assert.strictEqual(waited.code, 0, `${waited.stderr}\n${worker.stderr()}`)
        const records = yield* sandbox.control.records(accounts[0]!.apiKey, "customers")
        assert.deepStrictEqual(records.map((c) => `${c.description}|${c.active}`).sort(), [
          "Açougue|false",
          "Padaria|true"
        ])
        const fleetDir = Path.join(dir, "fleet")
        assert.strictEqual((yield* run(["fetch", job, "--out", fleetDir])).code, 0)
        const summary = JSON.parse(readFileSync(Path.join(fleetDir, "summary.json"), "utf8"))
        assert.strictEqual(summary.steps[0].mapping.sha256, sha256(profileText))
      }),
    { timeout: 300_000 }
  )
})
