/**
 * What the commands of the import pipeline run (`validate`, `import`, `rerun`, `resume`; their flags are in
 * Commands.ts, loaded by every command): each builds the job, the command's one `Api` (connection options), progress
 * on stderr and the stop-on-signal handling, runs the pipeline, prints the closing table and the summary, and returns
 * the exit code. Loaded when one of them runs (cli/Lazy.ts).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { existsSync, statSync } from "node:fs"
import * as Path from "node:path"
import { continuingConnection } from "../cli/Connection.js"
import { type ExitCode } from "../cli/Output.js"
import { attachmentsRoot, onConflictOf, readSettings, withProfile } from "../cli/Parsing.js"
import { hintOnAbort, withApi } from "../cli/WithApi.js"
import { Notices, say, summary as printSummary } from "../console/Output.js"
import {
  FileReadProgress,
  formatDuration,
  makeReadProgress,
  type ReadProgress,
  summaryTable,
  wentWrong
} from "../console/Progress.js"
import { UsageError } from "../Errors.js"
import { withSigning } from "../evidence/Handlers.js"

import { t } from "../Messages.js"

import type { Input } from "../cli/Lazy.js"
import { readOnboardSummary } from "../onboard/Summary.js"
import { resource as resourceOf } from "../Resources.js"
import { shellQuote } from "../Shell.js"
import { shielded, stopOnSignals } from "../Signals.js"
import { shownCounts } from "../Status.js"
import { undoRunOf } from "../undo/Undo.js"
import { parseDuration } from "../Units.js"
import {
  type importConfig,
  type rerunConfig,
  resourceName,
  type resumeConfig,
  type validateConfig
} from "./Commands.js"
import { journalFile, type Mode, type OnConflict } from "./Journal.js"
import { resumeHint, runImport, type RunResult } from "./Pipeline.js"
import { missingReferenceRows } from "./Refs.js"
import type { Summary } from "./Report.js"
import { parentTarget, parseOnly, rerun } from "./Rerun.js"
import { loadRun, resumeRun, runTargetOf } from "./Resume.js"
import { defaultRunDir, lockRunDir, reportCsv } from "./RunDir.js"
import { runValidate } from "./ValidateRun.js"
import { modeProblem } from "./WritePlan.js"
// --- output --------------------------------------------------------------------------------------------------------

/** What the closing lines need to know beyond the summary: how the user asked for the run. */
interface NextContext {
  /** The read flags the user gave (`--date-format dd/mm/yyyy --map …`), shell-quoted, defaults left out. */
  readonly readFlags?: string
  /** `--merge` / `--overwrite` given to the run: conflicts left are ones these flags cannot settle. */
  readonly onConflict?: OnConflict | undefined
}

/**
 * The read and parse flags the user gave, shell-quoted and defaults left out, so that a suggested command reads the
 * file exactly as the command that suggests it did.
 */
const readFlagsOf = (
  parsing: {
    readonly sheet: Option.Option<string>
    readonly encoding: string
    readonly delimiter: string
    readonly dateFormat: string
    readonly decimal: string
    readonly includeHidden: boolean
  },
  map: Option.Option<string>,
  root: Option.Option<string>
): string => {
  const flags: Array<string> = []
  const add = (flag: string, value: string) => flags.push(` ${flag} ${shellQuote(value)}`)
  if (Option.isSome(parsing.sheet)) add("--sheet", parsing.sheet.value)
  if (parsing.encoding !== "auto") add("--encoding", parsing.encoding)
  if (parsing.delimiter !== "auto") add("--delimiter", parsing.delimiter)
  if (parsing.dateFormat !== "auto") add("--date-format", parsing.dateFormat)
  if (parsing.decimal !== "auto") add("--decimal", parsing.decimal)
  if (parsing.includeHidden) flags.push(" --include-hidden")
  if (Option.isSome(map)) add("--map", map.value)
  if (Option.isSome(root)) add("--attachments-root", root.value)
  return flags.join("")
}

/**
 * The closing lines that say what went wrong and what to run next: the most frequent kinds of error (one example
 * row each) and the exact command that takes the rows on. Every command suggested is one that would change the
 * outcome: it carries the flags the user gave, a row naming a record that does not exist is not sent again as it
 * is, and conflicts left after `--merge`/`--overwrite` do not get the same flag again.
 */
