/**
 * Requests of one list walk asked ahead of the reader, in an order of priority, within a limit of requests at once
 * and of answers held for the reader (issue 23: a slow service's pages take seconds, so the walk keeps its slots
 * busy with what it already knows must be asked).
 *
 * Each job has a place in the walk's reading order (`order`, compared element by element) and is a page the walk
 * knows exists or a probe (a date window's count, or its first page: what the window holds). The next job
 * started is the earliest in reading order, except that a probe goes first while fewer pages wait than there are
 * slots: the work a probe finds must be known before the slots fall idle. Answers started and not yet taken by the
 * reader are at most `4 × limit`, but the earliest waiting job may always start, so the reader never waits on a job
 * held back.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

export interface Ahead {
  /**
   * Queues `job` (of `group`, at `order` in the reading order) and returns its answer; taking the answer frees its
   * room among the answers held.
   */
  readonly add: <A, E>(
    job: Effect.Effect<A, E>,
    place: { readonly group: number; readonly order: ReadonlyArray<number>; readonly probe: boolean }
  ) => Effect.Effect<Effect.Effect<A, E>>
  /** Forgets the jobs of `group` not started yet and frees the room of its answers (the reader is done with it). */
  readonly drop: (group: number) => Effect.Effect<void>
}

interface Job {
  readonly group: number
  readonly order: ReadonlyArray<number>
  readonly probe: boolean
  readonly run: Effect.Effect<void>
  started: boolean
  released: boolean
}

const before = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): boolean => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]!
  return a.length < b.length
}

/** The index of the job `pick` starts next among `waiting`, or undefined when none may start yet. */
export const pickNext = (
  waiting: ReadonlyArray<Pick<Job, "order" | "probe">>,
  state: { readonly running: number; readonly held: number; readonly limit: number }
): number | undefined => {
  if (state.running >= state.limit || waiting.length === 0) return undefined
  let earliest = 0
  let probe: number | undefined
  let pages = 0
  for (const [i, job] of waiting.entries()) {
    if (before(job.order, waiting[earliest]!.order)) earliest = i
    if (job.probe && (probe === undefined || before(job.order, waiting[probe]!.order))) probe = i
    if (!job.probe) pages += 1
  }
  // The earliest job may always start: the reader may be waiting for it.
  if (state.held >= state.limit * 4) return earliest
  return probe !== undefined && pages < state.limit ? probe : earliest
}

export const makeAhead = (limit: number, scope: Scope.Scope): Ahead => {
  const waiting: Array<Job> = []
  const groups = new Map<number, Array<Job>>()
  let running = 0
  let held = 0
  const release = (job: Job) => {
    if (job.started && !job.released) {
      job.released = true
      held -= 1
    }
  }
  const pump: Effect.Effect<void> = Effect.suspend(() => {
    const starting: Array<Job> = []
    while (true) {
      const i = pickNext(waiting, { running, held, limit: Math.max(1, limit) })
      if (i === undefined) break
      const [job] = waiting.splice(i, 1)
      job!.started = true
      running += 1
      held += 1
      starting.push(job!)
    }
    return Effect.forEach(
      starting,
      (job) =>
        Effect.forkIn(
          Effect.ensuring(job.run, Effect.suspend(() => (running -= 1, pump))),
          scope
        ),
      { discard: true }
    )
  })
  return {
    add: (job, place) =>
      Effect.gen(function*() {
        const answer = yield* Deferred.make<Effect.Effect.Success<typeof job>, Effect.Effect.Error<typeof job>>()
        const entry: Job = {
          ...place,
          run: Effect.flatMap(Effect.exit(job), (exit) => Deferred.done(answer, exit)),
          started: false,
          released: false
        }
        waiting.push(entry)
        const inGroup = groups.get(place.group)
        if (inGroup === undefined) groups.set(place.group, [entry])
        else inGroup.push(entry)
        yield* pump
        return Effect.ensuring(
          Deferred.await(answer),
          Effect.suspend(() => (release(entry), pump))
        )
      }),
    drop: (group) =>
      Effect.suspend(() => {
        for (const job of groups.get(group) ?? []) {
          const i = waiting.indexOf(job)
          if (i >= 0) waiting.splice(i, 1)
          release(job)
        }
        groups.delete(group)
        return pump
      })
  }
}
