/**
 * How a session of a run ends, the same for an import and an undo: the run's traffic over all its sessions, the
 * journal's `end` line, then `summary.json`; an aborted session fails only once both are written, so `resume`
 * always finds them.
 */
import { Effect } from "effect"
import type { ApiAborted, RunTraffic } from "../client/Api.js"
import type { JournalWriter } from "./Journal.js"
import { type ReportTally, type Summary, writeSummary } from "./Report.js"

/** This session's traffic added to that of the sessions before it (their journal `end` lines). */
export const runTraffic = (session: RunTraffic, earlier: ReadonlyArray<RunTraffic>): RunTraffic => ({
  requests: session.requests + earlier.reduce((n, e) => n + e.requests, 0),
  rateLimited: session.rateLimited + earlier.reduce((n, e) => n + e.rateLimited, 0),
  retries: session.retries + earlier.reduce((n, e) => n + e.retries, 0)
})

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