const whatNext = (summary: Summary, context: NextContext = {}): ReadonlyArray<string> => {
  const lines: Array<string> = [
    ...wentWrong((summary.errors ?? []).map((kind) => ({ kind })), t("wrong.seeReports"))
  ]
  const n = (status: string) => summary.counts[status as keyof typeof summary.counts] ?? 0
  const dir = summary.runDir
  const modeFlag = summary.mode !== "upsert" ? ` --mode ${summary.mode}` : ""
  if (summary.command === "validate") {
    if (n("invalid") > 0) lines.push(t("next.validateAgain", { source: summary.source ?? "" }))
    else {
      lines.push(t("next.import", {
        command: `fsm-bulk import ${summary.resource} ${shellQuote(summary.source ?? "")}${modeFlag}${
          context.readFlags ?? ""
        }`
      }))
    }
    return lines
  }
  if (summary.dryRun) return lines
  // Rows that failed because a record they name does not exist fail the same way when sent again as they are.
  const missingRefs = missingReferenceRows(n("failed"), summary.errors)
  const resend = n("failed") - missingRefs + n("in-doubt") + n("unconfirmed")
  let said = 0
  const lead = () => (said++ > 0 ? t("next.and") : t("next.next"))
  const again = `fsm-bulk rerun ${shellQuote(dir)}`
  const report = `${dir}/${reportCsv}`
  if (n("invalid") > 0) {
    lines.push(
      t("next.fixInvalid", { lead: lead(), report }),
      `      ${again} --fixed CORRECTED.csv`
    )
  }
  if (missingRefs > 0) {
    lines.push(
      missingRefs > 1
        ? t("next.missingRefs", { lead: lead(), count: missingRefs })
        : t("next.missingRef", { lead: lead() }),
      t("next.missingRefsFix", { command: again, report }),
      t("next.missingRefsFixed", { command: again })
    )
  }
  if (resend > 0) {
    lines.push(t(missingRefs > 0 ? "next.resendOther" : "next.resend", { lead: lead(), command: again }))
  }
  if (n("conflict") > 0 && summary.plan !== undefined) {
    // An applied plan's conflicts are rows the plan no longer describes: a new plan is the way on, not --overwrite.
    lines.push(t("next.planAgain", {
      lead: lead(),
      command: `fsm-bulk import ${summary.resource} ${shellQuote(summary.source ?? "")}${modeFlag}${
        summary.mapping !== undefined ? ` --map ${shellQuote(summary.mapping.file)}` : ""
      } --dry-run --plan NEW_PLAN`
    }))
  } else if (n("conflict") > 0 && context.onConflict === "merge") {
    // --merge already kept the server's changes where it could: what is left changed the same fields as the file.
    lines.push(t("next.mergeLeft", { lead: lead() }), t("next.mergeLeftHow", { command: again }))
  } else if (n("conflict") > 0 && context.onConflict === "overwrite") {
    lines.push(t("next.overwriteLeft", { lead: lead() }), t("next.overwriteLeftHow", { report, command: again }))
  } else if (n("conflict") > 0) {
    lines.push(t("next.conflict", { lead: lead() }), t("next.conflictHow", { command: again }))
  }
  return lines
}

/** The columns whose values were not sent and the rows a profile skipped as not data. */
const columnNotes = (summary: Summary): ReadonlyArray<string> => {
  const lines: Array<string> = []
  if (summary.ignoredColumns !== undefined && summary.ignoredColumns.length > 0) {
    lines.push(t("summary.columnsNotSent", { columns: summary.ignoredColumns.map((c) => `"${c}"`).join(", ") }))
  }
  const hidden = summary.hiddenRows
  if (hidden !== undefined && hidden.count > 0) {
    lines.push(
      `warning: ${hidden.count} row${hidden.count > 1 ? "s" : ""} hidden in the sheet (by hand or by a filter) ${
        hidden.count > 1 ? "were" : "was"
      } not ${summary.command === "validate" ? "validated" : "imported"}: row${hidden.count > 1 ? "s" : ""} ${
        hidden.rows.join(", ")
      }${hidden.count > hidden.rows.length ? ", …" : ""} (skipped); unhide them or pass --include-hidden`
    )
  }
  const skipped = summary.mapping?.skippedRows ?? []
  if (skipped.length > 0) {
    lines.push(t("summary.skippedRows", {
      rows: skipped.slice(0, 5).map((x) => t("summary.skippedRow", { row: x.row, why: x.why })).join(", "),
      more: skipped.length > 5 ? t("summary.andMore", { count: skipped.length - 5 }) : ""
    }))
  }
  return lines
}

