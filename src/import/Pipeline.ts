/**
 * The import pipeline: one file into one resource, as a reusable function (`runImport`) that the `import`,
 * `rerun` and `resume` commands and onboarding's steps all drive.
 *
 * 1. Open the source, plan its columns, settle the `auto` formats (or reuse a resumed run's).
 * 2. Scan, in the same read that settles the formats (it hashes a CSV too): validate every row once to count them
 *    and gather what must be looked up in batches: the values the rows refer to (other resources) and the
 *    keys/ids of the records they write (dry run, emulated upsert, update/delete by key, rows in flight when an
 *    earlier session stopped). Only keys are kept, never cells.
 * 3. Resolve references and look existing records up, with list calls only.
 * 4. Send, the second read: rows are validated in order, then up to `concurrency` of them are sent at once; each
 *    row's write is journaled before it is sent and after its answer. A slow row holds the others only once
 *    `reportWindow` rows behind it are done, since each row comes out with its outcome in source order and goes
 *    straight to the report writer (rows an earlier session finished, with their outcome). Rows that refer to
 *    records created by other rows of the same file wait for a later pass; such a run, and one that `--verify`s,
 *    keeps the outcomes and writes its reports from a third read.
 * 5. Reports (renamed into place only now) and summary.
 *
 * Per-row problems are outcomes; only failures of the whole run (credentials rejected, unreadable input, disk)
 * are errors. A stop request (signals) ends the sending, waits a bounded time for the rows in flight, then
 * writes the reports with the rows not reached as `skipped` and the unanswered ones as `in-doubt`.
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import { Api, type RunTraffic, trafficSince } from "../client/Api.js"
import { Notices } from "../console/Output.js"
import { formatDuration, RunProgress } from "../console/Progress.js"
import { UsageError } from "../Errors.js"
import { type ExportBase, findExportBase, readFingerprints } from "../export/Fingerprint.js"
import type { SourceRow } from "../files/Source.js"
import type { WriteError } from "../files/Write.js"
import { resource as resourceOf } from "../Resources.js"
import { shellQuote } from "../Shell.js"
import { RunStop } from "../Signals.js"
import { endedWell, type Outcome } from "../Status.js"
import { formatRate } from "../Units.js"
import type { Formats, RowResult } from "../validate/Validate.js"
import { formatErrors, makeValidator, settleFormats } from "../validate/Validate.js"
import { version } from "../Version.js"
import { confirmQueued, type Queued } from "./Confirm.js"
import { columnsSummary, openInput, planInput, withVerdicts } from "./Input.js"
import { type ImportError, type ImportJob, type RunResult, type Valid } from "./Job.js"
import {
  type AppliedPlan,
  type Header,
  type JournalContents,
  journalFile,
  type JournalWriter,
  type RecordImage,
  type StaleCheck
} from "./Journal.js"
import { lockWriters } from "./Locks.js"
import { recordId } from "./Lookup.js"
import { type ExportOrigin, foreignIds, foreignIdsMessage, foreignOrigin } from "./Origin.js"
import {
  changesOf,
  ensurePlanTarget,
  makePlanCollector,
  type PlanCollector,
  type PlanRef,
  planRefOf,
  type PlanRow,
  planVerdict,
  refsVerdict,
  stateOf,
  writeOf
} from "./Plan.js"
import { prepareRows, type SendInput } from "./Prepare.js"
import {
  openReports,
  type ReportTally,
  type ReportTarget,
  settledFormats,
  type Summary,
  writeReports
} from "./Report.js"
import { createRunDir, isoClock, lockRunDir, nowIso } from "./RunDir.js"
import { endSession, runTraffic, summaryOf } from "./RunEnd.js"
import { createdBy, makeRunState, scanNeeds, verifyingOf } from "./RunState.js"
import { nextReady, type ScanResult, scanRows } from "./Scan.js"
import { send, wouldBe } from "./Send.js"
import { EarlierSteps, type ImportServices, Journals, OriginNotes, PlanSink } from "./Services.js"
import { inSourceOrder } from "./Window.js"
import { type Action, intentOf, modeProblem, written } from "./WritePlan.js"

export type { ImportError, ImportJob, RunResult } from "./Job.js"

/** The hint printed and written for a run that stopped early. */
export const resumeHint = (runDir: string) => `continue it with \`fsm-bulk resume ${shellQuote(runDir)}\``

