/**
 * The command side of an onboarding, shared by `onboard` and `demo`: the command's one `Api` (connection options,
 * or the embedded sandbox), progress per step, the clean stop on SIGINT/SIGTERM, and the lines that tell the user
 * what was planned, what happened and where the reports are.
 */
import type { Option } from "effect"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { apiLayer, type ApiLayerExtra, type ConnectionOptions, EmbeddedSandbox } from "../cli/Connection.js"
import { Api } from "../client/Api.js"
import { say } from "../console/Output.js"
import { formatDuration, makeProgress, summaryTable, wentWrong } from "../console/Progress.js"
import { missingReferenceRows } from "../import/Refs.js"
import { reportCsv } from "../import/RunDir.js"
import type { RunningSandbox } from "../sandbox/Sandbox.js"
import { shellQuote } from "../Shell.js"
import { shielded, stopOnSignals } from "../Signals.js"
import { shownCounts, type Status } from "../Status.js"
import { parseRate } from "../Units.js"
import type { OnboardTools, PreparedOnboarding } from "./Onboard.js"
import { type OnboardSummary, type StepSummary, summaryFile } from "./Summary.js"

interface CommandTools extends OnboardTools {
  /** The embedded sandbox, when the command runs against one. */
  readonly embedded: Option.Option<RunningSandbox>
}

/** How to go on after a stop: `resume` on the onboarding's directory continues the step in progress and the rest. */
export const stopHint = (runDir: string) =>
  `continue it with \`fsm-bulk resume ${
    shellQuote(runDir)
  }\` (steps that ended are kept, the step in progress continues from its ` +
  `journal, the rest run)`

/** Runs `work` under the command's `Api`, with progress, the stop on signals and human lines on stderr. */
export const withOnboardApi = <A, E, R>(
  connection: ConnectionOptions,
  runDir: string,
  extra: ApiLayerExtra | undefined,
  work: (tools: CommandTools) => Effect.Effect<A, E, R>
) =>
  shielded(
    Effect.scoped(
      Effect.gen(function*() {
        const api = yield* Api
        const embedded = yield* EmbeddedSandbox
        const rate = Either.getOrUndefined(parseRate(connection.rate))
        const stop = yield* stopOnSignals({
          stopping: "stopping after the rows in flight of the current step",
          hint: () => stopHint(runDir)
        })
        return yield* work({
          stop,
          progress: (label) => makeProgress({ label, stats: api.stats, activity: api.activity, rate }),
          say,
          embedded
        })
      })
    ).pipe(Effect.provide(apiLayer(connection, extra)))
  )

/** `plan: segments (4 rows) → keywords (3) → …` */
export const planLines = (prepared: PreparedOnboarding): ReadonlyArray<string> => {
  const steps = prepared.steps.map((s, i) =>
    `${s.input.resource} (${s.rows}${i === 0 ? ` row${s.rows === 1 ? "" : "s"}` : ""})`
  )
  const ignored = prepared.input.ignored.length > 0 ? [`not read (notes): ${prepared.input.ignored.join(", ")}`] : []
  const empty = prepared.empty.length > 0 ? [emptySheets(prepared.empty, prepared.input.kind)] : []
  const readOnly = prepared.input.readOnly.length > 0
    ? [readOnlySheets(prepared.input.readOnly, prepared.input.kind)]
    : []
  return [
    `onboard ${prepared.input.path}: ${prepared.steps.length} step${
      prepared.steps.length === 1 ? "" : "s"
    } in dependency order${prepared.request.dryRun ? " (dry run: nothing will be written)" : ""}`,
    `  ${steps.join(" → ")}`,
    ...ignored.map((l) => `  ${l}`),
    ...empty.map((l) => `  ${l}`),
    ...readOnly.map((l) => `  ${l}`)
  ]
}

/** One line for the read-only lists (an export's): `8 files of read-only lists, not imported (…): deleted-tasks, …`. */
export const readOnlySheets = (lists: ReadonlyArray<string>, kind: "workbook" | "directory"): string =>
  `${lists.length} ${kind === "workbook" ? "sheet" : "file"}${lists.length === 1 ? "" : "s"} of read-only lists, ` +
  `not imported (the API cannot write them): ${lists.join(", ")}`