const printOutcome = (
  json: boolean,
  title: string,
  summary: Summary,
  extra: ReadonlyArray<string>,
  context: NextContext = {}
) =>
  Effect.gen(function*() {
    const took = Date.parse(summary.finished) - Date.parse(summary.started)
    const totals: ReadonlyArray<readonly [string, number]> = summary.command === "validate"
      ? []
      : [
        [t("summary.requests"), summary.requests],
        [t("summary.rateLimited"), summary.rateLimited],
        [t("summary.retries"), summary.retries]
      ]
    const heading = t("summary.heading", {
      title,
      rows: summary.rows,
      took: formatDuration(took),
      dry: summary.dryRun ? t("summary.dryRun") : ""
    })
    const lines = summaryTable(heading, shownCounts(summary.counts, summary.dryRun), totals)
    for (const l of lines) yield* say(l)
    for (const l of columnNotes(summary)) yield* say(l)
    for (const l of whatNext(summary, context)) yield* say(l)
    yield* printSummary(json, summary, [
      t("summary.reports", { csv: `${summary.runDir}/${reportCsv}` }),
      ...extra,
      t("summary.runDir", { dir: summary.runDir })
    ])
    if (json) { for (const l of extra) yield* say(l) }
    return summary.exitCode as ExitCode
  })

export const afterRun = (json: boolean, title: string, result: RunResult, context: NextContext = {}) =>
  printOutcome(
    json,
    title,
    result.summary,
    result.interrupted ? [`stopped before every row was sent: ${resumeHint(result.runDir)}`] : [],
    context
  )

/** The size of `file` in bytes, if it can be read (the reader reports a missing file by itself). */
const sizeOf = (file: string): number | undefined => {
  try {
    return statSync(file).size
  } catch {
    return undefined
  }
}

// --- validate --------------------------------------------------------------------------------------------------

export const handleValidate = (a: Input<typeof validateConfig>) =>
  Effect.gen(function*() {
    const resource = yield* resourceName(a.resource)
    const problem = modeProblem(resourceOf(resource), a.mode)
    if (problem !== undefined) return yield* new UsageError({ message: problem })
    const root = yield* attachmentsRoot(a.attachmentsRoot)
    const read = yield* withProfile(readSettings(a.parsing), a.map)
    const runDir = Option.getOrElse(a.out, () => defaultRunDir(resource))
    yield* lockRunDir(runDir, "validate")
    const validation = (progress: ReadProgress) =>
      runValidate({
        resource,
        file: a.file,
        read,
        dateFormat: a.parsing.dateFormat,
        decimal: a.parsing.decimal,
        mode: a.mode,
        attachmentsRoot: root,
        runDir
      }).pipe(Effect.provide(Layer.merge(Notices.stderr, FileReadProgress.to(progress))))
    // Nothing is sent, so there is nothing to finish: a signal stops the validation at once, and its reports
    // (incomplete) are discarded with it; exit 3, as for any run stopped before its end.
    const result = yield* shielded(
      Effect.scoped(
        Effect.gen(function*() {
          const stop = yield* stopOnSignals({ stopping: "stopping the validation; no report is kept" })
          // A large file shows how far the read is, on stderr (stdout stays for --json).
          const progress = yield* makeReadProgress({ label: `validate ${resource}`, totalBytes: sizeOf(a.file) })
          return yield* Effect.raceFirst(
            Effect.asSome(Effect.ensuring(validation(progress), progress.end)),
            Effect.as(stop.stopped, Option.none())
          )
        })
      )
    )
    if (Option.isNone(result)) {
      if (a.json) yield* printSummary(true, { command: "validate", resource, interrupted: true, exitCode: 3 }, [])
      return 3 as ExitCode
    }
    return yield* printOutcome(a.json, `validate ${resource}`, result.value.summary, [], {
      readFlags: readFlagsOf(a.parsing, a.map, a.attachmentsRoot)
    })
  }).pipe(Effect.scoped)

// --- import ----------------------------------------------------------------------------------------------------

export const handleImport = (a: Input<typeof importConfig>) =>
  Effect.gen(function*() {
    const resource = yield* resourceName(a.resource)
    if (Option.isSome(a.plan) && !a.dryRun) {
      return yield* new UsageError({
        message: "--plan writes the plan of a dry run: add --dry-run (then send it with `fsm-bulk apply PLAN`)"
      })
    }
    const read = yield* withProfile(readSettings(a.parsing), a.map)
    const mode: Mode = a.mode
    const problem = modeProblem(resourceOf(resource), mode)
    if (problem !== undefined) return yield* new UsageError({ message: problem })
    const verifyWaitMs = yield* Either.mapLeft(parseDuration(a.verifyWait), (why) =>
      new UsageError({ message: `--verify-wait: ${why}` }))
    const runDir = Option.getOrElse(a.out, () =>
      defaultRunDir(resource))
    const root = yield* attachmentsRoot(a.attachmentsRoot)
    const onConflict = yield* onConflictOf(a.conflicts)
    return yield* withApi(a.connection, `import ${resource}`, () => runDir, () =>
      runImport({
        command: "import",
        resource,
        file: a.file,
        read,
        dateFormat: a.parsing.dateFormat,
        decimal: a.parsing.decimal,
        mode,
        dryRun: a.dryRun,
        verify: a.verify,
        verifyWaitMs,
        sendWriteOnly: a.sendWriteOnly,
        attachmentsRoot: root,
        runDir,
        onConflict,
        clientConcurrency: Option.getOrUndefined(a.connection.concurrency),
        planOut: Option.getOrUndefined(a.plan)
      }).pipe(Effect.flatMap((result) => afterRun(a.json, `import ${resource}`, result, { onConflict })))).pipe(
        hintOnAbort(() => runDir),
        withSigning(a.sign, { run: () => runDir, plan: Option.getOrUndefined(a.plan) })
      )
  })

