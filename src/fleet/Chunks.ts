/**
 * Large files in parts that different hosts can take: a CSV or XLSX source of more rows than the chunk size is
 * split into chunk files of consecutive rows, each with a `_row` column holding the source's row numbers (the
 * pipeline numbers a chunk's rows by it, as a rerun's), written UTF-8 with commas (a workbook's number cells with
 * the decimal mark the whole file settled on), and run with the formats the whole file settled on at submit (a
 * chunk alone could be ambiguous). Each chunk also carries, in `_error`, the verdict of the whole file's
 * validation for its rows that validation found invalid: a key repeated in another chunk is invalid in its chunk
 * with the same message a single run gives it (the pipeline takes the verdict, as a rerun's). At `fetch`, the
 * chunks' journals are joined under one header describing the original file, and the reports are written again
 * from the original file and that journal: rows in the source's order, numbered as in the source, exactly as a
 * single run reports them.
 *
 * Limit (said in docs/fleet.md): rows referring to rows of another chunk wait for them only within their chunk.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import { InputError } from "../Errors.js"
import { inspectText } from "../files/Encoding.js"
import { restore } from "../files/Guard.js"
import { openCsvWriter } from "../files/Write.js"
import { openInput, verdictColumn } from "../import/Input.js"
import { type Header, journalFile, readJournal, type ReadSettings } from "../import/Journal.js"
import { type ReportTally, settledFormats, type Summary, writeReports, writeSummary } from "../import/Report.js"
import { nowIso } from "../import/RunDir.js"
import { resource as resourceOf, type ResourceName } from "../Resources.js"
import { endedWell, type Outcome } from "../Status.js"
import type { Formats } from "../validate/Validate.js"
import type { FleetError } from "./Errors.js"

export const rowColumn = "_row"

export interface Chunk {
  readonly path: string
  readonly first: number
  readonly last: number
  readonly rows: number
}

/**
 * The rows a validation report (`validate`'s report.csv) found invalid, with their errors as it wrote them: the
 * verdicts of the whole file that its chunks carry.
 */
export const invalidRows = Effect.fn("Fleet.invalidRows")(function*(report: string, resource: ResourceName) {
  const input = yield* openInput(report, chunkRead, resourceOf(resource).name)
  const lower = input.source.header.map((h) => h.trim().toLowerCase())
  const [rowAt, statusAt, errorAt] = [lower.indexOf("_row"), lower.indexOf("_status"), lower.indexOf(verdictColumn)]
  const invalid = new Map<number, string>()
  yield* Stream.runForEach(input.source.rows, (row) =>
    Effect.sync(() => {
      if ((row.cells[statusAt] ?? "").trim() !== "invalid") return
      const error = row.cells[errorAt] ?? ""
      invalid.set(Number(row.cells[rowAt]), input.source.writtenByTool ? restore(error) : error)
    }))
  return invalid
})

/**
 * Splits `file` (CSV or XLSX) into chunks of `size` rows in `dir` (chunk-0001.csv …); `invalid` gives the whole
 * file's verdicts by row, `decimal` the decimal mark its number cells are written with. `written` hears of each chunk
 * as soon as its file is closed, while the rest of the file is still being read (`submit` stores them in batches).
 */
export const splitSource = Effect.fn("Fleet.splitSource")(function*(
  file: string,
  read: ReadSettings,
  resource: ResourceName,
  size: number,
  dir: string,
  invalid: ReadonlyMap<number, string>,
  decimal: "." | ",",
  written: (chunk: Chunk) => Effect.Effect<void, FleetError> = () => Effect.void
) {
  const input = yield* openInput(file, read, resourceOf(resource).name)
  const chunks: Array<Chunk> = []
  yield* Effect.scoped(Effect.gen(function*() {
    let writer: Effect.Effect.Success<ReturnType<typeof openCsvWriter>> | undefined
    let current: { path: string; first: number; last: number; rows: number } | undefined
    const finish = Effect.suspend(() => {
      if (writer === undefined || current === undefined) return Effect.void
      const done = current
      return writer.close.pipe(
        Effect.tap(() => {
          chunks.push(done)
        }),
        Effect.zipRight(written(done))
      )
    })
    yield* Stream.runForEach(input.rows, (row) =>
      Effect.gen(function*() {
        if (current === undefined || current.rows >= size) {
          yield* finish
          const path = Path.join(dir, `chunk-${String(chunks.length + 1).padStart(4, "0")}.csv`)
          writer = yield* openCsvWriter(path, [rowColumn, verdictColumn, ...input.columns], {
            bom: false,
            guard: false
          })
          current = { path, first: row.row, last: row.row, rows: 0 }
        }
        yield* writer!.writeAll([[row.row, invalid.get(row.row) ?? "", ...input.cellsOf(row, decimal)]])
        current.rows += 1
        current.last = row.row
      }))
    yield* finish
  }))
  return chunks
})

