/**
 * The command side of an onboarding, shared by `onboard` and `demo`: the command's one `Api` (connection options,
 * or the embedded sandbox), progress per step, the clean stop on SIGINT/SIGTERM, and the lines that tell the user
 * what was planned, what happened and where the reports are.
 */
import type { Option } from "effect"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { apiLayer, type ApiLayerExtra, type ConnectionOptions, EmbeddedSandbox } from "../cli/Connection.js"
import { Api } from "../client/Api.js"
import { Notices } from "../console/Output.js"
import { formatDuration, StepProgress, summaryTable, wentWrong } from "../console/Progress.js"
import { missingReferenceRows } from "../import/Refs.js"
import { reportCsv } from "../import/RunDir.js"
import { Journals } from "../import/Services.js"
import { countedSheets, t } from "../Messages.js"
import type { RunningSandbox } from "../sandbox/Sandbox.js"
import { shellQuote } from "../Shell.js"
import { RunStop, shielded, stopOnSignals } from "../Signals.js"
import { shownCounts, type Status } from "../Status.js"
import { parseRate } from "../Units.js"
import type { PreparedOnboarding } from "./Onboard.js"
import { type OnboardSummary, type StepSummary, summaryFile } from "./Summary.js"

/** How to go on after a stop: `resume` on the onboarding's directory continues the step in progress and the rest. */
export const stopHint = (runDir: string) => t("onboard.stopHint", { command: `fsm-bulk resume ${shellQuote(runDir)}` })

/**
 * Runs `work` under the command's `Api` (given the embedded sandbox, when the command runs against one), with each
 * step's progress, the stop on signals and human lines on stderr; the steps' journals are files (`Journals.file`).
 */
export const withOnboardApi = <A, E, R>(
  connection: ConnectionOptions,
  runDir: string,
  extra: ApiLayerExtra | undefined,
  work: (embedded: Option.Option<RunningSandbox>) => Effect.Effect<A, E, R>
) =>
  shielded(
    Effect.scoped(
      Effect.gen(function*() {
        const api = yield* Api
        const embedded = yield* EmbeddedSandbox
        const rate = Either.getOrUndefined(parseRate(connection.rate))
        const stop = yield* stopOnSignals({
          stopping: t("onboard.stopping"),
          hint: () => stopHint(runDir)
        })
        return yield* work(embedded).pipe(
          Effect.provide(Layer.mergeAll(
            StepProgress.shown({ stats: api.stats, activity: api.activity, rate }),
            Notices.stderr,
            RunStop.signal(stop),
            Journals.file
          ))
        )
      })
    ).pipe(Effect.provide(apiLayer(connection, extra)))
  )

/** `plan: segments (4 rows) → keywords (3) → …` */
export const planLines = (prepared: PreparedOnboarding): ReadonlyArray<string> => {
  const steps = prepared.steps.map((s, i) =>
    i === 0
      ? t(s.rows === 1 ? "onboard.firstStepOne" : "onboard.firstStep", { resource: s.input.resource, rows: s.rows })
      : `${s.input.resource} (${s.rows})`
  )
  const ignored = prepared.input.ignored.length > 0
    ? [t("onboard.notRead", { sheets: prepared.input.ignored.join(", ") })]
    : []
  const empty = prepared.empty.length > 0 ? [emptySheets(prepared.empty, prepared.input.kind)] : []
  const readOnly = prepared.input.readOnly.length > 0
    ? [readOnlySheets(prepared.input.readOnly, prepared.input.kind)]
    : []
  return [
    t(prepared.steps.length === 1 ? "onboard.planOne" : "onboard.plan", {
      path: prepared.input.path,
      count: prepared.steps.length,
      dry: prepared.request.dryRun ? t("onboard.planDryRun") : ""
    }),
    `  ${steps.join(" → ")}`,
    ...ignored.map((l) => `  ${l}`),
    ...empty.map((l) => `  ${l}`),
    ...readOnly.map((l) => `  ${l}`)
  ]
}

