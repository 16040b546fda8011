/**
 * How the tool's workbooks print (issue 27): a 4-row report.xlsx printed to a 16-page PDF, the Summary's labels
 * and values on separate pages, and a template three columns a page. Each sheet now carries its page setup, read
 * back here by a second reader (ExcelJS) as Excel and LibreOffice read it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Path from "node:path"
import { openXlsxWriter } from "../../src/files/Write.js"
import { summarySheetName } from "../../src/files/XlsxWriter.js"
import { tempDir } from "./support.js"

const readBack = (path: string) =>
  Effect.promise(async () => {
    const wb = new ExcelJS.Workbook()
    await wb.xlsx.readFile(path)
    return wb
  })

const report = (path: string, header: ReadonlyArray<string>, rows: number) =>
  Effect.scoped(Effect.gen(function*() {
    const w = yield* openXlsxWriter(path, header, {
      statusColumn: 1,
      sheetName: "customers",
      frontSheet: summarySheetName
    })
    for (let i = 0; i < rows; i++) yield* w.write(header.map((_, c) => (c === 1 ? "created" : `cell ${i} ${c}`)))
    yield* w.closeWith([
      { cells: ["Run"], heading: true },
      { cells: ["resource", "customers"] },
      { cells: ["created", 4], status: true }
    ])
  }))

describe("printing the tool's workbooks", () => {
  it.scoped("report.xlsx: the table landscape, fitted to the page's width, its header on every page; the Summary on one page", () =>
    Effect.gen(function*() {
      const path = Path.join(yield* tempDir, "report.xlsx")
      yield* report(path, ["_row", "_status", "_error", "name", "phone"], 4)
      const wb = yield* readBack(path)
      const table = wb.getWorksheet("customers")!.pageSetup
      assert.strictEqual(table.orientation, "landscape")
      assert.isTrue(table.fitToPage)
      assert.strictEqual(table.fitToWidth, 1)
      assert.strictEqual(table.fitToHeight, 0, "as many pages long as the rows need")
      assert.strictEqual(table.printTitlesRow, "1:1")
      const summary = wb.getWorksheet(summarySheetName)!.pageSetup
      assert.isTrue(summary.fitToPage)
      assert.strictEqual(summary.fitToWidth, 1)
      assert.strictEqual(summary.fitToHeight, 1, "labels and values on one page")
    }))

  it.scoped("a table too wide for one page is spread over pages across rather than shrunk past reading", () =>
    Effect.gen(function*() {
      const path = Path.join(yield* tempDir, "wide.xlsx")
      const header = Array.from({ length: 60 }, (_, i) => `a fairly long column name ${i}`)
      yield* report(path, header, 3)
      const table = (yield* readBack(path)).getWorksheet("customers")!.pageSetup
      assert.isAbove(table.fitToWidth ?? 0, 1)
      assert.strictEqual(table.printTitlesRow, "1:1")
    }))

  it.scoped("the shipped templates print landscape, fitted to the width, the header repeated", () =>
    Effect.gen(function*() {
      const wb = yield* readBack(Path.resolve(import.meta.dirname, "../../templates/customers.xlsx"))
      const data = wb.getWorksheet("customers")!.pageSetup
      assert.strictEqual(data.orientation, "landscape")
      assert.isTrue(data.fitToPage)
      assert.strictEqual(data.fitToHeight, 0)
      assert.strictEqual(data.printTitlesRow, "1:1")
      assert.isTrue(wb.getWorksheet("README")!.pageSetup.fitToPage)
    }))
})
