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
import type ExcelJS from "exceljs"
import { Chunk, Effect, Either, Option, Stream } from "effect"
import { open } from "node:fs/promises"
import { Readable } from "node:stream"
import type { InputError } from "../Errors.js"
import { alignRow, checkHeader, columnLetter, inputError, isBlank } from "./Header.js"
import { writtenByTool } from "./Provenance.js"
import type { ReadOptions, Source, SourceRow } from "./Source.js"
import { loadExcelJs } from "./ExcelJs.js"
import { inspectWorkbook, NotAWorkbook, NotAZip, type SheetInfo, type Span, type WorkbookInfo } from "./Workbook.js"
import { CellProblem, readCell } from "./XlsxCell.js"
import { nthSheetName } from "./XlsxWriter.js"
import { storedEntry } from "./Zip.js"

interface SheetRow {
  readonly row: number
  readonly cells: ReadonlyArray<string>
  readonly numbers: ReadonlySet<number> | undefined
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

/** A row's cells as text; a cell without a usable value fails, naming the row and column. */
const rowCells = (file: string, row: StreamingRow, date1904: boolean, columnName: (index: number) => string): Effect.Effect<SheetRow, InputError> =>
  Effect.suspend(() => {
    const cells: Array<string> = []
    let numbers: Set<number> | undefined
    let problem: InputError | undefined
    row.eachCell({ includeEmpty: false }, (cell, column) => {
      if (problem !== undefined) return
      try {
        const reading = readCell(cell, date1904)
        cells[column - 1] = reading.text
        if (reading.number) (numbers ??= new Set()).add(column - 1)
      } catch (e) {
        if (!(e instanceof CellProblem)) throw e
        problem = inputError(file, e.message, { row: row.number, column: columnName(column - 1) })
      }
    })
    if (problem !== undefined) return Effect.fail(problem)
    for (let i = 0; i < cells.length; i++) cells[i] ??= ""
    return Effect.succeed({ row: row.number, cells, numbers })
  })

/**
 * exceljs reads the archive front to back and can only parse a sheet once it has seen the workbook, its
 * relationships and the shared strings; a sheet met earlier (Excel writes sheets first) is copied whole into a
 * temporary file. So it gets an archive of our own making, read from the file in that order: the workbook parts,
 * then the chosen sheet alone, each entry renamed to the path exceljs looks for.
 */
const sheetPart = "xl/worksheets/sheet1.xml"
const emptySharedStrings = Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="0" uniqueCount="0"/>')

type Part = { readonly name: string; readonly span: Span } | { readonly name: string; readonly data: Uint8Array }

const partsFor = (book: WorkbookInfo, sheet: SheetInfo): ReadonlyArray<Part> => {
  const part = (name: string, path: string | undefined): ReadonlyArray<Part> => {
    const span = path === undefined ? undefined : book.spans.get(path)
    return span === undefined ? [] : [{ name, span }]
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

const chunkBytes = 64 * 1024

/** Set when the file cannot be read as planned (changed since it was opened): the archive then ends early. */
interface ReadFailure {
  cause?: unknown
}

/**
 * The bytes of the composed archive. A read failure ends the archive instead of failing the stream: exceljs pipes
 * its input, and a piped stream's error would leave it waiting for data forever.
 */
async function* archiveBytes(file: string, parts: ReadonlyArray<Part>, failure: ReadFailure): AsyncGenerator<Buffer> {
  const handle = await open(file, "r").catch((cause: unknown) => {
    failure.cause = cause
    return undefined
  })
  if (handle === undefined) return
  const read = async (position: number, length: number) => {
    const buffer = Buffer.alloc(length)
    const { bytesRead } = await handle.read(buffer, 0, length, position)
    if (bytesRead !== length) throw new Error("the file ends too early (was it changed while it was read?)")
    return buffer
  }
  try {
    for (const part of parts) {
      if ("data" in part) {
        yield storedEntry(part.name, part.data)
        continue
      }
      const header = await read(part.span.start, 30)
      const nameLength = header.readUInt16LE(26)
      const extra = await read(part.span.start + 30 + nameLength, header.readUInt16LE(28))
      const name = Buffer.from(part.name, "utf8")
      header.writeUInt16LE(name.length, 26)
      const dataStart = part.span.start + 30 + nameLength + extra.length
      const { entry } = part.span
      let dataEnd = part.span.end
      // Sizes given after the data (flag bit 3, as streaming writers do, ours included) make unzipper search the
      // compressed bytes for the descriptor's 4-byte signature, which they hold by chance with odds of about their
      // size ÷ 4 GiB (2.5% for the sheet of a 1M-row report): the read then fails. The central directory knows
      // the sizes: they go into the header instead, and the descriptor is left out. (Not for ZIP64 sizes, which
      // a 32-bit header field cannot hold.)
      if ((header.readUInt16LE(6) & 0x08) !== 0 && entry.compressedSize < 0xffffffff && entry.size < 0xffffffff) {
        header.writeUInt16LE(header.readUInt16LE(6) & ~0x08, 6)
        header.writeUInt32LE(entry.crc, 14)
        header.writeUInt32LE(entry.compressedSize, 18)
        header.writeUInt32LE(entry.size, 22)
        dataEnd = dataStart + entry.compressedSize
      }
      yield Buffer.concat([header, name, extra])
      for (let at = dataStart; at < dataEnd; at += chunkBytes) yield await read(at, Math.min(chunkBytes, dataEnd - at))
    }
    // An (empty) end-of-central-directory record: after the last entry unzipper reads on for the next signature,
    // and when the consumer is slower than the file (async row checks, a busy machine) it otherwise meets the
    // end of input and fails with FILE_ENDED.
    const end = Buffer.alloc(22)
    end.writeUInt32LE(0x06054b50, 0)
    yield end
  } catch (cause) {
    failure.cause = cause
  } finally {
    await handle.close()
  }
}

/** The raw rows of the (only) sheet, in batches as exceljs parses them. */
async function* sheetBatches(reader: InstanceType<typeof ExcelJS.stream.xlsx.WorkbookReader>, failure: ReadFailure): AsyncGenerator<ReadonlyArray<StreamingRow>> {
  try {
    for await (const yielded of reader) {
      const sheet = yielded as unknown as StreamingSheet
      for await (const batch of sheet.parse()) {
        const rows = batch.filter((e) => e.eventType === "row").map((e) => e.value as StreamingRow)
        if (rows.length > 0) yield rows
      }
    }
  } catch (cause) {
    throw failure.cause ?? cause
  }
  if (failure.cause !== undefined) throw failure.cause
}

const sheetRows = (file: string, parts: ReadonlyArray<Part>, date1904: boolean, columnName: (index: number) => string): Stream.Stream<SheetRow, InputError> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const failure: ReadFailure = {}
      const input = yield* Effect.acquireRelease(
        Effect.sync(() => Readable.from(archiveBytes(file, parts, failure), { objectMode: false })),
        (s) => Effect.sync(() => s.destroy())
      )
      const excel = yield* Effect.promise(loadExcelJs)
      const reader = new excel.stream.xlsx.WorkbookReader(input, {
        worksheets: "emit",
        sharedStrings: "cache",
        hyperlinks: "ignore",
        styles: "cache",
        entries: "ignore"
      })
      return Stream.fromAsyncIterable(sheetBatches(reader, failure), (cause) => inputError(file, `not a valid .xlsx workbook: ${describe(cause)}`, { cause }))
    })
  ).pipe(
    Stream.flattenIterables,
    Stream.mapEffect((row) => rowCells(file, row, date1904, columnName))
  )

