/**
 * A read that makes no progress must not outlive the first stop signal. The readers count their progress (bytes
 * taken from the file, rows handed over) and pass each pull of their rows through `guard`: once a first signal
 * has come (src/Signals.ts), a pull that waits `stallMs` without progress is interrupted, so the command stops
 * (exit 3) instead of waiting for a read that may never end (a damaged file, a stuck disk or pipe). A read that
 * progresses is left alone: it ends by itself, and the command stops as it always does.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { onStopRequest } from "../Signals.js"

/** How long a pull may wait without progress once a stop was asked for. */
const stallMs = 2_000

export interface ReadProgress {
  /** The read moved on (bytes read, a row handed over). */
  readonly tick: () => void
  /** `pull`, interrupted when it waits `stallMs` without progress after the first signal. */
  readonly guard: <A, E, R>(pull: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const readProgress = (): ReadProgress => {
  let last = Date.now()
  const stopRequested = Effect.async<void>((resume) => Effect.sync(onStopRequest(() => resume(Effect.void))))
  const stalled: Effect.Effect<never> = Effect.zipRight(
    stopRequested,
    Effect.suspend(function check(): Effect.Effect<never> {
      const quiet = Date.now() - last
      return quiet >= stallMs
        ? Effect.interrupt
        : Effect.zipRight(Effect.sleep(Duration.millis(stallMs - quiet)), Effect.suspend(check))
    })
  )
  return {
    tick: () => void (last = Date.now()),
    guard: (pull) =>
      Effect.suspend(() => {
        // Time between pulls is the consumer's, not the read's.
        last = Date.now()
        return Effect.raceFirst(pull, stalled)
      })
  }
}
