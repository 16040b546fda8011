/**
 * Rules shared by the CSV and XLSX readers: what makes a header usable, which rows are blank, and how a row's
 * cells are aligned with the header.
 */
import * as Either from "effect/Either"
import { InputError } from "../Errors.js"
import { restore } from "./Guard.js"

/** An `InputError`, leaving out the positions that are not known. */
export const inputError = (
  file: string,
  detail: string,
  at: { readonly row?: number | undefined; readonly column?: string | undefined; readonly cause?: unknown } = {}
): InputError =>
  new InputError({
    file,
    detail,
    ...(at.row !== undefined ? { row: at.row } : {}),
    ...(at.column !== undefined ? { column: at.column } : {}),
    ...(at.cause !== undefined ? { cause: at.cause } : {})
  })

/** The spreadsheet letter of a 0-based column index: 0 → A, 26 → AA. */
export const columnLetter = (index: number): string => {
  let n = index + 1
  let letters = ""
  while (n > 0) {
    const r = (n - 1) % 26
    letters = String.fromCharCode(65 + r) + letters
    n = Math.floor((n - 1) / 26)
  }
  return letters
}

export const isBlank = (cells: ReadonlyArray<string>): boolean => cells.every((c) => c.trim() === "")

/**
 * The column names of a header row: trimmed (and unguarded, for files this tool wrote); trailing unnamed
 * columns dropped. An unnamed column before a named one, or a name used twice (case-insensitive), is an error
 * naming the columns.
 */
export const checkHeader = (
  file: string,
  row: number,
  raw: ReadonlyArray<string>,
  writtenByTool: boolean,
  /** The first row may be a title above the real header (a mapping profile finds that one): only trimmed. */
  lenient = false
): Either.Either<ReadonlyArray<string>, InputError> => {
  const names = raw.map((c) => {
    const name = c.replace(/^\uFEFF/, "").trim()
    return writtenByTool ? restore(name) : name
  })
  while (names.length > 0 && names[names.length - 1] === "") names.pop()
  if (lenient) return Either.right(names)
  if (names.length === 0) return Either.left(new InputError({ file, row, detail: "the header row is empty" }))
  const unnamed = names.flatMap((n, i) => (n === "" ? [columnLetter(i)] : []))
  if (unnamed.length > 0) {
    return Either.left(
      new InputError({
        file,
        row,
        column: unnamed[0]!,
        detail: `the header has no name for column${unnamed.length > 1 ? "s" : ""} ${
          unnamed.join(", ")
        }: every column with data needs a name`
      })
    )
  }
  const seen = new Map<string, Array<number>>()
  names.forEach((n, i) => seen.set(n.toLowerCase(), [...(seen.get(n.toLowerCase()) ?? []), i]))
  const duplicates = [...seen.values()].filter((at) => at.length > 1)
  if (duplicates.length > 0) {
    return Either.left(
      new InputError({
        file,
        row,
        column: names[duplicates[0]![0]!]!,
        detail: `duplicate column names: ${
          duplicates.map((at) => `"${names[at[0]!]}" (columns ${at.map(columnLetter).join(", ")})`).join("; ")
        }`
      })
    )
  }
  return Either.right(names)
}

/** A data row's cells aligned with a header of `width` columns; undefined when the row is blank. */
export const alignRow = (
  width: number,
  row: number,
  cells: ReadonlyArray<string>
): { readonly row: number; readonly cells: ReadonlyArray<string>; readonly ragged?: boolean } | undefined => {
  if (isBlank(cells)) return undefined
  if (cells.length === width) return { row, cells }
  if (cells.length < width) return { row, cells: [...cells, ...Array<string>(width - cells.length).fill("")] }
  const extra = cells.slice(width)
  return isBlank(extra) ? { row, cells: cells.slice(0, width) } : { row, cells, ragged: true }
}
