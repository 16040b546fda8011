/**
 * A view of the fleet store that outlasts short store faults, for a worker and for every fleet command (`submit`,
 * `wait`, `status`…): every operation that fails because the store could not be used (`Unavailable`: a killed
 * connection, a statement timeout, a server restarting, a full disk; which failures are is decided in one place,
 * Store.ts's `storeFailure`) is tried again, backing off from 100 ms to 2 s, for up to `windowMs` (the job lease).
 * Only then does the failure reach the job, which is handed back to the queue for another worker (JobRunner.ts),
 * never failed for good; or the command, which says so (exit 2).
 *
 * An operation of a running job (`jobStoreDeadline` set on its fiber, JobRunner.ts) is bounded by the job's lease:
 * the operation, its tries and the pauses between them together, lasts at most `windowMs` from its start and ends
 * before the lease would lapse (`LeaseGuard.deadline`, a margin before it), each try given no longer than what is
 * left of that. Otherwise one try could wait for the store's own answer timeout (`storeAnswerTimeoutMs`, at least
 * 10 s: a Redis client sends a command again at every reconnection until then), and the window began at the first
 * failure: on Redis a read whose connection was killed under it handed its job back after 22 s with a 3 s lease,
 * another worker unable to take it meanwhile (issue 29, test/fleet/claimed-read-cli.test.ts).
 *
 * Trying again is safe for every operation the worker makes: the reads; the writes that set a value (a job's end,
 * a file, a running mark, a parent settled), which land the same way twice; taking a lease, whose epoch a lost
 * answer only raises once more (nobody holds the skipped one); and appending a journal line, which a lost answer
 * after its commit may write twice: the journal is read row by row (its last line per row counts), so a line
 * repeated in place changes nothing. A try given up on (its time left ran out) is such a lost answer: it may still
 * land, and lands the same way. What keeps one writer per job is the lease epoch, which every write checks,
 * not the timing of retries: a worker that retries past its lease finds the lease taken and stops.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { FleetError } from "./Errors.js"
import { monotonicMs } from "./Lease.js"
import type { FleetStore } from "./Store.js"

/**
 * The deadline of the store operations of the job whose fiber this is (monotonic ms, Lease.ts's `monotonicMs`; read
 * at each try, as the lease's confirmations move it) and the least a first try is given when it has passed: set on a
 * job's run under its lease (JobRunner.ts); none outside a job (the commands, the worker's sweeps and claims).
 */
interface JobStoreDeadline {
  readonly at: () => number
  readonly firstTryMs: number
}

export const jobStoreDeadline = FiberRef.unsafeMake<Option.Option<JobStoreDeadline>>(Option.none())

/** The pause before try `n + 1` (from 0): 100 ms doubling, at most 2 s; within a job's lease and outside one alike. */
const pauseMs = (n: number): number => Math.min(100 * 2 ** Math.min(n, 5), 2_000)

/**
 * `op` of a running job, tried again on `Unavailable` failures while there is time before `Math.min(start +
 * windowMs, deadline.at())`, each try given what is left of it (the first at least `firstTryMs`, so that a worker
 * woken past its lease still asks the store once whether it holds it, and learns it was taken over). A try without an
 * answer in its time fails `Unavailable`.
 */
const withinLease = <A, R>(
  op: Effect.Effect<A, FleetError, R>,
  windowMs: number,
  deadline: JobStoreDeadline,
  onRetry: (error: FleetError) => Effect.Effect<void>
): Effect.Effect<A, FleetError, R> =>
  Effect.flatMap(Effect.clock, (clock) => {
    const start = monotonicMs(clock)
    const left = () => Math.min(start + windowMs, deadline.at()) - monotonicMs(clock)
    const attempt = (n: number): Effect.Effect<A, FleetError, R> => {
      const ms = n === 0 ? Math.max(left(), deadline.firstTryMs) : left()
      return op.pipe(
        Effect.timeoutFail({
          duration: Duration.millis(ms),
          onTimeout: () =>
            new FleetError({
              reason: "Unavailable",
              message: `the fleet store gave no answer within ${
                Math.round(ms)
              } ms, all that was left before the job's lease would lapse`
            })
        }),
        Effect.catchAll((e) => {
          if (e.reason !== "Unavailable") return Effect.fail(e)
          const pause = pauseMs(n)
          return Effect.zipRight(
            onRetry(e),
            left() - pause > 0 ? Effect.zipRight(Effect.sleep(pause), attempt(n + 1)) : Effect.fail(e)
          )
        })
      )
    }
    return attempt(0)
  })

/**
 * `op`, tried again on `Unavailable` failures for up to `windowMs` (from the first failure; on a job's fiber, from
 * the start and within its lease: `withinLease`); `onRetry` hears of each failure. A `Refused` one (the store's own
 * refusal, Store.ts's `storeFailure`) is not tried again: asking again changes nothing.
 */
export const outlastingFaults =
  (windowMs: number, onRetry: (error: FleetError) => Effect.Effect<void>) =>
  <A, R>(op: Effect.Effect<A, FleetError, R>): Effect.Effect<A, FleetError, R> =>
    Effect.flatMap(FiberRef.get(jobStoreDeadline), (deadline) =>
      Option.isSome(deadline)
        ? withinLease(op, windowMs, deadline.value, onRetry)
        : Effect.retry(
          Effect.tapError(op, (e) => e.reason === "Unavailable" ? onRetry(e) : Effect.void),
          {
            schedule: Schedule.addDelay(Schedule.forever, (n) => Duration.millis(pauseMs(n))).pipe(
              Schedule.upTo(Duration.millis(windowMs))
            ),
            while: (e) => e.reason === "Unavailable"
          }
        ))

/**
 * The store with every operation outlasting faults of up to `windowMs` (the egress hold excepted: it is held
 * once, at start, and its loss stops the worker).
 */
export const outlastingStore = (
  store: FleetStore,
  windowMs: number,
  onRetry: (error: FleetError) => Effect.Effect<void>
): FleetStore => {
  const again = outlastingFaults(windowMs, onRetry)
  const wrapped: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(store)) {
    wrapped[name] = name === "holdEgress"
      ? value
      : typeof value === "function"
      ? (...args: Array<unknown>) =>
        again((value as (...a: Array<unknown>) => Effect.Effect<unknown, FleetError>)(...args))
      : Effect.isEffect(value)
      ? again(value as Effect.Effect<unknown, FleetError>)
      : value
  }
  return wrapped as unknown as FleetStore
}

/**
 * Opens the store, trying again while it cannot be reached (a server restarting) for up to `windowMs`: the store as
 * it is (`outlastingStore` gives the view that outlasts faults).
 */
export const openOutlasting = <R>(
  open: Effect.Effect<FleetStore, FleetError, R>,
  windowMs: number,
  onRetry: (error: FleetError) => Effect.Effect<void>
): Effect.Effect<FleetStore, FleetError, R> => outlastingFaults(windowMs, onRetry)(open)
