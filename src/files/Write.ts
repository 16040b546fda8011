/**
 * Writing tables (exports, reports, templates) so that a reader never sees half a file: rows stream into
 * `FILE.tmp`, which `close` flushes to disk and renames onto `FILE`; a scope that ends without `close` (a crash,
 * an interruption) removes the .tmp and leaves `FILE` untouched. Cells pass the formula guard by default.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import { accessSync, constants, createWriteStream, existsSync, type WriteStream } from "node:fs"
import { mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises"
import * as Path from "node:path"
import { removeOnExit } from "../Leftovers.js"
import { redactKnown } from "../Secrets.js"
import { plannedStatuses } from "../Status.js"
import type { Cell } from "./Cell.js"
import { decimalText } from "./Decimal.js"
import { neutralize, neutralizeInline } from "./Guard.js"
import { TextPieces } from "./Pieces.js"
import { toolName } from "./Provenance.js"
import { startXlsxThread, type XlsxThread, XlsxThreadError } from "./XlsxThread.js"
import { type FrontRow, sampleRows, XlsxTable, ZipError } from "./XlsxWriter.js"

export type { FrontRow } from "./XlsxWriter.js"

export type { Cell } from "./Cell.js"

export interface TableWriter {
  /** Appends one row; waits while the disk is behind, so memory stays flat. */
  readonly write: (row: ReadonlyArray<Cell>) => Effect.Effect<void, WriteError>
  /** Appends rows in one go (one turn of the lock, one write for CSV): what a caller with a batch should use. */
  readonly writeAll: (rows: ReadonlyArray<ReadonlyArray<Cell>>) => Effect.Effect<void, WriteError>
  /** Flushes, fsyncs and renames FILE.tmp → FILE; the sha256 and size are the final file's. */
  readonly close: Effect.Effect<{ readonly rows: number; readonly sha256: string; readonly bytes: number }, WriteError>
}

interface XlsxStyle {
  /** 0-based index (in the header) of the column holding a row status, coloured by its meaning. */
  readonly statusColumn?: number
  /** Keep the header row visible while scrolling (default true). */
  readonly freezeHeader?: boolean
  /** Filter buttons on the header (default true). */
  readonly autoFilter?: boolean
  /** Default: the file's name without extension (Excel allows 31 characters). */
  readonly sheetName?: string
  /** 0-based columns of long text, shown wider and wrapped (a report's `_error`). */
  readonly wrapColumns?: ReadonlyArray<number>
  /** A sheet listed first and shown on opening (a run's Summary), whose lines `closeWith` is given. */
  readonly frontSheet?: string
  /**
   * Where the whole text of a cell longer than Excel's limit is (a report: "report.csv"). Such a cell is then cut
   * with a visible mark saying so (`cutForExcel`); without it, the text is written whole.
   */
  readonly wholeTextIn?: string
}

/** Excel's limit of characters in a cell: a longer one makes it refuse or repair the workbook. */
export const excelCellLimit = 32_767

/** `text` within Excel's cell limit: cut (never inside a surrogate pair) with a mark that says so and where the rest is. */
export const cutForExcel = (text: string, wholeTextIn: string): string => {
  if (text.length <= excelCellLimit) return text
  const mark = `… [cut at Excel's limit of ${excelCellLimit.toLocaleString("en-US")} characters: ${
    text.length.toLocaleString("en-US")
  } in all, the whole text is in ${wholeTextIn}]`
  let end = excelCellLimit - mark.length
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end -= 1
  return text.slice(0, end) + mark
}

/** An XLSX table whose front sheet, if its style names one, is written when it closes. */
interface XlsxTableWriter extends TableWriter {
  readonly closeWith: (front: ReadonlyArray<FrontRow>) => TableWriter["close"]
}

/**
 * A file or directory that could not be written. Before any request was sent that is exit 2 (nothing happened);
 * a command that had sent requests turns it into `RunStopped` (exit 3, see console/Output.ts `stopAfterSending`).
 */
