/**
 * report.xlsx keeps within Excel's 32,767 characters a cell (issue 28, defects): a longer cell is cut with a
 * visible mark that says so and where the whole text is (report.csv, which keeps it whole).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Path from "node:path"
import { cutForExcel, excelCellLimit } from "../../src/files/Write.js"
import { importInto, put, readReport, startTestSandbox, tempDir } from "../import/support.js"

describe("Excel's cell limit", () => {
  it.scopedLive("a 40,000-character cell is cut in report.xlsx with a mark, whole in report.csv", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const long = "Observação longa. ".repeat(2_300).slice(0, 40_000)
      const file = put(dir, "clientes.csv", `externalId;name;note\nC-1;Loja;${long}\n`)
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, { resource: "customers", file, runDir, dryRun: true })
      assert.strictEqual(readReport(runDir)[0]!.note, long)
      const book = new ExcelJS.Workbook()
      yield* Effect.promise(() => book.xlsx.readFile(Path.join(runDir, "report.xlsx")))
      const sheet = book.getWorksheet("report")!
      const header = (sheet.getRow(1).values as Array<unknown>).map(String)
      const cell = String(sheet.getRow(2).getCell(header.indexOf("note")).value)
      assert.isAtMost(cell.length, excelCellLimit)
      assert.match(
        cell,
        /… \[cut at Excel's limit of 32,767 characters: 40,000 in all, the whole text is in report\.csv\]$/
      )
      assert.isTrue(long.startsWith(cell.slice(0, cell.indexOf("… [cut"))))
    }))

  it("never cuts inside a surrogate pair; shorter text is untouched", () => {
    const text = "😀".repeat(20_000)
    const cut = cutForExcel(text, "report.csv")
    assert.isAtMost(cut.length, excelCellLimit)
    assert.isFalse(/[\ud800-\udbff]…/.test(cut))
    assert.strictEqual(cutForExcel("curto", "report.csv"), "curto")
  })
})
