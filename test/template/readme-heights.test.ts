/**
 * The README sheet of an XLSX template prints without its wrapped cells running over the next rows, and without
 * rows taller than their text: LibreOffice (and Excel on open) does not grow a row for wrapped text it did not lay
 * out itself, so each row's height is set from the most lines one of its cells wraps to in its column's width,
 * measured with the font's proportional widths (text is narrower than the digits a column's width counts) — in
 * English and in Portuguese, whose sentences are longer. The lines above the table are merged across the columns
 * the first page prints and wrapped there (a long one was cut at the page's right edge). The expected line counts
 * below are LibreOffice's own (soffice --convert-to pdf of the pt-BR customers template); the printed result:
 * docs/screenshots/template-pdf-*.png.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { firstPageColumns, wrappedLines } from "../../src/files/SheetLayout.js"
import { currentLanguage, type Language, setLanguage } from "../../src/Messages.js"
import { writeExampleWorkbook } from "../../src/onboard/Example.js"
import { importable } from "../../src/Resources.js"
import { workbookTemplate, xlsxTemplate } from "../../src/template/Xlsx.js"
import { temporaryDir } from "../support.js"

const readmeSheetOf = async (bytes: Uint8Array) => {
  const book = new ExcelJS.Workbook()
  await book.xlsx.load(Buffer.from(bytes) as unknown as ArrayBuffer)
  return book.getWorksheet("README")!
}
const readmeOf = (bytes: Uint8Array) => Effect.promise(() => readmeSheetOf(bytes))

/**
 * The README sheet of each importable resource's template in `language`, each template built and read once for the
 * file: the two tests per language below read the same sheets (built twice, they were most of the file's time).
 */
const templateReadmes = new Map<Language, Promise<ReadonlyArray<{ resource: string; sheet: ExcelJS.Worksheet }>>>()
const readmesIn = (language: Language) =>
  Effect.promise(() => {
    const known = templateReadmes.get(language)
    if (known !== undefined) return known
    // Built within the test that first asks (tests of a file run one at a time), in `language`, then the test's again.
    const built = (async () => {
      const was = currentLanguage()
      setLanguage(language)
      try {
        const sheets: Array<{ resource: string; sheet: ExcelJS.Worksheet }> = []
        for (const r of importable) sheets.push({ resource: r.name, sheet: await readmeSheetOf(await xlsxTemplate(r)) })
        return sheets
      } finally {
        setLanguage(was)
      }
    })()
    templateReadmes.set(language, built)
    return built
  })

/** Each README row below the headings: the height set, and the lines its cells need in their columns' widths. */
const rowsOf = (sheet: ExcelJS.Worksheet) => {
  const rows: Array<{ row: number; name: string; height: number | undefined; lines: number }> = []
  let headings = 0
  sheet.eachRow((row, n) => {
    if (headings === 0) {
      if (row.getCell(2).value !== null && row.getCell(7).value !== null) headings = n
      return
    }
    let lines = 1
    for (let i = 1; i <= 7; i++) {
      const text = String(row.getCell(i).value ?? "")
      // Independent of `wrappedLines`' table: no text is narrower than half a digit a character.
      lines = Math.max(lines, Math.ceil((text.length * 0.45) / (sheet.getColumn(i).width ?? 10)))
    }
    rows.push({ row: n, name: String(row.getCell(1).value), height: row.height, lines })
  })
  return rows
}
const readmeRows = (bytes: Uint8Array) => Effect.map(readmeOf(bytes), rowsOf)