export class WriteError extends Schema.TaggedError<WriteError>()("WriteError", {
  path: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** What the file system said, from the cause's error code. */
  get reason(): FileProblem {
    return problemOf(this.cause, this.path).reason
  }
  get exitCode(): 2 {
    return 2
  }
}

type FileProblem = "DiskFull" | "TooLarge" | "ReadOnly" | "Permission" | "NotFound" | "Other"

/** The errno code of a Node error, or of the Node error under a platform error (`@effect/platform` SystemError). */
const errnoOf = (cause: unknown): string | undefined => {
  for (
    let c = cause, depth = 0;
    c !== null && typeof c === "object" && depth < 3;
    c = (c as { cause?: unknown }).cause, depth++
  ) {
    const code = (c as { code?: unknown }).code
    if (typeof code === "string") return code
  }
  return undefined
}

/**
 * A missing directory can hide the real problem: `mkdir -p` under a read-only mount answers ENOENT. The nearest
 * existing ancestor says whether it can be written to.
 */
const behindMissing = (path: string | undefined): string | undefined => {
  if (path === undefined) return undefined
  let dir = Path.resolve(path)
  while (!existsSync(dir)) {
    const up = Path.dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
  try {
    accessSync(dir, constants.W_OK)
    return undefined
  } catch (error) {
    return errnoOf(error)
  }
}

const problems: Readonly<Record<string, { readonly reason: FileProblem; readonly text: string }>> = {
  ENOSPC: { reason: "DiskFull", text: "disk full (no space left on the device)" },
  EDQUOT: { reason: "DiskFull", text: "disk quota exceeded" },
  EFBIG: { reason: "TooLarge", text: "file too large (the file-size limit was reached)" },
  EROFS: { reason: "ReadOnly", text: "read-only file system" },
  EACCES: { reason: "Permission", text: "permission denied" },
  EPERM: { reason: "Permission", text: "permission denied" },
  ENOENT: { reason: "NotFound", text: "no such file or directory" },
  ENOTDIR: { reason: "NotFound", text: "a part of the path is a file, not a directory" }
}

/** What went wrong, in the user's words: the same text for every command that writes files. */
const problemOf = (cause: unknown, path?: string): { readonly reason: FileProblem; readonly text: string } => {
  let code = errnoOf(cause)
  if (code === "ENOENT" || code === "ENOTDIR") code = behindMissing(path) ?? code
  const known = code !== undefined ? problems[code] : undefined
  if (known !== undefined) return known
  return { reason: "Other", text: cause instanceof Error ? cause.message : String(cause) }
}

/**
 * The one formatter of file-system failures: `cannot write to DIR: read-only file system`,
 * `cannot write the journal FILE: disk full …`. `what` defaults to `cannot write PATH`.
 */
export const cannotWrite = (path: string, cause: unknown, what = `cannot write ${path}`): WriteError =>
  new WriteError({ path, message: `${what}: ${problemOf(cause, path).text}`, cause })

const failure = (path: string, what: string) => (cause: unknown) => cannotWrite(path, cause, `${what} ${path}`)

// --- the atomic file -------------------------------------------------------------------------------------------

/** The directory entry of a rename survives a crash only once the directory itself is synced. */
const syncDirectory = async (dir: string) => {
  try {
    const handle = await open(dir, "r")
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // Some platforms and file systems cannot sync a directory; the rename itself is still atomic.
  }
}

/** What `sha256File` reads at a time. */
const hashChunk = 256 * 1024

export const sha256File: (path: string) => Effect.Effect<string, WriteError> = Effect.fn("Write.sha256File")((
  path: string
) =>
  Effect.tryPromise({
    try: async (signal) => {
      const hash = createHash("sha256")
      // One buffer, read into again and again: a stream's fresh 64 KiB chunks are freed only when the heap is
      // collected, and hashing a large report that way left tens of MB of them behind (the peak RSS of a 1M-row
      // `validate` came at its very end, while it hashed its reports).
      const buffer = Buffer.allocUnsafe(hashChunk)
      const handle = await open(path, "r")
      try {
        for (;;) {
          signal.throwIfAborted()
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
          if (bytesRead === 0) break
          hash.update(buffer.subarray(0, bytesRead))
        }
      } finally {
        await handle.close()
      }
      return hash.digest("hex")
    },
    catch: failure(path, "cannot read")
  })
)

/** tmp + fsync + rename, so `path` holds either its old content or all of `content`. */
const replaceFile = async (path: string, content: string | Uint8Array) => {
  const tmp = `${path}.tmp`
  await mkdir(Path.dirname(path), { recursive: true })
  const forget = removeOnExit(tmp)
  try {
    const handle = await open(tmp, "w")
    try {
      await handle.writeFile(content)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(tmp, path)
  } catch (error) {
    await unlink(tmp).catch(() => undefined)
    throw error
  } finally {
    forget()
  }
  await syncDirectory(Path.dirname(path))
}

export const writeFileAtomic: (path: string, content: string | Uint8Array) => Effect.Effect<void, WriteError> = Effect
  .fn("Write.writeFileAtomic")(
    (path: string, content: string | Uint8Array) =>
      Effect.tryPromise({
        // The last guard: no secret the process holds is ever written (Secrets.ts).
        try: () => replaceFile(path, typeof content === "string" ? redactKnown(content) : content),
        catch: failure(path, "cannot write")
      })
  )

/**
 * Writes `content` (atomically) unless `path` already holds exactly these bytes: a regenerated file that did not
 * change keeps its time stamp, and a committed one stays clean. Says which it did.
 */
export const writeFileIfChanged: (
  path: string,
  content: string | Uint8Array
) => Effect.Effect<"written" | "unchanged", WriteError> = Effect.fn("Write.writeFileIfChanged")(function*(
  path: string,
  content: string | Uint8Array
) {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content
  const same = yield* Effect.tryPromise({
    try: async () => {
      const old = await stat(path).catch(() => undefined)
      if (old === undefined || !old.isFile() || old.size !== bytes.length) return false
      return Buffer.from(bytes).equals(await readFile(path))
    },
    catch: failure(path, "cannot read")
  })
  if (same) return "unchanged" as const
  yield* writeFileAtomic(path, bytes)
  return "written" as const
})

interface AtomicFile {
  /** For writers that write to it themselves (and wait for its "drain"). */
  readonly stream: WriteStream
  /** Writes, waiting for the stream to drain when its buffer is full. */
  readonly write: (data: string | Uint8Array) => Effect.Effect<void, WriteError>
  /** Ends the stream (unless its writer did), then fsync, rename, hash. */
  readonly commit: Effect.Effect<{ readonly sha256: string; readonly bytes: number }, WriteError>
}

const openAtomic = (path: string): Effect.Effect<AtomicFile, WriteError, Scope.Scope> => {
  const tmp = `${path}.tmp`
  let committed = false
  let broken: unknown = undefined
  let forget = () => {}
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await mkdir(Path.dirname(path), { recursive: true })
        forget = removeOnExit(tmp)
        // `flush`: the file descriptor is fsynced before it is closed. A buffer of 1 MiB rather than 16 KiB: a
        // writer waits for the disk only when that much is queued, not after every batch of rows.
        const stream = createWriteStream(tmp, { flags: "w", flush: true, highWaterMark: 1024 * 1024 })
        const closed = new Promise<void>((resolve) => stream.once("close", () => resolve()))
        stream.on("error", (error) => {
          broken ??= error
        })
        await new Promise<void>((resolve, reject) => {
          stream.once("ready", () => resolve())
          stream.once("error", reject)
        })
        return { stream, closed }
      },
      catch: failure(path, "cannot write")
    }),
    ({ closed, stream }) =>
      committed
        ? Effect.void
        : Effect.promise(async () => {
          stream.destroy()
          await closed
          await unlink(tmp).catch(() => undefined)
          forget()
        })
  ).pipe(
    Effect.map(({ closed, stream }): AtomicFile => {
      const whenWritable = (wait: boolean) =>
        Effect.async<void, WriteError>((resume) => {
          if (broken !== undefined) return resume(Effect.fail(failure(path, "cannot write")(broken)))
          if (!wait) return resume(Effect.void)
          const done = () => {
            stream.off("drain", done)
            stream.off("error", done)
            resume(broken !== undefined ? Effect.fail(failure(path, "cannot write")(broken)) : Effect.void)
          }
          stream.on("drain", done)
          stream.on("error", done)
          return Effect.sync(() => {
            stream.off("drain", done)
            stream.off("error", done)
          })
        })
      return {
        stream,
        write: (data) => Effect.suspend(() => whenWritable(broken === undefined && !stream.write(data))),
        commit: Effect.tryPromise({
          try: async () => {
            if (!stream.writableEnded) stream.end()
            await closed
            if (broken !== undefined) throw broken
            await rename(tmp, path)
            committed = true
            forget()
            await syncDirectory(Path.dirname(path))
            return (await stat(path)).size
          },
          catch: failure(path, "cannot write")
        }).pipe(
          Effect.flatMap((bytes) => Effect.map(sha256File(path), (sha256) => ({ sha256, bytes })))
        )
      }
    })
  )
}

