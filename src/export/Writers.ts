/**
 * The files an export writes while it walks, one page of rows at a time, with the formula guard on every cell.
 *
 * CSV (UTF-8 with BOM) is appended to `FILE.partial`, whose length after each page is what the checkpoint
 * records: a continued export truncates it back to that length and appends from the next page, and the finished
 * file is renamed into place. XLSX is streamed by the files area's writer, which cannot append: a partially
 * written workbook is started again.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type { Scope } from "effect"
import * as Effect from "effect/Effect"
import { type Cell, csvBom, csvRecord, openXlsxWriter, sha256File, type WriteError } from "../files/Write.js"
import type { CsvDialect, ExportFormat } from "./Manifest.js"

export interface Written {
  readonly rows: number
  readonly bytes: number
  readonly sha256: string
}

export interface ExportWriter {
  /** Appends the rows of one page; when it returns, they are in the file (CSV) or the writer's stream (XLSX). */
  readonly write: (rows: ReadonlyArray<ReadonlyArray<Cell>>) => Effect.Effect<void, WriteError | PlatformError>
  /** Bytes and data rows on disk after the last write. */
  readonly position: () => { readonly bytes: number; readonly rows: number }
  /** Closes the file and moves it into place. */
  readonly finish: Effect.Effect<Written, WriteError | PlatformError>
}

/** Where a continued CSV stands: its partial file is truncated back to `bytes`. */
interface ResumeAt {
  readonly bytes: number
  readonly rows: number
}

// The files area's CSV writing, record by record (its `openCsvWriter` cannot append to a file), in the export's
// delimiter and decimal mark.
const csvLines = (rows: ReadonlyArray<ReadonlyArray<Cell>>, dialect: CsvDialect): string =>
  rows.map((row) => csvRecord(row, dialect)).join("")

export const partialName = (file: string): string => `${file}.partial`

/** The first bytes of an export's CSV: the BOM and the header, in the export's dialect. */
const csvStart = (header: ReadonlyArray<string>, dialect: CsvDialect) => csvBom + csvRecord(header, dialect)

/**
 * Whether a CSV's partial file still holds at least `bytes` (it can be continued) and starts with the header this
 * export writes (a file begun with another delimiter is not continued).
 */
export const canResume = Effect.fn("Writers.canResume")(
  function*(dir: string, file: string, at: ResumeAt, header: ReadonlyArray<string>, dialect: CsvDialect) {
    const fs = yield* FileSystem.FileSystem
    const path = (yield* Path.Path).join(dir, partialName(file))
    if (!(yield* fs.exists(path))) return false
    if (Number((yield* fs.stat(path)).size) < at.bytes) return false
    const start = Buffer.from(csvStart(header, dialect), "utf8")
    if (at.bytes < start.length) return true
    const first = yield* Effect.scoped(
      Effect.gen(function*() {
        const handle = yield* fs.open(path, { flag: "r" })
        return yield* handle.readAlloc(start.length)
      })
    )
    return first._tag === "Some" && Buffer.from(first.value).equals(start)
  }
)

const openCsv = Effect.fn("Writers.openCsv")(
  function*(
    dir: string,
    file: string,
    header: ReadonlyArray<string>,
    resume: ResumeAt | undefined,
    dialect: CsvDialect
  ) {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const target = path.join(dir, file)
    const partial = path.join(dir, partialName(file))
    let bytes = 0
    let rows = 0
    if (resume !== undefined) {
      // Whatever a killed run wrote after its last checkpoint is cut off: the next page is fetched again.
      yield* fs.truncate(partial, resume.bytes)
      bytes = resume.bytes
      rows = resume.rows
    }
    const handle = yield* fs.open(partial, { flag: resume !== undefined ? "a" : "w" })
    const append = (text: string) =>
      Effect.gen(function*() {
        const data = Buffer.from(text, "utf8")
        yield* handle.writeAll(data)
        bytes += data.length
      })
    if (resume === undefined) yield* append(csvStart(header, dialect))
    let finished: Written | undefined
    return {
      write: (page) =>
        page.length === 0
          ? Effect.void
          : Effect.gen(function*() {
            yield* append(csvLines(page, dialect))
            rows += page.length
          }),
      position: () => ({ bytes, rows }),
      finish: Effect.gen(function*() {
        if (finished !== undefined) return finished
        yield* handle.sync
        yield* fs.rename(partial, target)
        finished = { rows, bytes, sha256: yield* sha256File(target) }
        return finished
      })
    } satisfies ExportWriter as ExportWriter
  }
)

const openXlsx = Effect.fn("Writers.openXlsx")(
  function*(dir: string, file: string, header: ReadonlyArray<string>, sheetName: string) {
    const target = (yield* Path.Path).join(dir, file)
    const writer = yield* openXlsxWriter(target, header, { freezeHeader: true, autoFilter: true, sheetName })
    let rows = 0
    return {
      write: (page) => Effect.tap(writer.writeAll(page), () => void (rows += page.length)),
      position: () => ({ bytes: 0, rows }),
      finish: Effect.map(writer.close, (closed) => ({ rows: closed.rows, bytes: closed.bytes, sha256: closed.sha256 }))
    } satisfies ExportWriter as ExportWriter
  }
)

/** Opens the file `file` of an export in `dir`; `resume` continues a CSV's partial file, written in `dialect`. */
export const openExportWriter = (
  format: ExportFormat,
  dir: string,
  file: string,
  header: ReadonlyArray<string>,
  sheetName: string,
  resume: ResumeAt | undefined,
  dialect: CsvDialect
): Effect.Effect<ExportWriter, WriteError | PlatformError, Scope.Scope | FileSystem.FileSystem | Path.Path> =>
  format === "csv" ? openCsv(dir, file, header, resume, dialect) : openXlsx(dir, file, header, sheetName)
