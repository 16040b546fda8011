/**
 * How a session of a run ends, the same for an import and an undo: the run's traffic over all its sessions, the
 * summary's common fields, the journal's `end` line, then `summary.json`; an aborted session fails only once both
 * are written, so `resume` always finds them.
 */
import * as Effect from "effect/Effect"
import type { ApiAborted, RunTraffic } from "../client/Api.js"
import { shownCounts, type Status } from "../Status.js"
import { version } from "../Version.js"
import type { JournalWriter } from "./Journal.js"
import { type ReportTally, type Summary, writeSummary } from "./Report.js"
import { nowIso } from "./RunDir.js"

/** This session's traffic added to that of the sessions before it (their journal `end` lines). */
export const runTraffic = (session: RunTraffic, earlier: ReadonlyArray<RunTraffic>): RunTraffic => ({
  requests: session.requests + earlier.reduce((n, e) => n + e.requests, 0),
  rateLimited: session.rateLimited + earlier.reduce((n, e) => n + e.rateLimited, 0),
  retries: session.retries + earlier.reduce((n, e) => n + e.retries, 0)
})

/** What the session says of itself for its summary (the rest comes from the reports' tally and the clock). */
type SessionFacts =
  & Pick<
    Summary,
    | "command"
    | "resource"
    | "mode"
    | "source"
    | "runDir"
    | "started"
    | "dryRun"
    | "parent"
    | "interrupted"
    | "aborted"
  >
  & { readonly baseUrl: string; readonly budget: NonNullable<Summary["budget"]> }

/**
 * The fields an import's and an undo's summaries share, finished now: exit code 3 for an interrupted session, else
 * 0 when every row's status `endedWell` (rows the sheet hides, `skipped` by the file's own choice, count as such),
 * else 1.
 */
export const summaryOf = (
  facts: SessionFacts,
  tally: ReportTally,
  traffic: RunTraffic,
  endedWell: (status: Status) => boolean
) =>
  Effect.map(nowIso, (finished) => ({
    tool: "fsm-bulk" as const,
    command: facts.command,
    resource: facts.resource,
    mode: facts.mode,
    source: facts.source,
    runDir: facts.runDir,
    started: facts.started,
    finished,
    rows: tally.rows,
    counts: tally.counts,
    errors: tally.errors,
    ...(tally.hidden.count > 0 ? { hiddenRows: tally.hidden } : {}),
    ...traffic,
    exitCode: facts.interrupted
      ? 3
      : Object.entries(tally.counts).every(([s, n]) =>
          n === 0 || endedWell(s as Status) || (s === "skipped" && n === tally.hidden.count)
        )
      ? 0
      : 1,
    dryRun: facts.dryRun,
    ...(facts.dryRun ? { planned: shownCounts(tally.counts, true) } : {}),
    parent: facts.parent,
    interrupted: facts.interrupted,
    aborted: facts.aborted,
    version,
    baseUrl: facts.baseUrl,
    budget: facts.budget
  } satisfies Summary))

/** Writes the session's `end` line and the summary; fails with `aborted` after them when the session was aborted. */
export const endSession = <S extends Summary, E extends { readonly message: string } = ApiAborted>(
  journal: JournalWriter,
  report: ReportTally & { readonly summary: S },
  session: RunTraffic,
  aborted: E | undefined
) =>
  Effect.gen(function*() {
    const { summary } = report
    yield* journal.append({
      state: "end",
      at: summary.finished,
      interrupted: summary.interrupted,
      ...(aborted !== undefined ? { aborted: aborted.message } : {}),
      counts: report.counts,
      ...session
    })
    yield* writeSummary(summary.runDir, summary)
    if (aborted !== undefined) return yield* Effect.fail(aborted)
    return { runDir: summary.runDir, summary, exitCode: summary.exitCode, interrupted: summary.interrupted }
  })
