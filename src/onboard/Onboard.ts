/**
 * Onboarding: a whole account from one workbook (or directory), one import step per resource in dependency order,
 * all sharing one reference resolver, so a row names its parents by key (`customerExternalId`, `userToLogin` …)
 * and finds the records earlier steps wrote without asking the server again.
 *
 * `prepareOnboarding` checks everything that can be checked offline before anything is sent (the sheets, their
 * order, every file's columns and formats, rows that name each other in a cycle, the run directory), so a bad
 * input stops with exit 2 and an untouched account. `runOnboarding` then runs the steps; each writes its own run
 * directory (`<run dir>/<resource>`: journal, reports, summary) and the top-level `summary.json` lists them.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as Path from "node:path"
import { Api, type RunTraffic, trafficSince } from "../client/Api.js"
import { Notices } from "../console/Output.js"
import { kindsShown, type Progress, RunProgress, StepProgress } from "../console/Progress.js"
import { InputError, RunError } from "../Errors.js"
import { restore } from "../files/Guard.js"
import { readJsonFile } from "../files/JsonFile.js"
import { writeFileAtomic } from "../files/Write.js"
import { openInput } from "../import/Input.js"
import {
  type AppliedPlan,
  type JournalContents,
  journalFile,
  readJournal,
  type ReadSettings
} from "../import/Journal.js"
import { continueRun, type ImportJob, runImport, type RunResult } from "../import/Pipeline.js"
import { ensurePlanTarget, type LoadedOnboardPlan, type OnboardPlanFile, type PlanFile } from "../import/Plan.js"
import { type RefResolver, serverResolver } from "../import/Refs.js"
import { nowIso, reportCsv, summaryFile as stepSummaryFile } from "../import/RunDir.js"
import { EarlierSteps, OriginNotes, PlanSink, References } from "../import/Services.js"
import { RunCounts } from "../import/SummaryFile.js"
import type { ProfileRecord } from "../mapping/Profile.js"
import { isResourceName, resource as resourceOf, type ResourceName } from "../Resources.js"
import { RunStop } from "../Signals.js"
import { endedWell, type Outcome, shownCounts } from "../Status.js"
import { defaultMaxAttachmentBytes, inferFormats, type ParseOptions, planColumns } from "../validate/Validate.js"
import { version } from "../Version.js"
import { type NamedByProfiles, type OnboardInput, readOnboardInput, type StepInput } from "./Inputs.js"
import { type DependenciesOf, orderSteps } from "./Order.js"
import { type EndedRow, makeOnboardResolver, namedBy, recordsOf } from "./Resolver.js"
import { scanSelfReferences, type SelfReferences } from "./SelfRefs.js"
import {
  type OnboardSummary,
  stepLine,
  type StepSummary,
  SummaryCopies,
  summaryFile,
  totalCounts,
  writeOnboardSummary
} from "./Summary.js"

export interface OnboardRequest {
  /** Recorded in the summaries (`onboard`, `demo`). */
  readonly command: string
  /** A workbook (.xlsx) or a directory of `<resource>.csv|.xlsx` files. */
  readonly input: string
  readonly runDir: string
  readonly dryRun: boolean
  readonly verify: boolean
  /** `--send-write-only`: updates send create-only fields (passwords) too (see `ImportJob`). */
  readonly sendWriteOnly?: boolean | undefined
  /** With `verify`: how long queued answers are waited for, and between two reads of their tasks. */
  readonly answerWaitMs: number
  readonly answerPollMs: number
  /** Parsing settings that apply to every file. */
  readonly read: Omit<ReadSettings, "sheet" | "map">
  /**
   * `--map`: mapping profiles, each applied to the step of the resource it names (its `sheet`, when given, is the
   * sheet or file that holds that resource). A resume passes the copies its summary recorded, not the files.
   */
  readonly maps?: ReadonlyArray<ProfileRecord> | undefined
  readonly dateFormat: ParseOptions["dateFormat"]
  readonly decimal: ParseOptions["decimal"]
  readonly maxAttachmentBytes?: number | undefined
  /** `--attachments-root`: attachments must lie inside it (default: the workbook's folder, or the directory). */
  readonly attachmentsRoot?: string | undefined
  /** The edges the steps are ordered by (default: the resource table's). */
  readonly dependenciesOf?: DependenciesOf | undefined
  /** `--merge` / `--overwrite`: rows of exported files whose records changed on the server since the export. */
  readonly onConflict?: ImportJob["onConflict"]
  /**
   * `resume` of an interrupted onboarding in `runDir`: steps that ended are kept, the one under way continues
   * from its journal, the rest run; `earlier` is the traffic of the sessions before.
   */
  readonly resuming?: { readonly earlier: RunTraffic } | undefined
  /** `--dry-run --plan PLAN`: the onboarding's plan, every step's rows in one file (`import/Plan.ts`). */
  readonly planOut?: string | undefined
  /**
   * `fsm-bulk apply PLAN` of an onboarding's plan: each step sends exactly its step of the plan, and a reference
   * the plan names as "the record row R of an earlier step creates" must be the record that row created here.
   */
  readonly applying?: {
    readonly plan: LoadedOnboardPlan
    readonly approvedBy?: string | undefined
    readonly otherTarget?: boolean | undefined
    readonly signer?: AppliedPlan["signer"] | undefined
  } | undefined
}

