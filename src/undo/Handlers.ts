/**
 * What the commands of undo/Command.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as Path from "node:path"
import { type ConnectionOptions, continuingConnection } from "../cli/Connection.js"
import { type ExitCode } from "../cli/Output.js"
import { hintOnAbort, withApi } from "../cli/WithApi.js"
import { type Api } from "../client/Api.js"
import { say, summary as printSummary } from "../console/Output.js"
import { formatDuration, summaryTable } from "../console/Progress.js"
import { UsageError } from "../Errors.js"
import { withSigning } from "../evidence/Handlers.js"

import type { Input } from "../cli/Lazy.js"
import { journalFile, readJournal } from "../import/Journal.js"
import { resumeHint } from "../import/Pipeline.js"
import { runTargetOf } from "../import/Resume.js"
import { defaultRunDir, reportCsv } from "../import/RunDir.js"
import type { ImportServices } from "../import/Services.js"
import { isResourceName } from "../Resources.js"
import { shellQuote } from "../Shell.js"
import { shownCounts, type Status } from "../Status.js"
import { type undoConfig } from "./Command.js"
import { rerunUndo, resumeUndo, runUndo, type UndoResult } from "./Undo.js"
/** The server the run (or the first step of the onboarding) under `dir` was sent to. */
const targetOf = (dir: string) =>
  Effect.gen(function*() {
    const own = Path.join(dir, journalFile)
    const step = fs.existsSync(own)
      ? own
      : fs.existsSync(dir)
      ? fs.readdirSync(dir).filter(isResourceName).map((s) => Path.join(dir, s, journalFile)).find(fs.existsSync)
      : undefined
    if (step === undefined) return undefined
    return runTargetOf((yield* readJournal(step)).header)
  })

/** Runs an undo under the command's Api, as an import runs (the journal's hint only once it has one). */
const withUndoApi = <A, E>(
  connection: ConnectionOptions,
  label: string,
  runDir: string,
  work: () => Effect.Effect<A, E, Api | ImportServices>
) =>
  withApi(connection, label, () => runDir, work).pipe(
    hintOnAbort(() => (fs.existsSync(Path.join(runDir, journalFile)) ? runDir : ""))
  )

const afterUndo = (json: boolean, title: string, result: UndoResult) =>
  Effect.gen(function*() {
    const s = result.summary
    const took = Date.parse(s.finished) - Date.parse(s.started)
    const heading = `${title}: ${s.rows} rows in ${formatDuration(took)}${
      s.dryRun ? " (dry run: nothing was written)" : ""
    }`
    const totals = [["requests", s.requests], ["rate-limited", s.rateLimited], ["retries", s.retries]] as const
    for (const l of summaryTable(heading, shownCounts(s.counts, s.dryRun), totals)) yield* say(l)
    for (const r of s.recreated) {
      yield* say(
        `created again: ${r.resource} ${r.from !== null ? `id ${String(r.from)} → ` : ""}id ${String(r.to)}${
          r.pointing.length > 0 ? ` (named by ${r.pointing.join(", ")})` : ""
        }`
      )
    }
    const n = (status: Status) => s.counts[status] ?? 0
    const next: Array<string> = []
    if (n("conflict") > 0 && !s.dryRun) {
      next.push(
        `next: ${n("conflict")} record${
          n("conflict") === 1 ? " was" : "s were"
        } changed on the server since the run (see _error in the report); to undo them anyway: ` +
          `fsm-bulk rerun ${shellQuote(s.runDir)} --only conflict --overwrite`
      )
    }
    if (n("failed") + n("in-doubt") > 0 && !s.dryRun) {
      next.push(`next: try the failed rows again: fsm-bulk rerun ${shellQuote(s.runDir)}`)
    }
    if (s.cannotUndo > 0) {
      next.push(
        `not undone: ${s.cannotUndo} row${
          s.cannotUndo === 1 ? "" : "s"
        } the API cannot take back (\`_error\` in the report says why)`
      )
    }
    if (result.interrupted) next.push(`stopped before every row was undone: ${resumeHint(s.runDir)}`)
    for (const l of next) yield* say(l)
    yield* printSummary(json, s, [
      `undoes: ${s.undoes}`,
      `reports: ${s.runDir}/${reportCsv}, report.xlsx and report.html`,
      `run directory: ${s.runDir}`
    ])
    return s.exitCode as ExitCode
  })

// --- undo ----------------------------------------------------------------------------------------------------------

export const handleUndo = (a: Input<typeof undoConfig>) =>
  Effect.gen(function*() {
    const connection = yield* continuingConnection(
      a.connection,
      yield* targetOf(a.runDir),
      a.forceBaseUrl,
      "the run being undone"
    )
    const runDir = Option.getOrElse(a.out, () => defaultRunDir("undo"))
    return yield* withUndoApi(connection, "undo", runDir, () =>
      runUndo({ target: a.runDir, runDir, dryRun: a.dryRun, force: a.force }).pipe(
        Effect.flatMap((result) =>
          afterUndo(a.json, `undo ${a.runDir}`, result)
        )
      )).pipe(withSigning(a.sign, {
        run: () =>
          runDir
      }))
  })

// --- resume and rerun of an undo run -------------------------------------------------------------------------------

interface ContinueArgs {
  readonly runDir: string
  readonly json: boolean
  readonly forceBaseUrl: boolean
  readonly connection: ConnectionOptions
}

/** `resume UNDO_RUN_DIR`. */
export const resumeUndoCommand = (a: ContinueArgs) =>
  Effect.gen(function*() {
    const connection = yield* continuingConnection(
      a.connection,
      yield* targetOf(a.runDir),
      a.forceBaseUrl,
      "this undo"
    )
    return yield* withUndoApi(connection, "resume undo", Path.resolve(a.runDir), () =>
      resumeUndo(a.runDir).pipe(Effect.flatMap((result) =>
        afterUndo(a.json, "resume undo", result)
      )))
  })

/**
 * `rerun UNDO_RUN_DIR [--only STATUSES] [--overwrite] [--dry-run]`: `--overwrite` is the undo's `--force` (the rerun's
 * flag for rows whose records changed on the server since).
 */
export const rerunUndoCommand = (
  a: ContinueArgs & {
    readonly only: ReadonlyArray<Status> | undefined
    readonly force: boolean
    readonly dryRun: boolean
    readonly out: Option.Option<string>
    readonly fixed: Option.Option<string>
    readonly merge: boolean
  }
) =>
  Effect.gen(function*() {
    if (Option.isSome(a.fixed)) {
      return yield* new UsageError({
        message: `${a.runDir} is an undo: its rows take no corrections (--fixed); rerun it with --only`
      })
    }
    if (a.merge) {
      return yield* new UsageError({
        message:
          `${a.runDir} is an undo: it has nothing to merge (--merge); --overwrite undoes the records changed on the server anyway`
      })
    }
    const connection = yield* continuingConnection(
      a.connection,
      yield* targetOf(a.runDir),
      a.forceBaseUrl,
      "the undo being rerun"
    )
    const runDir = Option.getOrElse(a.out, () => defaultRunDir("undo"))
    return yield* withUndoApi(connection, "rerun undo", runDir, () =>
      rerunUndo(a.runDir, { runDir, dryRun: a.dryRun, force: a.force, only: a.only }).pipe(
        Effect.flatMap((result) =>
          afterUndo(a.json, "rerun undo", result)
        )
      ))
  })
