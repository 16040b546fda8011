/**
 * The CSV reader: csv-parse on a thread of its own (CsvParseWorker.js) for a large file, in the calling thread
 * for a small one (CsvPass.js, the same pass in both), which reads the file once per pass and decides and checks
 * its encoding (TextStream.js) and hashes it on that read. Opening reads only the first
 * 64 KiB: what they say against reading the file as text, the delimiter sniffed from them (Delimiter) and the
 * header row. A record's spreadsheet row is its position among the records, blank ones included: a multi-line
 * quoted cell counts once and a blank line counts as a row, as a spreadsheet shows them. (csv-parse's
 * `info.records` is the same count; building an info object per record costs a quarter of the parse.)
 */
import { parse } from "csv-parse"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { open, readFile, stat } from "node:fs/promises"
import { Worker } from "node:worker_threads"
import type { InputError } from "../Errors.js"
import { csvParseOptions } from "./CsvOptions.js"
import { csvPass, type PassError } from "./CsvPass.js"
import { type Delimiter, sniffDelimiter } from "./Delimiter.js"
import type { TextEncoding } from "./Encoding.js"
import { alignRow, checkHeader, inputError, isBlank } from "./Header.js"
import { writtenByTool } from "./Provenance.js"
import { bigRecord, makeRing, ringReader } from "./Ring.js"
import type { ReadOptions, Source, SourceRow } from "./Source.js"
import { readProgress } from "./Stall.js"
import { checkStart, NotText, startBytes, TextStream } from "./TextStream.js"

/** Longer than any real row: a longer one is a quote that is never closed, swallowing the rest of the file. */
const maxRowCharacters = 4 * 1024 * 1024

interface CsvRecord {
  readonly row: number
  readonly cells: ReadonlyArray<string>
}

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/** Excel's widest sheet. */
const excelMaxColumns = 16_384

/**
 * csv-parse reports how many records it had emitted: the failing one is the next spreadsheet row. A row too long
 * says whether it was inside a quoted cell (`quoting`) and how many cells it had (`cells`).
 */
const parseFailure = (file: string) => (cause: unknown): InputError => {
  const error = cause as {
    readonly code?: string
    readonly records?: number
    readonly quoting?: boolean
    readonly cells?: number
  }
  const row = typeof error.records === "number" ? error.records + 1 : undefined
  switch (error.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      return inputError(
        file,
        `a quoted cell that starts in row ${row} is never closed (unterminated quote): the file may be truncated, or a closing " is missing`,
        { row, cause }
      )
    case "CSV_MAX_RECORD_SIZE":
      return error.quoting === false
        ? inputError(
          file,
          `row ${row} is longer than ${maxRowCharacters.toLocaleString("en-US")} characters, outside any quote, with ${
            (error.cells ?? 0).toLocaleString("en-US")
          } cells and more: ` +
            `no spreadsheet holds such a row (at most ${
              excelMaxColumns.toLocaleString("en-US")
            } columns); is this file a table?`,
          { row, cause }
        )
        : inputError(
          file,
          `row ${row} is longer than ${
            maxRowCharacters.toLocaleString("en-US")
          } characters inside a quoted cell: probably a quote that is never closed`,
          { row, cause }
        )
    default:
      // A system error (the file vanished, no permission) is not the content's fault.
      return typeof (cause as { readonly syscall?: unknown }).syscall === "string"
        ? inputError(file, `cannot be read: ${describe(cause)}`, { cause })
        : inputError(file, `cannot be read as CSV: ${describe(cause)}`, { row, cause })
  }
}

/** The parser thread (CsvParseWorker.js, beside this module in src/ and in dist/). */
const parserScript = new URL("./CsvParseWorker.js", import.meta.url)
/**
 * Files up to this size are parsed in the calling thread: starting a parser thread costs about 50 ms of CPU,
 * more than parsing a megabyte, and an onboarding reads many small files several times.
 */
export const inThreadBytes = 1024 * 1024
/** Records handed on at a time (a chunk of the stream): enough to make the per-chunk cost negligible, few enough to keep chunks small. */
const batchRows = 256
/** The parser thread's young generation (MB). */
const parserYoungMb = 4

/** What a complete pass over the file found: the encoding it was read in and the sha256 of its bytes. */
interface PassFacts {
  readonly encoding: TextEncoding
  readonly sha256: string
}

type ParserMessage =
  | { readonly rows: ReadonlyArray<ReadonlyArray<string>> }
  | ({ readonly done: true } & PassFacts)
  | { readonly error: PassError }

/**
 * Every record of the file, blank ones included, with its spreadsheet row. csv-parse runs on a thread of its
 * own (CsvParseWorker.js), which hands them over through a shared ring of a fixed size (Ring.js) and reads the
 * file only as fast as the consumer frees it: the parsing of a large file overlaps its validation, and memory
 * stays flat however slow the consumer.
 */
