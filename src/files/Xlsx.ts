/**
 * The XLSX reader: the workbook's sheets and creator come from its ZIP directory (Workbook), the rows of the
 * chosen sheet from exceljs's streaming `WorkbookReader`, batch by batch, so memory stays flat in the sheet's
 * size (shared strings aside: the workbook keeps them in one table). Row numbers are Excel's own.
 *
 * A table this tool wrote past Excel's row limit goes on in `<name> (2)`, `<name> (3)` … (XlsxWriter), each under
 * the same header: in a workbook of ours, the chosen sheet's continuations are read after it, one after another, as
 * one table, and its rows are numbered on across them as in the table's CSV (header 1, data from 2), not by sheet.
 * A workbook of anyone else is read one sheet only, whatever its sheets are called; so is a continuation named
 * by `--sheet`.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type ExcelJS from "exceljs"
import { Readable } from "node:stream"
import type { InputError } from "../Errors.js"
import { didYouMean } from "../Words.js"
import { loadExcelJs } from "./ExcelJs.js"
import { alignRow, checkHeader, columnLetter, inputError, isBlank } from "./Header.js"
import { toolName, writtenByTool } from "./Provenance.js"
import type { ReadOptions, Source, SourceRow } from "./Source.js"
import type { CellIssue } from "./Source.js"
import { type ReadProgress, readProgress } from "./Stall.js"
import { inspectWorkbook, NotAWorkbook, type SheetInfo, type WorkbookInfo } from "./Workbook.js"
import { ChangedFile, XlsxBytes } from "./XlsxBytes.js"
import { CellProblem, hiddenColumnsRef, hiddenRowRef, readCell } from "./XlsxCell.js"
import { nthSheetName, summarySheetName } from "./XlsxWriter.js"
import {
  DamagedEntry,
  EntryTooLarge,
  limitProblem,
  NotAZip,
  openZip,
  signature,
  storedEntry,
  storedHeader,
  type ZipArchive,
  type ZipEntry
} from "./Zip.js"

interface SheetRow {
  readonly row: number
  readonly cells: ReadonlyArray<string>
  readonly numbers: ReadonlySet<number> | undefined
  /** The sheet hides the row (by hand, or an AutoFilter filtered it out). */
  readonly hidden: boolean
  /** The indices (0-based) of the columns the sheet hides, when it hides any. */
  readonly hiddenColumns: ReadonlyArray<number> | undefined
  /** Cells without a usable value (an error value, a formula without a saved result): the row is invalid. */
  readonly cellProblems: ReadonlyArray<CellIssue> | undefined
}

/** What the sheet hides, as ExcelSax hands it on: rows still to come, and the columns. */
interface Hidden {
  readonly rows: Set<number>
  columns: ReadonlyArray<number> | undefined
}

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

interface StreamingCell {
  readonly value: unknown
  readonly numFmt?: string
}
interface StreamingRow {
  readonly number: number
  readonly eachCell: (options: { includeEmpty: boolean }, f: (cell: StreamingCell, column: number) => void) => void
}
interface StreamingSheet {
  readonly parse: () => AsyncIterable<ReadonlyArray<{ readonly eventType: string; readonly value: unknown }>>
}

/**
 * A row's cells as text. A cell without a usable value (an error value …) is marked on the row, which validation
 * makes invalid naming the column; the cell's text is its error code, so the report shows it.
 */
const rowCells = (row: StreamingRow, date1904: boolean, hidden: Hidden): SheetRow => {
  const cells: Array<string> = []
  let numbers: Set<number> | undefined
  let cellProblems: Array<CellIssue> | undefined
  row.eachCell({ includeEmpty: false }, (cell, column) => {
    try {
      const reading = readCell(cell, date1904)
      cells[column - 1] = reading.text
      if (reading.number) (numbers ??= new Set()).add(column - 1)
    } catch (e) {
      if (!(e instanceof CellProblem)) throw e
      cells[column - 1] = e.shown
      ;(cellProblems ??= []).push({ index: column - 1, message: e.message })
    }
  })
  for (let i = 0; i < cells.length; i++) cells[i] ??= ""
  return {
    row: row.number,
    cells,
    numbers,
    hidden: hidden.rows.delete(row.number),
    hiddenColumns: hidden.columns,
    cellProblems
  }
}