interface PreparedStep {
  readonly input: StepInput
  readonly read: ReadSettings
  readonly rows: number
  /** The values the step's rows write that other rows of the same sheet name (dry run: "would be created"). */
  readonly produced: SelfReferences["produced"]
  readonly runDir: string
}

export interface PreparedOnboarding {
  readonly request: OnboardRequest
  readonly input: OnboardInput
  /** In dependency order: the sheets (files) with rows. */
  readonly steps: ReadonlyArray<PreparedStep>
  /** The sheets (files) with no rows, in dependency order: checked like the others, but not steps of the run. */
  readonly empty: ReadonlyArray<ResourceName>
  /** Absolute. */
  readonly runDir: string
}

export interface OnboardResult {
  readonly summary: OnboardSummary
  readonly exitCode: number
  readonly interrupted: boolean
}

/** Errors of a workbook's sheet name the sheet, not only the workbook. */
const inSheet = (step: StepInput) => (e: InputError): Effect.Effect<never, InputError> =>
  Effect.fail(
    step.sheet === undefined || e.file.includes(`sheet "${step.sheet}"`)
      ? e
      : new InputError({
        file: `${e.file}, sheet "${step.sheet}"`,
        detail: e.detail,
        ...(e.row !== undefined ? { row: e.row } : {}),
        ...(e.column !== undefined ? { column: e.column } : {}),
        ...(e.cause !== undefined ? { cause: e.cause } : {})
      })
  )

const parseOptionsOf = (request: OnboardRequest, input: OnboardInput, restoreGuard: boolean): ParseOptions => ({
  dateFormat: request.dateFormat,
  decimal: request.decimal,
  mode: "upsert",
  baseDir: input.baseDir,
  attachmentsRoot: request.attachmentsRoot,
  maxAttachmentBytes: request.maxAttachmentBytes ?? defaultMaxAttachmentBytes,
  restoreGuard
})

/** The profiles by the resource each is for; two for one resource, or one for no importable resource, are refused. */
const profilesByResource = Effect.fn("Onboard.profiles")(function*(maps: ReadonlyArray<ProfileRecord>) {
  const byResource = new Map<ResourceName, ProfileRecord>()
  const named = new Map<string, ResourceName>()
  for (const map of maps) {
    const name = map.profile.resource.trim().toLowerCase()
    if (!isResourceName(name) || resourceOf(name).kind === "readonly") {
      return yield* new InputError({
        file: map.file,
        column: "resource",
        detail: `"${map.profile.resource}" is not a resource an onboarding writes`
      })
    }
    const twin = byResource.get(name)
    if (twin !== undefined) {
      return yield* new InputError({
        file: map.file,
        detail: `${twin.file} is a profile for ${name} too: give one profile per resource`
      })
    }
    byResource.set(name, map)
    if (map.profile.sheet !== undefined) named.set(map.profile.sheet.trim().toLowerCase(), name)
  }
  return { byResource, named: named as NamedByProfiles }
})

