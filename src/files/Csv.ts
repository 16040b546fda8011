/**
 * The CSV reader: encoding found in a first pass (Encoding), delimiter sniffed from the first lines
 * (Delimiter), then csv-parse as a stream. A record's spreadsheet row is its position among the records, blank
 * ones included: a multi-line quoted cell counts once and a blank line counts as a row, as a spreadsheet shows
 * them. (csv-parse's `info.records` is the same count; building an info object per record costs a quarter of
 * the parse.)
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { parse } from "csv-parse"
import { Effect, Either, Option, Stream } from "effect"
import { createReadStream } from "node:fs"
import { open } from "node:fs/promises"
import { pipeline, Transform } from "node:stream"
import type { InputError } from "../Errors.js"
import { type Delimiter, sniffDelimiter } from "./Delimiter.js"
import { inspectText, NotText, type TextEncoding, type TextFacts } from "./Encoding.js"
import { alignRow, checkHeader, inputError, isBlank } from "./Header.js"
import { writtenByTool } from "./Provenance.js"
import type { ReadOptions, Source, SourceRow } from "./Source.js"

/** Longer than any real row: a longer one is a quote that is never closed, swallowing the rest of the file. */
const maxRowCharacters = 4 * 1024 * 1024
const sniffBytes = 64 * 1024

interface CsvRecord {
  readonly row: number
  readonly cells: ReadonlyArray<string>
}

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/** csv-parse reports how many records it had emitted: the failing one is the next spreadsheet row. */
const parseFailure = (file: string) => (cause: unknown): InputError => {
  const error = cause as { readonly code?: string; readonly records?: number }
  const row = typeof error.records === "number" ? error.records + 1 : undefined
  switch (error.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      return inputError(file, `a quoted cell that starts in row ${row} is never closed (unterminated quote): the file may be truncated, or a closing " is missing`, { row, cause })
    case "CSV_MAX_RECORD_SIZE":
      return inputError(file, `row ${row} is longer than ${maxRowCharacters} characters: probably a quote that is never closed`, { row, cause })
    default:
      // A system error (the file vanished, no permission) is not the content's fault.
      return typeof (cause as { readonly syscall?: unknown }).syscall === "string"
        ? inputError(file, `cannot be read: ${describe(cause)}`, { cause })
        : inputError(file, `cannot be read as CSV: ${describe(cause)}`, { row, cause })
  }
}

/** windows-1252 bytes → text, as csv-parse reads UTF-8. */
const fromWindows1252 = () => {
  const decoder = new TextDecoder("windows-1252")
  return new Transform({
    transform: (chunk: Buffer, _encoding, done) => done(null, decoder.decode(chunk, { stream: true })),
    flush: (done) => done(null, decoder.decode())
  })
}

/**
 * Every record of the file, blank ones included, with its spreadsheet row. The file is piped into csv-parse by
 * Node itself, so it is read only as fast as records are taken: memory stays flat however slow the consumer.
 * (@effect/platform-node's pipeThroughDuplex goes on writing input whenever a chunk's last write is refused,
 * and a slow validation let it hold most of a large file.)
 */
const records = (file: string, encoding: TextEncoding, delimiter: Delimiter): Stream.Stream<CsvRecord, InputError> =>
  NodeStream.fromReadable<InputError, Array<string>>(
    () => {
      const parser = parse({
        delimiter,
        bom: true,
        relax_column_count: true,
        // A stray quote inside an unquoted cell (`Tubo 1/2"`) is text, as spreadsheets read it.
        relax_quotes: true,
        skip_empty_lines: false,
        max_record_size: maxRowCharacters
      })
      const input = createReadStream(file, { highWaterMark: 64 * 1024 })
      const stages: Array<NodeJS.ReadWriteStream> = encoding === "windows-1252" ? [fromWindows1252()] : []
      // An error of any stage (the file cannot be read, a parse error) ends up on the parser.
      pipeline([input, ...stages, parser], (error) => {
        if (error) parser.destroy(error)
      })
      return parser
    },
    parseFailure(file)
  ).pipe(Stream.mapAccum(0, (count, cells): [number, CsvRecord] => [count + 1, { row: count + 1, cells }]))

/** The first bytes of the file as text, and whether they are the whole file. */
const sample = (file: string, facts: TextFacts) =>
  Effect.tryPromise({
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
  })

const inspect = (file: string, encoding: ReadOptions["encoding"]) =>
  Effect.tryPromise({
    try: (signal) => inspectText(file, encoding, signal),
    catch: (cause) =>
      cause instanceof NotText
        ? inputError(file, cause.message, { row: cause.line, cause })
        : inputError(file, `cannot be read: ${describe(cause)}`, { cause })
  })

export const openCsv = Effect.fn("Csv.open")(function* (file: string, options: ReadOptions) {
  const facts = yield* inspect(file, options.encoding)
  if (facts.size === 0 || (facts.bom && facts.size === 3)) return yield* inputError(file, "the file is empty")
  const head = yield* sample(file, facts)
  if (head.complete && head.text.trim() === "") return yield* inputError(file, "the file is empty (only blank lines)")
  const delimiter =
    options.delimiter === "auto"
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
    Stream.filterMap((r) => (r.row <= headerRow ? Option.none() : Option.fromNullable(alignRow(header.length, r.row, r.cells))))
  )
  const source: Source = { file, format: "csv", header, writtenByTool: byTool, encoding: facts.encoding, delimiter, rows }
  return source
})