const sheetNames = (book: WorkbookInfo) => book.sheets.map((s) => `"${s.name}"`).join(", ")

/** `--sheet`, else the sheet named after the resource, else the first visible one. */
const chooseSheet = (file: string, book: WorkbookInfo, options: ReadOptions): Effect.Effect<SheetInfo, InputError> => {
  const named = (name: string) => book.sheets.find((s) => s.name === name) ?? book.sheets.find((s) => s.name.trim().toLowerCase() === name.trim().toLowerCase())
  if (book.sheets.length === 0) return Effect.fail(inputError(file, "not a valid .xlsx workbook: it has no sheets"))
  if (options.sheet !== undefined) {
    const sheet = named(options.sheet)
    return sheet ? Effect.succeed(sheet) : Effect.fail(inputError(file, `no sheet named "${options.sheet}" (--sheet); the workbook has ${sheetNames(book)}`))
  }
  const byResource = options.resource !== undefined ? named(options.resource) : undefined
  return Effect.succeed(byResource ?? book.sheets.find((s) => !s.hidden) ?? book.sheets[0]!)
}

/**
 * The sheets the writer went on with after `sheet`: `name (2)`, `name (3)` … for as long as the next one exists.
 * A continuation's own 31-character name is its `(2)` too: that is no continuation.
 */
