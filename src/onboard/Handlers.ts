/**
 * What the commands of onboard/Commands.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type ApiLayerExtra, type ConnectionOptions, continuingConnection } from "../cli/Connection.js"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { attachmentsRoot, onConflictOf, readProfiles, readSettings } from "../cli/Parsing.js"
import { say, stopAfterApiRequests, summary as printSummary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { withSigning } from "../evidence/Handlers.js"
import { sha256File } from "../files/Write.js"
import type { AppliedPlan } from "../import/Journal.js"
import { type LoadedOnboardPlan, readAnyPlan } from "../import/Plan.js"
import { defaultRunDir, lockRunDir } from "../import/RunDir.js"
import { ensurePlannedProfile } from "../mapping/Profile.js"
import { shellQuote } from "../Shell.js"
import { type DemoResult, runDemo } from "./CommandDemo.js"
import { closingLines, planLines, stopHint, withOnboardApi } from "./CommandRun.js"
import { type demoConfig, duration, type onboardConfig, pollFor } from "./Commands.js"
import { type PreparedOnboarding, prepareOnboarding, runOnboarding } from "./Onboard.js"
import type { OnboardSummary } from "./Summary.js"
/** Runs a prepared onboarding under the command's Api and prints its closing lines and summary. */
const runAndClose = (
  prepared: PreparedOnboarding,
  connection: ConnectionOptions,
  extra: ApiLayerExtra | undefined,
  json: boolean
) =>
  // Printed inside the shielded run, which a stop signal lets finish.
  withOnboardApi(connection, prepared.runDir, extra, () =>
    Effect.gen(function*() {
      const result = yield* runOnboarding(prepared)
      const { table, where } = closingLines(result.summary)
      for (const line of table) yield* say(line)
      yield* printSummary(json, result.summary, where)
      if (json) { for (const line of where) yield* say(line) }
      return result.exitCode as ExitCode
    }).pipe(stopAfterApiRequests(() => `fsm-bulk resume ${shellQuote(prepared.runDir)}`))).pipe(
      Effect.tapErrorTag("ApiAborted", () => say(`the onboarding was aborted: ${stopHint(prepared.runDir)}`))
    )

/**
 * `resume DIR` on an onboarding's run directory: the same input and settings (from its summary), against the
 * server it was sent to; steps that ended are kept, the step under way continues from its journal (rows done are
 * not sent again, rows in flight are looked up first), the steps not started run.
 */
export const resumeOnboarding = Effect.fn("Onboard.resume")(function*(
  dir: string,
  summary: OnboardSummary,
  connection: ConnectionOptions,
  forceBaseUrl: boolean,
  json: boolean
) {
  if (summary.command !== "onboard") {
    return yield* new UsageError({
      message: `${dir} holds a ${summary.command}, which cannot be resumed: run \`fsm-bulk ${summary.command}\` again`
    })
  }
  const target = summary.baseUrl !== undefined
    ? { baseUrl: summary.baseUrl, embedded: summary.embedded === true }
    : undefined
  const continuing = yield* continuingConnection(connection, target, forceBaseUrl, "this onboarding")
  yield* lockRunDir(dir, "resume")
  const settings = summary.settings
  // An onboarding that applies a plan goes on applying it, only it: the plan must still be the one it recorded.
  const applying = summary.plan !== undefined ? yield* planStill(summary.plan.file, summary.plan.sha256) : undefined
  const prepared = yield* prepareOnboarding({
    command: "onboard",
    input: summary.source,
    runDir: dir,
    dryRun: summary.dryRun,
    verify: summary.verify,
    answerWaitMs: settings?.answerWaitMs ?? 6 * 60_000,
    answerPollMs: settings?.answerPollMs ?? pollFor(6 * 60_000),
    read: settings?.read ?? { encoding: "auto", delimiter: "auto" },
    dateFormat: settings?.dateFormat ?? "auto",
    decimal: settings?.decimal ?? "auto",
    attachmentsRoot: settings?.attachmentsRoot,
    maxAttachmentBytes: settings?.maxAttachmentBytes,
    maps: settings?.maps,
    sendWriteOnly: applying?.content.options.sendWriteOnly,
    ...(applying !== undefined
      ? {
        applying: {
          plan: applying,
          approvedBy: summary.plan?.approvedBy,
          otherTarget: true,
          signer: summary.plan?.signer
        }
      }
      : {}),
    resuming: { earlier: { requests: summary.requests, rateLimited: summary.rateLimited, retries: summary.retries } }
  })
  for (const line of planLines(prepared)) yield* say(line)
  return yield* runAndClose(prepared, continuing, undefined, json)
})