/**
 * exceljs reads the archive front to back and can only parse a sheet once it has seen the workbook, its
 * relationships and the shared strings; a sheet met earlier (Excel writes sheets first) is copied whole into a
 * temporary file. So it gets an archive of our own making: the workbook parts, then the chosen sheet alone, each
 * entry renamed to the path exceljs looks for and stored as yauzl inflated it (Zip.ts), sizes in its header.
 * Only the entries of the central directory are read, each checked (limits, size, CRC-32) as it is inflated.
 */
const sheetPart = "xl/worksheets/sheet1.xml"
const emptySharedStrings = Buffer.from(
  "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<sst xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" count=\"0\" uniqueCount=\"0\"/>"
)

type Part = { readonly name: string; readonly entry: ZipEntry } | { readonly name: string; readonly data: Uint8Array }

const partsFor = (book: WorkbookInfo, sheet: SheetInfo): ReadonlyArray<Part> => {
  const part = (name: string, path: string | undefined): ReadonlyArray<Part> => {
    const entry = path === undefined ? undefined : book.entries.get(path)
    return entry === undefined ? [] : [{ name, entry }]
  }
  const sharedStrings = part("xl/sharedStrings.xml", book.sharedStrings)
  return [
    ...part("xl/_rels/workbook.xml.rels", "xl/_rels/workbook.xml.rels"),
    ...part("xl/workbook.xml", "xl/workbook.xml"),
    ...part("xl/styles.xml", book.styles),
    ...(sharedStrings.length > 0 ? sharedStrings : [{ name: "xl/sharedStrings.xml", data: emptySharedStrings }]),
    ...part(sheetPart, sheet.target)
  ]
}

/**
 * Why the archive could not be read as planned (damaged, over a limit, changed since it was opened). exceljs
 * never hears of it: its ZIP parser leaves an entry that ends early waiting for data forever, so each wait for
 * its rows ends at the failure instead (`nextOrFailure`).
 */
class ReadFailure {
  cause: unknown = undefined
  #wake: ((cause: unknown) => void) | undefined
  fail(cause: unknown) {
    if (this.cause !== undefined) return
    this.cause = cause
    this.#wake?.(cause)
  }
  /** `next`, or the failure if it comes first. */
  nextOrFailure<A>(next: () => Promise<A>): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      if (this.cause !== undefined) return reject(this.cause)
      this.#wake = reject
      next().then(resolve, reject).finally(() => (this.#wake = undefined))
    })
  }
}

const sameEntry = (a: ZipEntry, b: ZipEntry | undefined) =>
  b !== undefined && a.crc === b.crc && a.size === b.size && a.compressedSize === b.compressedSize

/**
 * The bytes of the composed archive, from the file's central directory opened again (through `bytes`: what an
 * earlier pass kept is not read again). A failure ends them early.
 */
async function* archiveBytes(
  file: string,
  bytes: XlsxBytes,
  parts: ReadonlyArray<Part>,
  failure: ReadFailure,
  progress: ReadProgress
): AsyncGenerator<Buffer> {
  let zip: ZipArchive | undefined
  try {
    zip = await openZip(file, bytes)
    for (const part of parts) {
      if ("data" in part) {
        yield storedEntry(part.name, part.data)
        continue
      }
      const entry = zip.entries.get(part.entry.name)
      if (!sameEntry(part.entry, entry)) {
        throw new ChangedFile(
          `${part.entry.name} changed since the file was opened (was it changed while it was read?)`
        )
      }
      yield storedHeader(part.name, entry!.size, entry!.crc)
      for await (const chunk of await zip.stream(entry!)) {
        progress.tick()
        yield chunk as Buffer
      }
    }
    // An (empty) end-of-central-directory record: after the last entry unzipper reads on for the next signature,
    // and when the consumer is slower than the file (async row checks, a busy machine) it otherwise meets the
    // end of input and fails with FILE_ENDED.
    const end = Buffer.alloc(22)
    end.writeUInt32LE(signature.end, 0)
    yield end
  } catch (cause) {
    failure.fail(cause)
  } finally {
    zip?.close()
  }
}