/** Everything checked offline: the steps in order, each file readable with its columns and formats settled. */
const preflight = Effect.fn("Onboard.preflight")(
  function*(
    request: OnboardRequest,
    input: OnboardInput,
    step: StepInput,
    runDir: string,
    map: ProfileRecord | undefined
  ) {
    const r = resourceOf(step.resource)
    const read: ReadSettings = {
      ...request.read,
      ...(step.sheet !== undefined ? { sheet: step.sheet } : {}),
      ...(map !== undefined ? { map } : {})
    }
    const opened = yield* openInput(step.file, read, step.resource)
    const parse = parseOptionsOf(request, input, true)
    const columns = yield* planColumns(r, opened.file, opened.source.header, parse)
    yield* inferFormats(columns, opened.rows, parse)
    const self = yield* scanSelfReferences(r, opened.source)
    const stepDir = Path.join(runDir, step.resource)
    for (const name of request.resuming !== undefined ? [] : [journalFile, reportCsv, stepSummaryFile]) {
      if (fs.existsSync(Path.join(stepDir, name))) {
        return yield* new RunError({ message: `${stepDir} already holds a run (${name}): choose another --out` })
      }
    }
    return {
      input: step,
      read,
      rows: self.rows,
      produced: self.produced,
      runDir: stepDir
    } satisfies PreparedStep as PreparedStep
  }
)

export const prepareOnboarding = Effect.fn("Onboard.prepare")(function*(request: OnboardRequest) {
  const profiles = yield* profilesByResource(request.maps ?? [])
  const input = yield* readOnboardInput(request.input, profiles.named)
  for (const [name, map] of profiles.byResource) {
    if (!input.steps.some((s) => s.resource === name)) {
      return yield* new InputError({
        file: map.file,
        detail: `a profile for ${name}, but ${request.input} has no ${
          map.profile.sheet !== undefined ? `sheet or file "${map.profile.sheet}"` : `${name} sheet or file`
        }${map.profile.sheet === undefined ? " (name the customer's own in the profile's \"sheet\")" : ""}`
      })
    }
  }
  const ordered = yield* orderSteps(input, request.dependenciesOf)
  const runDir = Path.resolve(request.runDir)
  if (request.resuming === undefined && fs.existsSync(Path.join(runDir, summaryFile))) {
    return yield* new RunError({
      message: `${request.runDir} already holds an onboarding (${summaryFile}): choose another --out`
    })
  }
  const checked: Array<PreparedStep> = []
  for (const step of ordered) {
    checked.push(
      yield* preflight(request, input, step, runDir, profiles.byResource.get(step.resource)).pipe(
        Effect.catchTag("InputError", inSheet(step))
      )
    )
  }
  // A sheet left empty (a template workbook's unused sheets) is no step: nothing to send, nothing to report.
  const steps = checked.filter((s) => s.rows > 0)
  const empty = checked.filter((s) => s.rows === 0).map((s) => s.input.resource)
  if (steps.length === 0) {
    return yield* new InputError({
      file: input.path,
      detail: `no ${input.kind === "workbook" ? "sheet" : "file"} has rows to import (${empty.length} ${
        input.kind === "workbook" ? "sheet" : "file"
      }${empty.length === 1 ? "" : "s"} read, all empty): fill the ones you need, one row per record below the header`
    })
  }
  return { request, input, steps, empty, runDir } satisfies PreparedOnboarding as PreparedOnboarding
})

// --- running -----------------------------------------------------------------------------------------------------

/**
 * The rows of a finished step that later steps must know about, with the values they may be named by: rows that
 * did not end well (their children are skipped), and in a dry run the rows that would be written.
 */
