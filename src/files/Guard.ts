/**
 * The contract's formula-injection guard. A cell that a spreadsheet would run as a formula (it starts with `=`,
 * `+`, `-`, `@`, tab or CR and is not a plain number) is written with a leading `'`, and so is every piece of it
 * after a `,` `;` tab or `|` that would start one once a spreadsheet split the cell there; the importer strips
 * those `'` again from every file it reads (a spreadsheet's copy of ours keeps them as text).
 * `restore(neutralize(x)) === x` for every string: a piece that already starts with `'` before a formula trigger
 * gets one more `'`, so a guard is never mistaken for data.
 */

const triggers = new Set(["=", "+", "-", "@", "\t", "\r"])

/** A plain number as spreadsheets and the importer read it: `-12,5`, `+55`, `-1.234,56`, `-0.5`, `-1e5`. */
const plainNumber = /^[+-]?(?:\d+(?:[.,]\d+)*|[.,]\d+)(?:[eE][+-]?\d+)?$/

/** Would a spreadsheet run this text as a formula? */
export const isFormulaLike = (text: string): boolean =>
  text.length > 0 && triggers.has(text[0]!) && !plainNumber.test(text)

/** The text after its leading apostrophes, and how many there were. */
const afterApostrophes = (text: string): { readonly count: number; readonly rest: string } => {
  let count = 0
  while (text[count] === "'") count++
  return { count, rest: text.slice(count) }
}

/**
 * Where a spreadsheet may split a cell when it opens a CSV with another separator than ours (Excel and LibreOffice
 * in Brazil use `;`; a paste splits on tab; some imports on `|`). What follows any of them may start a formula.
 */
const splitters = new Set([",", ";", "\t", "|"])

/**
 * A cell in which nothing after a splitter could be guarded or restored (most cells): answered by one scan. Every
 * trigger is in it, tab too (`=|\t1` split on `|` leaves `\t1`, which a spreadsheet runs).
 */
const noSplitStart = /[,;\t|] *['=+\-@\t\r]/

/** Most cells start with neither `'` nor a trigger: they are answered without looking further (every cell of every report passes here). */
const plainStart = (cell: string): boolean => cell.length === 0 || (cell[0] !== "'" && !triggers.has(cell[0]!))

/**
 * Would the piece of `cell` at `at` (past its apostrophes) run as a formula once a spreadsheet split the cell on
 * any of the splitters? It starts with a trigger and, cut at the next of some splitter, is not a plain number.
 */
const formulaPieceAt = (cell: string, at: number): boolean => {
  let k = at
  while (cell[k] === "'") k++
  if (k >= cell.length || !triggers.has(cell[k]!)) return false
  for (const d of splitters) {
    const end = cell.indexOf(d, k + 1)
    if (!plainNumber.test(cell.slice(k, end < 0 ? cell.length : end))) return true
  }
  return false
}

/**
 * Where the guard goes in `cell`, and whether the piece there starts with `'` already: the start of the cell when
 * the whole text (past its apostrophes) is formula-like, and the start of every piece after a splitter (past its
 * spaces, which a spreadsheet may trim) that would run as a formula once split there.
 */
const guardPlaces = (cell: string): ReadonlyArray<{ readonly at: number; readonly quoted: boolean }> => {
  const places: Array<{ at: number; quoted: boolean }> = []
  if (!plainStart(cell) && isFormulaLike(afterApostrophes(cell).rest)) places.push({ at: 0, quoted: cell[0] === "'" })
  if (!noSplitStart.test(cell)) return places
  for (let i = 0; i < cell.length; i++) {
    if (!splitters.has(cell[i]!)) continue
    let at = i + 1
    while (cell[at] === " ") at++
    if (formulaPieceAt(cell, at)) places.push({ at, quoted: cell[at] === "'" })
  }
  return places
}

const guardAt = (cell: string, places: ReadonlyArray<{ readonly at: number }>): string => {
  if (places.length === 0) return cell
  let out = ""
  let from = 0
  for (const { at } of places) {
    out += `${cell.slice(from, at)}'`
    from = at
  }
  return out + cell.slice(from)
}

/**
 * Makes a cell inert in a spreadsheet, whatever separator it opens the file with: a `'` at the start of the cell
 * and of every piece after a `,` `;` tab or `|` whose text (past any `'` it already has) is formula-like
 * (`Loja;=1+1` → `Loja;'=1+1`).
 */
export const neutralize = (cell: string): string =>
  plainStart(cell) && !noSplitStart.test(cell) ? cell : guardAt(cell, guardPlaces(cell))

/**
 * The guard for a workbook's inline strings, which a spreadsheet never runs nor splits: only a piece that already
 * starts with `'` before formula-like text gets one more, so that `restore` still reads every cell back exactly;
 * other cells are written as they are (no visible `'` in the report).
 */
export const neutralizeInline = (cell: string): string =>
  !cell.includes("'") ? cell : guardAt(cell, guardPlaces(cell).filter((p) => p.quoted))

/**
 * Reverses `neutralize` exactly: strips one `'` from each place `neutralize` would have put one (a piece that
 * starts with `'` before formula-like text). Applied to every file read, whoever wrote it: a spreadsheet keeps the
 * guard as text when it saves a copy (report.csv copied for `rerun --fixed`, an export saved as .xlsx), and a
 * leading `'` is how spreadsheets mark text anyway.
 */
export const restore = (cell: string): string => {
  if (!cell.includes("'")) return cell
  const places = guardPlaces(cell).filter((p) => p.quoted)
  if (places.length === 0) return cell
  let out = ""
  let from = 0
  for (const { at } of places) {
    out += cell.slice(from, at)
    from = at + 1
  }
  return out + cell.slice(from)
}
