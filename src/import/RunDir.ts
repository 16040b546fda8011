/**
 * Run directories (contract, "Run directories"): the default name `runs/<UTC timestamp>-<resource>`, creating
 * one for a new run (never reusing one that already holds a run), the files inside, and the lock that keeps a
 * second process out of a directory one is writing.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as Path from "node:path"
import { RunError } from "../Errors.js"
import { cannotWrite } from "../files/Write.js"
import { shellQuote } from "../Shell.js"
import { journalFile } from "./Journal.js"
import { holderOf, holderText, holdLock } from "./Locks.js"
import { lockFile, reportCsv, summaryFile } from "./RunFiles.js"

export { lockFile, reportCsv, reportXlsx, summaryFile } from "./RunFiles.js"

/** `20261122T044300Z`: sortable, and valid in file names everywhere. */
export const timestamp = (date: Date): string => date.toISOString().replace(/\.\d+Z$/, "Z").replace(/[-:]/g, "")

/** `runs/<UTC timestamp>-<resource>`, with `-2`, `-3` … when a run of the same second exists. */
export const defaultRunDir = (resource: string, now: Date = new Date()): string => {
  const base = Path.join("runs", `${timestamp(now)}-${resource}`)
  let dir = base
  for (let n = 2; fs.existsSync(dir); n++) dir = `${base}-${n}`
  return dir
}

/** A time in milliseconds as summaries and journals record it: an ISO string. */
const isoOf = (ms: number): string => new Date(ms).toISOString()

/**
 * The clock's time as an ISO string read by a plain call: a step that appends a journal line a row reads the
 * clock it took once, instead of building the time through an Effect each line.
 */
export const isoClock = (clock: Clock.Clock) => (): string => isoOf(clock.unsafeCurrentTimeMillis())

/** The clock's time as an ISO string, as summaries and journals record it. */
export const nowIso = Effect.map(Clock.currentTimeMillis, isoOf)

/** Creates the directory of a new run; one that already holds a journal or a report is refused. */
export const createRunDir = Effect.fn("RunDir.create")(function*(dir: string) {
  for (const name of [journalFile, reportCsv, summaryFile]) {
    if (fs.existsSync(Path.join(dir, name))) {
      return yield* new RunError({
        message: `${dir} already holds a run (${name}): continue it with \`fsm-bulk resume ${
          shellQuote(dir)
        }\` or choose another --out`
      })
    }
  }
  yield* Effect.try({
    try: () => fs.mkdirSync(dir, { recursive: true }),
    catch: (cause) => cannotWrite(dir, cause, `cannot write to ${dir}`)
  })
  return Path.resolve(dir)
})

/** A directory that holds a run's journal. */
export const existingRunDir = Effect.fn("RunDir.existing")(function*(dir: string) {
  const journal = Path.join(dir, journalFile)
  if (!fs.existsSync(dir)) return yield* new RunError({ message: `${dir} does not exist` })
  if (!fs.existsSync(journal)) {
    return yield* new RunError({ message: `${dir} is not a run directory: it has no ${journalFile}` })
  }
  return Path.resolve(dir)
})

// --- the lock ----------------------------------------------------------------------------------------------------

/**
 * Takes `DIR/.lock` for this process (the directory is created when missing) and releases it when the scope
 * closes. The lock file appears whole or not at all (written aside, then hard-linked into place, which fails when
 * it exists). A lock whose process is gone (same host, and its pid not running or now another process: Locks.ts)
 * is taken over; a live one is refused at once with exit 2, naming its pid and command. A directory this lock
 * created and that stayed empty is removed.
 */
export const lockRunDir = Effect.fn("RunDir.lock")(function*(dir: string, command: string) {
  const path = Path.join(dir, lockFile)
  const created = yield* Effect.try({
    try: () => fs.mkdirSync(dir, { recursive: true }) !== undefined,
    catch: (cause) => cannotWrite(dir, cause, `cannot write to ${dir}`)
  })
  const removeIfEmpty = Effect.sync(() => {
    if (created) {
      try {
        fs.rmdirSync(dir) // only when empty: a run that wrote nothing leaves nothing behind
      } catch {
        // it holds the run's files
      }
    }
  })
  // Added before the lock, so it runs after the lock's release.
  yield* Effect.addFinalizer(() => removeIfEmpty)
  yield* holdLock(
    path,
    holderOf(command, yield* nowIso),
    (other) =>
      `${dir} is in use by another fsm-bulk process: ${holderText(other)}; ` +
      `wait for it to end, or remove ${path} if that process is gone`
  )
  return Path.resolve(dir)
})
