/**
 * The contract's formula-injection guard. A cell that a spreadsheet would run as a formula (it starts with `=`,
 * `+`, `-`, `@`, tab or CR and is not a plain number) is written with a leading `'`; the importer strips that
 * `'` again from files this tool wrote. `restore(neutralize(x)) === x` for every string: a value that already
 * starts with `'` before a formula trigger gets one more `'`, so a guard is never mistaken for data.
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

/** Most cells start with neither `'` nor a trigger: they are answered without looking further (every cell of every report passes here). */
const plainStart = (cell: string): boolean => cell.length === 0 || (cell[0] !== "'" && !triggers.has(cell[0]!))

/** Makes a cell inert in a spreadsheet: a leading `'` when the text (past any `'` it already has) is formula-like. */
export const neutralize = (
  cell: string
): string => (plainStart(cell) || !isFormulaLike(afterApostrophes(cell).rest) ? cell : `'${cell}`)

/**
 * The guard for a workbook's inline strings, which a spreadsheet never runs: only a cell that already starts with
 * `'` before formula-like text gets one more, so that `restore` still reads every cell back exactly; other cells
 * are written as they are (no visible `'` in the report).
 */
export const neutralizeInline = (cell: string): string => (cell[0] === "'" ? neutralize(cell) : cell)

/** Reverses `neutralize` exactly: strips one `'` only from a cell `neutralize` would have produced. */
export const restore = (cell: string): string => {
  if (cell[0] !== "'") return cell
  const { count, rest } = afterApostrophes(cell)
  return count > 0 && isFormulaLike(rest) ? cell.slice(1) : cell
}