/** One line for the sheets (files) with no rows, which are not steps: `26 sheets with no rows, not imported: …`. */
export const emptySheets = (empty: ReadonlyArray<string>, kind: "workbook" | "directory"): string =>
  `${empty.length} ${kind === "workbook" ? "sheet" : "file"}${
    empty.length === 1 ? "" : "s"
  } with no rows, not imported: ${empty.join(", ")}`

/** What to run for a step whose rows did not all end well: its invalid rows, its failed ones, then its children. */
const nextForStep = (step: StepSummary): ReadonlyArray<string> => {
  const n = (status: Status) => step.counts[status] ?? 0
  const lines: Array<string> = []
  if (n("invalid") > 0) {
    lines.push(
      `next (${step.resource}): correct the invalid rows in a copy of ${step.runDir}/${reportCsv} (keep _row), then`,
      `      fsm-bulk rerun ${shellQuote(step.runDir)} --fixed CORRECTED.csv`
    )
  }
  // Rows naming a record that does not exist fail the same way when sent again as they are.
  const missingRefs = missingReferenceRows(n("failed"), step.errors)
  if (missingRefs > 0) {
    lines.push(
      `next (${step.resource}): ${missingRefs} row${missingRefs > 1 ? "s name records" : " names a record"} that do${
        missingRefs > 1 ? "" : "es"
      } not exist (see _error): import those records first, then`,
      `      fsm-bulk rerun ${shellQuote(step.runDir)} --only failed, or correct the reference (keep _row):`,
      `      fsm-bulk rerun ${shellQuote(step.runDir)} --only failed --fixed CORRECTED.csv`
    )
  }
  if (n("failed") - missingRefs + n("in-doubt") + n("unconfirmed") > 0) {
    lines.push(
      `next (${step.resource}): send the ${
        missingRefs > 0 ? "other " : ""
      }failed and in-doubt rows again: fsm-bulk rerun ${shellQuote(step.runDir)}`
    )
  }
  if (step.skippedForParent > 0) {
    lines.push(
      `then (${step.resource}): the rows skipped for their parent: fsm-bulk rerun ${
        shellQuote(step.runDir)
      } --only skipped`
    )
  }
  return lines
}

/** The closing lines: totals per status, requests, what went wrong and what to run, and where the reports are. */
export const closingLines = (
  summary: OnboardSummary
): { readonly table: ReadonlyArray<string>; readonly where: ReadonlyArray<string> } => {
  const took = summary.finished !== null ? Date.parse(summary.finished) - Date.parse(summary.started) : 0
  const title =
    `onboard: ${summary.rows} rows in ${summary.steps.length} of ${summary.resources.length} steps, ${
      formatDuration(took)
    }` +
    (summary.dryRun ? " (dry run: nothing was written; the statuses are what the rows would get)" : "")
  const table = summaryTable(title, shownCounts(summary.counts, summary.dryRun), [
    ["requests", summary.requests],
    ["rate-limited", summary.rateLimited],
    ["retries", summary.retries]
  ])
  const notRun = summary.notRun.length > 0
    ? [`not started: ${summary.notRun.join(", ")}; ${stopHint(summary.runDir)}`]
    : []
  const troubled = summary.steps.filter((s) => s.exitCode !== 0)
  const wrong = wentWrong(
    summary.steps.flatMap((s) => (s.errors ?? []).map((kind) => ({ kind, where: `${s.resource} ` }))),
    `each step's ${reportCsv}, or ${summary.runDir}/report.html`
  )
  return {
    table,
    where: [
      ...wrong,
      ...(summary.dryRun ? [] : troubled.flatMap(nextForStep)),
      ...notRun,
      ...troubled.map((s) => `rows to look at: ${s.runDir}/${reportCsv}`),
      `reports: ${summary.runDir}/<resource>/${reportCsv} (and report.xlsx), one per step`,
      `summary: ${summary.runDir}/${summaryFile}`
    ]
  }
}
