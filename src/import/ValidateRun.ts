/**
 * `fsm-bulk validate`: every check of an import, offline (nothing is sent, no journal), with the same report and
 * summary as an import. Rows that pass are reported as `valid` (an extension of the contract's statuses); their
 * warnings go to `_error`.
 */
import type * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { existsSync } from "node:fs"
import { rmdir } from "node:fs/promises"
import { Notices } from "../console/Output.js"
import { FileReadProgress } from "../console/Progress.js"
import { fileChars, type SourceRow } from "../files/Source.js"
import type { ResourceName } from "../Resources.js"
import { resource as resourceOf } from "../Resources.js"
import type { Outcome } from "../Status.js"
import { checked, formatErrors, makeValidator, type RowResult, settleFormats } from "../validate/Validate.js"
import { columnsSummary, openInput, planInput, type RowSettings } from "./Input.js"
import type { Mode, ReadSettings } from "./Journal.js"
import { openReports, settledFormats, type Summary, writeSummary, writeSummaryFile } from "./Report.js"
import { createRunDir, nowIso } from "./RunDir.js"

interface ValidateJob extends RowSettings {
  readonly resource: ResourceName
  readonly file: string
  readonly read: ReadSettings
  /** Which columns are required depends on it (create/upsert need the required ones, update/delete an identity). */
  readonly mode: Mode
  readonly runDir: string
  /**
   * For a program, not a person: report.csv and summary.json only, no report.xlsx nor report.html (a fleet's
   * `submit` reads the verdicts of report.csv and removes the folder: the workbook and the page were a tenth of its
   * CPU for nothing).
   */
  readonly verdictsOnly?: boolean
}

const outcomeOf = (result: RowResult): Outcome =>
  result._tag === "Invalid"
    ? { status: "invalid", error: formatErrors(result.errors) }
    : result._tag === "Skipped"
    ? { status: "skipped", error: result.reason }
    : result.warnings.length > 0
    ? { status: "valid", error: result.warnings.map((w) => `warning: ${w}`).join("; ") }
    : { status: "valid" }

/**
 * Its lines go to `Notices` when the caller provides it (none otherwise), and its live line is `FileReadProgress`,
 * told of the rows as they are validated with about how many bytes of a CSV file they took (0 for XLSX).
 */
export const runValidate = Effect.fn("Validate.run")(function*(job: ValidateJob) {
  const say = Option.match(yield* Effect.serviceOption(Notices), {
    onNone: () => (_: string) => Effect.void,
    onSome: (notices) => notices.say
  })
  const progress = yield* FileReadProgress
  const r = resourceOf(job.resource)
  const started = yield* nowIso
  const input = yield* openInput(job.file, job.read, r.name)
  const { columns, parse } = yield* planInput(r, input, job, say)
  // One pass when the file allows: the formats settle on the first rows and the same read goes on to validate.
  const { formats, runDir, summary } = yield* Effect.scoped(
    Effect.gen(function*() {
      const { formats, rows } = yield* settleFormats(columns, input.rows, parse)
      const validator = makeValidator(columns, formats, parse)
      const existed = existsSync(job.runDir)
      const runDir = yield* createRunDir(job.runDir)
      // A contradiction found later in the file stops the run before any report is renamed into place; a run
      // directory this run created is then empty (the reports' .tmp files go first), and goes too.
      if (!existed) {
        yield* Effect.addFinalizer((exit) => (exit._tag === "Failure"
          ? Effect.promise(() => rmdir(runDir).catch(() => undefined))
          : Effect.void)
        )
      }
      // Validation is in input order, so a batch's report lines are written as soon as its rows are validated.
      const reports = yield* openReports({
        runDir,
        input,
        dryRun: false,
        decimal: formats.decimal,
        resource: r.name,
        formats,
        workbook: job.verdictsOnly !== true
      })
      const csv = input.source.format === "csv"
      // A batch of rows whose files need no checking (every batch of most files) is validated in one loop.
      const validated = (chunk: Chunk.Chunk<SourceRow>) => {
        const results = Array.from(chunk, validator.check)
        if (!results.some(Effect.isEffect)) {
          return Effect.succeed(Array.from(chunk, (row, i) => [row, outcomeOf(results[i] as RowResult)] as const))
        }
        return Effect.forEach(chunk, (row, i) => Effect.map(checked(results[i]!), (r) => [row, outcomeOf(r)] as const))
      }
      yield* Stream.runForEachChunk(rows, (chunk) =>
        Effect.zipRight(
          Effect.flatMap(validated(chunk), reports.writeAll),
          !FileReadProgress.shown(progress)
            ? Effect.void
            : Effect.suspend(() => {
              let bytes = 0
              if (csv) {
                for (const row of chunk) {
                  bytes += fileChars(row)
                }
              }
              return progress.read(chunk.length, bytes)
            })
        ))
      // The summary is made once the last line is written, so that report.xlsx shows it on its first sheet.
      const report = yield* reports.close((tally) =>
        Effect.map(nowIso, (finished): Summary => ({
          tool: "fsm-bulk",
          command: "validate",
          resource: r.name,
          mode: job.mode,
          source: input.file,
          runDir,
          started,
          finished,
          rows: tally.rows,
          counts: tally.counts,
          errors: tally.errors,
          ...(tally.hidden.count > 0 ? { hiddenRows: tally.hidden } : {}),
          requests: 0,
          rateLimited: 0,
          retries: 0,
          exitCode: tally.counts.invalid > 0 ? 1 : 0,
          dryRun: false,
          parent: null,
          interrupted: false,
          aborted: null,
          formats: settledFormats(input.source, formats),
          ...columnsSummary(input, columns)
        }))
      )
      return { formats, summary: report.summary, runDir }
    })
  )
  const exitCode = summary.exitCode
  yield* (job.verdictsOnly === true ? writeSummaryFile : writeSummary)(runDir, summary)
  return { runDir, summary, exitCode, formats }
})