/** Starts a new run of `job`, with the services the caller provides (`Services.ts`). */
export const runImport = (job: ImportJob): Effect.Effect<RunResult, ImportError, Api | ImportServices> =>
  execute(job, undefined)

/** Continues the run whose journal is `prior` (see `Resume.ts`). */
export const continueRun = (
  job: ImportJob,
  prior: JournalContents
): Effect.Effect<RunResult, ImportError, Api | ImportServices> => execute(job, prior)

const execute = Effect.fn("Import.run")(function*(job: ImportJob, prior: JournalContents | undefined) {
  const api = yield* Api
  const { say } = yield* Notices
  const r = resourceOf(job.resource)
  const problem = modeProblem(r, job.mode)
  if (problem !== undefined) return yield* new UsageError({ message: problem })
  const statsAtStart = yield* api.stats

  // 1. Source, columns, formats.
  const input = yield* openInput(job.file, job.read, r.name, job.rowColumn)
  const { columns, parse } = yield* planInput(r, input, job, say)
  const validatorOf = (formats: Formats) => () => withVerdicts(makeValidator(columns, formats, parse), input)
  const state = makeRunState(prior, verifyingOf(job))

  // 2. The scan rides on the read that settles the formats (a resumed run reuses its formats): one read of the
  // source before anything is sent, keeping the rows' keys, never their cells.
  const { formats, scan } = yield* Effect.scoped(
    Effect.gen(function*() {
      const settled = prior !== undefined
        ? { formats: prior.header.formats as Formats, rows: input.rows }
        : yield* settleFormats(columns, input.rows, parse)
      const scan = yield* scanRows(
        settled.rows,
        validatorOf(settled.formats)(),
        scanNeeds(job, state, input.mapping?.alternateKeys)
      )
      return { formats: settled.formats, scan }
    })
  )
  // Asked after that read, which hashes a CSV as it reads it: no pass of its own then.
  const sha256 = yield* input.sha256
  if (prior !== undefined && prior.header.source.sha256 !== sha256) {
    return yield* new UsageError({
      message:
        `${input.file} changed since the run started, so its rows no longer match the journal; rerun the failed rows with \`fsm-bulk rerun\` or start a new import`
    })
  }
  // The input and how its cells were read, as the journal's header and a plan file both record them.
  const sourceInfo = {
    file: input.file,
    format: input.source.format,
    sha256,
    ...(input.source.sheet !== undefined ? { sheet: input.source.sheet } : {}),
    ...(input.source.encoding !== undefined ? { encoding: input.source.encoding } : {}),
    ...(input.source.delimiter !== undefined ? { delimiter: input.source.delimiter } : {})
  }
  const parseInfo = {
    dateFormat: job.dateFormat,
    decimal: job.decimal,
    baseDir: parse.baseDir,
    ...(parse.attachmentsRoot !== undefined ? { attachmentsRoot: parse.attachmentsRoot } : {}),
    maxAttachmentBytes: parse.maxAttachmentBytes
  }
  if (job.applying !== undefined) yield* planApplies(job.applying, input.file, sha256, api)
  const validator = validatorOf(formats)

  const exportBase = prior === undefined && job.origin === undefined ? yield* findExportBase(input.file) : undefined
  const origin: ExportOrigin | undefined = prior !== undefined
    ? prior.header.origin
    : job.origin ?? (exportBase !== undefined
      ? {
        manifest: exportBase.manifest,
        baseUrl: exportBase.baseUrl,
        ...(exportBase.account !== undefined ? { account: exportBase.account } : {})
      }
      : undefined)
  const foreign = foreignOrigin(origin, api)
  const stale = prior !== undefined
    ? prior.header.stale
    : yield* staleCheckOf(job, input.file, exportBase, foreign, say)
  // `--overwrite` sends the rows whatever the server holds: it needs no fingerprints (nor their file).
  const bases = stale !== undefined && stale.onConflict !== "overwrite"
    ? yield* readFingerprints(stale.fingerprints)
    : undefined

  const runDir = prior !== undefined ? Path.resolve(job.runDir) : yield* createRunDir(job.runDir)
  const started = prior?.header.started ?? (yield* nowIso)

  return yield* Effect.scoped(
    Effect.gen(function*() {
      yield* lockRunDir(runDir, job.command)
      // One writer per (server, account, resource) on this machine: a second import of the same rows would
      // create them again (the embedded sandbox lives in this process alone; a dry run writes nothing).
      if (!job.dryRun && api.embedded !== true && job.writerLock !== false) {
        yield* lockWriters({ baseUrl: api.baseUrl, account: api.account ?? "" }, [r.name], job.command, runDir, started)
      }
      const journal = yield* (yield* Journals).open(Path.join(runDir, journalFile))
      yield* startJournal(journal, { job, api, prior, say, formats, sourceInfo, parseInfo, started, stale, origin })

      // A row whose report line has no outcome: the outcome it journalled when it got that far (its `done` line was
      // handed to the journal before the grace ran out and interrupted it), else unfinished: left in doubt when its
      // write may have reached the server, else skipped.
      let unfinished = 0
      const missing = (row: number): Outcome => {
        const settled = state.settled.get(row)
        if (settled !== undefined) return settled
        unfinished += 1
        const aborted = state.aborted
        const why = aborted !== undefined ? `the run was aborted (${aborted.message})` : "the run stopped"
        if (state.left.has(row) || state.priorSending.has(row)) {
          return {
            status: "in-doubt",
            error: `${why} while this row was being sent; \`fsm-bulk resume ${
              shellQuote(runDir)
            }\` looks it up before sending it again`
          }
        }
        return state.inFlight.has(row)
          ? { status: "skipped", error: `not sent: ${why} while this row waited to be sent; ${resumeHint(runDir)}` }
          : { status: "skipped", error: `not attempted: ${why} before this row; ${resumeHint(runDir)}` }
      }
      const target: ReportTarget = {
        runDir,
        input,
        dryRun: job.dryRun,
        decimal: formats.decimal,
        resource: r.name,
        formats
      }
      const earlier = prior?.ends ?? []
      let session: RunTraffic = { requests: 0, rateLimited: 0, retries: 0 }
      // The summary is made once the last report line is written, so that report.xlsx shows it on its first sheet;
      // by then the run's abort and its unfinished rows are known.
      const summarize = (tally: ReportTally) =>
        Effect.gen(function*() {
          // A stop that came after the last row was sent interrupted nothing.
          const interrupted = state.aborted !== undefined || unfinished > 0
          const stats = trafficSince(statsAtStart, yield* api.stats)
          session = stats
          const common = yield* summaryOf(
            {
              command: prior?.header.command ?? job.command,
              resource: r.name,
              mode: job.mode,
              source: input.file,
              runDir,
              started,
              dryRun: job.dryRun,
              parent: job.parent ?? prior?.header.parent ?? null,
              interrupted,
              aborted: state.aborted?.message ?? null,
              baseUrl: api.baseUrl,
              budget: api.budget
            },
            tally,
            runTraffic(stats, earlier),
            (s) => endedWell(s, job.dryRun)
          )
          const applied = job.applying !== undefined ? appliedPlan(job.applying) : prior?.header.plan
          return {
            ...common,
            formats: settledFormats(input.source, formats),
            ...columnsSummary(input, columns),
            ...(applied !== undefined ? { plan: applied } : {})
          } satisfies Summary
        })
      const planSink = yield* PlanSink
      let planWritten: string | undefined
      const collector = job.planOut !== undefined && job.dryRun
        ? makePlanCollector((content) =>
          Effect.map(planSink.save(job.planOut!, content), (file) => void (planWritten = file))
        )
        : undefined
      const outcome = yield* Effect.either(
        sendRows(
          {
            job,
            resourceName: r.name,
            input,
            validator,
            journal,
            state,
            stale,
            bases,
            foreign: foreign !== undefined && origin !== undefined
              ? { why: foreign, manifest: origin.manifest }
              : undefined,
            collector
          },
          scan,
          target,
          missing,
          summarize
        )
      )
      if (Either.isLeft(outcome)) {
        if (outcome.left._tag !== "ApiAborted") return yield* Effect.fail(outcome.left)
        state.aborted ??= outcome.left
      }
      const aborted = state.aborted
      // Rows announced but never sent (they waited for a permit or the budget when the run stopped): the journal
      // says so, so that `resume` sends them like any other row instead of looking them up.
      for (const row of state.inFlight) {
        if (!state.left.has(row) && !state.priorSending.has(row)) {
          yield* journal.append({ state: "unsent", row, at: yield* nowIso })
        }
      }

      // 5. Reports (written by the sending when it could: see `sendRows`) with the summary, then the journal's end
      // line, then summary.json.
      const report = Either.isRight(outcome) && outcome.right !== undefined
        ? outcome.right
        : yield* writeReports({
          ...target,
          input,
          outcomeOf: (row) => state.late.get(row) ?? state.prior.get(row) ?? missing(row)
        }, summarize)
      if (collector !== undefined && Either.isRight(outcome)) {
        yield* writePlanOut(collector, () => planWritten, { job, api, say, formats, sourceInfo, parseInfo })
      }
      return (yield* endSession(journal, report, session, aborted)) satisfies RunResult
    })
  )
})

