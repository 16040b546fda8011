/**
 * What the XLSX reader makes of cells as Excel writes them: `_xHHHH_` escapes decoded, every run of rich text
 * kept (shared and inline strings), error values (`#DIV/0!`, a formula's saved `#N/A` …) marked on their row and
 * column (validation makes that row invalid), and text our own writer escapes read back as written.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Path from "node:path"
import { openXlsxWriter } from "../../src/files/Write.js"
import { put, readAll, tempDir, workbookEntries, zipArchive } from "./support.js"

const workbook = (dir: string, name: string, rows: ReadonlyArray<ReadonlyArray<ExcelJS.CellValue>>) =>
  Effect.promise(async () => {
    const wb = new ExcelJS.Workbook()
    wb.creator = "Microsoft Excel"
    const ws = wb.addWorksheet("clientes")
    for (const row of rows) ws.addRow([...row])
    const path = Path.join(dir, name)
    await wb.xlsx.writeFile(path)
    return path
  })

describe("XLSX cells as Excel writes them", () => {
  it.scoped("_x000D_ and other escapes are decoded; rich text keeps every run", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* workbook(dir, "clientes.xlsx", [
        ["externalId", "name", "note"],
        ["C-1", "Linha 1_x000D_\nLinha 2", { richText: [{ text: "Pa", font: { bold: true } }, { text: "daria" }] }],
        ["C-2", "Tab_x0009_aqui", "Literal _x005F_x000D_ fica"]
      ])
      const read = yield* readAll(file)
      assert.deepStrictEqual(read.rows.map((r) => r.cells), [
        ["C-1", "Linha 1\r\nLinha 2", "Padaria"],
        ["C-2", "Tab\taqui", "Literal _x000D_ fica"]
      ])
    }))

  it.scoped("an inline string's rich text keeps every run, without its phonetic reading", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const sheet = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>
<row r="1"><c r="A1" t="inlineStr"><is><t>externalId</t></is></c><c r="B1" t="inlineStr"><is><t>name</t></is></c></row>
<row r="2"><c r="A2" t="inlineStr"><is><t>C-1</t></is></c><c r="B2" t="inlineStr"><is><r><t>Pa</t></r><r><rPr><b/></rPr><t>daria</t></r><rPh sb="0" eb="1"><t>ぱ</t></rPh></is></c></row>
</sheetData></worksheet>`
      const file = put(dir, "inline.xlsx", zipArchive(workbookEntries({ data: sheet })))
      const read = yield* readAll(file)
      assert.deepStrictEqual(read.rows.map((r) => r.cells), [["C-1", "Padaria"]])
    }))

  for (const code of ["#DIV/0!", "#N/A", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#NULL!"]) {
    it.scoped(`an error value ${code} is marked on its row and column, shown as its code`, () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = yield* workbook(dir, "erro.xlsx", [
          ["externalId", "name", "note"],
          ["C-1", "Padaria", "ok"],
          ["C-2", "Mercado", { error: code } as ExcelJS.CellErrorValue]
        ])
        const { rows } = yield* readAll(file)
        assert.deepStrictEqual(rows.map((r) => r.cells), [["C-1", "Padaria", "ok"], ["C-2", "Mercado", code]])
        assert.isUndefined(rows[0]!.cellProblems)
        assert.strictEqual(rows[1]!.cellProblems?.length, 1)
        assert.strictEqual(rows[1]!.cellProblems?.[0]?.index, 2)
        assert.include(rows[1]!.cellProblems?.[0]?.message, `the error value ${code}, not data`)
      }))
  }

  it.scoped("a formula whose saved result is #N/A is marked as such, not as a formula without a result", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* workbook(dir, "formula.xlsx", [
        ["externalId", "name", "note"],
        ["C-1", { formula: "PROCV(A2;B:C;2;0)", result: { error: "#N/A" } } as ExcelJS.CellFormulaValue, "x"]
      ])
      const { rows } = yield* readAll(file)
      assert.deepStrictEqual(rows[0]!.cells, ["C-1", "#N/A", "x"])
      const problem = rows[0]!.cellProblems?.[0]
      assert.strictEqual(problem?.index, 1)
      assert.include(problem?.message, "a formula whose saved result is the error #N/A")
      assert.notInclude(problem?.message, "without a saved result")
    }))

  it.scoped("text our writer escapes (a control character, a literal _x0041_) reads back as written", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "ours.xlsx")
      const cells = ["C-1", "bell \u0007 here", "literal _x0041_ and _x005F_ stay"]
      yield* Effect.scoped(Effect.gen(function*() {
        const writer = yield* openXlsxWriter(path, ["externalId", "name", "note"], { guard: false })
        yield* writer.write(cells)
        yield* writer.close
      }))
      const read = yield* readAll(path)
      assert.deepStrictEqual(read.rows.map((r) => r.cells), [cells])
    }))
})
