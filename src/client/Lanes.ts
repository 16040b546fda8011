/**
 * Requests of several callers sharing one client take its turns fairly: each caller is a lane (`requestLane`, set on
 * the fiber of what it runs; a fleet worker sets it to the job's id), and a pool of permits (`makeLanePermits`) hands
 * a free permit to the lanes that wait in turn, one request each, the oldest request of a lane first. Without lanes a
 * pool is first come, first served: a job whose run already queued its window of rows (32) at a client of two
 * permits held a second job of the same account behind all of them (18 s at 2 requests a second, issue 29), although
 * both were running. With one lane (the CLI: one run a client) it is first come, first served as before.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"

/** The lane the requests of this fiber (and the fibers it forks) wait in; one lane for all by default. */
export const requestLane = FiberRef.unsafeMake<unknown>(undefined)

interface Waiter {
  readonly count: number
  readonly granted: Deferred.Deferred<void>
  /** Set when the permits are handed over: from then on they are the waiter's to give back. */
  given: boolean
}

interface LanePermits {
  /** Runs `self` holding `count` permits, taken in the turn of the fiber's lane. */
  readonly withPermits: (count: number) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Takes `count` permits in the turn of the fiber's lane (given back with `release`). */
  readonly take: (count: number) => Effect.Effect<void>
  readonly release: (count: number) => Effect.Effect<void>
}

/**
 * `permits` permits shared by lanes in turn. A waiter that needs more permits than are free (a request sent alone
 * takes them all) keeps its turn: the permits that come free are kept for it, and no later waiter of any lane passes
 * it. It waits for the requests that hold permits, not for those that queue after it: letting the other lanes' single
 * ones pass (as Effect's semaphore does) kept a request asked again alone waiting behind every request another job had
 * queued, 23 s behind a job's 30 rows at 3 requests every 2 s (issue 29).
 */
export const makeLanePermits = (permits: number): Effect.Effect<LanePermits> =>
  Effect.sync(() => {
    let free = permits
    const waiting = new Map<unknown, Array<Waiter>>()
    /** The lanes with a waiter, the next to be served first. */
    const turns: Array<unknown> = []

    const serve = () => {
      while (free > 0 && turns.length > 0) {
        const queue = waiting.get(turns[0])!
        const head = queue[0]!
        if (head.count > free) return
        const lane = turns.shift()
        queue.shift()
        if (queue.length > 0) turns.push(lane)
        else waiting.delete(lane)
        free -= head.count
        head.given = true
        Deferred.unsafeDone(head.granted, Effect.void)
      }
    }

    const enqueue = (lane: unknown, count: number): Waiter => {
      const waiter: Waiter = { count, granted: Deferred.unsafeMake<void>(FiberId.none), given: false }
      const queue = waiting.get(lane)
      if (queue === undefined) {
        waiting.set(lane, [waiter])
        turns.push(lane)
      } else queue.push(waiter)
      serve()
      return waiter
    }

    /** An interrupted wait: its permits back if they were handed over, else the waiter out of its lane. */
    const leave = (lane: unknown, waiter: Waiter) => {
      if (waiter.given) {
        free += waiter.count
      } else {
        const queue = waiting.get(lane) ?? []
        const at = queue.indexOf(waiter)
        if (at >= 0) queue.splice(at, 1)
        if (queue.length === 0 && waiting.delete(lane)) turns.splice(turns.indexOf(lane), 1)
      }
      serve()
    }

    const release = (count: number) =>
      Effect.sync(() => {
        free += count
        serve()
      })

    const take = (count: number): Effect.Effect<void> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(FiberRef.get(requestLane), (lane) => {
          const waiter = enqueue(lane, count)
          return restore(Deferred.await(waiter.granted)).pipe(
            Effect.onInterrupt(() => Effect.sync(() => leave(lane, waiter)))
          )
        })
      )

    const withPermits = (count: number) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(restore(take(count)), Effect.ensuring(restore(self), release(count)))
      )

    return { withPermits, take, release }
  })