const endedRows = Effect.fn("Onboard.endedRows")(function*(
  step: PreparedStep,
  outcomes: ReadonlyMap<number, Outcome>,
  dryRun: boolean,
  isParentProblem: (error: string | undefined) => boolean
) {
  const properties = [...(namedBy.get(resourceOf(step.input.resource).readVia ?? step.input.resource) ?? [])]
  const wanted = new Map<number, Outcome>()
  for (const [row, o] of outcomes) {
    const bad = !endedWell(o.status, dryRun) || (o.status === "skipped" && isParentProblem(o.error))
    if (bad || (dryRun && (o.status === "created" || o.recordId !== undefined))) wanted.set(row, o)
  }
  if (properties.length === 0 || wanted.size === 0) return [] as ReadonlyArray<EndedRow>
  const opened = yield* openInput(step.input.file, step.read, step.input.resource)
  const header = opened.source.header.map((h) => h.trim().toLowerCase())
  const indexes = properties.map((by) => [by, header.indexOf(by.toLowerCase())] as const).filter(([, i]) => i >= 0)
  const rows: Array<EndedRow> = []
  yield* Stream.runForEach(opened.rows, (row) =>
    Effect.sync(() => {
      const outcome = wanted.get(row.row)
      if (outcome === undefined) return
      const values = new Map<string, string>()
      for (const [by, i] of indexes) {
        const text = row.cells[i] ?? ""
        values.set(by, restore(text).trim())
      }
      rows.push({ row: row.row, outcome, values })
    }))
  return rows as ReadonlyArray<EndedRow>
})

const stepSummaryOf = (
  step: PreparedStep,
  result: Omit<RunResult, "summary"> & {
    readonly summary: RunCounts & Partial<Pick<RunResult["summary"], "formats" | "errors">>
  },
  skippedForParent: number,
  aborted: boolean
): StepSummary => ({
  resource: step.input.resource,
  source: step.input.file,
  ...(step.input.sheet !== undefined ? { sheet: step.input.sheet } : {}),
  ...(step.read.map !== undefined ? { mapping: { file: step.read.map.file, sha256: step.read.map.sha256 } } : {}),
  runDir: result.runDir,
  rows: result.summary.rows,
  counts: result.summary.counts,
  skippedForParent,
  requests: result.summary.requests,
  rateLimited: result.summary.rateLimited,
  retries: result.summary.retries,
  exitCode: result.exitCode,
  interrupted: result.interrupted,
  aborted,
  ...(result.summary.formats !== undefined ? { formats: result.summary.formats } : {}),
  ...(result.summary.errors !== undefined && result.summary.errors.length > 0
    ? { errors: result.summary.errors.slice(0, kindsShown) }
    : {})
})

/** The summary a step that failed as a whole left on disk (an aborted run writes it before it fails), if readable. */
const leftOnDisk = (step: PreparedStep) =>
  readJsonFile(Path.join(step.runDir, stepSummaryFile), RunCounts).pipe(
    Effect.map((summary) =>
      stepSummaryOf(step, { runDir: step.runDir, summary, exitCode: 3, interrupted: true }, 0, true)
    ),
    Effect.option
  )

/** The final outcome of every row a step's journal holds. */
const outcomesOf = (journal: JournalContents): Map<number, Outcome> => {
  const outcomes = new Map<number, Outcome>()
  for (const [row, state] of journal.rows) {
    if (state.last === "done" && state.outcome !== undefined) outcomes.set(row, state.outcome)
  }
  return outcomes
}

const skippedForParentOf = (
  outcomes: ReadonlyMap<number, Outcome>,
  isParentProblem: (error: string | undefined) => boolean
): number => [...outcomes.values()].filter((o) => o.status === "skipped" && isParentProblem(o.error)).length

/** The summary of a step an earlier session finished (none when it did not write one, or was interrupted). */
const finishedStep = (step: PreparedStep, skippedForParent: number): StepSummary | undefined => {
  try {
    const s = JSON.parse(fs.readFileSync(Path.join(step.runDir, stepSummaryFile), "utf8")) as RunResult["summary"]
    if (s.interrupted) return undefined
    return stepSummaryOf(
      step,
      { runDir: step.runDir, summary: s, exitCode: s.exitCode, interrupted: false },
      skippedForParent,
      false
    )
  } catch {
    return undefined
  }
}

/** A step the plan does not have: every row of it is "not in the plan" (the apply refuses such a plan first). */
const emptyStepPlan = (plan: LoadedOnboardPlan, resource: string) => {
  const any = plan.content.steps[0]!
  return { file: plan.file, sha256: plan.sha256, content: { ...any, resource, plan: [] }, rows: new Map() }
}

