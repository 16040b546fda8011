/**
 * The walkthrough of docs/mapping.md, as a user runs it: a customer's messy file (Windows-1252, `;`, a title row,
 * Portuguese headers, Sim/Não, internal columns, a Total footer, a duplicate customer) to a clean dry run with one
 * `map` and one edit of the profile, no edit of the spreadsheet; then the import, read back from the sandbox.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { cp1252, put, readReport, readSummary, runCli, startTestSandbox, tempDir } from "../import/support.js"

/** The file of docs/mapping.md, byte for byte as Excel in Brazil saves it. */
export const walkthroughFile = cp1252(
  [
    "Relação de clientes ativos - Janeiro/2026;;;;;;;;",
    "Nome;CNPJ;Endereço;Telefone;E-mail;Ativo;Vendedor;Limite de crédito;Observações",
    "Padaria São João;11.222.333/0001-81;Rua Augusta, 100 - Consolação;(11) 3333-4444;contato@saojoao.com.br;Sim;Ana;5.000,00;",
    "Açougue Boa Vista;45.723.174/0001-10;Av. Paulista, 900;(11) 2222-1111;;Não;Bruno;;Inadimplente desde março",
    "Padaria São João;11222333000181;Rua Augusta, 100;(11) 3333-4444;;Sim;Ana;;",
    "Total de clientes: 3;;;;;;;;"
  ].join("\r\n") + "\r\n"
)

describe("docs/mapping.md walkthrough", () => {
  it.scopedLive("map → one edit → validate → dry run → import: nothing unmapped sent, footer and title skipped, duplicate refused", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      put(dir, "clientes.csv", walkthroughFile)

      // 1. map proposes a profile.
      const map = yield* runCli(["map", "customers", "clientes.csv", "--out", "clientes.map.json"], undefined, dir)
      assert.strictEqual(map.code, 0, map.stderr)
      assert.match(map.stdout, /header on row 2/)
      assert.match(map.stdout, /Nome\s+name\s+header "Nome"\s+high/)
      assert.match(map.stdout, /Limite de crédito\s+ignore/)
      assert.match(map.stdout, /externalId: no key column; proposed from "CNPJ"/)
      const profilePath = Path.join(dir, "clientes.map.json")
      const profile = JSON.parse(readFileSync(profilePath, "utf8"))
      assert.match(profile.$schema, /schemas\/mapping-profile\.schema\.json$/)
      assert.strictEqual(profile.columns["Vendedor"], "ignore")
      assert.strictEqual(profile.columns["Observações"], "note")
      assert.deepStrictEqual(profile.alternateKeys, { cpfCnpj: "invalid" })
      // --json: the proposal as one JSON object on the last line of stdout.
      const json = yield* runCli(["map", "customers", "clientes.csv", "--json"], undefined, dir)
      assert.strictEqual(json.code, 0, json.stderr)
      const last = JSON.parse(json.stdout.trim().split("\n").at(-1)!)
      assert.strictEqual(last.headerRow, 2)
      assert.deepStrictEqual(last.profile.columns, { ...profile.columns })

      // 2. The one edit: "Observações" holds internal notes ("Inadimplente…"), not the customer's note.
      profile.columns["Observações"] = "ignore"
      writeFileSync(profilePath, JSON.stringify(profile, null, 2))

      // 3. validate prints the column plan; the duplicate customer is the only invalid row.
      const validate = yield* runCli(
        ["validate", "customers", "clientes.csv", "--map", "clientes.map.json", "--out", "runs/validate"],
        undefined,
        dir
      )
      assert.strictEqual(validate.code, 1, validate.stderr)
      assert.match(validate.stderr, /header on row 2/)
      assert.match(validate.stderr, /Observações\s+→ \(ignored, not sent\)/)
      assert.match(validate.stderr, /columns not sent: .*"Vendedor".*"Observações"/)
      assert.match(
        validate.stderr,
        /rows skipped as not data: row 1 \(above the header\), row 6 \(not data: "Total de clientes: 3"\)/
      )
      const checked = readReport(Path.join(dir, "runs/validate"))
      assert.deepStrictEqual(checked.map((r) => `${r._row}:${r._status}`), ["3:valid", "4:valid", "5:invalid"])
      assert.match(checked[2]!._error!, /cpfCnpj: "11222333000181" repeats row 3/)

      // 4. The dry run: two customers would be created; nothing is written.
      const dry = yield* runCli(
        ["import", "customers", "clientes.csv", "--map", "clientes.map.json", "--dry-run", "--out", "runs/dry"],
        sandbox,
        dir
      )
      assert.strictEqual(dry.code, 1, dry.stderr)
      const planned = readReport(Path.join(dir, "runs/dry"))
      assert.deepStrictEqual(planned.map((r) => `${r._row}:${r._status}`), [
        "3:would-create",
        "4:would-create",
        "5:invalid"
      ])
      // The report is the customer's own file: their columns, their row numbers.
      assert.strictEqual(planned[1]!["Observações"], "Inadimplente desde março")
      assert.strictEqual((yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")).length, 0)

      // 5. The import: the records hold the mapped fields and nothing else of the file.
      const run = yield* runCli(
        ["import", "customers", "clientes.csv", "--map", "clientes.map.json", "--out", "runs/import"],
        sandbox,
        dir
      )
      assert.strictEqual(run.code, 1, run.stderr)
      const records = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
      assert.deepStrictEqual(records.map((r) => r.description).sort(), ["Açougue Boa Vista", "Padaria São João"])
      const padaria = records.find((r) => r.description === "Padaria São João")!
      assert.strictEqual(padaria.externalId, "11.222.333/0001-81")
      assert.strictEqual(padaria.cpfCnpj, "11222333000181")
      assert.strictEqual(padaria.active, true)
      assert.deepStrictEqual(padaria.phoneNumber, ["(11) 3333-4444"])
      assert.notMatch(JSON.stringify(records), /Ana|Bruno|Inadimplente|5\.000/)
      const summary = readSummary(Path.join(dir, "runs/import"))
      assert.strictEqual(summary.mapping.file, profilePath)
      assert.match(summary.mapping.sha256, /^[0-9a-f]{64}$/)
    }))

  it.scopedLive("template --profile writes an empty profile that validate reads", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const made = yield* runCli(["template", "customers", "--profile", "--out", "profiles"], undefined, dir)
      assert.strictEqual(made.code, 0, made.stderr)
      const path = Path.join(dir, "profiles", "customers.map.json")
      const profile = JSON.parse(readFileSync(path, "utf8"))
      assert.deepStrictEqual({ ...profile, $schema: undefined }, {
        $schema: undefined,
        resource: "customers",
        columns: {},
        fields: {},
        send: []
      })
      // The schema it names is there, relative to the profile.
      assert.isTrue(existsSync(Path.resolve(Path.dirname(path), profile.$schema)))
      put(dir, "c.csv", "externalId,name,Vendedor\nC-1,Padaria,Ana\n")
      const checked = yield* runCli(
        ["validate", "customers", "c.csv", "--map", "profiles/customers.map.json", "--out", "runs/v"],
        undefined,
        dir
      )
      assert.strictEqual(checked.code, 0, checked.stderr)
      assert.match(checked.stderr, /columns not sent: "Vendedor"/)
    }))
})