/** The raw rows of the (only) sheet, in batches as exceljs parses them; what the sheet hides goes to `hidden`. */
async function* sheetBatches(
  reader: InstanceType<typeof ExcelJS.stream.xlsx.WorkbookReader>,
  hidden: Hidden
): AsyncGenerator<ReadonlyArray<StreamingRow>> {
  for await (const yielded of reader) {
    const sheet = yielded as unknown as StreamingSheet
    for await (const batch of sheet.parse()) {
      const rows: Array<StreamingRow> = []
      for (const e of batch) {
        if (e.eventType === "row") rows.push(e.value as StreamingRow)
        else if (e.eventType === "hyperlink") {
          const { ref, rId } = e.value as { readonly ref?: string; readonly rId?: string }
          if (ref === hiddenRowRef) hidden.rows.add(Number(rId))
          else if (ref === hiddenColumnsRef && rId !== undefined) {
            hidden.columns = rId.split(",").map((n) => Number(n) - 1)
          }
        }
      }
      if (rows.length > 0) yield rows
    }
  }
}

/** What the user reads when the archive cannot be read. */
const archiveProblem = (file: string, cause: unknown): InputError =>
  cause instanceof EntryTooLarge
    ? inputError(file, `refused: ${cause.message}; saved as CSV, the sheet has no such limit`, { cause })
    : cause instanceof DamagedEntry
    ? inputError(file, `damaged .xlsx: ${cause.message}`, { cause })
    : cause instanceof NotAZip || cause instanceof NotAWorkbook || cause instanceof ChangedFile
    ? inputError(file, `not a valid .xlsx workbook: ${cause.message}`, { cause })
    : typeof (cause as NodeJS.ErrnoException).code === "string" &&
        typeof (cause as NodeJS.ErrnoException).syscall === "string"
    ? inputError(file, `cannot be read: ${describe(cause)}`, { cause })
    : inputError(file, `not a valid .xlsx workbook: ${describe(cause)}`, { cause })

/** Excel's last row: a sheet numbering rows past it was not written by a spreadsheet. */
const excelMaxRow = 1_048_576

/**
 * The rows of one sheet, each with its cells. Row numbers must rise from row to row: a sheet that repeats one
 * or goes back (two `<row r="2">`) is refused, so that every row read is one row of the file, and its number one
 * row's alone.
 */
const sheetRows = (
  file: string,
  bytes: XlsxBytes,
  sheet: string,
  parts: ReadonlyArray<Part>,
  date1904: boolean
): Stream.Stream<SheetRow, InputError> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const failure = new ReadFailure()
      const progress = readProgress()
      const input = yield* Effect.acquireRelease(
        Effect.sync(() => Readable.from(archiveBytes(file, bytes, parts, failure, progress), { objectMode: false })),
        (s) => Effect.sync(() => s.destroy())
      )
      const excel = yield* Effect.promise(loadExcelJs)
      const reader = new excel.stream.xlsx.WorkbookReader(input, {
        worksheets: "emit",
        sharedStrings: "cache",
        // Only ExcelSax's marks of what the sheet hides come as hyperlinks: the sheet's own links have no part here.
        hyperlinks: "emit",
        styles: "cache",
        entries: "ignore"
      })
      // Never waited for on the way out: a generator stuck inside exceljs would hold the stop up forever.
      const hidden: Hidden = { rows: new Set(), columns: undefined }
      const batches = yield* Effect.acquireRelease(
        Effect.sync(() => sheetBatches(reader, hidden)),
        (b) => Effect.sync(() => void b.return(undefined).catch(() => {}))
      )
      let last = 0
      const pull = Effect.tryPromise({
        try: () => failure.nextOrFailure(() => batches.next()),
        catch: (cause) => Option.some(archiveProblem(file, failure.cause ?? cause))
      }).pipe(
        Effect.flatMap((next) => {
          if (next.done === true) return Effect.fail(Option.none())
          progress.tick()
          for (const row of next.value) {
            const n = row.number
            if (!Number.isInteger(n) || n < 1 || n > excelMaxRow) {
              return Effect.fail(
                Option.some(
                  inputError(
                    file,
                    `sheet "${sheet}" has a row numbered ${JSON.stringify(n)}: Excel numbers rows 1 to ${excelMaxRow}`,
                    { row: last + 1 }
                  )
                )
              )
            }
            if (n <= last) {
              return Effect.fail(
                Option.some(
                  inputError(
                    file,
                    `sheet "${sheet}" lists row ${n} ${
                      n === last ? "twice" : `after row ${last}`
                    }: a sheet's rows come once each, in order (a damaged or hand-made file)`,
                    { row: n }
                  )
                )
              )
            }
            last = n
          }
          return Effect.succeed(Chunk.unsafeFromArray(next.value))
        })
      )
      return Stream.repeatEffectChunkOption(progress.guard(pull)).pipe(
        Stream.map((row) => rowCells(row, date1904, hidden))
      )
    })
  )

