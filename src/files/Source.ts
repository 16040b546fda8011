/**
 * What a reader hands the pipelines: an input file's header and a re-runnable stream of its data rows, each
 * carrying the row number a spreadsheet user sees.
 */
import type { Stream } from "effect"
import type { InputError } from "../Errors.js"

export interface ReadOptions {
  /** XLSX sheet; default: the sheet named after `resource`, else the first. */
  readonly sheet?: string | undefined
  readonly resource?: string | undefined
  /**
   * auto: BOM → utf-8; the first non-ASCII character valid UTF-8 → utf-8 (and the rest must be); else
   * windows-1252 (Excel in Brazil). Binary content → InputError.
   */
  readonly encoding: "auto" | "utf-8" | "windows-1252"
  /** auto: sniffed from the first lines, outside quotes; ambiguous → InputError naming --delimiter. */
  readonly delimiter: "auto" | "," | ";" | "\t"
  /** The first non-blank row is taken as it is, even blank or repeating names (a title row: see `mapping/`). */
  readonly lenientHeader?: boolean | undefined
  /** XLSX: rows and columns the sheet hides are read as any other (default: rows marked `hidden`, columns listed). */
  readonly includeHidden?: boolean | undefined
}

/** A cell without a usable value (XLSX: an error value, a formula without a saved result): what is wrong with it. */
export interface CellIssue {
  /** The cell's index in `cells`. */
  readonly index: number
  readonly message: string
}

export interface SourceRow {
  /** The spreadsheet row a user sees (header = 1, first data row = 2), true across multi-line quoted cells. */
  readonly row: number
  /** Aligned with the header; "" for missing cells. A ragged row also carries its cells beyond the header. */
  readonly cells: ReadonlyArray<string>
  /** The row has non-empty cells beyond the header's columns (they follow the aligned cells in `cells`). */
  readonly ragged?: boolean
  /**
   * Indices of the cells written from a number value (XLSX numeric cells and formula results): plain decimal
   * notation with `.` as the mark, whatever mark the file's typed numbers use. Absent when there are none.
   */
  readonly numbers?: ReadonlySet<number>
  /**
   * XLSX: the sheet hides the row (by hand, or an AutoFilter filtered it out) and `includeHidden` was not asked:
   * it is reported `skipped`, never sent. Its number is the sheet's all the same.
   */
  readonly hidden?: true
  /** XLSX: cells without a usable value (their text is the error code, or empty); the row is invalid. */
  readonly cellProblems?: ReadonlyArray<CellIssue>
  /** A row a mapping profile rewrote: the row as the file has it, which the report repeats. */
  readonly original?: { readonly cells: ReadonlyArray<string>; readonly numbers?: ReadonlySet<number> | undefined }
}

export interface Source {
  /** As given by the user. */
  readonly file: string
  readonly format: "csv" | "xlsx"
  /** Trimmed column names; trailing unnamed columns are dropped (spreadsheets leave them behind). */
  readonly header: ReadonlyArray<string>
  /** The spreadsheet row of the header (the first non-blank row). */
  readonly headerRow?: number
  /** This tool wrote the file (export or report); the formula guard (`Guard.restore`) is reversed in every file. */
  readonly writtenByTool: boolean
  readonly sheet?: string
  /** XLSX: the indices (0-based) of the columns the sheet hides (absent with `includeHidden`): never sent. */
  readonly hiddenColumns?: ReadonlyArray<number>
  /** CSV: the encoding the file is read in (decided by its first non-ASCII character; final after a pass). */
  readonly encoding?: "utf-8" | "windows-1252"
  /**
   * The sha256 of the file's bytes as the last pass over `rows` that reached the end read them (the hash rides on
   * that read; an XLSX's on the reads of its directory, parts and sheets); undefined before one.
   */
  readonly sha256?: () => string | undefined
  readonly delimiter?: string
  /** A fresh stream of the data rows each time it is run (files are read twice). Blank rows skipped. */
  readonly rows: Stream.Stream<SourceRow, InputError>
}

/**
 * About how many characters a row took in its file: its cells as the file has them (before a profile rewrote
 * them), a delimiter after each but the last and a line end. What a CSV's progress and size projections count.
 */
export const fileChars = (row: SourceRow): number => {
  const cells = row.original?.cells ?? row.cells
  let n = cells.length
  for (let i = 0; i < cells.length; i++) n += cells[i]!.length
  return n
}
