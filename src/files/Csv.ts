/**
 * The CSV reader: encoding found in a first pass (Encoding), delimiter sniffed from the first lines
 * (Delimiter), then csv-parse on a thread of its own (CsvParseWorker.js). A record's spreadsheet row is its position among the records, blank
 * ones included: a multi-line quoted cell counts once and a blank line counts as a row, as a spreadsheet shows
 * them. (csv-parse's `info.records` is the same count; building an info object per record costs a quarter of
 * the parse.)
 */
import { Chunk, Effect, Either, Option, Stream } from "effect"
import { open } from "node:fs/promises"
import { Worker } from "node:worker_threads"
import type { InputError } from "../Errors.js"
import { type Delimiter, sniffDelimiter } from "./Delimiter.js"
import { inspectText, NotText, type TextEncoding, type TextFacts } from "./Encoding.js"
import { alignRow, checkHeader, inputError, isBlank } from "./Header.js"
import { writtenByTool } from "./Provenance.js"
import type { ReadOptions, Source, SourceRow } from "./Source.js"
import { readProgress } from "./Stall.js"

/** Longer than any real row: a longer one is a quote that is never closed, swallowing the rest of the file. */
const maxRowCharacters = 4 * 1024 * 1024
const sniffBytes = 64 * 1024

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
/** Records a message carries: enough to make the messages' cost negligible, few enough to keep batches small. */
const batchRows = 512
/** Batches the parser may be ahead of the consumer. */
const batchesAhead = 4

type ParserMessage =
  | { readonly rows: Array<Array<string>> }
  | { readonly done: true }
  | {
    readonly error: {
      readonly message: string
      readonly code?: string
      readonly records?: number
      readonly syscall?: string
      readonly quoting?: boolean
      readonly cells?: number
    }
  }

/**
 * Every record of the file, blank ones included, with its spreadsheet row. csv-parse runs on a thread of its
 * own (CsvParseWorker.js), at most `batchesAhead` batches ahead of the consumer, reading the file only as fast:
 * the parsing of a large file overlaps its validation, and memory stays flat however slow the consumer.
 */
const records = (file: string, encoding: TextEncoding, delimiter: Delimiter): Stream.Stream<CsvRecord, InputError> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const inbox: Array<ParserMessage> = []
      let wake: (() => void) | undefined
      const progress = readProgress()
      const deliver = (message: ParserMessage) => {
        progress.tick()
        inbox.push(message)
        wake?.()
      }
      const worker = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const w = new Worker(parserScript, {
            workerData: { file, encoding, delimiter, maxRecordSize: maxRowCharacters, batchRows }
          })
          w.on("message", deliver)
          // The thread itself failed (it could not start, it ran out of memory): not the file's fault. A thread
          // that ends after `done` is no failure: the stream has ended by then.
          const failed = (detail: string) =>
            deliver({ error: { message: `the CSV parser thread failed: ${detail}`, code: "WORKER" } })
          w.on("error", (error) => failed(describe(error)))
          w.on("exit", (code) => failed(`it stopped (exit code ${code})`))
          w.postMessage({ credit: batchesAhead })
          return w
        }),
        (w) => Effect.promise(() => w.terminate())
      )
      const take = Effect.async<ParserMessage>((resume) => {
        const now = inbox.shift()
        if (now !== undefined) return resume(Effect.succeed(now))
        wake = () => {
          wake = undefined
          resume(Effect.succeed(inbox.shift()!))
        }
        return Effect.sync(() => void (wake = undefined))
      })
      const next = Effect.flatMap(
        take,
        (message): Effect.Effect<Chunk.Chunk<Array<string>>, Option.Option<InputError>> => {
          if ("rows" in message) {
            worker.postMessage({ credit: 1 })
            return Effect.succeed(Chunk.unsafeFromArray(message.rows))
          }
          if ("done" in message) return Effect.fail(Option.none())
          if (message.error.code === "WORKER") return Effect.die(new Error(message.error.message))
          return Effect.fail(
            Option.some(parseFailure(file)(Object.assign(new Error(message.error.message), message.error)))
          )
        }
      )
      return Stream.repeatEffectChunkOption(progress.guard(next))
    })
  ).pipe(Stream.mapAccum(0, (count, cells): [number, CsvRecord] => [count + 1, { row: count + 1, cells }]))

/** The first bytes of the file as text, and whether they are the whole file. */
const sample = (file: string, facts: TextFacts) =>
  readProgress().guard(Effect.tryPromise({
    try: async () => {
      const handle = await open(file, "r")
      try {
        const buffer = Buffer.alloc(Math.min(sniffBytes, facts.size))
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
        const text = new TextDecoder(facts.encoding).decode(buffer.subarray(0, bytesRead))
        return { text: text.replace(/^\uFEFF/, ""), complete: bytesRead >= facts.size }
      } finally {
        await handle.close()
      }
    },
    catch: (cause) => inputError(file, `cannot be read: ${describe(cause)}`, { cause })
  }))

const inspect = (file: string, encoding: ReadOptions["encoding"]) =>
  Effect.suspend(() => {
    const progress = readProgress()
    return progress.guard(
      Effect.tryPromise({
        try: (signal) => inspectText(file, encoding, signal, progress.tick),
        catch: (cause) =>
          cause instanceof NotText
            ? inputError(file, cause.message, { row: cause.line, cause })
            : inputError(file, `cannot be read: ${describe(cause)}`, { cause })
      })
    )
  })

export const openCsv = Effect.fn("Csv.open")(function*(file: string, options: ReadOptions) {
  const facts = yield* inspect(file, options.encoding)
  if (facts.size === 0 || (facts.bom && facts.size === 3)) return yield* inputError(file, "the file is empty")
  const head = yield* sample(file, facts)
  if (head.complete && head.text.trim() === "") return yield* inputError(file, "the file is empty (only blank lines)")
  const delimiter = options.delimiter === "auto"
    ? yield* Either.mapLeft(sniffDelimiter(head.text, head.complete), (detail) => inputError(file, detail, { row: 1 }))
    : options.delimiter
  const all = records(file, facts.encoding, delimiter)
  const first = yield* all.pipe(
    Stream.filter((r) => !isBlank(r.cells)),
    Stream.runHead
  )
  if (Option.isNone(first)) return yield* inputError(file, "no header row: the file has only blank lines")
  const byTool = yield* Effect.promise(() => writtenByTool({ file, format: "csv" }))
  const headerRow = first.value.row
  const header = yield* checkHeader(file, headerRow, first.value.cells, byTool)
  const rows: Stream.Stream<SourceRow, InputError> = all.pipe(
    Stream.filterMap((
      r
    ) => (r.row <= headerRow ? Option.none() : Option.fromNullable(alignRow(header.length, r.row, r.cells))))
  )
  const source: Source = {
    file,
    format: "csv",
    header,
    writtenByTool: byTool,
    encoding: facts.encoding,
    delimiter,
    rows
  }
  return source
})