const continuationsOf = (book: WorkbookInfo, sheet: SheetInfo): ReadonlyArray<SheetInfo> => {
  const found: Array<SheetInfo> = []
  for (let n = 2; ; n++) {
    const next = book.sheets.find((s) => s.name === nthSheetName(sheet.name, n))
    if (next === undefined || next === sheet) return found
    found.push(next)
  }
}

const partsOf = (file: string, book: WorkbookInfo, sheet: SheetInfo): Effect.Effect<ReadonlyArray<Part>, InputError> =>
  book.spans.has(sheet.target)
    ? Effect.succeed(partsFor(book, sheet))
    : Effect.fail(inputError(file, `not a valid .xlsx workbook: sheet "${sheet.name}" has no part in the archive (${sheet.target || "no target"})`))

/** A sheet's first non-blank row, read by itself (the header). */
const firstRow = (file: string, book: WorkbookInfo, parts: ReadonlyArray<Part>) =>
  sheetRows(file, parts, book.date1904, columnLetter).pipe(
    Stream.filter((r) => !isBlank(r.cells)),
    Stream.runHead
  )

export const openXlsx = Effect.fn("Xlsx.open")(function* (file: string, options: ReadOptions) {
  const book = yield* Effect.tryPromise({
    try: () => inspectWorkbook(file),
    catch: (cause) =>
      cause instanceof NotAZip || cause instanceof NotAWorkbook
        ? inputError(file, `not a valid .xlsx workbook: ${cause.message}`, { cause })
        : inputError(file, `cannot be read: ${describe(cause)}`, { cause })
  })
  const sheet = yield* chooseSheet(file, book, options)
  const parts = yield* partsOf(file, book, sheet)
  const first = yield* firstRow(file, book, parts)
  if (Option.isNone(first)) return yield* inputError(file, `sheet "${sheet.name}" is empty: no header row`)
  const byTool = yield* Effect.promise(() => writtenByTool({ file, format: "xlsx", creator: book.creator }))
  const headerRow = first.value.row
  const header = yield* checkHeader(file, headerRow, first.value.cells, byTool)
  const columnName = (index: number) => header[index] ?? columnLetter(index)
  // Each sheet of the table and the row of its header; the continuations' headers are checked now, before any row.
  const sheets: Array<{ readonly parts: ReadonlyArray<Part>; readonly headerRow: number }> = [{ parts, headerRow }]
  for (const next of byTool ? continuationsOf(book, sheet) : []) {
    const nextParts = yield* partsOf(file, book, next)
    const top = yield* firstRow(file, book, nextParts)
    const names = Option.flatMap(top, (r) => Either.getRight(checkHeader(file, r.row, r.cells, byTool)))
    if (Option.isNone(top) || !Option.exists(names, (n) => n.length === header.length && n.every((name, i) => name === header[i])))
      return yield* inputError(file, `sheet "${next.name}" does not repeat the header of "${sheet.name}"`)
    sheets.push({ parts: nextParts, headerRow: top.value.row })
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
        return sheetRows(file, s.parts, book.date1904, columnName).pipe(
          Stream.filterMap((r) => {
            const row = (last = r.row + shift)
            const aligned = r.row <= s.headerRow ? undefined : alignRow(header.length, row, r.cells)
            return Option.fromNullable(aligned === undefined || r.numbers === undefined ? aligned : { ...aligned, numbers: r.numbers })
          })
        )
      })
    )
    return Stream.concatAll(Chunk.unsafeFromArray(read))
  })
  const source: Source = { file, format: "xlsx", header, writtenByTool: byTool, sheet: sheet.name, rows }
  return source
})