describe("the README sheet of the XLSX templates", () => {
  it("counts wrapped lines at word boundaries with the font's widths, long words broken", () => {
    assert.strictEqual(wrappedLines("", 10), 1)
    assert.strictEqual(wrappedLines("short", 10), 1)
    assert.strictEqual(wrappedLines("one two three four", 10), 2)
    assert.strictEqual(wrappedLines("a\nb", 30), 2)
    assert.strictEqual(wrappedLines("x".repeat(20), 10), 3)
    // Narrow letters take less than a digit's width each, wide ones more.
    assert.strictEqual(wrappedLines("i".repeat(100), 60), 1)
    assert.strictEqual(wrappedLines("W".repeat(40), 60), 2)
    // As LibreOffice wraps the pt-BR customers README's groupsId syntax in its 60-wide column: two lines, not three.
    assert.strictEqual(
      wrappedLines(
        "o id no servidor do registro de customer group; vários: separe-os com |; ou indique-o pelo seu description em groupsDescription",
        60
      ),
      2
    )
  })

  it.effect("sizes the pt-BR customers README rows as LibreOffice prints them, no taller", () =>
    Effect.gen(function*() {
      setLanguage("pt-BR")
      const rows = yield* Effect.ensuring(
        Effect.flatMap(Effect.promise(() => xlsxTemplate(importable.find((r) => r.name === "customers")!)), readmeRows),
        Effect.sync(() => setLanguage("en"))
      )
      const heightOf = (name: string) => rows.find((r) => r.name === name)?.height
      // id and legalName hold one line each; name's "Obrigatório ao criar um registro" wraps to two in its 16-wide
      // column, address's example and groupsId's syntax to two.
      assert.deepStrictEqual(
        ["id", "legalName", "name", "address", "groupsId", "groupsDescription"].map(heightOf),
        [15, 15, 30, 30, 30, 30]
      )
    }))

  it.scoped("the example onboarding workbook's README prints landscape, each row as tall as its wrapped text", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-readme-")
      const file = Path.join(dir, "example-onboarding.xlsx")
      yield* writeExampleWorkbook(file).pipe(Effect.provide(NodeContext.layer))
      const sheet = yield* readmeOf(new Uint8Array(readFileSync(file)))
      assert.strictEqual(sheet.pageSetup.orientation, "landscape")
      assert.strictEqual(sheet.pageSetup.fitToWidth, 1)
      const widths = [1, 2, 3, 4].map((i) => sheet.getColumn(i).width ?? 10)
      sheet.eachRow((row, n) => {
        const merged = sheet.getCell(n, 2).master.address === `A${n}`
        let lines = 1
        for (let i = 1; i <= 4; i++) {
          const text = String(row.getCell(i).value ?? "")
          if (text === "" || (merged && i === 2)) continue
          const width = merged && i === 1 ? widths[0]! + widths[1]! : widths[i - 1]!
          lines = Math.max(lines, Math.ceil((text.length * 0.45) / width))
        }
        assert.isDefined(row.height, `README row ${n} has no height`)
        assert.isAtLeast(row.height, 15 * lines, `README row ${n}: ${lines} lines`)
      })
      // The introduction wraps over the first two columns, not in the first one's 34 widths.
      assert.strictEqual(sheet.getCell(2, 2).master.address, "A2")
      assert.isAtMost(sheet.getRow(2).height, 45)
    }))

  for (const language of ["en", "pt-BR"] as const) {
    it.effect(
      `merges and wraps the lines above the table within the first printed page (${language})`,
      () =>
        Effect.gen(function*() {
          setLanguage(language)
          try {
            const books = [
              ...(yield* readmesIn(language)).map(({ resource, sheet }) => ({
                name: resource,
                sheet: Effect.succeed(sheet),
                widths: [28, 16, 44, 50, 34, 60, 30]
              })),
              {
                name: "onboarding workbook",
                sheet: Effect.flatMap(Effect.promise(() => workbookTemplate(importable)), readmeOf),
                widths: [8, 28, 36, 60]
              }
            ]
            for (const book of books) {
              const sheet = yield* book.sheet
              const span = firstPageColumns("landscape", book.widths)
              const room = book.widths.slice(0, span).reduce((a, b) => a + b, 0)
              // The whole sheet when it prints one page across (shrunk to fit); else within a Letter page across at
              // 100% (about 150 widths less the cells' padding).
              if (span < book.widths.length) assert.isAtMost(room, 130, book.name)
              for (let n = 1; n <= 9; n++) {
                const cell = sheet.getCell(n, 1)
                const text = String(cell.value ?? "")
                if (text === "") continue
                const where = `${book.name} README row ${n}: ${text.slice(0, 40)}`
                assert.isTrue(cell.alignment?.wrapText === true, `${where} wraps`)
                if (span > 1) {
                  assert.strictEqual(
                    sheet.getCell(n, span).master.address,
                    `A${n}`,
                    `${where} is merged to column ${span}`
                  )
                }
                if (span < book.widths.length) {
                  assert.notStrictEqual(sheet.getCell(n, span + 1).master.address, `A${n}`, `${where} stops at ${span}`)
                }
                const size = n === 1 ? 14 / 11 : 1
                assert.isAtLeast(
                  sheet.getRow(n).height,
                  Math.floor(15 * size * Math.ceil((text.length * 0.45 * size) / room)),
                  where
                )
              }
            }
          } finally {
            setLanguage("en")
          }
        }),
      60_000
    )
  }

  for (const language of ["en", "pt-BR"] as const) {
    it.effect(
      `gives each described column's row the height of its wrapped text (${language})`,
      () =>
        Effect.gen(function*() {
          setLanguage(language)
          try {
            for (const { resource, sheet } of yield* readmesIn(language)) {
              const rows = rowsOf(sheet)
              assert.isAbove(rows.length, 0, resource)
              for (const { height, lines, row } of rows) {
                assert.isDefined(height, `${resource} README row ${row} has no height`)
                assert.isAtLeast(height!, 15 * lines, `${resource} README row ${row}: ${lines} lines`)
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