/** Rows go out one at a time and never after `close`, whatever fibers call in. */
const serialized = Effect.fn("Write.serialized")(function*(
  path: string,
  writeRows: (rows: ReadonlyArray<ReadonlyArray<Cell>>) => Effect.Effect<void, WriteError>,
  finish: Effect.Effect<{ readonly sha256: string; readonly bytes: number }, WriteError>
) {
  const lock = yield* Effect.makeSemaphore(1)
  let rows = 0
  let closed = false
  const notClosed = Effect.suspend(() => (closed
    ? Effect.fail(new WriteError({ path, message: `cannot write ${path}: the file is already closed` }))
    : Effect.void)
  )
  const writeAll = (batch: ReadonlyArray<ReadonlyArray<Cell>>) =>
    lock.withPermits(1)(
      notClosed.pipe(
        Effect.zipRight(writeRows(batch)),
        Effect.tap(() => void (rows += batch.length))
      )
    )
  const writer: TableWriter = {
    write: (row) => writeAll([row]),
    writeAll,
    close: lock.withPermits(1)(
      notClosed.pipe(
        Effect.tap(() => void (closed = true)),
        Effect.zipRight(finish),
        Effect.map(({ bytes, sha256 }) => ({ rows, sha256, bytes }))
      )
    )
  }
  return writer
})

