/**
 * The README sheet of an XLSX template prints without its wrapped cells running over the next rows: LibreOffice
 * (and Excel on open) does not grow a row for wrapped text it did not lay out itself, so each row's height is set
 * from the most lines one of its cells wraps to in its column's width — in English and in Portuguese, whose
 * sentences are longer. (The printed result, by hand: docs/screenshots/template-pdf-*.png.)
 */
import "../../src/files/ExcelSax.js" // before exceljs: mends its UTF-8 decoding
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { setLanguage } from "../../src/Messages.js"
import { importable } from "../../src/Resources.js"
import { wrappedLines, xlsxTemplate } from "../../src/template/Xlsx.js"

/** Each README row below the headings: the height set, and the lines its cells need in their columns' widths. */
const readmeRows = (bytes: Uint8Array) =>
  Effect.promise(async () => {
    const book = new ExcelJS.Workbook()
    await book.xlsx.load(Buffer.from(bytes) as unknown as ArrayBuffer)
    const sheet = book.getWorksheet("README")!
    const rows: Array<{ row: number; height: number | undefined; lines: number }> = []
    let headings = 0
    sheet.eachRow((row, n) => {
      if (headings === 0) {
        if (row.getCell(2).value !== null && row.getCell(7).value !== null) headings = n
        return
      }
      let lines = 1
      for (let i = 1; i <= 7; i++) {
        const text = String(row.getCell(i).value ?? "")
        // Independent of `wrappedLines`: at least one line per full column width of text.
        lines = Math.max(lines, Math.ceil(text.length / (sheet.getColumn(i).width ?? 10)))
      }
      rows.push({ row: n, height: row.height, lines })
    })
    return rows
  })

describe("the README sheet of the XLSX templates", () => {
  it("counts wrapped lines at word boundaries, long words broken", () => {
    assert.strictEqual(wrappedLines("", 10), 1)
    assert.strictEqual(wrappedLines("short", 10), 1)
    assert.strictEqual(wrappedLines("one two three four", 10), 3)
    assert.strictEqual(wrappedLines("a\nb", 30), 2)
    assert.strictEqual(wrappedLines("x".repeat(20), 10), 3)
  })

  for (const language of ["en", "pt-BR"] as const) {
    it.effect(
      `gives each described column's row the height of its wrapped text (${language})`,
      () =>
        Effect.gen(function*() {
          setLanguage(language)
          try {
            for (const r of importable) {
              const rows = yield* readmeRows(yield* Effect.promise(() => xlsxTemplate(r)))
              assert.isAbove(rows.length, 0, r.name)
              for (const { height, lines, row } of rows) {
                assert.isDefined(height, `${r.name} README row ${row} has no height`)
                assert.isAtLeast(height!, 15 * lines, `${r.name} README row ${row}: ${lines} lines`)
              }
            }
          } finally {
            setLanguage("en")
          }
        }),
      60_000
    )
  }
})