/** What the run's journal and summary say of the plan it applies. */
/** The journal's first line: the header of a new run, or the line that says a stopped run goes on. */
const startJournal = Effect.fn("Import.startJournal")(function*(
  journal: JournalWriter,
  run: {
    readonly job: ImportJob
    readonly api: Api["Type"]
    readonly prior: JournalContents | undefined
    readonly say: (line: string) => Effect.Effect<void>
    readonly formats: Formats
    readonly sourceInfo: Header["source"]
    readonly parseInfo: Header["parse"]
    readonly started: string
    readonly stale: Header["stale"]
    readonly origin: Header["origin"]
  }
) {
  const { api, formats, job, origin, parseInfo, prior, say, sourceInfo, stale, started } = run
  if (prior === undefined) {
    const header: Header = {
      state: "header",
      version: 1,
      tool: "fsm-bulk",
      command: job.command,
      resource: job.resource,
      mode: job.mode,
      dryRun: job.dryRun,
      verify: job.verify,
      ...(job.verifyWaitMs !== undefined ? { verifyWaitMs: job.verifyWaitMs } : {}),
      ...(job.sendWriteOnly === true ? { sendWriteOnly: true } : {}),
      baseUrl: api.baseUrl,
      ...(api.embedded === true ? { embedded: true } : {}),
      rate: formatRate(api.budget),
      ...(job.clientConcurrency !== undefined ? { concurrency: job.clientConcurrency } : {}),
      source: { ...sourceInfo, ...(job.rowColumn !== undefined ? { rowColumn: job.rowColumn } : {}) },
      read: job.read,
      parse: parseInfo,
      formats,
      started,
      ...(job.parent !== undefined ? { parent: job.parent } : {}),
      ...(stale !== undefined ? { stale } : {}),
      ...(origin !== undefined ? { origin } : {}),
      ...(job.applying !== undefined ? { plan: appliedPlan(job.applying) } : {})
    }
    yield* journal.append(header)
  } else {
    if (prior.header.baseUrl !== api.baseUrl) {
      yield* say(`warning: this run was sent to ${prior.header.baseUrl}; it now continues against ${api.baseUrl}`)
    }
    yield* journal.append({ state: "resumed", command: job.command, at: yield* nowIso, rate: formatRate(api.budget) })
  }
})

