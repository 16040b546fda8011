/**
 * The source-order window of an import pass: each item is handled concurrently, and the results come back in the
 * items' order. An item starts only within `window` positions of the oldest one not yet given back, so the results
 * held back behind a slow item stay bounded (memory does not grow with the file); the oldest item never waits, so
 * the pass always moves on. An item whose result is `undefined` is given back as nothing.
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Stream from "effect/Stream"

export interface WindowOptions {
  readonly concurrency: number
  /** How far past the oldest item not yet given back an item may start. */
  readonly window: number
}

export const inSourceOrder = <A, B, E, R, E2, R2>(
  items: Stream.Stream<A, E, R>,
  handle: (item: A) => Effect.Effect<B | undefined, E2, R2>,
  options: WindowOptions
): Stream.Stream<B, E | E2, R | R2> => {
  // How many items (by position) have left the reordering.
  let released = 0
  /** Completed when `released` moves on, for the items waiting to start (made only when one waits). */
  let moved: Deferred.Deferred<void> | undefined
  const within = (at: number): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (at < released + options.window) return Effect.void
      moved ??= Deferred.unsafeMake<void>(FiberId.none)
      return Effect.zipRight(Deferred.await(moved), within(at))
    })
  const held = new Map<number, B | undefined>()
  return items.pipe(
    Stream.zipWithIndex,
    Stream.mapEffect(
      ([item, at]) =>
        Effect.map(Effect.zipRight(within(at), Effect.suspend(() => handle(item))), (b) => [at, b] as const),
      { concurrency: options.concurrency, unordered: true }
    ),
    // Back in source order.
    Stream.mapChunksEffect((chunk) => {
      for (const [at, b] of chunk) held.set(at, b)
      const from = released
      const out: Array<B> = []
      while (held.has(released)) {
        const b = held.get(released)
        held.delete(released)
        released += 1
        if (b !== undefined) out.push(b)
      }
      const lines = Chunk.unsafeFromArray(out)
      if (moved === undefined || released === from) return Effect.succeed(lines)
      const wake = moved
      moved = undefined
      return Effect.as(Deferred.succeed(wake, undefined), lines)
    })
  )
}