/** The onboarding's plan: its steps in the order they ran, each its import's plan. */
const writeOnboardPlan = (
  file: string,
  prepared: PreparedOnboarding,
  steps: ReadonlyArray<PlanFile>,
  sendWriteOnly: boolean
) =>
  Effect.gen(function*() {
    const counts: Record<string, number> = {}
    for (const step of steps) for (const [k, n] of Object.entries(step.counts)) counts[k] = (counts[k] ?? 0) + n
    const content: OnboardPlanFile = {
      format: "fsm-bulk-plan",
      version: 1,
      tool: "fsm-bulk",
      toolVersion: version,
      command: "onboard",
      created: yield* nowIso,
      input: prepared.input.path,
      target: steps[0]?.target ?? { baseUrl: "" },
      options: { sendWriteOnly },
      rows: steps.reduce((n, s) => n + s.rows, 0),
      counts,
      steps
    }
    const text = JSON.stringify(content, null, 1) + "\n"
    yield* writeFileAtomic(Path.resolve(file), text)
    // The sha256 `plan show` prints and the approver approves: the summary and report.html name it too.
    return { file: Path.resolve(file), sha256: createHash("sha256").update(text).digest("hex") }
  })

/**
 * What a step's import run works with beyond the onboarding's own journal (`Journals`) and stop (`RunStop`): the
 * onboarding's resolver (the steps learn each other's records) and the ids its earlier steps created, its lines
 * named by the step, the step's progress, the origin notes it says once for every step, and with `--dry-run --plan`
 * the step's plan gathered into the onboarding's one file.
 */
const stepServices = (step: {
  readonly resolver: RefResolver
  readonly createdBy: (resource: string, row: number) => string | number | undefined
  readonly say: (line: string) => Effect.Effect<void>
  readonly progress: Progress
  readonly keepPlan: ((content: PlanFile) => Effect.Effect<void>) | undefined
  readonly originNotes: Layer.Layer<OriginNotes>
}) =>
  Layer.mergeAll(
    References.shared(step.resolver),
    step.originNotes,
    EarlierSteps.created(step.createdBy),
    Notices.to(step.say),
    Layer.succeed(RunProgress, step.progress),
    step.keepPlan !== undefined ? PlanSink.handOver(step.keepPlan) : PlanSink.file
  )

/**
 * Runs the steps. Its lines go to `Notices` (each step's named by its resource), it stops between steps and
 * inside one when `RunStop` says, each step shows its own progress line (`StepProgress`), and `SummaryCopies` is
 * told of each summary written.
 */
