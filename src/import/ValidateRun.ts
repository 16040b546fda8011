/**
 * `fsm-bulk validate`: every check of an import, offline (nothing is sent, no journal), with the same report and
 * summary as an import. Rows that pass are reported as `valid` (an extension of the contract's statuses); their
 * warnings go to `_error`.
 */
import { Clock, Effect, Stream } from "effect"
import type { ResourceName } from "../Resources.js"
import { resource as resourceOf } from "../Resources.js"
import { formatErrors, inferFormats, makeValidator, type RowResult } from "../validate/Validate.js"
import { openInput, planInput, type RowSettings } from "./Input.js"
import type { Mode, ReadSettings } from "./Journal.js"
import { openReports, writeSummary, type Summary } from "./Report.js"
import { createRunDir } from "./RunDir.js"
import type { Outcome } from "./Status.js"

export interface ValidateJob extends RowSettings {
  readonly resource: ResourceName
  readonly file: string
  readonly read: ReadSettings
  /** Which columns are required depends on it (create/upsert need the required ones, update/delete an identity). */
  readonly mode: Mode
  readonly runDir: string
  readonly say?: ((line: string) => Effect.Effect<void>) | undefined
}

const outcomeOf = (result: RowResult): Outcome =>
  result._tag === "Invalid"
    ? { status: "invalid", error: formatErrors(result.errors) }
    : result.warnings.length > 0
    ? { status: "valid", error: result.warnings.map((w) => `warning: ${w}`).join("; ") }
    : { status: "valid" }

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

export const runValidate = Effect.fn("Validate.run")(function*(job: ValidateJob) {
  const say = job.say ?? (() => Effect.void)
  const r = resourceOf(job.resource)
  const started = yield* nowIso
  const input = yield* openInput(job.file, job.read, r.name)
  const { columns, parse } = yield* planInput(r, input, job, say)
  const formats = yield* inferFormats(columns, input.rows, parse)
  const validator = makeValidator(columns, formats, parse)
  const runDir = yield* createRunDir(job.runDir)
  // Validation is synchronous and in input order, so each row's report line is written as soon as it is known.
  const report = yield* Effect.scoped(
    Effect.gen(function*() {
      const reports = yield* openReports({ runDir, input, dryRun: false, decimal: formats.decimal })
      yield* Stream.runForEach(input.rows, (row) =>
        Effect.flatMap(validator.validate(row), (result) => reports.write(row, outcomeOf(result)))
      )
      return yield* reports.close
    })
  )
  const exitCode = report.counts.invalid > 0 ? 1 : 0
  const summary: Summary = {
    tool: "fsm-bulk",
    command: "validate",
    resource: r.name,
    mode: job.mode,
    source: input.file,
    runDir,
    started,
    finished: yield* nowIso,
    rows: report.rows,
    counts: report.counts,
    requests: 0,
    rateLimited: 0,
    retries: 0,
    exitCode,
    dryRun: false,
    parent: null,
    interrupted: false,
    aborted: null
  }
  yield* writeSummary(runDir, summary)
  return { runDir, summary, exitCode, formats }
})
