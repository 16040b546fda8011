/**
 * The lease guard of a job a worker runs: how the worker knows it still holds the job's lease (Store.ts: the epoch
 * it took), and what a request of the job passes before it leaves. A heartbeat confirms the lease every `fresh`
 * ms; the gate before a request checks it again when the last confirmation is older than that (the process may
 * have been paused); the fence at the socket (Fence.ts) refuses the request's bytes once the confirmation is
 * `bound` old. Times are on Effect's `Clock`, its monotonic reading (`currentTimeNanos`): a pause moves it on, a
 * change of the wall clock does not; tests drive it with `TestClock`.
 */
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Fence } from "./Fence.js"
import type { FleetStore } from "./Store.js"

/**
 * The lease a request runs under (set on the fiber of a job's run; none outside a job): the gate it passes before
 * it is sent, and the fence its bytes pass at the socket (Fence.ts).
 */
export interface Lease {
  readonly gate: Effect.Effect<void>
  readonly fence: Fence
}

export const currentLease = FiberRef.unsafeMake<Option.Option<Lease>>(Option.none())

/** The fence of the request being made now: the lease of the fiber making it. */
export const currentFence = (): Fence | undefined =>
  Option.getOrUndefined(Option.flatMap(Fiber.getCurrentFiber(), (fiber) => fiber.getFiberRef(currentLease)))?.fence

/** Milliseconds on the clock's monotonic reading (read synchronously, as the fence at the socket must). */
export const monotonicMs = (clock: Clock.Clock): number => Number(clock.unsafeCurrentTimeNanos() / 1_000_000n)

/** How often a held lease is confirmed: a third of the lease (at least 250 ms). */
export const freshMs = (leaseMs: number): number => Math.max(250, Math.floor(leaseMs / 3))

/**
 * How old a confirmation a request's bytes may still leave under (the fence at the socket): above `fresh`, so that a
 * request that just passed the gate is not refused, and at most half the lease, the earliest another worker can
 * take the job after the last confirmation (the queue renews its lock at half of it).
 */
export const boundMs = (leaseMs: number): number => Math.max(Math.floor(leaseMs / 2), Math.ceil(freshMs(leaseMs) * 1.5))

/**
 * How long before its lease would lapse (a lease after its last confirmation) a job's store operations end
 * (Transient.ts): a tenth of the lease, at least 250 ms, left for the hand-back that follows.
 */
const lapseMarginMs = (leaseMs: number): number => Math.max(250, Math.floor(leaseMs / 10))

export interface LeaseGuard {
  /** Completed once the lease is found lost (here, or by a journal line the store refused: `lose`). */
  readonly lost: Deferred.Deferred<void>
  readonly lose: Effect.Effect<void>
  /**
   * Once the lease is lost: whether it was found taken (`"taken"`: another worker holds the job, or it was
   * cancelled), or given up because the store could not confirm it for a whole lease (`"unconfirmed"`: its faults
   * outlasted in vain, Transient.ts; nobody else may hold the job, so it is handed back, never left as taken). An
   * unanswered confirmation is asked once more first: a worker stopped while its question was out (SIGSTOP, a
   * suspended VM) wakes to its answer's timeout firing before the answer is read, and the store it asks then
   * says whether the lease was taken meanwhile (test/fleet/fence-cli.test.ts).
   */
  readonly whyLost: Effect.Effect<"taken" | "unconfirmed">
  /** Asks the store: true while the lease holds (and records the confirmation). */
  readonly check: Effect.Effect<boolean>
  /** Before a request: interrupts it when the lease is lost. */
  readonly gate: Effect.Effect<void>
  readonly fence: Fence
  /** Confirms the lease every `fresh` ms until it is lost. */
  readonly heartbeat: Effect.Effect<unknown>
  /**
   * When the job's store operations must have ended (monotonic ms): the lease's lapse, a lease after its last
   * confirmation, less `lapseMarginMs`; later as the heartbeat confirms it.
   */
  readonly deadline: () => number
}