/** `--dry-run --plan FILE` (or an onboarding's step): the plan, with what the rows were checked against, and the line that says where. */
const writePlanOut = Effect.fn("Import.writePlanOut")(function*(
  collector: PlanCollector,
  written: () => string | undefined,
  run: {
    readonly job: ImportJob
    readonly api: Api["Type"]
    readonly say: (line: string) => Effect.Effect<void>
    readonly formats: Formats
    readonly sourceInfo: Header["source"]
    readonly parseInfo: Header["parse"]
  }
) {
  const { api, formats, job, parseInfo, say, sourceInfo } = run
  yield* collector.write({
    toolVersion: version,
    command: job.command,
    created: yield* nowIso,
    resource: job.resource,
    mode: job.mode,
    options: { sendWriteOnly: job.sendWriteOnly === true },
    source: sourceInfo,
    read: job.read,
    parse: parseInfo,
    formats,
    target: {
      baseUrl: api.baseUrl,
      ...(api.account !== undefined ? { account: api.account } : {}),
      ...(api.embedded === true ? { embedded: true } : {})
    }
  })
  // An onboarding's step hands its plan to the onboarding (`PlanSink`), which writes one file and says where.
  const planOut = written()
  if (planOut !== undefined) {
    yield* say(
      `plan: ${Path.resolve(planOut)} (review it with \`fsm-bulk plan show\`, send it with \`fsm-bulk apply\`)`
    )
  }
})

const appliedPlan = (a: NonNullable<ImportJob["applying"]>): AppliedPlan => ({
  file: a.plan.file,
  sha256: a.plan.sha256,
  ...(a.approvedBy !== undefined ? { approvedBy: a.approvedBy } : {}),
  target: a.plan.content.target,
  ...(a.signer !== undefined ? { signer: a.signer } : {})
})

