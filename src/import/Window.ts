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
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"

interface WindowOptions {
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
  // A fixed set of worker fibers, made once a pass, takes the items in order: no fiber or stream channel an item
  // (the stream's concurrent `mapEffect` made about three fibers and 570 Effect operations a row, half of an
  // import's; docs/benchmarks.md). Results reach the reordering below through `done`; what `done` holds stays
  // bounded by the window, since no item starts before the reordering has given back the ones ahead of it.
  const handled = Effect.gen(function*() {
    const work = yield* Queue.bounded<readonly [A, number] | undefined>(options.concurrency)
    const done = yield* Queue.unbounded<Take.Take<readonly [number, B | undefined], E | E2>>()
    const worker = (): Effect.Effect<void, E2, R2> =>
      Effect.flatMap(Queue.take(work), (next) =>
        next === undefined ? Effect.void : Effect.zipRight(
          Effect.flatMap(
            Effect.suspend(() => handle(next[0])),
            (b) => Queue.offer(done, Take.of([next[1], b] as const))
          ),
          Effect.suspend(worker)
        ))
    const feed = Effect.zipRight(
      Stream.runForEach(
        Stream.zipWithIndex(items),
        (item) => Effect.zipRight(within(item[1]), Queue.offer(work, [item[0], item[1]] as const))
      ),
      // One end mark a worker: each stops at its own once the items are taken.
      Queue.offerAll(work, Array.from({ length: options.concurrency }, () => undefined))
    )
    const workers = Effect.all(Array.from({ length: options.concurrency }, worker), {
      concurrency: "unbounded",
      discard: true
    })
    const all = Effect.all([feed, workers], { concurrency: 2, discard: true })
    yield* Effect.forkScoped(
      Effect.matchCauseEffect(all, {
        onFailure: (cause) => Queue.offer(done, Take.failCause(cause)),
        onSuccess: () => Queue.offer(done, Take.end)
      })
    )
    return Stream.flattenTake(Stream.fromQueue(done))
  })
  return Stream.unwrapScoped(handled).pipe(
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