/** The guard of lease `epoch` of job `id`, for the scope of the job's run. */
export const leaseGuard = Effect.fn("Fleet.leaseGuard")(function*(
  store: Pick<FleetStore, "holdsLease">,
  id: string,
  epoch: number,
  leaseMs: number
): Effect.fn.Return<LeaseGuard, never, Scope.Scope> {
  const clock = yield* Effect.clock
  const now = () => monotonicMs(clock)
  const lost = yield* Deferred.make<void>()
  let lostSeen = false
  let unanswered = false
  const lose = Effect.zipRight(Effect.sync(() => (lostSeen = true)), Deferred.succeed(lost, undefined))
  // However the loss is found (here, or by an onboarding or export step's journal), the fence learns it at once.
  yield* Effect.forkScoped(Effect.zipRight(Deferred.await(lost), Effect.sync(() => (lostSeen = true))))
  // When the lease was last confirmed. Read synchronously by the fence at the socket.
  let confirmed = now()
  const fresh = freshMs(leaseMs)
  const bound = boundMs(leaseMs)
  // A confirmation counts from when it was asked: an answer that arrives after a pause (the question left before
  // it) is not fresh, so the question is asked again.
  const check: Effect.Effect<boolean> = Effect.gen(function*() {
    while (true) {
      const asked = now()
      const ok = yield* store.holdsLease(id, epoch).pipe(Effect.either)
      if (ok._tag === "Left" || !ok.right) {
        if (ok._tag === "Left") unanswered = true
        yield* lose
        return false
      }
      if (now() - asked < fresh) {
        confirmed = asked
        return true
      }
    }
  })
  // One question at a time: the requests (and the heartbeat) that find the confirmation stale while it is being
  // asked wait for its answer instead of each asking the store. Each asked its own once, and on a loaded host whose
  // store answered slowly they piled up behind the worker's few connections, every answer came too late to count
  // and was asked again, and the job's journal lines waited behind them (issue 29: the scale smoke on PostgreSQL).
  // An answer shared is as good as one's own: it confirms the lease as of when it was asked, as the heartbeat's do.
  let asking: Deferred.Deferred<boolean> | undefined
  const confirm: Effect.Effect<boolean> = Effect.suspend(() => {
    if (asking !== undefined) return Deferred.await(asking)
    const answer = Deferred.unsafeMake<boolean>(FiberId.none)
    asking = answer
    // Asked on a fiber of its own: a request interrupted while it waits does not cancel the others' answer.
    return Effect.forkDaemon(
      Effect.flatMap(
        Effect.exit(check),
        (exit) => Effect.zipRight(Effect.sync(() => (asking = undefined)), Deferred.done(answer, exit))
      )
    ).pipe(Effect.zipRight(Deferred.await(answer)))
  })
  const gate = Effect.gen(function*() {
    if (yield* Deferred.isDone(lost)) return yield* Effect.interrupt
    if (now() - confirmed < fresh) return
    if (!(yield* confirm)) return yield* Effect.interrupt
  })
  const fence: Fence = {
    refusal: () => {
      if (lostSeen) return `lease ${epoch} of job ${id} was lost (taken over or cancelled)`
      const age = now() - confirmed
      return age < bound
        ? undefined
        : `the lease of job ${id} was last confirmed ${
          Math.round(age)
        } ms ago (a request leaves within ${bound} ms of it)`
    }
  }
  const heartbeat = Effect.repeat(Effect.zipRight(Effect.sleep(fresh), confirm), { while: (ok) => ok })
  const margin = lapseMarginMs(leaseMs)
  return {
    lost,
    lose,
    whyLost: Effect.suspend(() =>
      unanswered
        ? Effect.map(
          Effect.either(store.holdsLease(id, epoch)),
          (held) => held._tag === "Right" && !held.right ? "taken" as const : "unconfirmed" as const
        )
        : Effect.succeed("taken" as const)
    ),
    check: confirm,
    gate,
    fence,
    heartbeat,
    deadline: () => confirmed + leaseMs - margin
  }
})