const sheetNames = (book: WorkbookInfo) => book.sheets.map((s) => `"${s.name}"`).join(", ")

/**
 * `--sheet`, else the sheet named after the resource, else the first visible one (in the tool's own workbooks,
 * the first after the Summary sheet a report opens with).
 */
const chooseSheet = (file: string, book: WorkbookInfo, options: ReadOptions): Effect.Effect<SheetInfo, InputError> => {
  const named = (name: string) =>
    book.sheets.find((s) => s.name === name) ??
      book.sheets.find((s) => s.name.trim().toLowerCase() === name.trim().toLowerCase())
  if (book.sheets.length === 0) return Effect.fail(inputError(file, "not a valid .xlsx workbook: it has no sheets"))
  if (options.sheet !== undefined) {
    const sheet = named(options.sheet)
    return sheet
      ? Effect.succeed(sheet)
      : Effect.fail(
        inputError(
          file,
          `no sheet named "${options.sheet}" (--sheet)${
            didYouMean(options.sheet, book.sheets.map((s) => s.name))
          }; the workbook has ${sheetNames(book)}`
        )
      )
  }
  const byResource = options.resource !== undefined ? named(options.resource) : undefined
  const table = (s: SheetInfo) => !s.hidden && !(book.creator === toolName && s.name === summarySheetName)
  return Effect.succeed(byResource ?? book.sheets.find(table) ?? book.sheets[0]!)
}

/**
 * The sheets the writer went on with after `sheet`: `name (2)`, `name (3)` … for as long as the next one exists.
 * A continuation's own 31-character name is its `(2)` too: that is no continuation.
 */
const continuationsOf = (book: WorkbookInfo, sheet: SheetInfo): ReadonlyArray<SheetInfo> => {
  const found: Array<SheetInfo> = []
  for (let n = 2;; n++) {
    const next = book.sheets.find((s) => s.name === nthSheetName(sheet.name, n))
    if (next === undefined || next === sheet) return found
    found.push(next)
  }
}

/** The parts `sheet` is read with, refused now (before any row) when one is missing or over a limit. */
const partsOf = (
  file: string,
  book: WorkbookInfo,
  sheet: SheetInfo
): Effect.Effect<ReadonlyArray<Part>, InputError> => {
  if (!book.entries.has(sheet.target)) {
    return Effect.fail(
      inputError(
        file,
        `not a valid .xlsx workbook: sheet "${sheet.name}" has no part in the archive (${sheet.target || "no target"})`
      )
    )
  }
  const parts = partsFor(book, sheet)
  for (const part of parts) {
    const problem = "entry" in part ? limitProblem(part.entry) : undefined
    if (problem !== undefined) return Effect.fail(archiveProblem(file, new EntryTooLarge(problem)))
  }
  return Effect.succeed(parts)
}

/**
 * A sheet's first non-blank row (the header). What this read takes from the sheet is handed to the next read of
 * it (XlsxBytes), the first pass over the rows, which goes on from there.
 */
const firstRow = (
  file: string,
  bytes: XlsxBytes,
  book: WorkbookInfo,
  sheet: SheetInfo,
  parts: ReadonlyArray<Part>
) =>
  sheetRows(file, bytes, sheet.name, parts, book.date1904).pipe(
    Stream.filter((r) => !isBlank(r.cells)),
    Stream.runHead
  )

