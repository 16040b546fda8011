/**
 * A mapping profile (`--map`) applied to a customer's own file, in process against the sandbox: the header found
 * under a title row, renames, ignored columns, value maps, a composed field, a constant, a footer skipped; the
 * records read back, the report in the file's own columns and rows, the profile in the journal and summary.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { Notices } from "../../src/console/Output.js"
import { rerun } from "../../src/import/Rerun.js"
import { resumeRun } from "../../src/import/Resume.js"
import { runValidate } from "../../src/import/ValidateRun.js"
import { readProfile } from "../../src/mapping/Profile.js"
import {
  apiOf,
  importInto,
  put,
  readJournalLines,
  readReport,
  readSummary,
  startTestSandbox,
  tempDir
} from "../import/support.js"
import { messyCustomers, messyProfile } from "./support.js"

describe("a mapping profile", () => {
  it.scopedLive("reads a customer's own file: header under a title row, renames, value maps, composition, footer", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", messyCustomers)
      const profileFile = put(dir, "clientes.map.json", JSON.stringify(messyProfile, null, 2))
      const map = yield* readProfile(profileFile)
      const runDir = Path.join(dir, "run")
      const result = yield* importInto(sandbox, {
        resource: "customers",
        file,
        runDir,
        read: { encoding: "auto", delimiter: "auto", map }
      })
      assert.strictEqual(result.exitCode, 0)
      const records = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
      const byKey = new Map(records.map((r) => [r.externalId, r]))
      assert.deepStrictEqual([...byKey.keys()].sort(), ["C-1", "C-2", "C-3"])
      const one = byKey.get("C-1")!
      assert.strictEqual(one.description, "Padaria São João")
      assert.strictEqual(one.cpfCnpj, "11222333000181")
      assert.strictEqual(one.address, "Rua Augusta, 100 - Consolação")
      assert.strictEqual(one.active, true)
      assert.strictEqual(one.unitMaximumTime, 1)
      // An empty number leaves no dangling comma; "Bloqueado" maps to false.
      assert.strictEqual(byKey.get("C-2")!.address, "Av. Paulista - Bela Vista")
      assert.strictEqual(byKey.get("C-2")!.active, false)
      // Nothing unmapped reached the server.
      assert.notMatch(JSON.stringify(records), /Ana|Bruno|Inadimplente|Vendedor|Observa|Rua"/)
      // The report keeps the file's own columns and row numbers (title row 1, header row 2).
      const report = readReport(runDir)
      assert.deepStrictEqual(report.map((r) => `${r._row}:${r._status}`), ["3:created", "4:created", "5:created"])
      assert.strictEqual(report[0]!["Código"], "C-1")
      assert.strictEqual(report[1]!["Situação"], "Bloqueado")
      assert.strictEqual(report[1]!["Observações"], "Inadimplente desde março")
      // The profile, its hash, the header row and the skipped rows are in the summary; the profile in the journal.
      const summary = readSummary(runDir)
      assert.strictEqual(summary.mapping.sha256, map.sha256)
      assert.strictEqual(summary.mapping.headerRow, 2)
      assert.deepStrictEqual(summary.mapping.profile, messyProfile)
      assert.deepStrictEqual(summary.mapping.skippedRows.map((s: { row: number }) => s.row), [1, 6])
      assert.match(summary.mapping.skippedRows[1].why, /Total de clientes/)
      assert.includeMembers(summary.ignoredColumns, ["Vendedor", "Observações", "Rua", "Número", "Bairro"])
      const header = readJournalLines(runDir)[0]!
      assert.strictEqual(header.read.map.sha256, map.sha256)
      assert.deepStrictEqual(header.read.map.profile, messyProfile)
      // The column plan: in the summary, and drawn in report.html (each source column → its field, or not sent).
      assert.deepStrictEqual(
        summary.mapping.plan.map((p: { source: string; target?: string; how: string }) =>
          `${p.source}→${p.target ?? "-"} (${p.how})`
        ),
        [
          "Código→externalId (renamed)",
          "Nome→name (renamed)",
          "CNPJ→cpfCnpj (renamed)",
          "Rua→- (ignored)",
          "Número→- (ignored)",
          "Bairro→- (ignored)",
          "Telefone→phoneNumber (renamed)",
          "E-mail→email (renamed)",
          "Situação→active (renamed)",
          "Vendedor→- (ignored)",
          "Observações→- (ignored)",
          "{Rua}, {Número} - {Bairro}→address (composed)",
          "\"minutes\"→unitMaximumTime (constant)"
        ]
      )
      const html = readFileSync(Path.join(runDir, "report.html"), "utf8")
      const planned = new Map(
        [...html.matchAll(/data-figure="plan:([^"]+)"[^>]*>([^<]*)</g)].map((m) => [m[1]!, m[2]!])
      )
      assert.strictEqual(planned.get("Nome"), "name")
      assert.strictEqual(planned.get("Vendedor"), "not sent")
      assert.strictEqual(planned.get("{Rua}, {Número} - {Bairro}"), "address")
      assert.match(
        html,
        /<td>Situação<\/td><td><span data-figure="plan:Situação">active<\/span><\/td><td>renamed, with a value map<\/td>/
      )
      assert.match(
        html,
        /Rows skipped as not data \(<span data-figure="skippedRows">2<\/span>\): row 1 \(above the header\)/
      )
    }))

  it.scopedLive("resume reads the file through the profile the journal recorded, even after the profile file changed", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", messyCustomers)
      const profileFile = put(dir, "clientes.map.json", JSON.stringify(messyProfile))
      const map = yield* readProfile(profileFile)
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, {
        resource: "customers",
        file,
        runDir,
        read: { encoding: "auto", delimiter: "auto", map }
      })
      // The crash: row 5 (C-3) never reached the server and its answer and the run's end were never journaled.
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "d.csv", "externalId\nC-3\n"),
        runDir: Path.join(dir, "d"),
        mode: "delete"
      })
      const journal = Path.join(runDir, "journal.ndjson")
      const kept = readFileSync(journal, "utf8").split("\n").filter((l) => l.trim() !== "").filter((l) => {
        const line = JSON.parse(l)
        return !((line.state === "done" && line.row === 5) || line.state === "end")
      })
      writeFileSync(journal, kept.map((l) => `${l}\n`).join(""))
      // The profile file is edited afterwards: the run keeps its own copy.
      writeFileSync(profileFile, JSON.stringify({ resource: "customers", columns: { "Nome": "note" } }))
      const resumed = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(resumed.exitCode, 0)
      const records = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
      const three = records.find((r) => r.externalId === "C-3")!
      assert.strictEqual(three.description, "Total Distribuidora")
      assert.strictEqual(three.active, true)
      assert.isFalse("Vendedor" in three)
      assert.deepStrictEqual(readReport(runDir).map((r) => `${r._row}:${r._status}`), [
        "3:created",
        "4:created",
        "5:created"
      ])
      assert.deepStrictEqual(readSummary(runDir).mapping.profile, messyProfile)
      // rerun reads a mapped run's report (test/mapping/rerun-cli.test.ts): here every row ended well, none to rerun.
      const again = yield* rerun({
        target: runDir,
        only: undefined,
        fixed: undefined,
        dryRun: true,
        out: () => Path.join(dir, "rerun")
      }).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(again.selected, 0)
    }))

  it.scopedLive("a profile that names a field the resource lacks is refused, naming the file and the property", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", messyCustomers)
      const profileFile = put(dir, "p.json", JSON.stringify({ resource: "customers", columns: { "Nome": "nome" } }))
      const map = yield* readProfile(profileFile)
      const error = yield* Effect.flip(runValidate({
        resource: "customers",
        file,
        read: { encoding: "auto", delimiter: "auto", map },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert",
        runDir: Path.join(dir, "run")
      }))
      assert.match(error.message, /p\.json/)
      assert.match(error.message, /columns\."Nome": "nome" is not a column of customers/)
      const bad = put(dir, "bad.json", JSON.stringify({ resource: "customers", headerRow: "dois" }))
      const decode = yield* Effect.flip(readProfile(bad))
      assert.match(decode.message, /bad\.json/)
      assert.match(decode.message, /headerRow/)
      // A misspelt property is refused, not ignored.
      const typo = put(dir, "typo.json", JSON.stringify({ resource: "customers", colums: { "Nome": "name" } }))
      assert.match((yield* Effect.flip(readProfile(typo))).message, /colums/)
    }))

  it.scopedLive("alternate keys: two rows sharing a CNPJ under different codes are invalid, or a warning, as the profile says", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        "Código;Nome;CNPJ\nC-1;Padaria;11.222.333/0001-81\nC-2;Padaria Filial;11222333000181\nC-3;Outra;529.982.247-25\n"
      )
      const validateWith = (severity: "invalid" | "warning") =>
        Effect.gen(function*() {
          const profile = {
            resource: "customers",
            columns: { "Código": "externalId", "Nome": "name", "CNPJ": "cpfCnpj" },
            alternateKeys: { cpfcnpj: severity }
          }
          const map = yield* readProfile(put(dir, `${severity}.json`, JSON.stringify(profile)))
          const runDir = Path.join(dir, severity)
          const result = yield* runValidate({
            resource: "customers",
            file,
            read: { encoding: "auto", delimiter: "auto", map },
            dateFormat: "auto",
            decimal: "auto",
            mode: "upsert",
            runDir
          })
          return { result, report: readReport(runDir) }
        })
      const invalid = yield* validateWith("invalid")
      assert.strictEqual(invalid.result.exitCode, 1)
      assert.deepStrictEqual(invalid.report.map((r) => `${r._row}:${r._status}`), ["2:valid", "3:invalid", "4:valid"])
      assert.match(invalid.report[1]!._error!, /cpfCnpj: "11222333000181" repeats row 2: cpfCnpj is an alternate key/)
      const warned = yield* validateWith("warning")
      assert.strictEqual(warned.result.exitCode, 0)
      assert.deepStrictEqual(warned.report.map((r) => r._status), ["valid", "valid", "valid"])
      assert.match(warned.report[1]!._error!, /repeats row 2/)
    }))

  it.scopedLive("a workbook: the profile names the sheet; a merged title row above the header; number cells; footer", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "clientes.xlsx")
      const workbook = new ExcelJS.Workbook()
      workbook.addWorksheet("Resumo").addRow(["nada aqui"])
      const sheet = workbook.addWorksheet("Clientes")
      sheet.addRow(["Carteira de clientes 2026"])
      sheet.mergeCells("A1:D1")
      sheet.addRow([])
      sheet.addRow(["Código", "Razão", "Visita (min)", "Ativo?"])
      sheet.addRow(["C-1", "Padaria", 45, "S"])
      sheet.addRow(["C-2", "Açougue", 30, "N"])
      sheet.addRow(["Subtotal", "", 75, ""])
      yield* Effect.promise(() => workbook.xlsx.writeFile(file))
      const profile = {
        resource: "customers",
        sheet: "Clientes",
        columns: { "Código": "externalId", "Razão": "name", "Visita (min)": "maximumVisitTime", "Ativo?": "active" }
      }
      const map = yield* readProfile(put(dir, "p.json", JSON.stringify(profile)))
      const runDir = Path.join(dir, "run")
      const lines: Array<string> = []
      const result = yield* runValidate({
        resource: "customers",
        file,
        read: { encoding: "auto", delimiter: "auto", map },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert",
        runDir
      }).pipe(Effect.provide(Notices.to((line) => Effect.sync(() => void lines.push(line)))))
      assert.strictEqual(result.exitCode, 0, lines.join("\n"))
      assert.isTrue(lines.some((l) => /header on row 3/.test(l)))
      const report = readReport(runDir)
      assert.deepStrictEqual(report.map((r) => `${r._row}:${r._status}`), ["4:valid", "5:valid"])
      assert.strictEqual(report[0]!["Visita (min)"], "45")
      assert.deepStrictEqual(result.summary.mapping!.skippedRows, [
        { row: 1, why: "above the header" },
        { row: 6, why: `not data: "Subtotal"` }
      ])
    }))
})