/**
 * A plan is applied only to the input it was made from (its sha256) and against the server and account it read
 * (unless `--force-base-url`: a plan rehearsed on a copy); nothing is sent otherwise.
 */
const planApplies = Effect.fn("Import.planApplies")(function*(
  a: NonNullable<ImportJob["applying"]>,
  file: string,
  sha256: string,
  api: Effect.Effect.Success<typeof Api>
) {
  const plan = a.plan.content
  if (plan.source.sha256 !== sha256) {
    return yield* new UsageError({
      message: `${file} changed since the plan ${a.plan.file} was made (sha256 ${sha256.slice(0, 12)}…, the plan read ${
        plan.source.sha256.slice(0, 12)
      }…): nothing was sent; make a new plan from the file as it is now`
    })
  }
  yield* ensurePlanTarget(a.plan, api, a.otherTarget === true)
})

/**
 * The stale-edit check of a new run: update and upsert of a file an export wrote (or the rows of a rerun of one)
 * against the same service, with the export's fingerprints.
 */
const staleCheckOf = Effect.fn("Import.staleCheck")(function*(
  job: ImportJob,
  file: string,
  base: ExportBase | undefined,
  foreign: string | undefined,
  say: (line: string) => Effect.Effect<void>
) {
  if (job.mode !== "update" && job.mode !== "upsert") return undefined
  const onConflict = job.onConflict ?? "stop"
  if (job.fingerprints !== undefined) return { fingerprints: job.fingerprints, onConflict } satisfies StaleCheck
  if (base?.fingerprints === undefined) return undefined
  if (foreign !== undefined) {
    const notes = yield* OriginNotes
    if (!notes.shared) {
      yield* say(
        `note: ${file} was ${foreign}: its rows are not checked for edits made on the server since the export, and its ids are not used`
      )
    } else if (yield* notes.first(foreign)) {
      yield* say(
        `note: the files were ${foreign}: their rows are not checked for edits made on the server since the export, and their ids are not used`
      )
    }
    return undefined
  }
  return { fingerprints: base.fingerprints, onConflict } satisfies StaleCheck
})

// --- scanning, lookups and sending ---------------------------------------------------------------------------

/** Rows whose outcomes may wait, in source order, for the report while an earlier row is still being sent. */
const reportWindow = (concurrency: number) => Math.max(1024, concurrency * 32)

const withWarnings = (o: Outcome, warnings: ReadonlyArray<string>): Outcome =>
  warnings.length === 0
    ? o
    : { ...o, error: [o.error, ...warnings.map((w) => `warning: ${w}`)].filter((x) => x !== undefined).join("; ") }

/** Says which create-only fields of the row an update left out (unless the row failed for another reason). */
const withheldNote = (o: Outcome, withheld: ReadonlyArray<string>): Outcome =>
  withheld.length === 0 || (o.status !== "updated" && o.status !== "unchanged")
    ? o
    : {
      ...o,
      error: [
        o.error,
        `${withheld.join(", ")} not sent: the record exists, and ${
          withheld.length > 1 ? "these are" : "it is"
        } set when a record is created (--send-write-only sends ${withheld.length > 1 ? "them" : "it"} on updates)`
      ].filter((x) => x !== undefined).join("; ")
    }

/** A row's planned write once settled: its outcome, the body sent (journaled with it) and the record after. */
interface Written {
  readonly outcome: Outcome
  readonly body: unknown
  readonly after: RecordImage | undefined
}

/**
 * A row's `done` journal line, built by plain code in `sendRows`' `finish` (its bookkeeping runs when the effect
 * starts, not when it is built: a row raced against a stop may never start).
 */
const doneLine = (row: number, outcome: Outcome, sent: unknown, after: RecordImage | undefined, at: string) => ({
  state: "done" as const,
  row,
  ...outcome,
  ...(sent !== undefined ? { sent } : {}),
  ...(after !== undefined ? { after } : {}),
  at
})

/** A row's `sending` journal line, appended before its write leaves. */
const sendingLine = (
  v: Valid,
  intent: NonNullable<ReturnType<typeof intentOf>>,
  before: RecordImage | undefined,
  absent: boolean,
  at: string
) => ({
  state: "sending" as const,
  row: v.row,
  ...(v.key !== undefined ? { key: v.key } : {}),
  ...(v.id !== undefined ? { id: v.id } : {}),
  intent,
  ...(before !== undefined ? { before } : {}),
  ...(absent ? { absent } : {}),
  at
})

