/**
 * The `--data FILE` state. FILE holds a snapshot of the whole state (JSON); `FILE.log` the records written since
 * that snapshot, one line each, appended before the write is answered: a `kill -9` loses no answered write (the
 * lines are in the kernel's hands, though a power cut may still take the last moment). A moment after writes,
 * and on shutdown, a new snapshot is taken: written as `FILE.tmp` and renamed over FILE, so a crash never leaves
 * a half-written file; the log lines it holds are then dropped.
 *
 * When the snapshot is taken, the log is set aside as `FILE.log.prev` (new lines go to a fresh `FILE.log`) and
 * removed once the new FILE is in place. Loading reads FILE, then replays `FILE.log.prev` and `FILE.log`: a
 * replayed line sets a record to its value at that moment, so replaying lines FILE already holds is harmless.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs"
import { readFile, rename, writeFile } from "node:fs/promises"
import type { Store } from "./Store.js"

/** Debounce of snapshots: writes within this interval share one (the log already keeps each write). */
const saveDelay = Duration.millis(200)

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const logOf = (file: string) => `${file}.log`
const previousLogOf = (file: string) => `${file}.log.prev`

/**
 * Replays a change log into the store; a line cut by a crash (the last one) is skipped. Returns the numbers of
 * other lines that are not change lines (damaged): they are skipped too, and said.
 */
const replayLog = (path: string, store: Store): ReadonlyArray<number> => {
  if (!existsSync(path)) return []
  const lines = readFileSync(path, "utf8").split("\n")
  let last = lines.length - 1
  while (last > 0 && lines[last]!.trim() === "") last -= 1
  const damaged: Array<number> = []
  lines.forEach((line, i) => {
    if (line.trim() !== "" && !store.replay(line) && i !== last) damaged.push(i + 1)
  })
  return damaged
}

/** Reads FILE (and its change logs) into the store when it exists; fails with a message naming the file otherwise unreadable. */
export const loadState = Effect.fn("Persistence.loadState")(function*(file: string, store: Store) {
  const text = yield* Effect.tryPromise({
    try: () =>
      readFile(file, "utf8").catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))),
    catch: (e) => `${file}: cannot read the sandbox data file: ${describe(e)}`
  })
  if (text !== undefined) {
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => `${file}: not a sandbox data file (invalid JSON: ${describe(e)})`
    })
    yield* Effect.mapError(store.restore(json), (detail) => `${file}: not a sandbox data file: ${detail}`)
  }
  const logs = [previousLogOf(file), logOf(file)].filter((p) => existsSync(p))
  for (const log of logs) {
    const damaged = yield* Effect.try({
      try: () => replayLog(log, store),
      catch: (e) => `${file}: cannot read the sandbox change log: ${describe(e)}`
    })
    if (damaged.length > 0) {
      yield* Effect.sync(() =>
        process.stderr.write(
          `sandbox: ${log}: line${damaged.length > 1 ? "s" : ""} ${damaged.join(", ")} ${
            damaged.length > 1 ? "are" : "is"
          } damaged (not a change the sandbox wrote) and skipped\n`
        )
      )
    }
  }
  store.markLogged()
  return text !== undefined || logs.length > 0
})

export interface Persistence {
  /** Logs what was written (before the write is answered) and schedules a snapshot. */
  readonly markDirty: Effect.Effect<void>
}

/**
 * Snapshots under `lock` (the store's lock, so a snapshot never sees half a request), once now to prove FILE is
 * writable, then after writes and when the scope closes.
 */
export const makePersistence = Effect.fn("Persistence.make")(
  function*(file: string, store: Store, lock: Effect.Semaphore) {
    const log = logOf(file)
    const previous = previousLogOf(file)
    let fd = yield* Effect.try({
      try: () => openSync(log, "a"),
      catch: (e) => `${file}: cannot save the sandbox data file (nor its change log): ${describe(e)}`
    })
    const report = (message: string) => Effect.sync(() => process.stderr.write(`sandbox: ${message}\n`))
    store.trackChanges()

    /** Appends what changed since the last call: synchronous, so it is in the log before the answer is sent. */
    const append = () => {
      const lines = store.changes()
      if (lines !== "") writeSync(fd, lines)
    }

    /** Sets the log aside for the snapshot being taken (a set-aside log not yet dropped — its snapshot failed — grows instead). */
    const rotate = () => {
      closeSync(fd)
      if (existsSync(previous)) {
        appendFileSync(previous, readFileSync(log))
        fd = openSync(log, "w")
      } else {
        renameSync(log, previous)
        fd = openSync(log, "a")
      }
    }

    const saveOnce = Effect.gen(function*() {
      const text = yield* lock.withPermits(1)(
        Effect.try({
          try: () => {
            append()
            const text = JSON.stringify(store.snapshot())
            rotate()
            return text
          },
          catch: (e) => `${file}: cannot save the sandbox data file: ${describe(e)}`
        })
      )
      yield* Effect.tryPromise({
        try: async () => {
          await writeFile(`${file}.tmp`, text, "utf8")
          await rename(`${file}.tmp`, file)
        },
        catch: (e) => `${file}: cannot save the sandbox data file: ${describe(e)}`
      })
      yield* Effect.try({
        try: () => rmSync(previous, { force: true }),
        catch: (e) => `${previous}: cannot remove the change log: ${describe(e)}`
      })
    })
    const saving = yield* Effect.makeSemaphore(1)
    const save = Effect.uninterruptible(saving.withPermits(1)(saveOnce))
    yield* save
    const dirty = yield* Queue.sliding<void>(1)
    // Added before the loop is forked, so on close the loop is interrupted first and this last save sees all writes.
    yield* Effect.addFinalizer(() =>
      save.pipe(
        // Saved: the (empty) log is not needed. Not saved: the log keeps the writes for the next start.
        Effect.zipRight(Effect.sync(() => {
          closeSync(fd)
          rmSync(log, { force: true })
        })),
        Effect.catchAll((message) => Effect.zipRight(report(message), Effect.sync(() => closeSync(fd)))),
        Effect.catchAllDefect((e) => report(describe(e)))
      )
    )
    yield* Queue.take(dirty).pipe(
      Effect.zipRight(Effect.sleep(saveDelay)),
      Effect.zipRight(save),
      Effect.catchAll(report),
      Effect.forever,
      Effect.forkScoped
    )
    const markDirty = Effect.try({
      try: append,
      catch: (e) => `${log}: cannot write the sandbox change log: ${describe(e)}`
    }).pipe(
      Effect.catchAll(report),
      Effect.zipRight(Queue.offer(dirty, undefined)),
      Effect.asVoid
    )
    return { markDirty } satisfies Persistence as Persistence
  }
)
