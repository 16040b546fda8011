/**
 * The request budget: one per `Api` layer (a command builds exactly one), shared by every call, logins and list
 * pages included. It guarantees that no interval of the window's length ever sees more than `limit` requests
 * arrive at the server, whether the server counts fixed or sliding windows.
 *
 * Start times alone cannot guarantee that: a request reaches the server some time after it starts (a new
 * connection, a busy event loop; 250 ms measured on loopback), so two requests started a window apart can
 * arrive closer than that. The log therefore holds when each request *ended* (its answer read, or given up):
 * a request arrives between its start and its end, so a request may start only while fewer than `limit`
 * requests are in flight or ended less than a window (plus a small margin) ago. For any `limit + 1` arrivals
 * inside one window, the last one started would have found the other `limit` active; so it never happens.
 * The cost is about one latency per window of throughput.
 *
 * A rate-limit answer pauses every caller for `rateLimitPauseMs`; callers resume by themselves.
 *
 * A request that finds, once it has room, that it must not be sent after all (its token was revoked while it
 * waited) gives the room back unused: it never reached the server, so it leaves no end in the window.
 *
 * Windows and pauses are measured on the monotonic clock (`monotonicMillis`), never the wall clock: a wall clock
 * stepped forward (NTP, an operator) would empty the window at once and let a second burst leave; stepped back,
 * it would hold every caller until the wall clock caught up again.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type { Rate } from "../Units.js"
import { makeLanePermits } from "./Lanes.js"

export interface Budget {
  /**
   * Runs `request` as one request of the budget: waits for room, then records when it ends, unless it failed
   * with an error `unsent` recognises (nothing was sent: the room is given back).
   */
  readonly spend: <A, E, R>(request: Effect.Effect<A, E, R>, unsent?: (error: E) => boolean) => Effect.Effect<A, E, R>
  /** Every caller waits `ms` from now before its next start (a rate-limit answer was received). */
  readonly pause: (ms: number) => Effect.Effect<void>
  /** True while a rate-limit pause is running. */
  readonly paused: Effect.Effect<boolean>
  /**
   * What a caller is held for now (progress shows it): the end of a rate-limit pause (client clock, ms), else
   * whether one waits for room in the window.
   */
  readonly holding: Effect.Effect<{ readonly pausedUntil: number | undefined; readonly forRoom: boolean }>
  /**
   * Until when its callers kept it full: now while one waits for room in the window, else when the last wait for room
   * ended (on the monotonic clock, `monotonicMillis`; -Infinity when none ever waited). A fleet worker takes a further job only when its jobs leave room
   * (fleet/Pace.ts).
   */
  readonly fullAt: Effect.Effect<number>
}

/**
 * A budget shared by several `Api` layers of one process (a fleet worker's accounts all leave by one address):
 * when provided, `HttpAdapter` spends from it instead of making its own.
 */
export class SharedBudget extends Context.Tag("fsm-bulk/SharedBudget")<SharedBudget, Budget>() {}

/**
 * Milliseconds on the monotonic clock: Effect's `Clock.currentTimeNanos` (process.hrtime from an origin read
 * once; a change of the wall clock does not move it, and TestClock drives it in tests). `Clock.currentTimeMillis`
 * is `Date.now()`, the wall clock: fine for timestamps, wrong for measuring intervals.
 */
export const monotonicMillis: Effect.Effect<number> = Effect.map(
  Clock.currentTimeNanos,
  // Not truncated to whole milliseconds: an end recorded up to 1 ms early let the next request leave up to 1 ms
  // before its window had passed (and a timer that wakes early is caught by `take`'s check against this clock).
  (nanos) => Number(nanos) / 1_000_000
)

export const makeBudget = Effect.fn("Budget.make")(function*(rate: Rate, marginMs: number) {
  const span = rate.windowMs + marginMs
  // Callers wait for the next start in their lanes' turns (Lanes.ts): one job's backlog does not hold another's.
  const lock = yield* makeLanePermits(1)
  let inFlight = 0
  /** End times of the requests that ended, oldest first (they end in this order: each is pushed when it ends). */
  let ends: Array<number> = []
  let ended = Deferred.unsafeMake<void>(FiberId.none)
  let pausedUntil = 0
  let fullAt = Number.NEGATIVE_INFINITY
  /** The caller that has the lock is waiting for a request to leave the window. */
  let forRoom = false
  const waitingForRoom = (wait: Effect.Effect<void>) =>
    Effect.ensuring(Effect.zipRight(Effect.sync(() => (forRoom = true)), wait), Effect.sync(() => (forRoom = false)))

  const prune = (now: number) => {
    let drop = 0
    while (drop < ends.length && ends[drop]! <= now - span) drop++
    if (drop > 0) ends = ends.slice(drop)
  }

  const take: Effect.Effect<void> = lock.withPermits(1)(
    Effect.gen(function*() {
      while (true) {
        const now = yield* monotonicMillis
        if (now < pausedUntil) {
          yield* Effect.sleep(pausedUntil - now)
          continue
        }
        prune(now)
        if (inFlight + ends.length < rate.limit) {
          inFlight += 1
          return
        }
        // Room comes back only when an ended request leaves the window; with none ended yet, wait for one to end.
        yield* waitingForRoom(ends.length > 0 ? Effect.sleep(ends[0]! + span - now) : Deferred.await(ended))
        fullAt = yield* monotonicMillis
      }
    })
  )

  const release = (sent: boolean) =>
    Effect.flatMap(monotonicMillis, (now) =>
      Effect.suspend(() => {
        inFlight -= 1
        if (sent) ends.push(now)
        const signal = ended
        ended = Deferred.unsafeMake<void>(FiberId.none)
        return Deferred.succeed(signal, undefined)
      }))

  const spend = <A, E, R>(request: Effect.Effect<A, E, R>, unsent?: (error: E) => boolean) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        restore(take),
        restore(request).pipe(
          Effect.onExit((exit) =>
            release(
              !(unsent !== undefined && Exit.isFailure(exit) && exit.cause._tag === "Fail" && unsent(exit.cause.error))
            )
          )
        )
      )
    )

  const pause = (ms: number) =>
    Effect.map(monotonicMillis, (now) => {
      pausedUntil = Math.max(pausedUntil, now + ms)
    })

  const paused = Effect.map(monotonicMillis, (now) => now < pausedUntil)

  // Shown to people as a time of day: the pause's end on the wall clock of now.
  const holding = Effect.map(Effect.zip(monotonicMillis, Clock.currentTimeMillis), ([now, wall]) => ({
    pausedUntil: now < pausedUntil ? wall + (pausedUntil - now) : undefined,
    forRoom
  }))

  // Now while a caller waits for room (a request of its own in flight, or an end still in the window).
  const full = Effect.suspend(() => forRoom ? monotonicMillis : Effect.succeed(fullAt))

  return { spend, pause, paused, holding, fullAt: full } satisfies Budget
})
