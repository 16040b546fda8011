/**
 * When a worker's job slots take a further job (issue 29, the fleet's tail). A worker sends at most its address's
 * budget, shared by every job it holds, and one job's requests can keep that budget full by themselves: a worker that
 * filled every `--jobs` slot held parts that only waited on its budget, and at the end of a run the last parts waited
 * there while another worker's address went idle (the scale smoke's 30 parts went 11 / 9 / 10 to three workers, one
 * address done 10.5 s before the last). So a worker that holds jobs takes a further one only when its budget would
 * otherwise have room: what its jobs have still to send is within what the budget sends in `horizonMs` (the next job
 * starts before they end), or its jobs have left the budget room for a whole window since it last took one (they
 * cannot fill it: a slow API, accounts with budgets of their own below the worker's). A worker that holds no job takes
 * one at once, `--jobs` stays the most it holds, and the takeover slots (Queue.ts) take a stranded job whatever this
 * says.
 */
import * as Effect from "effect/Effect"
import { type Budget, monotonicMillis } from "../client/Budget.js"
import type { Rate } from "../Units.js"

/**
 * How far ahead a worker takes its next job: when its jobs have no more rows to send than its budget sends in this
 * long. Covers a job's start (its store reads, its source written, its first look-ups) on a loaded host.
 */
const horizonMs = 2_000

interface Held {
  /** The rows the job sends, once known (an import's; a job that runs whole never says). */
  rows: number | undefined
  /** Its rows that ended (their outcome recorded). */
  done: number
  /** When it was given to the worker (`monotonicMillis`). */
  readonly since: number
  /** When it began to send (its first row on its way; a whole job's run under its lease). */
  sending: number | undefined
}

export interface Pace {
  /** A job given to this worker (by a job slot or a takeover slot) begins; the effect returned ends it. */
  readonly begin: (id: string) => Effect.Effect<Effect.Effect<void>>
  /** A held import's rows and how many of them earlier runs ended (JobRunner.ts, once its journal is read). */
  readonly rows: (id: string, rows: number, doneBefore: number) => Effect.Effect<void>
  /** A held job begins to send: an import's first row is on its way, a whole job runs. */
  readonly sending: (id: string) => Effect.Effect<void>
  /** A row of a held import ended. */
  readonly done: (id: string) => Effect.Effect<void>
  /** Whether a job slot takes a further job now. */
  readonly mayTakeMore: Effect.Effect<boolean>
}

export const makePace = (budget: Budget, rate: Rate, marginMs: number): Pace => {
  const held = new Map<string, Held>()
  const soonRows = (rate.limit * horizonMs) / rate.windowMs
  const update = (id: string, f: (h: Held, now: number) => void) =>
    Effect.map(monotonicMillis, (now) => {
      const h = held.get(id)
      if (h !== undefined) f(h, now)
    })

  const begin = (id: string) =>
    Effect.map(monotonicMillis, (since) => {
      const entry: Held = { rows: undefined, done: 0, since, sending: undefined }
      held.set(id, entry)
      return Effect.sync(() => {
        if (held.get(id) === entry) held.delete(id)
      })
    })

  const mayTakeMore = Effect.gen(function*() {
    if (held.size === 0) return true
    const entries = [...held.values()]
    // Its jobs cannot fill the budget: each sends, and the budget had room for a whole window since the last began.
    const began = entries.map((h) => h.sending ?? Number.POSITIVE_INFINITY)
    const since = Math.max(yield* budget.fullAt, ...began)
    if (!(yield* budget.paused) && (yield* monotonicMillis) - since >= rate.windowMs + marginMs) return true
    let left = 0
    for (const h of entries) left += h.rows === undefined ? Number.POSITIVE_INFINITY : Math.max(0, h.rows - h.done)
    return left <= soonRows
  })

  return {
    begin,
    rows: (id, rows, doneBefore) =>
      update(id, (h) => {
        h.rows = rows
        h.done = doneBefore
      }),
    sending: (id) => update(id, (h, now) => (h.sending ??= now)),
    done: (id) => update(id, (h) => (h.done += 1)),
    mayTakeMore
  }
}