const records = (
  file: string,
  encoding: ReadOptions["encoding"],
  delimiter: Delimiter,
  /** Hears what a pass that read the whole file found. */
  onDone: (facts: PassFacts) => void
): Stream.Stream<CsvRecord, InputError> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const inbox: Array<ParserMessage> = []
      /** Records delivered so far: the next one's row is `count + 1`. */
      let count = 0
      let wake: (() => void) | undefined
      const progress = readProgress()
      const deliver = (message: ParserMessage) => {
        inbox.push(message)
        wake?.()
      }
      // The parser thread's records (none for a small file, parsed in this thread into the inbox).
      let ring: ReturnType<typeof ringReader> | undefined
      /** The ring said its next record comes by message. */
      let bigNext = false
      const size = yield* Effect.promise(() => stat(file).then((s) => s.size, () => Number.POSITIVE_INFINITY))
      if (size <= inThreadBytes) {
        // A small file: one read and one parse right here (a file that cannot be read is reported as the thread
        // reports it).
        yield* Effect.promise(async () => {
          let batch: Array<Array<string>> = []
          const pass = csvPass({ delimiter, encoding, maxRecordSize: maxRowCharacters }, (record) => {
            batch.push(record)
            if (batch.length === batchRows) {
              deliver({ rows: batch })
              batch = []
            }
          })
          let error: PassError | undefined
          try {
            error = pass.push(await readFile(file)) ?? pass.end()
          } catch (cause) {
            error = pass.failure(cause)
          }
          if (error !== undefined) return deliver({ error })
          if (batch.length > 0) deliver({ rows: batch })
          deliver({ done: true, ...pass.facts() })
        })
      } else {
        const shared = makeRing()
        const reader = ringReader(shared)
        ring = reader
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            const w = new Worker(parserScript, {
              workerData: { file, encoding, delimiter, maxRecordSize: maxRowCharacters, ring: shared },
              // Its records die young (parsed, written to the ring, dropped): a small young generation is enough,
              // and saves the 24 MiB of the default one (1M-row validation: 252 → 228 MiB peak RSS).
              resourceLimits: { maxYoungGenerationSizeMb: parserYoungMb }
            })
            w.on("message", deliver)
            // The thread itself failed (it could not start, it ran out of memory): not the file's fault. A thread
            // that ends after `done` is no failure: the stream has ended by then.
            const failed = (detail: string) =>
              deliver({ error: { message: `the CSV parser thread failed: ${detail}`, code: "WORKER" } })
            w.on("error", (error) => failed(describe(error)))
            w.on("exit", (code) => failed(`it stopped (exit code ${code})`))
            return w
          }),
          (w) =>
            Effect.promise(() => {
              reader.cancel()
              return w.terminate()
            })
        )
      }
      /**
       * The next message, if one is here: the ring's records first (a record too large for it comes by message,
       * in its place), then what the inbox holds once the ring is empty (the end, an error).
       */
      const poll = (): ParserMessage | undefined => {
        if (ring !== undefined && !bigNext) {
          const rows = ring.take(batchRows)
          if (rows === bigRecord) bigNext = true
          else if (rows !== undefined) return rows.length > 0 ? { rows } : poll()
          else if (inbox.length > 0 && "rows" in inbox[0]!) return undefined
        }
        const message = inbox.shift()
        if (message !== undefined && "rows" in message) bigNext = false
        return message
      }
      const take = Effect.async<ParserMessage>((resume) => {
        const attempt = (): void => {
          for (;;) {
            const now = poll()
            if (now !== undefined) {
              wake = undefined
              progress.tick()
              return resume(Effect.succeed(now))
            }
            wake = attempt
            // Woken by a message, or by the ring's next slot (unless one came meanwhile: then poll again).
            if (ring === undefined || bigNext || ring.whenWritten(() => wake?.())) return
          }
        }
        attempt()
        return Effect.sync(() => void (wake = undefined))
      })
      const next = Effect.flatMap(
        take,
        (message): Effect.Effect<Chunk.Chunk<CsvRecord>, Option.Option<InputError>> => {
          if ("rows" in message) {
            // Numbered here, one object a record: no per-record tuple of a stream accumulator.
            const batch = message.rows
            const numbered = new Array<CsvRecord>(batch.length)
            for (let i = 0; i < batch.length; i++) numbered[i] = { row: ++count, cells: batch[i]! }
            return Effect.succeed(Chunk.unsafeFromArray(numbered))
          }
          if ("done" in message) {
            onDone({ encoding: message.encoding, sha256: message.sha256 })
            return Effect.fail(Option.none())
          }
          if (message.error.code === "WORKER") return Effect.die(new Error(message.error.message))
          if (message.error.code === "NOT_TEXT") {
            return Effect.fail(Option.some(inputError(file, message.error.message, { row: message.error.line })))
          }
          return Effect.fail(
            Option.some(parseFailure(file)(Object.assign(new Error(message.error.message), message.error)))
          )
        }
      )
      return Stream.repeatEffectChunkOption(progress.guard(next))
    })
  )

