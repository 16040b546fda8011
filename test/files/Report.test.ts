/**
 * report.xlsx as a user opens it: a Summary sheet first (rows by status, errors by kind, the run's settings and
 * traffic), then the rows, with numbers as number cells; both read back with exceljs. The import runs in process
 * against the real sandbox over loopback.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Path from "node:path"
import { runValidate } from "../../src/import/ValidateRun.js"
import { importInto, put, startTestSandbox, tempDir } from "../import/support.js"

const readWorkbook = (path: string) =>
  Effect.promise(async () => {
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.readFile(path)
    return workbook
  })

/** The Summary sheet's lines as label → the cells after it. */
const summaryLines = (sheet: ExcelJS.Worksheet): Map<string, Array<ExcelJS.Cell>> => {
  const lines = new Map<string, Array<ExcelJS.Cell>>()
  sheet.eachRow((row) => {
    const label = row.getCell(1).value
    if (typeof label === "string") lines.set(label, [row.getCell(2), row.getCell(3)])
  })
  return lines
}

const columnOf = (sheet: ExcelJS.Worksheet, name: string): number =>
  (sheet.getRow(1).values as Array<unknown>).indexOf(name)

describe("report.xlsx", () => {
  it.scopedLive("opens on a Summary sheet and gives numbers as number cells", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "product-categories",
        file: put(dir, "cat.csv", "externalId,description\nCAT-1,Filtros\n"),
        runDir: Path.join(dir, "cat")
      })
      // A decimal comma; the third row names a category that does not exist, the fourth is not a number.
      const file = put(
        dir,
        "produtos.csv",
        "externalId;name;categoryExternalId;totalStock\nP-1;Filtro;CAT-1;12,5\nP-2;Bomba;CAT-1;3\nP-3;Cano;CAT-9;7\nP-4;Luva;CAT-1;muito\n"
      )
      const run = yield* importInto(sandbox, { resource: "products", file, runDir: Path.join(dir, "run") })
      const workbook = yield* readWorkbook(Path.join(run.runDir, "report.xlsx"))

      assert.deepStrictEqual(workbook.worksheets.map((s) => s.name), ["Summary", "report"])
      const lines = summaryLines(workbook.worksheets[0]!)
      const number = (label: string, at = 0) => {
        const cell = lines.get(label)?.[at]
        assert.isDefined(cell, `the Summary has a "${label}" line`)
        assert.strictEqual(cell!.type, ExcelJS.ValueType.Number, `"${label}" is a number cell`)
        return cell!.value as number
      }
      assert.strictEqual(number("created"), 2)
      assert.strictEqual(number("invalid"), 1)
      assert.strictEqual(number("failed"), 1)
      assert.strictEqual(number("total"), 4)
      assert.isAbove(number("requests"), 0)
      assert.strictEqual(number("retries"), 0)
      assert.strictEqual(number("rate-limited (429)"), 0)
      assert.strictEqual(number("exit code"), 1)
      for (const label of ["Rows by status", "Errors by kind", "Settings", "Run"]) {
        assert.isTrue(lines.has(label), `a "${label}" section`)
      }
      assert.strictEqual(lines.get("resource")![0]!.value, "products")
      assert.strictEqual(lines.get("mode")![0]!.value, "upsert")
      assert.strictEqual(lines.get("source")![0]!.value, file)
      assert.strictEqual(lines.get("base URL")![0]!.value, sandbox.url)
      assert.strictEqual(lines.get("decimal mark")![0]!.value, "comma (,)")
      assert.match(String(lines.get("request budget")![0]!.value), /^\d+ requests per [\d.]+ s$/)
      assert.match(String(lines.get("started")![0]!.value), /^\d{4}-\d\d-\d\dT/)
      assert.match(String(lines.get("finished")![0]!.value), /^\d{4}-\d\d-\d\dT/)
      // Errors by kind: the message without its values, an example, and the rows as a number.
      const kinds = [...lines.entries()].filter(([, cells]) => String(cells[0]?.value ?? "").startsWith("row "))
      assert.strictEqual(kinds.length, 2, "two kinds of error")
      for (const [, cells] of kinds) assert.strictEqual(cells[1]!.type, ExcelJS.ValueType.Number)

      const sheet = workbook.getWorksheet("report")!
      const cellOf = (row: number, column: string) => sheet.getRow(row).getCell(columnOf(sheet, column))
      for (const column of ["_row", "_http_status", "_attempts", "totalStock"]) {
        assert.strictEqual(cellOf(2, column).type, ExcelJS.ValueType.Number, `${column} is a number cell`)
      }
      assert.strictEqual(cellOf(2, "totalStock").value, 12.5)
      assert.strictEqual(cellOf(3, "totalStock").value, 3)
      // A cell that is not a number stays the text the user typed.
      assert.strictEqual(cellOf(5, "totalStock").value, "muito")
      assert.strictEqual(cellOf(5, "_status").value, "invalid")
      assert.strictEqual(cellOf(2, "externalId").type, ExcelJS.ValueType.String)
      // Columns fitted to their content: `_error` wide and wrapped, a short column narrow.
      const error = columnOf(sheet, "_error")
      assert.isAtLeast(sheet.getColumn(error).width!, 30)
      assert.isTrue(cellOf(4, "_error").alignment?.wrapText, "the error column wraps")
      assert.isAtMost(sheet.getColumn(columnOf(sheet, "_row")).width!, 12)
    }))

  it.scopedLive("of validate opens on its Summary too (no traffic, the formats settled)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name,email\nC-1,Um,um@x.com.br\nC-2,Dois,not-an-email\n")
      const result = yield* runValidate({
        resource: "customers",
        file,
        runDir: Path.join(dir, "check"),
        read: { encoding: "auto", delimiter: "auto" },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert"
      })
      assert.strictEqual(result.exitCode, 1)
      const workbook = yield* readWorkbook(Path.join(result.runDir, "report.xlsx"))
      assert.strictEqual(workbook.worksheets[0]!.name, "Summary")
      const lines = summaryLines(workbook.worksheets[0]!)
      assert.strictEqual(lines.get("valid")![0]!.value, 1)
      assert.strictEqual(lines.get("invalid")![0]!.value, 1)
      assert.strictEqual(lines.get("command")![0]!.value, "validate")
      assert.strictEqual(lines.get("requests")![0]!.value, 0)
      assert.strictEqual(lines.get("date format")![0]!.value, "yyyy-mm-dd")
    }))
})