/** One line for the read-only lists (an export's): `8 files of read-only lists, not imported (…): deleted-tasks, …`. */
export const readOnlySheets = (lists: ReadonlyArray<string>, kind: "workbook" | "directory"): string =>
  countedSheets("readOnly", lists, kind)

/** One line for the sheets (files) with no rows, which are not steps: `26 sheets with no rows, not imported: …`. */
export const emptySheets = (empty: ReadonlyArray<string>, kind: "workbook" | "directory"): string =>
  countedSheets("empty", empty, kind)

/** What to run for a step whose rows did not all end well: its invalid rows, its failed ones, then its children. */
const nextForStep = (step: StepSummary): ReadonlyArray<string> => {
  const n = (status: Status) => step.counts[status] ?? 0
  const lines: Array<string> = []
  const lead = `${t("next.next")} (${step.resource})`
  if (n("invalid") > 0) {
    lines.push(
      t("onboard.fixInvalid", { lead, report: `${step.runDir}/${reportCsv}` }),
      `      fsm-bulk rerun ${shellQuote(step.runDir)} --fixed CORRECTED.csv`
    )
  }
  // Rows naming a record that does not exist fail the same way when sent again as they are.
  const missingRefs = missingReferenceRows(n("failed"), step.errors)
  if (missingRefs > 0) {
    lines.push(
      missingRefs > 1 ? t("next.missingRefs", { lead, count: missingRefs }) : t("next.missingRef", { lead }),
      t("onboard.missingRefsFix", { command: `fsm-bulk rerun ${shellQuote(step.runDir)}` }),
      `      fsm-bulk rerun ${shellQuote(step.runDir)} --only failed --fixed CORRECTED.csv`
    )
  }
  if (n("failed") - missingRefs + n("in-doubt") + n("unconfirmed") > 0) {
    lines.push(
      t(missingRefs > 0 ? "next.resendOther" : "next.resend", {
        lead,
        command: `fsm-bulk rerun ${shellQuote(step.runDir)}`
      })
    )
  }
  if (step.skippedForParent > 0) {
    lines.push(
      t("onboard.skippedForParent", {
        lead: `${t("onboard.then")} (${step.resource})`,
        command: `fsm-bulk rerun ${shellQuote(step.runDir)} --only skipped`
      })
    )
  }
  return lines
}

/** The closing lines: totals per status, requests, what went wrong and what to run, and where the reports are. */
export const closingLines = (
  summary: OnboardSummary
): { readonly table: ReadonlyArray<string>; readonly where: ReadonlyArray<string> } => {
  const took = summary.finished !== null ? Date.parse(summary.finished) - Date.parse(summary.started) : 0
  const title = t("onboard.heading", {
    rows: summary.rows,
    steps: summary.steps.length,
    total: summary.resources.length,
    took: formatDuration(took),
    dry: summary.dryRun ? t("onboard.closingDryRun") : ""
  })
  const table = summaryTable(title, shownCounts(summary.counts, summary.dryRun), [
    [t("summary.requests"), summary.requests],
    [t("summary.rateLimited"), summary.rateLimited],
    [t("summary.retries"), summary.retries]
  ])
  const notRun = summary.notRun.length > 0
    ? [t("onboard.notStarted", { steps: summary.notRun.join(", "), hint: stopHint(summary.runDir) })]
    : []
  const troubled = summary.steps.filter((s) => s.exitCode !== 0)
  const wrong = wentWrong(
    summary.steps.flatMap((s) => (s.errors ?? []).map((kind) => ({ kind, where: `${s.resource} ` }))),
    t("onboard.seeReports", { csv: reportCsv, page: `${summary.runDir}/report.html` })
  )
  return {
    table,
    where: [
      ...wrong,
      ...(summary.dryRun ? [] : troubled.flatMap(nextForStep)),
      ...notRun,
      ...troubled.map((s) => t("onboard.rowsToLookAt", { file: `${s.runDir}/${reportCsv}` })),
      t("onboard.reports", { dir: summary.runDir, csv: reportCsv }),
      t("onboard.summary", { file: `${summary.runDir}/${summaryFile}` })
    ]
  }
}