/** The onboarding's plan a run recorded, refused when the file changed since. */
const planStill = Effect.fn("Onboard.planStill")(function*(file: string, sha256: string) {
  const read = yield* readAnyPlan(file)
  if (read.kind !== "onboard" || read.plan.sha256 !== sha256) {
    return yield* new UsageError({
      message: `${file} changed since this onboarding started applying it (sha256 ${
        read.plan.sha256.slice(0, 12)
      }…, the run recorded ${sha256.slice(0, 12)}…): nothing was sent`
    })
  }
  return read.plan
})

/**
 * `fsm-bulk apply PLAN` of an onboarding's plan: the onboarding again, from the plan's workbook read with the
 * plan's settings and profiles, each step sending only its step of the plan. Refused before anything is sent when
 * an input file or a profile changed since the plan, or the workbook's steps are not the plan's.
 */
export const applyOnboardPlan = Effect.fn("Onboard.apply")(function*(
  plan: LoadedOnboardPlan,
  a: {
    readonly approvedBy: string | undefined
    readonly signer: AppliedPlan["signer"] | undefined
    readonly out: string | undefined
    readonly forceBaseUrl: boolean
    readonly json: boolean
    readonly connection: ConnectionOptions
  }
) {
  const c = plan.content
  const first = c.steps[0]
  if (first === undefined) return yield* new UsageError({ message: `${plan.file}: the plan has no steps` })
  for (const step of c.steps) {
    const now = yield* Effect.orElseSucceed(sha256File(step.source.file), () => "(unreadable)")
    if (now !== step.source.sha256) {
      return yield* new UsageError({
        message: `${step.source.file} changed since the plan ${plan.file} was made (sha256 ${
          now.slice(0, 12)
        }…, the plan read ${step.source.sha256.slice(0, 12)}…): nothing was sent; make a new plan`
      })
    }
    if (step.read.map !== undefined) yield* ensurePlannedProfile(step.read.map, plan.file)
  }
  const connection = yield* continuingConnection(
    a.connection,
    { baseUrl: c.target.baseUrl, embedded: c.target.embedded === true },
    a.forceBaseUrl,
    "the plan",
    "plan"
  )
  const runDir = a.out ?? defaultRunDir("onboard")
  yield* lockRunDir(runDir, "apply")
  const maps = c.steps.flatMap((s) => s.read.map !== undefined ? [s.read.map] : [])
  const prepared = yield* prepareOnboarding({
    command: "onboard",
    input: c.input,
    runDir,
    dryRun: false,
    verify: false,
    sendWriteOnly: c.options.sendWriteOnly,
    answerWaitMs: 6 * 60_000,
    answerPollMs: pollFor(6 * 60_000),
    read: {
      encoding: first.read.encoding,
      delimiter: first.read.delimiter,
      ...(first.read.includeHidden === true ? { includeHidden: true } : {})
    },
    ...(maps.length > 0 ? { maps } : {}),
    dateFormat: first.parse.dateFormat,
    decimal: first.parse.decimal,
    attachmentsRoot: first.parse.attachmentsRoot,
    maxAttachmentBytes: first.parse.maxAttachmentBytes,
    applying: { plan, approvedBy: a.approvedBy, otherTarget: a.forceBaseUrl, signer: a.signer }
  })
  const planned = c.steps.map((s) => s.resource).join(", ")
  const found = prepared.steps.map((s) => s.input.resource).join(", ")
  if (planned !== found) {
    return yield* new UsageError({
      message:
        `${c.input} has the steps ${found}, the plan ${plan.file} has ${planned}: nothing was sent; make a new plan`
    })
  }
  for (const line of planLines(prepared)) yield* say(line)
  return yield* runAndClose(prepared, connection, undefined, a.json).pipe(
    Effect.tap(() =>
      say(
        `applied plan ${plan.file} (sha256 ${plan.sha256})${
          a.approvedBy !== undefined ? `, approved by ${a.approvedBy}` : ""
        }`
      )
    )
  )
})

// --- onboard -----------------------------------------------------------------------------------------------------