// --- resume ----------------------------------------------------------------------------------------------------

/** An undo's and an onboarding's implementations: loaded only when `resume` or `rerun` is given one of their runs. */
const loadUndo = Effect.promise(() => import("../undo/Handlers.js"))
const loadOnboarding = Effect.promise(() => import("../onboard/Handlers.js"))

export const handleResume = (a: Input<typeof resumeConfig>) =>
  Effect.gen(function*() {
    // An undo run is continued by the undo (src/undo).
    if ((yield* undoRunOf(a.runDir)) !== undefined) return yield* (yield* loadUndo).resumeUndoCommand(a)
    // An onboarding's run directory holds one run per step and the onboarding's summary, no journal of its own.
    const onboarding = existsSync(Path.join(a.runDir, journalFile)) ? undefined : readOnboardSummary(a.runDir)
    if (onboarding !== undefined) {
      return yield* Effect.scoped(
        (yield* loadOnboarding).resumeOnboarding(
          Path.resolve(a.runDir),
          onboarding,
          a.connection,
          a.forceBaseUrl,
          a.json
        )
      )
    }
    const { job, prior } = yield* loadRun(a.runDir)
    const connection = yield* continuingConnection(
      a.connection,
      runTargetOf(prior.header),
      a.forceBaseUrl,
      "this run"
    )
    return yield* withApi(
      connection,
      `resume ${job.resource}`,
      () => job.runDir,
      () =>
        resumeRun(a.runDir).pipe(
          Effect.flatMap((result) => afterRun(a.json, `resume ${job.resource}`, result))
        )
    ).pipe(hintOnAbort(() => job.runDir))
  }).pipe(withSigning(a.sign, { run: () => a.runDir }))

// --- rerun -----------------------------------------------------------------------------------------------------

export const handleRerun = (a: Input<typeof rerunConfig>) =>
  Effect.gen(function*() {
    // An undo run is rerun by the undo (src/undo): the rows of its report with the statuses chosen.
    const undoDir = yield* undoRunOf(a.target)
    if (undoDir !== undefined) {
      const undoOnly = Option.isSome(a.only)
        ? yield* Either.mapLeft(parseOnly(a.only.value), (message) => new UsageError({ message }))
        : undefined
      // Named here, so that --sign knows the directory to sign.
      const out = Option.getOrElse(a.out, () => defaultRunDir("undo"))
      return yield* (yield* loadUndo).rerunUndoCommand({
        ...a,
        out: Option.some(out),
        runDir: undoDir,
        only: undoOnly,
        force: a.conflicts.overwrite,
        merge: a.conflicts.merge
      }).pipe(withSigning(a.sign, { run: () => out }))
    }
    const root = yield* attachmentsRoot(a.attachmentsRoot)
    const onConflict = yield* onConflictOf(a.conflicts)
    const connection = yield* continuingConnection(
      a.connection,
      yield* parentTarget(a.target),
      a.forceBaseUrl,
      "the run being rerun"
    )
    const only = Option.isSome(a.only)
      ? yield* Either.mapLeft(parseOnly(a.only.value), (message) => new UsageError({ message }))
      : undefined
    let runDir = ""
    return yield* withApi(connection, "rerun", () => runDir, () =>
      rerun(
        {
          target: a.target,
          only,
          fixed: Option.getOrUndefined(a.fixed),
          dryRun: a.dryRun,
          attachmentsRoot: root,
          onConflict,
          out: (resource) => (runDir = Option.getOrElse(a.out, () => defaultRunDir(resource)))
        }
      ).pipe(
        Effect.flatMap((outcome) =>
          outcome.result !== undefined
            ? afterRun(a.json, `rerun ${outcome.result.summary.resource}`, outcome.result, { onConflict })
            : Effect.gen(function*() {
              yield* say(
                `nothing to rerun: no row of ${outcome.parent.report} has the status ${
                  outcome.parent.only.join(" or ")
                }`
              )
              if (a.json) {
                yield* printSummary(true, {
                  command: "rerun",
                  parent: outcome.parent,
                  rows: 0,
                  runDir: null,
                  exitCode: 0
                }, [])
              }
              return 0 as ExitCode
            })
        )
      )).pipe(hintOnAbort(() => runDir), withSigning(a.sign, { run: () => runDir }))
  })

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
