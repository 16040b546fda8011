/**
 * Real files on disk, read by the real readers (src/files) and validated: a Windows-1252 `;` CSV the way Excel
 * in Brazil saves it, and a workbook whose numbers and dates are real cells. Row numbers stay the spreadsheet's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import ExcelJS from "exceljs"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { openSource } from "../../src/files/Read.js"
import { runValidate } from "../../src/import/ValidateRun.js"
import type { ResourceName } from "../../src/Resources.js"
import { resource } from "../../src/Resources.js"
import { formatErrors, inferFormats, makeValidator, planColumns, type RowResult } from "../../src/validate/Validate.js"
import { temporaryDir } from "../support.js"
import { options } from "./support.js"

/** A row's payload, or its errors (or why it was skipped) as the report says them. */
const shown = (
  r: RowResult
) => (r._tag === "Valid" ? r.payload : r._tag === "Invalid" ? formatErrors(r.errors) : r.reason)

const tempDir = temporaryDir("fsm-validate-files-")

/** Opens, plans, settles the formats and validates every row, as `fsm-bulk validate` does. */
const validatePath = (name: ResourceName, file: string) =>
  Effect.gen(function*() {
    const source = yield* openSource(file, { encoding: "auto", delimiter: "auto", resource: name })
    const opts = options({ restoreGuard: source.writtenByTool, baseDir: Path.dirname(file) })
    const plan = yield* planColumns(resource(name), file, source.header, opts)
    const formats = yield* inferFormats(plan, source.rows, opts)
    const validator = makeValidator(plan, formats, opts)
    const results = Chunk.toArray(yield* Stream.runCollect(Stream.mapEffect(source.rows, validator.validate)))
    return { plan, formats, results }
  })