/** What the first `startBytes` of the file say, read once: the text the parser will read, and its decision so far. */
interface Start {
  /** The first bytes as the parser reads them (UTF-8), up to a first non-ASCII character cut by their end. */
  readonly bytes: Buffer
  /** The first bytes are the whole file. */
  readonly complete: boolean
  readonly size: number
  readonly bom: boolean
  /** Decided by the first bytes; undefined while they are all ASCII (`auto`). */
  readonly encoding: TextEncoding | undefined
}

const notText = (file: string) => (cause: unknown): InputError =>
  cause instanceof NotText
    ? inputError(file, cause.message, { row: cause.line, cause })
    : inputError(file, `cannot be read: ${describe(cause)}`, { cause })

const start = (file: string, wanted: ReadOptions["encoding"]): Effect.Effect<Start, InputError> =>
  readProgress().guard(Effect.tryPromise({
    try: async () => {
      const handle = await open(file, "r")
      try {
        const size = (await handle.stat()).size
        const buffer = Buffer.alloc(Math.min(startBytes, size))
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
        const head = buffer.subarray(0, bytesRead)
        checkStart(head, wanted)
        const text = new TextStream(wanted)
        const complete = bytesRead >= size
        const first = text.push(head)
        const rest = complete ? text.end() : undefined
        const bytes = rest === undefined ? first : Buffer.concat([first, rest])
        return { bytes, complete, size, bom: text.bom, encoding: text.encoding }
      } finally {
        await handle.close()
      }
    },
    catch: notText(file)
  }))

/** How many of the first bytes the header's parse is fed at a time: a header ends within the first piece or two. */
const headPiece = 4 * 1024

/**
 * The first non-blank record among the first bytes (those that end within them), as csv-parse reads it on the
 * parser thread; none when the first bytes hold none, or do not parse by themselves up to it.
 *
 * The bytes go to the parser a piece at a time (as a stream's chunks go), and the parse stops at the piece that
 * gives the header: parsing all the first bytes (some 250 rows, on a cold parser) to keep one record cost every
 * command that reads a CSV about as much as validating those rows.
 */
const headerOf = (head: Start, delimiter: Delimiter): CsvRecord | undefined => {
  let found: CsvRecord | undefined
  const { api } = parse(csvParseOptions(delimiter, maxRowCharacters)) as unknown as {
    readonly api: {
      readonly parse: (
        buffer: Buffer,
        end: boolean,
        push: (record: Array<string>) => void,
        close: () => void
      ) => unknown
    }
  }
  let count = 0
  const push = (cells: Array<string>) => {
    count += 1
    if (found === undefined && !isBlank(cells)) found = { row: count, cells }
  }
  for (let at = 0; found === undefined && at < head.bytes.length; at += headPiece) {
    const last = at + headPiece >= head.bytes.length
    const error = api.parse(head.bytes.subarray(at, at + headPiece), last && head.complete, push, () => {})
    if (error !== undefined) return undefined
  }
  return found
}

export const openCsv = Effect.fn("Csv.open")(function*(file: string, options: ReadOptions) {
  const head = yield* start(file, options.encoding)
  if (head.size === 0 || (head.bom && head.size === 3)) return yield* inputError(file, "the file is empty")
  const text = head.bytes.toString("utf8").replace(/^\uFEFF/, "")
  if (head.complete && text.trim() === "") return yield* inputError(file, "the file is empty (only blank lines)")
  const delimiter = options.delimiter === "auto"
    ? yield* Either.mapLeft(sniffDelimiter(text, head.complete), (detail) => inputError(file, detail, { row: 1 }))
    : options.delimiter
  // What the last pass that read the whole file found (before one: what the first bytes decided).
  let found: Partial<PassFacts> = head.encoding !== undefined ? { encoding: head.encoding } : {}
  const all = records(file, options.encoding, delimiter, (facts) => (found = facts))
  // A header that does not end within the first bytes (or a file they cannot parse alone) is read by the parser.
  const fromHead = headerOf(head, delimiter)
  const first = fromHead !== undefined ? Option.some(fromHead) : yield* all.pipe(
    Stream.filter((r) => !isBlank(r.cells)),
    Stream.runHead
  )
  if (Option.isNone(first)) return yield* inputError(file, "no header row: the file has only blank lines")
  const byTool = yield* Effect.promise(() => writtenByTool({ file, format: "csv" }))
  const headerRow = first.value.row
  const header = yield* checkHeader(file, headerRow, first.value.cells, byTool, options.lenientHeader)
  const rows: Stream.Stream<SourceRow, InputError> = all.pipe(
    Stream.filterMap((
      r
    ) => (r.row <= headerRow ? Option.none() : Option.fromNullable(alignRow(header.length, r.row, r.cells))))
  )
  const source: Source = {
    file,
    format: "csv",
    header,
    headerRow,
    writtenByTool: byTool,
    // Decided by the first non-ASCII character: a file whose first bytes are all ASCII is UTF-8 until a pass says otherwise.
    get encoding() {
      return found.encoding ?? "utf-8"
    },
    sha256: () => found.sha256,
    delimiter,
    rows
  }
  return source
})
