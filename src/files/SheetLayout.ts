/**
 * How a sheet of ours lays out for print and screen: page setup (landscape, fitted to the page's width, header row
 * repeated), which columns print on the first page, and how many lines a text wraps to in a column (measured with
 * the font's character widths), so that rows can be given the height of their wrapped text — spreadsheets do not
 * grow a row for wrapped text they did not lay out themselves.
 */
import type ExcelJS from "exceljs"

export type Orientation = "landscape" | "portrait"

/** About how many characters (column width units) a page holds across at 100%. */
const pageChars = { landscape: 150, portrait: 100 } as const

/** How many pages across a sheet of these column widths prints on (it is shrunk by at most a third). */
const pagesAcross = (orientation: Orientation, widths: ReadonlyArray<number>) =>
  Math.max(1, Math.ceil(widths.reduce((a, b) => a + b, 0) / (pageChars[orientation] * 1.5)))

/**
 * How a sheet prints: landscape, fitted to the page's width (a sheet wider than about one and a half pages is
 * spread over more pages across rather than shrunk past reading), its header row repeated on every page, the
 * sheet's name and the page number in the footer (as the tool's own reports print: files/XlsxWriter.ts).
 */
export const printable = (sheet: ExcelJS.Worksheet, orientation: Orientation, widths: ReadonlyArray<number>) => {
  sheet.pageSetup = {
    ...sheet.pageSetup,
    orientation,
    fitToPage: true,
    fitToWidth: pagesAcross(orientation, widths),
    fitToHeight: 0,
    printTitlesRow: "1:1",
    margins: { left: 0.4, right: 0.4, top: 0.5, bottom: 0.6, header: 0.3, footer: 0.3 }
  }
  sheet.headerFooter = { ...sheet.headerFooter, oddFooter: "&L&A&R&P / &N" }
}

/**
 * How many leading columns surely print on a sheet's first page: all of them when it prints one page across, else
 * those within a page at 100% on the smaller paper (Letter; A4 is wider), less a margin for the cells' padding.
 */
export const firstPageColumns = (orientation: Orientation, widths: ReadonlyArray<number>): number => {
  if (pagesAcross(orientation, widths) === 1) return widths.length
  let used = 0
  let n = 0
  for (const w of widths) {
    if (used + w > pageChars[orientation] * 0.87) break
    used += w
    n++
  }
  return Math.max(1, n)
}

/** Points per line of the default 11-point font. */
const lineHeight = 15

/**
 * Advance widths of the workbook's font (Calibri 11; Carlito, which LibreOffice uses for it, has the same metrics)
 * in widths of the digit 0, the unit of a column's width. Text is narrower than digits: counted as one digit a
 * character, a row came out a line or two taller than the text it holds.
 */
const glyphWidths: ReadonlyArray<readonly [string, number]> = [
  [" ijl'|.,:;!", 0.47],
  ["ftI()[]-r", 0.64],
  ["/J\"*szcL", 0.8],
  ["xvykgaFSTYZE", 0.92],
  ["ebdhnpquo0123456789#$?_", 1.02],
  ["ABCKPRVX&", 1.1],
  ["DGHNOQU", 1.26],
  ["wm%", 1.5],
  ["MW@", 1.72]
]
const glyphWidth = new Map(glyphWidths.flatMap(([chars, w]) => [...chars].map((c) => [c, w] as const)))

/**
 * A text's width in digit widths, with a margin for a font substituted by wider metrics (DejaVu Sans where no
 * Calibri or Carlito is installed). Accented letters are as wide as their base letter.
 */
const textWidth = (text: string): number => {
  let width = 0
  for (const c of text) width += glyphWidth.get(c) ?? glyphWidth.get(c.normalize("NFD")[0]!) ?? 1.1
  return width * 1.05
}

/**
 * How many lines `text` takes wrapped at word boundaries in a column `width` digits wide (a column's width is
 * counted in the widths of the digit 0; one is kept for the cell's margins).
 */
export const wrappedLines = (text: string, width: number): number => {
  const room = Math.max(1, width - 1)
  const space = textWidth(" ")
  let lines = 0
  for (const paragraph of text.split("\n")) {
    let used = 0
    lines++
    for (const word of paragraph.split(" ")) {
      const length = textWidth(word)
      if (used === 0) used = length
      else if (used + space + length <= room) used += space + length
      else {
        lines++
        used = length
      }
      // A word longer than the column is broken across lines.
      while (used > room) {
        lines++
        used -= room
      }
    }
  }
  return lines
}

/**
 * The height of a row whose cells hold `texts` wrapped in columns `widths` wide, in points: the most lines one of
 * them wraps to. A `size` above 11 is a bold heading's (each character about that much wider, and a line taller).
 */
export const wrappedHeight = (texts: ReadonlyArray<string>, widths: ReadonlyArray<number>, size = 11): number => {
  const scale = size / 11
  const wider = size === 11 ? 1 : scale * 1.05
  const lines = Math.max(1, ...texts.map((text, i) => wrappedLines(text, (widths[i] ?? 10) / wider)))
  return Math.round(lineHeight * scale * lines)
}