/**
 * Steps 3 and 4: prepares the rows, then sends them, each row's outcome journaled. When every row is settled in
 * one pass (no row waits for another row of the file, no `--verify`), the outcomes travel with the stream that
 * sends the rows, in source order, to the report writer, and the reports' counts are returned; otherwise they are
 * kept in `state.late` for reports written at the end (undefined is returned).
 */
const sendRows = Effect.fn("Import.sendRows")(function*(
  s: SendInput,
  scan: ScanResult,
  target: ReportTarget,
  missing: (row: number) => Outcome,
  summarize: (tally: ReportTally) => Effect.Effect<Summary>
) {
  const { job, input, journal, state } = s
  const { say } = yield* Notices
  const progress = yield* RunProgress
  const { stopped } = yield* RunStop
  const earlierSteps = yield* EarlierSteps
  const r = resourceOf(s.resourceName)
  const concurrency = job.concurrency ?? 32

  // --verify: rows the API only queued, with what was sent, to be confirmed once the sending is over.
  const verifying = verifyingOf(job)
  const queued: Array<Queued> = []
  const { queuedBefore } = state

  const { alternateCheck, itemsOf, planRow, resolver, total, waiting } = yield* prepareRows(s, scan)
  yield* progress.begin(total, state.priorDone.size)

  // 4. Sending, with a stop request turned into a bounded wait for the rows in flight.
  const abandon = yield* Deferred.make<void>()
  /** Completed on a stop: rows whose write has not left yet give up at once (only rows sent get the grace). */
  const stopping = yield* Deferred.make<void>()
  if (stopped !== undefined) {
    yield* Effect.forkScoped(
      Effect.gen(function*() {
        yield* stopped
        state.stopped = true
        yield* Deferred.succeed(stopping, undefined)
        yield* Effect.sleep(job.graceMs ?? 10_000)
        yield* Deferred.succeed(abandon, undefined)
      })
    )
  }

  /** The plan's entry of each row being planned, until its outcome is known (`--dry-run --plan`). */
  const planning = new Map<number, Omit<PlanRow, "row" | "status">>()

  const now = isoClock(yield* Effect.clock)
  const finish = (
    row: number,
    outcome: Outcome,
    sent?: unknown,
    after?: RecordImage
  ): Effect.Effect<Outcome, WriteError> =>
    Effect.suspend(() => {
      if (s.collector !== undefined) {
        s.collector.add({
          row,
          status: outcome.status,
          ...(outcome.recordId !== undefined ? { recordId: outcome.recordId } : {}),
          ...(outcome.error !== undefined ? { error: outcome.error } : {}),
          ...planning.get(row)
        })
        planning.delete(row)
      }
      state.inFlight.delete(row)
      // From here the row has its outcome, whatever interrupts it: a stop's grace can run out while its `done` line
      // is on its way to the disk (the line still lands), and the report must then say what the journal says.
      state.settled.set(row, outcome)
      return Effect.as(
        Effect.zipRight(journal.append(doneLine(row, outcome, sent, after, now())), progress.row),
        outcome
      )
    })

  /**
   * The planned action's outcome: what it would be (dry run), its settled outcome, or its write sent (journalled
   * `sending` first); undefined when the run aborted before the write left.
   */
  const write = (
    v: Valid,
    action: Action,
    lookedUp: {
      readonly absent: boolean
      readonly before: RecordImage | undefined
      readonly found: RecordImage | undefined
    }
  ) => {
    const { absent, before, found } = lookedUp
    if (job.dryRun) return Effect.succeed({ outcome: wouldBe(r, action), body: undefined, after: undefined })
    if (action._tag === "Settle") {
      const outcome = action.outcome
      const after = outcome.status === "created" || outcome.status === "updated" ? found : undefined
      return Effect.succeed({ outcome, body: undefined, after })
    }
    return Effect.suspend(() => {
      const sending = journal.append(sendingLine(v, intentOf(action)!, before, absent, now()))
      const sent = Effect.suspend(() => {
        state.inFlight.add(v.row)
        return Effect.either(send(r, action, { absent, onSent: () => state.left.add(v.row) }))
      })
      return Effect.flatMap(Effect.zipRight(sending, sent), (sent) => {
        if (Either.isRight(sent)) {
          return Effect.succeed<Written>({
            outcome: createdBy(sent.right.outcome, state.priorSending.get(v.row)),
            body: written(r, action),
            after: sent.right.after
          })
        }
        // The run is aborted (credentials rejected …): this write never reached the server. The rows in flight
        // finish; no new row starts.
        state.inFlight.delete(v.row)
        state.aborted ??= sent.left
        state.stopped = true
        return Effect.as(journal.append({ state: "unsent", row: v.row, at: now() }), undefined)
      })
    })
  }

  /** The row's outcome, or undefined when its write was not sent because the run aborted. */
  const processValid = (v: Valid) =>
    Effect.gen(function*() {
      if (s.foreign !== undefined) {
        const ids = foreignIds(r, v, job.mode !== "create")
        if (ids.length > 0) {
          return yield* finish(v.row, {
            status: "invalid",
            error: foreignIdsMessage(r, s.foreign.why, s.foreign.manifest, ids)
          })
        }
      }
      const alternate = queuedBefore(v.row) ? { warnings: [] } : alternateCheck(v)
      if (alternate.invalid !== undefined) {
        return yield* finish(v.row, withWarnings({ status: "invalid", error: alternate.invalid }, v.warnings))
      }
      if (alternate.failed !== undefined) {
        return yield* finish(v.row, withWarnings({ status: "failed", error: alternate.failed }, v.warnings))
      }
      if (alternate.warnings.length > 0) v = { ...v, warnings: [...v.warnings, ...alternate.warnings] }
      const payload: Record<string, unknown> = { ...v.payload }
      const refsNow: Array<PlanRef> = []
      for (const ref of v.refs) {
        const resolved = yield* resolver.resolve(ref)
        if (Either.isLeft(resolved)) {
          if (queuedBefore(v.row)) return state.prior.get(v.row)
          // `failed` (the cell names nothing usable) or `skipped` (its parent row did not end well): final either way.
          return yield* finish(
            v.row,
            withWarnings({ status: resolved.left.status, error: resolved.left.error }, v.warnings)
          )
        }
        payload[ref.field] = resolved.right
        if (s.collector !== undefined || job.applying !== undefined) refsNow.push(planRefOf(ref.field, resolved.right))
      }
      if (queuedBefore(v.row)) {
        // Sent by an earlier session: only its confirmation is left.
        const outcome = state.prior.get(v.row)!
        queued.push({ row: v.row, payload, outcome })
        return outcome
      }
      const { absent, action, before, existing, found, withheld } = planRow(v, payload, yield* itemsOf(payload))
      if (job.applying !== undefined) {
        const planned = job.applying.plan.rows.get(v.row)
        // A row of the same sheet is one this run has settled already (the rows naming it are sent after it).
        const createdBy = (resource: string, row: number) => {
          if (resource !== (r.readVia ?? r.name)) return earlierSteps.createdBy(resource, row)
          const o = state.settled.get(row) ?? state.prior.get(row)
          return o?.status === "created" ? o.recordId : undefined
        }
        const why = planVerdict(r, v.row, planned, action, existing) ??
          (intentOf(action) !== undefined ? refsVerdict(planned, refsNow, createdBy) : undefined)
        if (why !== undefined) {
          const id = before !== undefined ? recordId(r, before) : undefined
          return yield* finish(v.row, { status: "conflict", ...(id !== undefined ? { recordId: id } : {}), error: why })
        }
      }
      if (s.collector !== undefined) {
        const intent = intentOf(action)
        const changes = changesOf(r, action)
        const write = writeOf(r, action)
        planning.set(v.row, {
          ...(intent !== undefined ? { intent } : {}),
          ...(v.key !== undefined ? { key: v.key } : {}),
          ...(v.id !== undefined ? { id: v.id } : {}),
          state: stateOf(r, existing),
          ...(changes !== undefined ? { changes } : {}),
          ...(write !== undefined ? { write } : {}),
          ...(refsNow.length > 0 ? { refs: refsNow } : {})
        })
      }
      const settled = yield* write(v, action, { absent, before, found })
      if (settled === undefined) return undefined
      const { after, body, outcome } = settled
      const final = yield* finish(v.row, withheldNote(withWarnings(outcome, v.warnings), withheld), body, after)
      if (verifying && outcome.status === "queued") queued.push({ row: v.row, payload, outcome })
      if (
        !job.dryRun && outcome.recordId !== undefined &&
        (outcome.status === "created" || outcome.status === "updated" || outcome.status === "unchanged")
      ) {
        yield* resolver.learn(r.name, payload, outcome.recordId)
      }
      return final
    })

  const processRow = (result: RowResult) =>
    result._tag === "Invalid"
      ? finish(result.row, { status: "invalid", error: formatErrors(result.errors) })
      : result._tag === "Skipped"
      ? finish(result.row, { status: "skipped", error: result.reason })
      : processValid(result)

  /**
   * After a stop, a row whose write has left (or that an earlier session left in flight) waits up to the grace for
   * its answer; a row still waiting for its permit or budget is given up at once, never sent (it is `skipped`, and
   * journaled `unsent`; whether it left is read from `state.left` afterwards, so a row that left meanwhile is in
   * doubt, not skipped).
   */
  const giveUp = (row: number) =>
    Effect.zipRight(
      Deferred.await(stopping),
      Effect.suspend(() => (state.left.has(row) ? Deferred.await(abandon) : Effect.void))
    )

  const attempt = (result: RowResult) =>
    Effect.suspend(() =>
      state.stopped
        ? Effect.succeed(undefined)
        : stopped === undefined
        ? processRow(result)
        : Effect.raceFirst(processRow(result), Effect.as(giveUp(result.row), undefined))
    )

  /**
   * One read of the source: every row validated in order (the validator compares rows with the earlier ones), the
   * `selected` ones sent concurrently, and each row with its outcome given back in source order — rows an earlier
   * session finished with their outcome, rows the run did not reach (stopped) `skipped` or `in-doubt`.
   */
  const pass = (selected: (row: number) => boolean) => {
    const validatePass = s.validator()
    type Line = readonly [SourceRow, Outcome]
    const validated = Stream.mapEffect(input.rows, (row) =>
      state.stopped
        ? Effect.succeed({ row, result: undefined as RowResult | undefined })
        : Effect.map(validatePass.validate(row), (result): { row: SourceRow; result: RowResult | undefined } => ({
          row,
          result
        })))
    const line = ({ result, row }: { row: SourceRow; result: RowResult | undefined }) => {
      const n = row.row
      if (!selected(n)) return Effect.succeed(undefined)
      if (state.priorDone.has(n) && !queuedBefore(n)) return Effect.succeed<Line>([row, state.prior.get(n)!])
      // Not reached, or not finished: a row `--verify` was to confirm keeps its earlier outcome.
      const unfinished = () => state.prior.get(n) ?? missing(n)
      if (result === undefined) return Effect.succeed<Line>([row, unfinished()])
      return Effect.map(attempt(result), (outcome): Line => {
        const final = outcome ?? unfinished()
        // Kept only until the row's line is out: memory does not grow with the file.
        state.settled.delete(n)
        return [row, final]
      })
    }
    return inSourceOrder(validated, line, { concurrency, window: reportWindow(concurrency) })
  }

  if (waiting.size === 0 && !verifying) {
    // Settled in one pass: its lines are the report.
    const writer = yield* openReports(target)
    yield* Stream.runForEachChunk(pass(() => true), (chunk) => writer.writeAll(Chunk.toReadonlyArray(chunk)))
    yield* progress.end
    return yield* writer.close(summarize)
  }

  const keep = <E, R>(lines: Stream.Stream<readonly [SourceRow, Outcome], E, R>) =>
    Stream.runForEach(lines, ([row, outcome]) => Effect.sync(() => void state.late.set(row.row, outcome)))
  yield* keep(pass((row) => !waiting.has(row)))
  // Later passes: rows whose own-file references are now created, until none is left (a cycle goes last).
  while (waiting.size > 0 && !state.stopped) {
    const ready = nextReady(waiting)
    yield* keep(pass((row) => ready.has(row)))
    for (const row of ready) waiting.delete(row)
  }
  yield* progress.end

  if (queued.length > 0 && !state.stopped) {
    const waitMs = job.verifyWaitMs ?? 6 * 60_000
    yield* say(
      `verify: waiting up to ${formatDuration(waitMs)} for ${queued.length} queued row${
        queued.length > 1 ? "s" : ""
      } to show on the server`
    )
    const confirmed = yield* confirmQueued(r, queued, { waitMs, pollMs: job.verifyPollMs ?? 10_000, stop: stopped })
    for (const [row, outcome] of confirmed) {
      state.late.set(row, outcome)
      yield* journal.append({ state: "done", row, ...outcome, at: yield* nowIso })
    }
  }
  return undefined
})