export const openXlsx = Effect.fn("Xlsx.open")(function*(file: string, options: ReadOptions) {
  const bytes = new XlsxBytes(file)
  const book = yield* readProgress().guard(
    Effect.tryPromise({
      try: () => inspectWorkbook(file, bytes),
      catch: (cause) => archiveProblem(file, cause)
    })
  )
  const sheet = yield* chooseSheet(file, book, options)
  // The sheets of the table are read each pass; the workbook-wide parts are kept after their first read.
  for (const s of [sheet, ...continuationsOf(book, sheet)]) {
    const entry = book.entries.get(s.target)
    if (entry !== undefined) bytes.stream(entry)
  }
  const parts = yield* partsOf(file, book, sheet)
  const first = yield* firstRow(file, bytes, book, sheet, parts)
  if (Option.isNone(first)) return yield* inputError(file, `sheet "${sheet.name}" is empty: no header row`)
  const byTool = yield* Effect.promise(() => writtenByTool({ file, format: "xlsx", creator: book.creator }))
  const headerRow = first.value.row
  // A header cell without a usable value names no column: the file cannot be read as a table.
  const headerProblem = first.value.cellProblems?.[0]
  if (headerProblem !== undefined) {
    return yield* inputError(file, headerProblem.message, { row: headerRow, column: columnLetter(headerProblem.index) })
  }
  const header = yield* checkHeader(file, headerRow, first.value.cells, byTool, options.lenientHeader)
  const includeHidden = options.includeHidden === true
  // The columns the sheet hides (its first sheet's: the tool's continuations hide none).
  const hiddenColumns = includeHidden ? [] : (first.value.hiddenColumns ?? [])
  // Each sheet of the table and the row of its header; the continuations' headers are checked now, before any row.
  const sheets: Array<{ readonly name: string; readonly parts: ReadonlyArray<Part>; readonly headerRow: number }> = [{
    name: sheet.name,
    parts,
    headerRow
  }]
  for (const next of byTool ? continuationsOf(book, sheet) : []) {
    const nextParts = yield* partsOf(file, book, next)
    const top = yield* firstRow(file, bytes, book, next, nextParts)
    const names = Option.flatMap(top, (r) => Either.getRight(checkHeader(file, r.row, r.cells, byTool)))
    if (
      Option.isNone(top) ||
      !Option.exists(names, (n) => n.length === header.length && n.every((name, i) => name === header[i]))
    ) {
      return yield* inputError(file, `sheet "${next.name}" does not repeat the header of "${sheet.name}"`)
    }
    sheets.push({ name: next.name, parts: nextParts, headerRow: top.value.row })
  }
  const rows: Stream.Stream<SourceRow, InputError> = Stream.suspend(() => {
    // The table's number of the last row read, blank ones included. A continuation's rows are numbered on from
    // the sheet before it (its first data row follows that sheet's last row), so that a row number means what it
    // means in the table's CSV: with full sheets, the second one's first data row is 1,048,577. The first sheet
    // keeps Excel's numbers.
    let last = 0
    const read = sheets.map((s, index) =>
      Stream.suspend(() => {
        const shift = index === 0 ? 0 : last - s.headerRow
        return sheetRows(file, bytes, s.name, s.parts, book.date1904).pipe(
          Stream.filterMap((r) => {
            const row = (last = r.row + shift)
            const aligned = r.row <= s.headerRow ? undefined : alignRow(header.length, row, r.cells)
            if (aligned === undefined) return Option.none()
            return Option.some({
              ...aligned,
              ...(r.numbers !== undefined ? { numbers: r.numbers } : {}),
              ...(r.cellProblems !== undefined ? { cellProblems: r.cellProblems } : {}),
              ...(r.hidden && !includeHidden ? { hidden: true as const } : {})
            })
          })
        )
      })
    )
    // A read that reached the end hashes the rest of the file (the journal's sha256), mostly from what was kept.
    const hashed = Stream.drain(Stream.fromEffect(Effect.tryPromise({
      try: () => bytes.finish(),
      catch: (cause) => archiveProblem(file, cause)
    })))
    return Stream.concat(Stream.concatAll(Chunk.unsafeFromArray(read)), hashed)
  })
  const source: Source = {
    file,
    format: "xlsx",
    header,
    headerRow,
    writtenByTool: byTool,
    sheet: sheet.name,
    ...(hiddenColumns.length > 0 ? { hiddenColumns } : {}),
    sha256: () => bytes.sha256,
    rows
  }
  return source
})
