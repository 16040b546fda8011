/**
 * `rerun` of a run read through a mapping profile: the rows of its report (the customer's own columns) go through
 * the profile the run's journal recorded, not the profile file as edited since; `--fixed` corrections in the
 * customer's columns are matched by `_row` and checked against the whole file through the profile (an alternate
 * key still repeating another row stays invalid); the rerun's report keeps the source's columns and row numbers;
 * undo of the rerun, then of the run, takes the records back.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import {
  cp1252,
  put,
  readJournalLines,
  readReport,
  readSummary,
  runCli,
  startTestSandbox,
  tempDir
} from "../import/support.js"

const clientes = cp1252(
  [
    "Relação de clientes ativos - Janeiro/2026;;;;;;;;",
    "Nome;CNPJ;Endereço;Telefone;E-mail;Ativo;Vendedor;Limite de crédito;Observações",
    "Padaria São João;11.222.333/0001-81;Rua Augusta, 100;(11) 3333-4444;contato@saojoao.com.br;Sim;Ana;5.000,00;",
    "Açougue Boa Vista;45.723.174/0001-10;Av. Paulista, 900;(11) 2222-1111;compras arroba boavista;Não;Bruno;;Inadimplente",
    "Padaria São João;11222333000181;Rua Augusta, 100;(11) 3333-4444;;Sim;Ana;;",
    "Total de clientes: 3;;;;;;;;"
  ].join("\r\n") + "\r\n"
)

const profile = {
  resource: "customers",
  headerRow: 2,
  columns: {
    Nome: "name",
    CNPJ: "cpfCnpj",
    "Endereço": "address",
    Telefone: "phoneNumber",
    "E-mail": "email",
    Ativo: "active",
    Vendedor: "ignore",
    "Limite de crédito": "ignore",
    "Observações": "ignore"
  },
  fields: { externalId: { compose: "{CNPJ}" } },
  alternateKeys: { cpfCnpj: "invalid" }
}

describe("rerun of a mapped run", () => {
  it.scopedLive(
    "--fixed in the customer's columns, through the recorded profile; report in their columns; undo",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const apiKey = sandbox.accounts[0]!.apiKey
        const dir = yield* tempDir
        put(dir, "clientes.csv", clientes)
        const profileFile = put(dir, "clientes.map.json", JSON.stringify(profile, null, 2))
        const imported = yield* runCli(
          ["import", "customers", "clientes.csv", "--map", "clientes.map.json", "--out", "runs/import"],
          sandbox,
          dir
        )
        assert.strictEqual(imported.code, 1, imported.stderr)
        const first = readReport(Path.join(dir, "runs/import"))
        assert.deepStrictEqual(first.map((r) => `${r._row}:${r._status}`), ["3:created", "4:invalid", "5:invalid"])
        assert.match(first[1]!._error!, /email/)
        const sha = readSummary(Path.join(dir, "runs/import")).mapping.sha256

        // The profile file is edited after the run (the e-mail no longer mapped): the rerun must not read it.
        writeFileSync(profileFile, JSON.stringify({ ...profile, columns: { ...profile.columns, "E-mail": "ignore" } }))

        // The corrections, in the customer's own columns and encoding, matched by the report's _row. Row 5 keeps the
        // CNPJ of row 3: it stays invalid, checked against the whole file through the profile.
        put(
          dir,
          "correcoes.csv",
          cp1252("_row;Nome;E-mail\r\n4;;compras@boavista.com.br\r\n5;Padaria São João (filial);\r\n")
        )
        const rerun = yield* runCli(
          ["rerun", "runs/import", "--fixed", "correcoes.csv", "--out", "runs/rerun"],
          sandbox,
          dir
        )
        assert.strictEqual(rerun.code, 1, rerun.stderr)
        const report = readReport(Path.join(dir, "runs/rerun"))
        assert.deepStrictEqual(report.map((r) => `${r._row}:${r._status}`), ["4:created", "5:invalid"])
        assert.match(report[1]!._error!, /cpfCnpj: "11222333000181" repeats row 3/)
        // The customer's columns and cells, their row numbers.
        assert.strictEqual(report[0]!["Vendedor"], "Bruno")
        assert.strictEqual(report[0]!["E-mail"], "compras@boavista.com.br")
        assert.strictEqual(report[0]!["Observações"], "Inadimplente")
        assert.strictEqual(report[1]!["Nome"], "Padaria São João (filial)")
        const header = readFileSync(Path.join(dir, "runs/rerun/report.csv"), "utf8").split(/\r?\n/)[0]!
        assert.include(header, "Nome,CNPJ,Endereço,Telefone,E-mail,Ativo,Vendedor,Limite de crédito,Observações")

        // What reached the server: the mapped fields with the e-mail (the recorded profile), nothing unmapped.
        const records = yield* sandbox.control.records(apiKey, "customers")
        const acougue = records.find((r) => r.externalId === "45.723.174/0001-10")!
        assert.strictEqual(acougue.description, "Açougue Boa Vista")
        assert.deepStrictEqual(acougue.email, ["compras@boavista.com.br"])
        assert.strictEqual(acougue.active, false)
        assert.notMatch(JSON.stringify(records), /Bruno|Inadimplente|filial/)
        assert.strictEqual(records.length, 2)
        // The rerun records the same profile, content and hash.
        const journal = readJournalLines(Path.join(dir, "runs/rerun"))[0]!
        assert.strictEqual(journal.read.map.sha256, sha)
        assert.deepStrictEqual(journal.read.map.profile, profile)
        assert.strictEqual(readSummary(Path.join(dir, "runs/rerun")).mapping.sha256, sha)

        // A corrections file without _row is refused: the key is composed from the customer's columns.
        put(dir, "sem-row.csv", "Nome;CNPJ;E-mail\r\nX;45.723.174/0001-10;a@b.com\r\n")
        const noRow = yield* runCli(["rerun", "runs/import", "--fixed", "sem-row.csv", "--dry-run"], sandbox, dir)
        assert.strictEqual(noRow.code, 2, noRow.stderr)
        assert.match(noRow.stderr, /needs a _row column \(the run read its file through the mapping profile/)

        // Undo of the rerun takes back its record; undo of the run, the rest.
        const undoRerun = yield* runCli(["undo", "runs/rerun", "--out", "runs/undo-rerun"], sandbox, dir)
        assert.strictEqual(undoRerun.code, 0, undoRerun.stderr)
        assert.deepStrictEqual(
          (yield* sandbox.control.records(apiKey, "customers")).map((r) => r.externalId),
          ["11.222.333/0001-81"]
        )
        const undoRun = yield* runCli(["undo", "runs/import", "--out", "runs/undo-import"], sandbox, dir)
        assert.strictEqual(undoRun.code, 0, undoRun.stderr)
        assert.strictEqual((yield* sandbox.control.records(apiKey, "customers")).length, 0)
      }),
    180_000
  )
})