/** The encoding a whole pass over the CSV `file` settles on (`wanted` is the user's `--encoding`). */
const decidedEncoding = (file: string, wanted: ReadSettings["encoding"]) =>
  Effect.tryPromise({
    try: () => inspectText(file, wanted),
    catch: (cause) =>
      new InputError({
        file,
        detail: `cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  }).pipe(Effect.map((facts) => facts.encoding))

/** The settings a chunk is read with: its own file's, whatever the original's were. */
export const chunkRead: ReadSettings = { encoding: "utf-8", delimiter: "," }

/**
 * Writes into `dir` (holding `source`, the original file) the run directory of a chunked job: one journal
 * (the first chunk's header, made the original file's, then every chunk's lines), the reports from the original
 * file, and the summary with the chunks' traffic added up.
 */
export const mergeChunks = Effect.fn("Fleet.mergeChunks")(function*(options: {
  readonly dir: string
  readonly source: string
  readonly read: ReadSettings
  readonly sha256: string
  readonly journals: ReadonlyArray<ReadonlyArray<string>>
  readonly summaries: ReadonlyArray<Summary | undefined>
  readonly write: (path: string, text: string) => Effect.Effect<void>
}) {
  const first = options.journals.find((j) => j.length > 0)
  if (first === undefined) return undefined
  const header = JSON.parse(first[0]!) as Header
  const input = yield* openInput(options.source, options.read, resourceOf(header.resource as ResourceName).name)
  // The header names the original file as a single run's does: the delimiter its read sniffed and the encoding a
  // whole pass decides (not the user's `auto`, nor the chunks' UTF-8 and commas, nor what the first 64 KiB said).
  const encoding = input.source.format === "csv"
    ? yield* decidedEncoding(options.source, options.read.encoding)
    : undefined
  const merged: Header = {
    ...header,
    source: {
      file: options.source,
      format: input.source.format,
      sha256: options.sha256,
      ...(input.source.sheet !== undefined ? { sheet: input.source.sheet } : {}),
      ...(encoding !== undefined ? { encoding } : {}),
      ...(input.source.delimiter !== undefined ? { delimiter: input.source.delimiter } : {})
    },
    read: options.read,
    parse: { ...header.parse, baseDir: Path.dirname(options.source) }
  }
  const lines = [JSON.stringify(merged)]
  for (const j of options.journals) lines.push(...j.slice(1))
  const journalPath = Path.join(options.dir, journalFile)
  yield* options.write(journalPath, lines.join("\n") + "\n")
  const contents = yield* readJournal(journalPath)
  const formats = header.formats as Formats
  const decimal = formats.decimal
  const known = options.summaries.filter((s): s is Summary => s !== undefined)
  const finished = known.map((s) => s.finished).sort().at(-1) ?? (yield* nowIso)
  const summaryOf = (report: ReportTally): Summary => {
    const sum = (f: (s: Summary) => number) => known.reduce((n, s) => n + f(s), 0)
    const interrupted = known.length < options.summaries.length || known.some((s) => s.interrupted)
    const allEnded = Object.entries(report.counts).every(([s, n]) =>
      n === 0 || endedWell(s as Outcome["status"], header.dryRun)
    )
    const base = known[0]
    const summary: Summary = {
      ...(base ?? {}),
      tool: "fsm-bulk",
      command: header.command,
      resource: header.resource,
      mode: header.mode,
      source: options.source,
      runDir: options.dir,
      started: header.started,
      finished,
      rows: report.rows,
      counts: report.counts,
      errors: report.errors,
      requests: sum((s) => s.requests),
      rateLimited: sum((s) => s.rateLimited),
      retries: sum((s) => s.retries),
      exitCode: interrupted ? 3 : allEnded ? 0 : 1,
      dryRun: header.dryRun,
      parent: null,
      interrupted,
      aborted: known.find((s) => s.aborted !== null)?.aborted ?? null,
      // The original file's, read whole by now (a chunk's summary describes its chunk: UTF-8 with commas).
      formats: settledFormats(input.source, formats)
    }
    return summary
  }
  // The summary is made when the reports close (report.xlsx opens on it), from the rows' tally.
  const { summary } = yield* writeReports({
    runDir: options.dir,
    input,
    dryRun: header.dryRun,
    decimal,
    outcomeOf: (row): Outcome =>
      contents.rows.get(row)?.outcome ?? { status: "skipped", error: "not attempted: the job ended before this row" }
  }, (report) => Effect.succeed(summaryOf(report)))
  yield* writeSummary(options.dir, summary)
  return summary
})
