/**
 * The `--data FILE` state: loaded at start when the file exists, saved (the whole state, as JSON) at most a
 * moment after each write and again on shutdown. Each save writes `FILE.tmp` and renames it over FILE, so a
 * crash never leaves a half-written file.
 */
import { readFile, rename, writeFile } from "node:fs/promises"
import { Duration, Effect, Queue } from "effect"
import type { Store } from "./Store.js"

/** Debounce of saves: writes within this interval share one save (the brief allows up to one second). */
const saveDelay = Duration.millis(200)

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Reads FILE into the store when it exists; fails with a message naming the file otherwise unreadable. */
export const loadState = Effect.fn("Persistence.loadState")(function* (file: string, store: Store) {
  const text = yield* Effect.tryPromise({
    try: () => readFile(file, "utf8").catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))),
    catch: (e) => `${file}: cannot read the sandbox data file: ${describe(e)}`
  })
  if (text === undefined) return false
  const json = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => `${file}: not a sandbox data file (invalid JSON: ${describe(e)})` })
  yield* Effect.mapError(store.restore(json), (detail) => `${file}: not a sandbox data file: ${detail}`)
  return true
})

export interface Persistence {
  /** Schedules a save of the whole state. */
  readonly markDirty: Effect.Effect<void>
}

/**
 * Saves under `lock` (the store's lock, so a save never sees half a request), once now to prove FILE is
 * writable, then after writes and when the scope closes.
 */
export const makePersistence = Effect.fn("Persistence.make")(function* (file: string, store: Store, lock: Effect.Semaphore) {
  const saveOnce = Effect.gen(function* () {
    const text = yield* lock.withPermits(1)(Effect.sync(() => JSON.stringify(store.snapshot())))
    yield* Effect.tryPromise({
      try: async () => {
        await writeFile(`${file}.tmp`, text, "utf8")
        await rename(`${file}.tmp`, file)
      },
      catch: (e) => `${file}: cannot save the sandbox data file: ${describe(e)}`
    })
  })
  const saving = yield* Effect.makeSemaphore(1)
  const save = Effect.uninterruptible(saving.withPermits(1)(saveOnce))
  yield* save
  const dirty = yield* Queue.sliding<void>(1)
  // Added before the loop is forked, so on close the loop is interrupted first and this last save sees all writes.
  yield* Effect.addFinalizer(() => save.pipe(Effect.catchAll((message) => Effect.sync(() => process.stderr.write(`sandbox: ${message}\n`)))))
  yield* Queue.take(dirty).pipe(
    Effect.zipRight(Effect.sleep(saveDelay)),
    Effect.zipRight(save),
    Effect.catchAll((message) => Effect.sync(() => process.stderr.write(`sandbox: ${message}\n`))),
    Effect.forever,
    Effect.forkScoped
  )
  return { markDirty: Effect.asVoid(Queue.offer(dirty, undefined)) } satisfies Persistence as Persistence
})