// --- CSV -------------------------------------------------------------------------------------------------------

const cellString = (cell: Cell, guard: boolean, decimal: "." | ","): string => {
  if (cell === null || cell === undefined) return ""
  if (typeof cell === "number") return decimal === "," ? decimalText(cell).replace(".", ",") : decimalText(cell)
  if (typeof cell === "boolean") return cell ? "true" : "false"
  // The last guard: no secret the process holds is ever written (Secrets.ts).
  const text = redactKnown(cell)
  return guard ? neutralize(text) : text
}

/** A cell needs quotes when it holds the delimiter, a quote or a line break, or starts or ends with a space. */
const needsQuotes = {
  ",": /[",\r\n]|^\s|\s$/,
  ";": /[";\r\n]|^\s|\s$/,
  "\t": /["\t\r\n]|^\s|\s$/
} as const

interface CsvRecordOptions {
  readonly guard?: boolean
  readonly delimiter?: "," | ";" | "\t"
  readonly decimal?: "." | ","
}

/**
 * One CSV record in the tool's dialect (CRLF; quoted when a cell holds the delimiter, a quote, a line break or
 * leading/trailing space; numbers in plain decimal, with a decimal comma when `decimal` is `,`; the formula guard
 * unless `guard: false`). For writers that
 * cannot use `openCsvWriter` (an export appending to a partial file). Written by hand: csv-stringify built a
 * stringifier per record and cost five times as much, for the same bytes.
 */
export const csvRecord = (cells: ReadonlyArray<Cell>, options: CsvRecordOptions = {}): string => {
  const delimiter = options.delimiter ?? ","
  const quote = needsQuotes[delimiter]
  const guard = options.guard ?? true
  const decimal = options.decimal ?? "."
  let line = ""
  for (let i = 0; i < cells.length; i++) {
    const text = cellString(cells[i], guard, decimal)
    if (i > 0) line += delimiter
    line += quote.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
  }
  return `${line}\r\n`
}

/** Starts the tool's CSV files: Excel needs it to read UTF-8. */
export const csvBom = "\uFEFF"

/** A CSV table: UTF-8 (with a BOM by default), CRLF line ends. */
export const openCsvWriter: (
  path: string,
  header: ReadonlyArray<string>,
  options?: { readonly bom?: boolean; readonly guard?: boolean; readonly delimiter?: "," | ";" | "\t" }
) => Effect.Effect<TableWriter, WriteError, Scope.Scope> = Effect.fn("Write.openCsvWriter")(
  function*(
    path: string,
    header: ReadonlyArray<string>,
    options: { readonly bom?: boolean; readonly guard?: boolean; readonly delimiter?: "," | ";" | "\t" } = {}
  ) {
    const file = yield* openAtomic(path)
    yield* file.write(`${options.bom ?? true ? csvBom : ""}${csvRecord(header, options)}`)
    // One batch at a time (`serialized`): its lines are gathered and joined, then written.
    const lines = new TextPieces()
    return yield* serialized(
      path,
      (rows) =>
        Effect.suspend(() => {
          for (const row of rows) lines.add(csvRecord(row, options))
          return file.write(lines.takeBytes())
        }),
      file.commit
    )
  }
)

// --- XLSX ------------------------------------------------------------------------------------------------------

const green = { fill: "FFC6EFCE", font: "FF006100" }
const amber = { fill: "FFFFEB9C", font: "FF9C5700" }
const red = { fill: "FFFFC7CE", font: "FF9C0006" }
const blue = { fill: "FFDDEBF7", font: "FF1F4E78" }

/** The contract's row statuses by how they ended, and `valid` of `fsm-bulk validate` reports. */
const statusColours: Readonly<Record<string, { readonly fill: string; readonly font: string }>> = {
  valid: green,
  created: green,
  updated: green,
  unchanged: green,
  deleted: green,
  queued: green,
  confirmed: green,
  unconfirmed: amber,
  skipped: amber,
  "in-doubt": amber,
  conflict: amber,
  failed: red,
  invalid: red,
  // A dry run's planned statuses: a rehearsal, not an outcome, so neither green nor red.
  ...Object.fromEntries(Object.values(plannedStatuses).map((s) => [s, blue]))
}

/** Excel's sheet names: at most 31 characters, none of `[]:*?/`. */
const sheetNameOf = (path: string, wanted: string | undefined): string => {
  const name = (wanted ?? Path.basename(path, Path.extname(path))).replace(/[[\]:*?/\\]/g, "_").slice(0, 31)
  return name === "" ? "Sheet1" : name
}

/** Where a table goes on in a new sheet; set only by tests (Excel's row limit and 3.5 GiB of XML otherwise). */
interface SheetLimits {
  readonly maxSheetRows?: number
  readonly maxSheetBytes?: number
}

/** Set only by tests: where the workbook is written, and when it says it was. */
interface XlsxThreading {
  /** Rows after which the workbook goes on a thread of its own (`threadAfterRows`; 0: always, Infinity: never). */
  readonly threadAfterRows?: number
  /** The thread's script (XlsxWorker.js). */
  readonly threadScript?: URL
  /** The workbook's time, in ms since 1970 (the time of writing otherwise). */
  readonly now?: number
}

/**
 * A table of more rows than this is written on a thread of its own (XlsxThread.ts): starting one costs about 50 ms
 * of CPU, more than writing a few thousand rows here. The rows before are held, then handed over together.
 */
const threadAfterRows = 2000

/** What becomes of a text cell in a workbook: no secret, the inline guard, within Excel's limit when asked. */
const textOf = (options: XlsxStyle & { readonly guard?: boolean }) => {
  const guard = options.guard ?? true
  const wholeTextIn = options.wholeTextIn
  return (text: string): string => {
    const safe = guard ? neutralizeInline(redactKnown(text)) : redactKnown(text)
    return wholeTextIn === undefined ? safe : cutForExcel(safe, wholeTextIn)
  }
}

/** Rows go into the sheet synchronously until the ZIP stream asks to wait; then the rest follow the wait. */
const writeToTable = (
  table: XlsxTable,
  rows: ReadonlyArray<ReadonlyArray<Cell>>,
  cannotWrite: (cause: unknown) => WriteError
): Effect.Effect<void, WriteError> =>
  Effect.suspend(() => {
    for (let i = 0; i < rows.length; i++) {
      let wait: Promise<void> | undefined
      try {
        wait = table.write(rows[i]!)
      } catch (cause) {
        return Effect.fail(cannotWrite(cause))
      }
      if (wait !== undefined) {
        const waiting = Effect.tryPromise({ try: () => wait, catch: cannotWrite })
        return i + 1 < rows.length
          ? Effect.zipRight(waiting, writeToTable(table, rows.slice(i + 1), cannotWrite))
          : waiting
      }
    }
    return Effect.void
  })

/**
 * An XLSX table streamed by our own writer (XlsxWriter); the workbook's creator marks it as this tool's. A large
 * table's workbook is built on a thread of its own (XlsxThread.ts), the same bytes; the file is written here, to
 * its .tmp, and renamed when complete, either way.
 */
export const openXlsxWriter: (
  path: string,
  header: ReadonlyArray<string>,
  options?: XlsxStyle & { readonly guard?: boolean } & SheetLimits & XlsxThreading
) => Effect.Effect<XlsxTableWriter, WriteError, Scope.Scope> = Effect.fn("Write.openXlsxWriter")(
  function*(
    path: string,
    header: ReadonlyArray<string>,
    options: XlsxStyle & { readonly guard?: boolean } & SheetLimits & XlsxThreading = {}
  ) {
    const file = yield* openAtomic(path)
    const scope = yield* Effect.scope
    const cannotWrite = (cause: unknown) =>
      (cause instanceof ZipError || cause instanceof XlsxThreadError) && cause.tooLarge
        ? new WriteError({
          path,
          message: `cannot write ${path}: ${cause.message}; use CSV for a table this large`,
          cause
        })
        : failure(path, "cannot write")(cause)
    const text = textOf(options)
    const tableOptions = {
      sheetName: sheetNameOf(path, options.sheetName),
      creator: toolName,
      freezeHeader: options.freezeHeader ?? true,
      autoFilter: options.autoFilter ?? true,
      statusColumn: options.statusColumn,
      statusColours,
      ...(options.wrapColumns !== undefined ? { wrapColumns: options.wrapColumns } : {}),
      maxSheetRows: options.maxSheetRows,
      maxSheetBytes: options.maxSheetBytes,
      frontSheet: options.frontSheet,
      ...(options.now !== undefined ? { now: options.now } : {})
    }
    /** The header and front rows as the thread takes them: their text through the guard (needs this process's secrets). */
    const guarded = (cells: ReadonlyArray<Cell>): ReadonlyArray<Cell> =>
      cells.map((cell) => (typeof cell === "string" ? text(cell) : cell))
    const after = options.threadAfterRows ?? threadAfterRows
    /** Rows not yet handed to a table: until there are enough for a thread, or the table closes. */
    let held: Array<ReadonlyArray<Cell>> = []
    let thread: XlsxThread | undefined
    const startThread = (rows: ReadonlyArray<ReadonlyArray<Cell>>) =>
      startXlsxThread(
        file.stream,
        guarded(header),
        { ...tableOptions, measuredHeader: header },
        text,
        options.threadScript
      )
        .pipe(
          Scope.extend(scope),
          Effect.tap((started) => void (thread = started)),
          // The rows sampled for the column widths go as given too: widths are fitted to the text as given.
          Effect.flatMap((started) => started.write(rows, rows.slice(0, sampleRows))),
          Effect.mapError(cannotWrite)
        )
    const writeRows = (rows: ReadonlyArray<ReadonlyArray<Cell>>): Effect.Effect<void, WriteError> =>
      Effect.suspend(() => {
        if (thread !== undefined) return Effect.mapError(thread.write(rows), cannotWrite)
        for (const row of rows) held.push(row)
        if (held.length <= after) return Effect.void
        const rowsSoFar = held
        held = []
        return startThread(rowsSoFar)
      })
    /** A small table, written here at its close. */
    const writeHere = (front: ReadonlyArray<FrontRow>) =>
      Effect.gen(function*() {
        const table = yield* Effect.try({
          try: () => new XlsxTable(file.stream, header, { ...tableOptions, text }),
          catch: cannotWrite
        })
        // Runs before openAtomic's release, which then discards the .tmp.
        yield* Scope.addFinalizer(scope, Effect.sync(() => table.destroy()))
        yield* writeToTable(table, held, cannotWrite)
        held = []
        yield* Effect.tryPromise({ try: () => table.close(front), catch: cannotWrite })
      })
    let front: ReadonlyArray<FrontRow> = []
    const finish = Effect.suspend(() =>
      thread === undefined
        ? writeHere(front)
        : Effect.mapError(thread.close(front.map((line) => ({ ...line, cells: guarded(line.cells) }))), cannotWrite)
    ).pipe(Effect.zipRight(file.commit))
    const writer = yield* serialized(path, writeRows, finish)
    return {
      ...writer,
      closeWith: (rows) =>
        Effect.suspend(() => {
          front = rows
          return writer.close
        })
    } satisfies XlsxTableWriter
  }
)