export const handleOnboard = (a: Input<typeof onboardConfig>) =>
  Effect.gen(function*() {
    if (Option.isSome(a.plan) && !a.dryRun) {
      return yield* new UsageError({
        message: "--plan writes the plan of a dry run: add --dry-run (then send it with `fsm-bulk apply PLAN`)"
      })
    }
    const answerWaitMs = yield* duration("--verify-wait", a.answerWait)
    if (Option.isSome(a.answerDelay) && Option.isSome(a.connection.baseUrl)) {
      return yield* new UsageError({
        message: "--answer-delay sets the embedded sandbox's delay: it cannot change the API at --base-url"
      })
    }
    const answerDelayMs = Option.isSome(a.answerDelay)
      ? yield* duration("--answer-delay", a.answerDelay.value)
      : undefined
    const runDir = Option.getOrElse(a.out, () => defaultRunDir("onboard"))
    yield* lockRunDir(runDir, "onboard")
    const prepared = yield* prepareOnboarding({
      command: "onboard",
      input: a.input,
      runDir,
      dryRun: a.dryRun,
      verify: a.verify,
      sendWriteOnly: a.sendWriteOnly,
      answerWaitMs,
      // The embedded sandbox's answers show after `answerDelayMs`: no need to wait longer between two reads.
      answerPollMs: answerDelayMs !== undefined
        ? Math.min(pollFor(answerWaitMs), Math.max(100, Math.round(answerDelayMs / 2)))
        : pollFor(answerWaitMs),
      read: readSettings(a.parsing),
      maps: yield* readProfiles(a.map),
      dateFormat: a.parsing.dateFormat,
      decimal: a.parsing.decimal,
      attachmentsRoot: yield* attachmentsRoot(a.attachmentsRoot),
      onConflict: yield* onConflictOf(a.conflicts),
      planOut: Option.getOrUndefined(a.plan)
    })
    for (const line of planLines(prepared)) yield* say(line)
    const extra = answerDelayMs !== undefined ? { sandbox: { answerDelayMs } } : undefined
    return yield* runAndClose(prepared, a.connection, extra, a.json).pipe(
      withSigning(a.sign, { run: () => runDir, plan: Option.getOrUndefined(a.plan) })
    )
  }).pipe(Effect.scoped)

// --- demo --------------------------------------------------------------------------------------------------------

/** The demo's closing lines: totals, export and verify, and where everything is. */
const printDemo = (json: boolean, result: DemoResult) =>
  Effect.gen(function*() {
    const onboarding = result.onboarding.summary
    const { table } = closingLines(onboarding)
    for (const line of table) yield* say(line)
    const exportRows = result.exported?.manifest.resources.reduce((n, r) => n + r.rows, 0) ?? 0
    const lines = [
      "",
      `demo: the example company (${result.input}), ${onboarding.rows} rows in ${onboarding.steps.length} steps`,
      result.exported !== undefined
        ? `export: ${result.exported.files.length} files, ${exportRows} rows, ${result.exported.requests} requests`
        : "export: not done (the onboarding stopped)",
      result.verified !== undefined
        ? result.verified.ok
          ? `verify: every checksum and row count matches ${result.exportDir}/manifest.json`
          : `verify: ${result.verified.problems.length} problem(s): ${result.verified.problems.join("; ")}`
        : "verify: not done",
      "",
      `run directory:   ${onboarding.runDir}`,
      `summary:         ${onboarding.runDir}/summary.json`,
      `reports:         ${onboarding.runDir}/<resource>/report.csv and report.xlsx`,
      `export:          ${result.exportDir} (one CSV per resource, manifest.json)`,
      `requests:        ${onboarding.requests + (result.exported?.requests ?? 0)} in all`
    ]
    yield* printSummary(
      json,
      {
        command: "demo",
        runDir: onboarding.runDir,
        input: result.input,
        onboarding,
        export: result.exported !== undefined
          ? {
            dir: result.exportDir,
            files: result.exported.files.length,
            rows: exportRows,
            requests: result.exported.requests
          }
          : null,
        verify: result.verified !== undefined ? { ok: result.verified.ok, problems: result.verified.problems } : null,
        exitCode: result.exitCode
      },
      lines
    )
    if (json) { for (const line of lines) yield* say(line) }
    return result.exitCode as ExitCode
  })

export const handleDemo = (a: Input<typeof demoConfig>) =>
  Effect.gen(function*() {
    const answerDelayMs = yield* duration("--answer-delay", a.answerDelay)
    const answerWaitMs = yield* duration("--verify-wait", a.answerWait)
    const runDir = Option.getOrElse(a.out, () => defaultRunDir("demo"))
    yield* lockRunDir(runDir, "demo")
    const result = yield* runDemo(
      { runDir, answerDelayMs, answerWaitMs, connection: a.connection },
      (result) => Effect.asVoid(printDemo(a.json, result))
    )
    return result.exitCode as ExitCode
  }).pipe(Effect.scoped)