export const runOnboarding = Effect.fn("Onboard.run")(
  function*(prepared: PreparedOnboarding) {
    const api = yield* Api
    const { say } = yield* Notices
    const stop = yield* RunStop
    const stepProgress = yield* StepProgress
    const copies = yield* SummaryCopies
    const { request } = prepared
    // A plan made against another server or account is refused before any step starts, as an import's plan is.
    if (request.applying !== undefined) {
      yield* ensurePlanTarget(request.applying.plan, api, request.applying.otherTarget === true)
    }
    const statsAtStart = yield* api.stats
    const started = yield* nowIso
    yield* Effect.try({
      try: () => fs.mkdirSync(prepared.runDir, { recursive: true }),
      catch: (cause) =>
        new RunError({
          message: `cannot create the run directory ${prepared.runDir}: ${
            cause instanceof Error ? cause.message : String(cause)
          }`,
          cause
        })
    })

    const shared = makeOnboardResolver(yield* serverResolver, request.dryRun)
    // Applying a plan: the id each row created, by the resource it wrote and its row (planned references name them).
    const created = new Map<string, string | number>()
    // "exported from another account" is said once for the onboarding, not once per step.
    const originNotes = yield* OriginNotes.shared
    const learnCreated = (resource: ResourceName, outcomes: ReadonlyMap<number, Outcome>) => {
      for (const [row, o] of outcomes) {
        if (o.status === "created" && o.recordId !== undefined) {
          created.set(`${recordsOf(resource)}\u0000${row}`, o.recordId)
        }
      }
    }
    // `--dry-run --plan`: each step's plan, written as one file when every step has run.
    const stepPlans: Array<PlanFile> = []
    let wrotePlan: OnboardSummary["wrotePlan"]
    const steps: Array<StepSummary> = []
    const total = prepared.steps.length

    const earlier = request.resuming?.earlier
    const summaryNow = (finished: string | null, interrupted: boolean, aborted: string | null = null) =>
      Effect.gen(function*() {
        const now = trafficSince(statsAtStart, yield* api.stats)
        const stats: RunTraffic = {
          requests: now.requests + (earlier?.requests ?? 0),
          rateLimited: now.rateLimited + (earlier?.rateLimited ?? 0),
          retries: now.retries + (earlier?.retries ?? 0)
        }
        const allWell = steps.length === total && steps.every((s) => s.exitCode === 0)
        const summary: OnboardSummary = {
          tool: "fsm-bulk",
          command: request.command,
          source: prepared.input.path,
          input: prepared.input.kind,
          mode: "upsert",
          runDir: prepared.runDir,
          started,
          finished,
          dryRun: request.dryRun,
          verify: request.verify,
          resources: prepared.steps.map((s) => s.input.resource),
          ...(prepared.empty.length > 0 ? { empty: prepared.empty } : {}),
          ...(prepared.input.readOnly.length > 0 ? { readOnly: prepared.input.readOnly } : {}),
          rows: steps.reduce((n, s) => n + s.rows, 0),
          counts: totalCounts(steps),
          ...(request.dryRun ? { planned: shownCounts(totalCounts(steps), true) } : {}),
          ...stats,
          exitCode: interrupted ? 3 : allWell ? 0 : 1,
          interrupted,
          aborted,
          steps,
          notRun: prepared.steps.slice(steps.length).map((s) => s.input.resource),
          version,
          baseUrl: api.baseUrl,
          ...(api.embedded === true ? { embedded: true } : {}),
          budget: api.budget,
          ...(request.applying !== undefined
            ? {
              plan: {
                file: request.applying.plan.file,
                sha256: request.applying.plan.sha256,
                ...(request.applying.approvedBy !== undefined ? { approvedBy: request.applying.approvedBy } : {}),
                target: request.applying.plan.content.target,
                ...(request.applying.signer !== undefined ? { signer: request.applying.signer } : {})
              }
            }
            : {}),
          ...(wrotePlan !== undefined ? { wrotePlan } : {}),
          settings: {
            read: {
              encoding: request.read.encoding,
              delimiter: request.read.delimiter,
              ...(request.read.includeHidden === true ? { includeHidden: true } : {})
            },
            dateFormat: request.dateFormat,
            decimal: request.decimal,
            ...(request.attachmentsRoot !== undefined ? { attachmentsRoot: request.attachmentsRoot } : {}),
            ...(request.maxAttachmentBytes !== undefined ? { maxAttachmentBytes: request.maxAttachmentBytes } : {}),
            answerWaitMs: request.answerWaitMs,
            answerPollMs: request.answerPollMs,
            ...(request.maps !== undefined && request.maps.length > 0 ? { maps: request.maps } : {})
          }
        }
        yield* writeOnboardSummary(summary)
        yield* copies.saved(summary)
        return summary
      })

    // Written before the first step, so an onboarding killed in it is one `resume` recognises and continues.
    yield* summaryNow(null, false)

    for (const [index, step] of prepared.steps.entries()) {
      if (yield* stop.isStopped) break
      const resource = step.input.resource
      yield* shared.beginStep(resource, step.produced)
      const journalPath = Path.join(step.runDir, journalFile)
      const prior = request.resuming !== undefined && fs.existsSync(journalPath)
        ? yield* readJournal(journalPath)
        : undefined
      // A step an earlier session finished is not run again: its outcomes tell the later steps which rows ended well.
      const earlierOutcomes = prior?.complete === true ? outcomesOf(prior) : undefined
      const finished = earlierOutcomes !== undefined
        ? finishedStep(step, skippedForParentOf(earlierOutcomes, shared.isParentProblem))
        : undefined
      if (earlierOutcomes !== undefined && finished !== undefined) {
        const outcomes = earlierOutcomes
        learnCreated(resource, outcomes)
        yield* shared.afterStep(resource, yield* endedRows(step, outcomes, request.dryRun, shared.isParentProblem))
        steps.push(finished)
        yield* say(stepLine(index, total, finished, request.dryRun))
        yield* summaryNow(null, false)
        continue
      }
      const job: ImportJob = {
        command: request.command,
        resource,
        file: step.input.file,
        read: step.read,
        dateFormat: request.dateFormat,
        decimal: request.decimal,
        mode: "upsert",
        dryRun: request.dryRun,
        verify: request.verify,
        runDir: step.runDir,
        baseDir: prepared.input.baseDir,
        attachmentsRoot: request.attachmentsRoot,
        maxAttachmentBytes: request.maxAttachmentBytes,
        verifyWaitMs: request.answerWaitMs,
        verifyPollMs: request.answerPollMs,
        onConflict: request.onConflict,
        sendWriteOnly: request.sendWriteOnly,
        // The onboarding writes one plan for its steps (`stepServices` gathers them) and says where.
        ...(request.planOut !== undefined && request.dryRun ? { planOut: request.planOut } : {}),
        ...(request.applying !== undefined
          ? {
            applying: {
              plan: request.applying.plan.steps.get(resource) ?? emptyStepPlan(request.applying.plan, resource),
              approvedBy: request.applying.approvedBy,
              otherTarget: request.applying.otherTarget,
              signer: request.applying.signer
            }
          }
          : {})
      }
      const ran = yield* Effect.either(
        Effect.scoped(
          Effect.gen(function*() {
            const progress = yield* stepProgress.step(`[${index + 1}/${total}] ${resource}`)
            return yield* (prior !== undefined
              ? continueRun({ ...job, command: "resume", sendWriteOnly: prior.header.sendWriteOnly }, prior)
              : runImport(job)).pipe(
                Effect.provide(stepServices({
                  resolver: shared.resolver,
                  createdBy: (r, row) => created.get(`${r}\u0000${row}`),
                  say: (line) => say(`${resource}: ${line}`),
                  progress,
                  originNotes,
                  keepPlan: request.planOut !== undefined && request.dryRun
                    ? (content) => Effect.sync(() => void stepPlans.push(content))
                    : undefined
                }))
              )
          })
        ).pipe(Effect.catchTag("InputError", inSheet(step.input)))
      )
      if (ran._tag === "Left") {
        // The run as a whole cannot go on (credentials rejected, disk): the summary says where it stopped.
        const left = yield* leftOnDisk(step)
        if (Option.isSome(left)) steps.push(left.value)
        yield* summaryNow(yield* nowIso, true, ran.left.message)
        return yield* Effect.fail(ran.left)
      }
      // The journal holds every row's final outcome, the rows skipped for their parent's sake included.
      const outcomes = outcomesOf(yield* readJournal(journalPath))
      learnCreated(resource, outcomes)
      yield* shared.afterStep(resource, yield* endedRows(step, outcomes, request.dryRun, shared.isParentProblem))
      const skippedForParent = skippedForParentOf(outcomes, shared.isParentProblem)
      const summary = stepSummaryOf(step, ran.right, skippedForParent, false)
      steps.push(summary)
      yield* say(stepLine(index, total, summary, request.dryRun))
      if (ran.right.interrupted) break
      yield* summaryNow(null, false)
    }

    const interrupted = steps.length < total || steps.some((s) => s.interrupted)
    if (request.planOut !== undefined && request.dryRun && !interrupted) {
      wrotePlan = yield* writeOnboardPlan(request.planOut, prepared, stepPlans, request.sendWriteOnly === true)
      yield* say(
        `plan: ${
          Path.resolve(request.planOut)
        } (review it with \`fsm-bulk plan show\`, send it with \`fsm-bulk apply\`)`
      )
    }
    const summary = yield* summaryNow(yield* nowIso, interrupted)
    return { summary, exitCode: summary.exitCode, interrupted } satisfies OnboardResult as OnboardResult
  }
)
