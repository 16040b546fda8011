/**
 * Stopping a command cleanly on SIGINT/SIGTERM/SIGHUP (a closed terminal or SSH session ends us like Ctrl-C
 * does): the first signal completes `stopped` (the command winds down:
 * an import stops sending and writes its reports, the sandbox closes and saves its data file); a second one
 * exits at once with 3.
 *
 * The edge (bin.ts) leaves a signal to the command that listens for it (`stopOnSignals`) and interrupts only a
 * command that does not. `shielded` runs the command's work on a fiber of its own, so that an interruption still
 * waits for the clean stop instead of cutting it, and the command's own outcome (its exit code) is the one the
 * edge sees.
 *
 * Work deep inside a command that cannot be handed its `StopSignal` (a file being read) hears the first signal
 * through `onStopRequest`: a read that makes no progress is stopped by it (files/Stall.ts).
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

export interface StopSignal {
  /** Completes when the command should stop. */
  readonly stopped: Effect.Effect<void>
  readonly isStopped: Effect.Effect<boolean>
}

/**
 * When a run should stop sending (a service, provided by the command that starts the run): `stopped` completes
 * then (the first signal, a fleet worker's lost lease or its own stop); `undefined` when nothing ever asks.
 * `isStopped` says whether it has (an onboarding asks it before each step).
 */
export class RunStop extends Context.Tag("fsm-bulk/RunStop")<
  RunStop,
  { readonly stopped: Effect.Effect<void> | undefined; readonly isStopped: Effect.Effect<boolean> }
>() {
  /** Nothing asks the run to stop (tests; a run its command stops otherwise). */
  static readonly never: Layer.Layer<RunStop> = Layer.succeed(RunStop, {
    stopped: undefined,
    isStopped: Effect.succeed(false)
  })
  /** The run stops when `stopped` completes; whether it has is watched while the layer lives. */
  static readonly when = (stopped: Effect.Effect<void>): Layer.Layer<RunStop> =>
    Layer.scoped(
      RunStop,
      Effect.gen(function*() {
        const watch = yield* Effect.forkScoped(stopped)
        // The watch runs once before the run starts: a stop asked for already is seen at the first look.
        yield* Effect.yieldNow()
        return { stopped, isStopped: Effect.map(Fiber.poll(watch), Option.isSome) }
      })
    )
  /** The run stops as `signal` says (`stopOnSignals`, a fleet worker's whole job). */
  static readonly signal = (signal: StopSignal): Layer.Layer<RunStop> =>
    Layer.succeed(RunStop, { stopped: signal.stopped, isStopped: signal.isStopped })
}

interface StopNotice {
  /** Printed on the first signal: what the command does now, e.g. "stopping after the rows in flight". */
  readonly stopping: string
  /** Printed after either notice: what to run to continue (read when the signal comes). */
  readonly hint?: () => string
}

/** The signals that ask a command to stop: it winds down on the first, exits at once (3) on the second. */
export const stopSignals: ReadonlyArray<NodeJS.Signals> = ["SIGINT", "SIGTERM", "SIGHUP"]

/**
 * The other signals whose default action ends the process: they end it at once (exit 3), through `process.exit`
 * so that its files are cleaned up (src/Leftovers.ts). SIGKILL and SIGSTOP cannot be caught; Node ignores SIGPIPE
 * and SIGXFSZ (a write past `ulimit -f` fails with EFBIG, which a run reports like a full disk).
 */
export const fatalSignals: ReadonlyArray<NodeJS.Signals> = [
  "SIGQUIT",
  "SIGUSR2",
  "SIGALRM",
  "SIGVTALRM",
  "SIGXCPU"
]

/** Whether a first signal came while a command listened, and who is to hear of it. */
let stopRequested = false
const stopListeners = new Set<() => void>()

/** Calls `f` on the first signal (at once if it came already); returns what unregisters it. */
export const onStopRequest = (f: () => void): () => void => {
  if (stopRequested) {
    f()
    return () => {}
  }
  stopListeners.add(f)
  return () => void stopListeners.delete(f)
}

/** Forgets a stop request and its listeners, as a new process starts (for test runners that keep modules). */
export const forgetStopRequest = (): void => {
  stopRequested = false
  stopListeners.clear()
}

/** Listens for the stop signals while the scope is open. */
export const stopOnSignals = Effect.fn("Signals.stopOnSignals")(function*(notice: StopNotice) {
  const deferred = yield* Deferred.make<void>()
  const hint = () => (notice.hint === undefined ? "" : `; ${notice.hint()}`)
  let count = 0
  const handler = (signal: NodeJS.Signals) => {
    count += 1
    if (count === 1) {
      process.stderr.write(`\n${signal}: ${notice.stopping} (again to stop at once)${hint()}\n`)
      Deferred.unsafeDone(deferred, Effect.void)
      stopRequested = true
      for (const f of [...stopListeners]) f()
      stopListeners.clear()
    } else {
      process.stderr.write(`\n${signal}: stopped at once${hint()}\n`)
      process.exit(3)
    }
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      for (const signal of stopSignals) process.on(signal, handler)
    }),
    () =>
      Effect.sync(() => {
        for (const signal of stopSignals) process.removeListener(signal, handler)
        stopRequested = false
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
