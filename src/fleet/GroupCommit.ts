/**
 * Group commit for the fleet store's journal lines: the lines appended while a write is on its way to the store go
 * together in the next write (one statement or script for all of them, `FleetStore.appendLines`), and each append
 * still returns only once its own line is recorded, with that write's answer. A job's rows each wrote their lines
 * one statement at a time: with the worker's few store connections shared by its jobs, a loaded host queued
 * dozens of statements behind each other, seconds long, and the rows waited (issue 29, docs/benchmarks.md). The
 * local journal does the same for its disk writes (import/Journal.ts).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"

/** What collects items for the next write, and the answer every item of it waits for. */
interface Group<A, B, E> {
  readonly items: Array<A>
  readonly done: Deferred.Deferred<B, E>
}

/**
 * `add(item)` writes `item` with whatever else was added while the previous write was under way (`write` is given
 * them in the order added, one write at a time) and succeeds or fails with that write's result.
 */
export const groupCommit = <A, B, E>(write: (items: ReadonlyArray<A>) => Effect.Effect<B, E>) => {
  let next: Group<A, B, E> | undefined
  let writing = false
  const drain: Effect.Effect<void> = Effect.suspend(() => {
    const group = next
    if (group === undefined) {
      writing = false
      return Effect.void
    }
    next = undefined
    return Effect.exit(write(group.items)).pipe(
      Effect.flatMap((exit) => Deferred.done(group.done, exit)),
      Effect.zipRight(drain)
    )
  })
  return (item: A): Effect.Effect<B, E> =>
    Effect.suspend(() => {
      const group = next ??= { items: [], done: Deferred.unsafeMake<B, E>(FiberId.none) }
      group.items.push(item)
      // The write goes on when the fiber that started it is interrupted: the others of its group wait for it.
      const start = writing ? Effect.void : Effect.asVoid(Effect.forkDaemon(drain))
      writing = true
      return Effect.zipRight(start, Deferred.await(group.done))
    })
}