describe("files as users save them", () => {
  it.scoped("a Windows-1252 CSV with ;, decimal commas, dd/mm/yyyy, punctuated CPFs, blank and multi-line rows", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const lines = [
        "externalId;name;cpfCnpj;latitude;longitude;active;note;segmentDescription",
        "CLI-1;Padaria Pão Quente;529.982.247-25;-23,5614;-46,6559;Sim;=HYPERLINK(x);Panificação",
        "",
        "CLI-2;Açougue São João;11.222.333/0001-81;-22,9;-43,2;não;\"linha 1",
        "linha 2\";",
        "CLI-3;Mercado;123.456.789-00;-23,5;-46,6;talvez;;",
        "CLI-1;Padaria (cópia);;;;;;"
      ]
      const file = Path.join(dir, "clientes.csv")
      writeFileSync(file, Buffer.from(lines.join("\r\n") + "\r\n", "latin1"))

      const { formats, plan, results } = yield* validatePath("customers", file)
      assert.deepStrictEqual(plan.warnings, [])
      assert.deepStrictEqual(formats, { dateFormat: "yyyy-mm-dd", decimal: "," })
      assert.deepStrictEqual(results.map((r) => [r.row, r._tag]), [
        [2, "Valid"],
        [4, "Valid"],
        // A multi-line cell is one spreadsheet row.
        [5, "Invalid"],
        [6, "Invalid"]
      ])
      const first = results[0]!
      if (first._tag !== "Valid") throw new Error("row 2 should be valid")
      assert.deepStrictEqual(first.payload, {
        externalId: "CLI-1",
        name: "Padaria Pão Quente",
        cpfCnpj: "52998224725",
        latitude: -23.5614,
        longitude: -46.6559,
        active: true,
        // Not written by this tool: a =… cell is text, sent unchanged.
        note: "=HYPERLINK(x)"
      })
      assert.deepStrictEqual(first.refs.map((r) => r.values), [["Panificação"]])
      const multiLine = results[1]!
      if (multiLine._tag !== "Valid") throw new Error("row 4 should be valid")
      assert.strictEqual(multiLine.payload["note"], "linha 1\r\nlinha 2")
      const wrong = results[2]!
      if (wrong._tag !== "Invalid") throw new Error("row 5 should be invalid")
      assert.strictEqual(
        formatErrors(wrong.errors),
        `cpfCnpj: "123.456.789-00" has wrong check digits; active: "talvez" is not a yes/no value (use true/false, sim/não, yes/no, s/n, y/n, 1/0, x, verdadeiro/falso)`
      )
      const repeated = results[3]!
      if (repeated._tag !== "Invalid") throw new Error("row 6 should be invalid")
      assert.strictEqual(formatErrors(repeated.errors), `externalId: "CLI-1" repeats row 2`)
    }))

  it.scoped("an ambiguous dd/mm file stops with the column, the row and the flag", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "recebiveis.csv")
      // Receivables have no key: an upsert file carries the id column, empty to create.
      writeFileSync(file, "id;customerExternalId;value;dueDate\n;CLI-1;350,00;03/04/2026\n;CLI-2;120,50;05/06/2026\n")
      const error = yield* Effect.flip(validatePath("receivables", file))
      assert.strictEqual(error._tag, "InputError")
      assert.strictEqual(
        error.message,
        `${file} (row 2, column "dueDate"): cannot tell day-first from month-first dates: "03/04/2026" could be 3 April or 4 March, ` +
          `and no date in the file settles it; pass --date-format dd/mm/yyyy or --date-format mm/dd/yyyy`
      )
    }))

  it.scoped("a workbook with real number, date and boolean cells", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "tarefas.xlsx")
      const workbook = new ExcelJS.Workbook()
      const sheet = workbook.addWorksheet("tasks")
      sheet.addRow(["externalId", "userFromLogin", "taskDate", "priority", "latitude", "sendSatisfactionSurvey"])
      sheet.addRow(["OS-1", "ana.souza", new Date(Date.UTC(2026, 11, 1, 9, 30)), 3, -23.5614, true])
      sheet.addRow(["OS-2", "ana.souza", new Date(Date.UTC(2026, 11, 2)), "low", -23.5, false])
      sheet.getColumn(3).numFmt = "dd/mm/yyyy hh:mm"
      yield* Effect.promise(() => workbook.xlsx.writeFile(file))

      const { results } = yield* validatePath("tasks", file)
      const payloads = results.map((r) => shown(r))
      assert.deepStrictEqual(payloads, [
        {
          externalId: "OS-1",
          taskDate: "2026-12-01T09:30:00",
          priority: 3,
          latitude: -23.5614,
          sendSatisfactionSurvey: true
        },
        {
          externalId: "OS-2",
          taskDate: "2026-12-02T00:00:00",
          priority: 1,
          latitude: -23.5,
          sendSatisfactionSurvey: false
        }
      ])
    }))

  const productsWorkbook = (dir: string, name: string, rows: ReadonlyArray<ReadonlyArray<string | number>>) =>
    Effect.gen(function*() {
      const file = Path.join(dir, name)
      const workbook = new ExcelJS.Workbook()
      const sheet = workbook.addWorksheet("products")
      sheet.addRow(["externalId", "name", "unitaryValue", "unitaryCost"])
      for (const row of rows) sheet.addRow([...row])
      yield* Effect.promise(() => workbook.xlsx.writeFile(file))
      return file
    })

  it.scoped("a workbook whose number cells all read like 1.234 settles --decimal auto: number cells carry their own point", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* productsWorkbook(dir, "produtos.xlsx", [
        ["PRD-1", "Filtro", 1.234, 7],
        ["PRD-2", "Bomba", 12.345, 3.125]
      ])
      const { formats, results } = yield* validatePath("products", file)
      assert.strictEqual(formats.decimal, ".")
      assert.deepStrictEqual(results.map((r) => shown(r)), [
        { externalId: "PRD-1", name: "Filtro", unitaryValue: 1.234, unitaryCost: 7 },
        { externalId: "PRD-2", name: "Bomba", unitaryValue: 12.345, unitaryCost: 3.125 }
      ])
    }))

  it.scoped("in a workbook, typed text with a decimal comma settles the mark for text cells; number cells still read as numbers", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* productsWorkbook(dir, "misto.xlsx", [
        ["PRD-1", "Filtro", 1.234, "22,50"],
        ["PRD-2", "Bomba", 1.5, "1.234,56"]
      ])
      const { formats, results } = yield* validatePath("products", file)
      assert.strictEqual(formats.decimal, ",")
      assert.deepStrictEqual(results.map((r) => shown(r)), [
        { externalId: "PRD-1", name: "Filtro", unitaryValue: 1.234, unitaryCost: 22.5 },
        { externalId: "PRD-2", name: "Bomba", unitaryValue: 1.5, unitaryCost: 1234.56 }
      ])
    }))

  it.scoped("in a workbook, a number typed as text that reads both ways is still ambiguous", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* productsWorkbook(dir, "texto.xlsx", [["PRD-1", "Filtro", 2.5, "1.234"]])
      const error = yield* Effect.flip(validatePath("products", file))
      assert.strictEqual(
        error.message,
        `${file} (row 2, column "unitaryCost"): cannot tell the decimal mark: "1.234" reads as 1.234 with a decimal point and as 1234 with a decimal comma, ` +
          `and no number in the file settles it; pass --decimal , or --decimal .`
      )
    }))
})

describe("validate of a file that names attachments", () => {
  it.scoped("checks each named file on disk: the one that exists is valid, the missing one invalid", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      mkdirSync(Path.join(dir, "anexos"))
      writeFileSync(Path.join(dir, "anexos", "contrato.pdf"), Buffer.alloc(1024, 1))
      const file = Path.join(dir, "customer-attachments.csv")
      writeFileSync(file, "customerExternalId,file\nCLI-1,anexos/contrato.pdf\nCLI-2,anexos/nao-existe.pdf\n")
      const result = yield* runValidate({
        resource: "customer-attachments",
        file,
        runDir: Path.join(dir, "check"),
        read: { encoding: "auto", delimiter: "auto" },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert"
      })
      assert.strictEqual(result.exitCode, 1)
      assert.strictEqual(result.summary.counts.valid, 1)
      assert.strictEqual(result.summary.counts.invalid, 1)
      const lines = readFileSync(Path.join(result.runDir, "report.csv"), "utf8").split("\r\n")
      assert.match(lines[1]!, /^2,valid,/)
      assert.match(lines[2]!, /^3,invalid,.*"file: ""anexos\/nao-existe\.pdf"" not found/)
    }))
})
