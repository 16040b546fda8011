/**
 * Run directories (contract, "Run directories"): the default name `runs/<UTC timestamp>-<resource>`, creating
 * one for a new run (never reusing one that already holds a run), and the files inside.
 */
import * as fs from "node:fs"
import * as Path from "node:path"
import { Clock, Effect } from "effect"
import { RunError } from "../Errors.js"
import { journalFile } from "./Journal.js"

export const reportCsv = "report.csv"
export const reportXlsx = "report.xlsx"
export const summaryFile = "summary.json"

/** `20261122T044300Z`: sortable, and valid in file names everywhere. */
export const timestamp = (date: Date): string => date.toISOString().replace(/\.\d+Z$/, "Z").replace(/[-:]/g, "")

/** `runs/<UTC timestamp>-<resource>`, with `-2`, `-3` … when a run of the same second exists. */
export const defaultRunDir = (resource: string, now: Date = new Date()): string => {
  const base = Path.join("runs", `${timestamp(now)}-${resource}`)
  let dir = base
  for (let n = 2; fs.existsSync(dir); n++) dir = `${base}-${n}`
  return dir
}

const message = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/** Creates the directory of a new run; one that already holds a journal or a report is refused. */
/** The clock's time as an ISO string, as summaries and journals record it. */
export const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

export const createRunDir = Effect.fn("RunDir.create")(function*(dir: string) {
  for (const name of [journalFile, reportCsv, summaryFile]) {
    if (fs.existsSync(Path.join(dir, name))) {
      return yield* new RunError({
        message: `${dir} already holds a run (${name}): continue it with \`fsm-bulk resume ${dir}\` or choose another --out`
      })
    }
  }
  yield* Effect.try({
    try: () => fs.mkdirSync(dir, { recursive: true }),
    catch: (cause) => new RunError({ message: `cannot create the run directory ${dir}: ${message(cause)}`, cause })
  })
  return Path.resolve(dir)
})

/** A directory that holds a run's journal. */
export const existingRunDir = Effect.fn("RunDir.existing")(function*(dir: string) {
  const journal = Path.join(dir, journalFile)
  if (!fs.existsSync(dir)) return yield* new RunError({ message: `${dir} does not exist` })
  if (!fs.existsSync(journal)) return yield* new RunError({ message: `${dir} is not a run directory: it has no ${journalFile}` })
  return Path.resolve(dir)
})
