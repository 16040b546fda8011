/**
 * Helpers of the validation tests: parse options with defaults, rows as a spreadsheet numbers them (header = 1),
 * and the whole offline chain (plan → formats → validator) over them.
 */
import { Chunk, Effect, Stream } from "effect"
import { existsSync, readFileSync } from "node:fs"
import type { SourceRow } from "../../src/files/Source.js"
import { openInput, planInput } from "../../src/import/Input.js"
import type { ResourceName } from "../../src/Resources.js"
import { resource } from "../../src/Resources.js"
import type { ParseOptions, RowResult } from "../../src/validate/Validate.js"
import {
  defaultMaxAttachmentBytes,
  inferFormats,
  makeValidator,
  planColumns,
  settleFormats
} from "../../src/validate/Validate.js"

export const options = (overrides: Partial<ParseOptions> = {}): ParseOptions => ({
  dateFormat: "auto",
  decimal: "auto",
  mode: "upsert",
  baseDir: process.cwd(),
  maxAttachmentBytes: defaultMaxAttachmentBytes,
  restoreGuard: false,
  ...overrides
})

/** Data rows numbered 2, 3, … as a spreadsheet shows them. */
export const sourceRows = (cells: ReadonlyArray<ReadonlyArray<string>>): Array<SourceRow> =>
  cells.map((c, i) => ({ row: i + 2, cells: c }))

export const streamOf = (rows: ReadonlyArray<SourceRow>) => Stream.fromIterable(rows)

/** plan → inferFormats → one validator → every row, as the import pipeline chains them. */
export const validateFile = (
  name: ResourceName,
  header: ReadonlyArray<string>,
  cells: ReadonlyArray<ReadonlyArray<string>>,
  overrides: Partial<ParseOptions> = {}
) =>
  Effect.gen(function*() {
    const opts = options(overrides)
    const plan = yield* planColumns(resource(name), `${name}.csv`, header, opts)
    const rows = sourceRows(cells)
    const formats = yield* inferFormats(plan, streamOf(rows), opts)
    const validator = makeValidator(plan, formats, opts)
    const results = yield* Stream.runCollect(Stream.mapEffect(streamOf(rows), validator.validate))
    return { plan, formats, results: Chunk.toArray(results) }
  })

export type Valid = Extract<RowResult, { _tag: "Valid" }>
export type Invalid = Extract<RowResult, { _tag: "Invalid" }>

export const valid = (r: RowResult | undefined): Valid => {
  if (r === undefined || r._tag !== "Valid") throw new Error(`expected a valid row, got ${JSON.stringify(r)}`)
  return r
}

export const invalid = (r: RowResult | undefined): Invalid => {
  if (r === undefined || r._tag !== "Invalid") throw new Error(`expected an invalid row, got ${JSON.stringify(r)}`)
  return r
}

/** Whether the kernel counts this process's reads (`rchar` of /proc/self/io: Linux). */
export const readsCounted = existsSync("/proc/self/io")
/** The bytes this process's read calls have returned so far, every thread's. */
export const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))![1])

/**
 * The steps of `validate` (ValidateRun) up to the report, which reads back its own files: a customers source
 * opened, planned, its formats settled on the first rows and every row validated in the same read.
 */
export const validateSource = (file: string) =>
  Effect.scoped(Effect.gen(function*() {
    const input = yield* openInput(file, { encoding: "auto", delimiter: "auto" }, "customers")
    const settings = { dateFormat: "auto", decimal: "auto", mode: "upsert" } as const
    const { columns, parse } = yield* planInput(resource("customers"), input, settings, () => Effect.void)
    const { formats, rows } = yield* settleFormats(columns, input.rows, parse)
    const validator = makeValidator(columns, formats, parse)
    let valid = 0
    yield* Stream.runForEach(
      rows,
      (row) => Effect.map(validator.validate(row), (r) => void (valid += r._tag === "Valid" ? 1 : 0))
    )
    return { input, valid }
  }))
