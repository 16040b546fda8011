/**
 * A view of the fleet store that outlasts short store faults, for a worker and for every fleet command (`submit`,
 * `wait`, `status`…): every operation that fails because the store could not be used (`Unavailable`: a killed
 * connection, a statement timeout, a server restarting, a full disk; which failures are is decided in one place,
 * Store.ts's `storeFailure`) is tried again, backing off from 100 ms to 2 s, for up to `windowMs` (the job lease).
 * Only then does the failure reach the job, which is handed back to the queue for another worker (JobRunner.ts),
 * never failed for good; or the command, which says so (exit 2).
 *
 * Trying again is safe for every operation the worker makes: the reads; the writes that set a value (a job's end,
 * a file, a running mark, a parent settled), which land the same way twice; taking a lease, whose epoch a lost
 * answer only raises once more (nobody holds the skipped one); and appending a journal line, which a lost answer
 * after its commit may write twice: the journal is read row by row (its last line per row counts), so a line
 * repeated in place changes nothing. What keeps one writer per job is the lease epoch, which every write checks,
 * not the timing of retries: a worker that retries past its lease finds the lease taken and stops.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { FleetError } from "./Errors.js"
import type { FleetStore } from "./Store.js"

/**
 * `op`, tried again on `Unavailable` failures for up to `windowMs`; `onRetry` hears of each failure retried. A
 * `Refused` one (the store's own refusal, Store.ts's `storeFailure`) is not tried again: asking again changes nothing.
 */
export const outlastingFaults =
  (windowMs: number, onRetry: (error: FleetError) => Effect.Effect<void>) =>
  <A, R>(op: Effect.Effect<A, FleetError, R>): Effect.Effect<A, FleetError, R> =>
    Effect.retry(
      Effect.tapError(op, (e) => e.reason === "Unavailable" ? onRetry(e) : Effect.void),
      {
        schedule: Schedule.union(Schedule.exponential("100 millis", 2), Schedule.spaced("2 seconds")).pipe(
          Schedule.upTo(Duration.millis(windowMs))
        ),
        while: (e) => e.reason === "Unavailable"
      }
    )

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
