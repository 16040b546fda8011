/**
 * Stopping a run cleanly on SIGINT/SIGTERM: the first signal asks the pipeline to stop sending (rows in flight
 * finish, within a bounded wait, then the reports are written and the command exits 3); a second one exits at
 * once (the journal is always usable, so `resume` still continues the run).
 *
 * The edge (`NodeRuntime.runMain`) answers the same signal by interrupting the main fiber. `shielded` runs the
 * command's work on a fiber of its own, so that interruption waits for the clean stop instead of cutting it.
 */
import { Deferred, Effect, Fiber } from "effect"

export interface StopSignal {
  /** Completes when the run should stop. */
  readonly stopped: Effect.Effect<void>
  readonly isStopped: Effect.Effect<boolean>
}

/** Listens for SIGINT/SIGTERM while the scope is open. `hint` is printed: what to run to continue. */
export const stopOnSignals = Effect.fn("Signals.stopOnSignals")(function*(hint: () => string) {
  const deferred = yield* Deferred.make<void>()
  let count = 0
  const handler = (signal: NodeJS.Signals) => {
    count += 1
    if (count === 1) {
      process.stderr.write(`\n${signal}: stopping after the rows in flight (again to stop at once); ${hint()}\n`)
      Deferred.unsafeDone(deferred, Effect.void)
    } else {
      process.stderr.write(`\n${signal}: stopped at once; ${hint()}\n`)
      process.exit(3)
    }
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      process.on("SIGINT", handler)
      process.on("SIGTERM", handler)
    }),
    () =>
      Effect.sync(() => {
        process.removeListener("SIGINT", handler)
        process.removeListener("SIGTERM", handler)
      })
  )
  return { stopped: Deferred.await(deferred), isStopped: Deferred.isDone(deferred) } satisfies StopSignal
})

/**
 * Runs `work` so that an interruption of the calling fiber waits for it to finish (it is told to stop through
 * `stopOnSignals` instead). Inside, `work` stays interruptible by its own means (timeouts, races).
 */
export const shielded = <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.uninterruptible(Effect.flatMap(Effect.forkDaemon(Effect.interruptible(work)), Fiber.join))
