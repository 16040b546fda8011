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
import type { Scope } from "effect"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import { Api, type ApiAborted, type ListFailed, type RunTraffic, trafficSince } from "../client/Api.js"
import type { Progress } from "../console/Progress.js"
import { formatDuration } from "../console/Progress.js"
import type { InputError, RunError } from "../Errors.js"
import { UsageError } from "../Errors.js"
import {
  type ExportBase,
  findExportBase,
  type Fingerprint,
  fingerprintKey,
  readFingerprints
} from "../export/Fingerprint.js"
import type { SourceRow } from "../files/Source.js"
import type { WriteError } from "../files/Write.js"
import { keyProperty, keyText, normalKey, recordKey } from "../Identity.js"
import { refKey, resource as resourceOf, type ResourceName } from "../Resources.js"
import { shellQuote } from "../Shell.js"
import { endedWell, type Outcome } from "../Status.js"
import { formatRate } from "../Units.js"
import type { Formats, RowResult } from "../validate/Validate.js"
import { formatErrors, makeValidator, settleFormats } from "../validate/Validate.js"
import { version } from "../Version.js"
import { confirmable, confirmQueued, type Queued } from "./Confirm.js"
import { columnsSummary, type Input, openInput, planInput, type RowSettings, withVerdicts } from "./Input.js"
import {
  type AppliedPlan,
  type Header,
  type JournalContents,
  journalFile,
  type JournalWriter,
  type Mode,
  type OnConflict,
  openJournal,
  type ParentRun,
  type ReadSettings,
  type RecordImage,
  type Sending,
  type StaleCheck
} from "./Journal.js"
import { lockWriters } from "./Locks.js"
import { findRecords, type Found, listedAs, recordId } from "./Lookup.js"
import { type ExportOrigin, foreignIds, foreignIdsMessage, foreignOrigin } from "./Origin.js"
import {
  changesOf,
  type LoadedPlan,
  makePlanCollector,
  type PlanCollector,
  type PlanRow,
  planVerdict,
  stateOf,
  writeOf
} from "./Plan.js"
import { type RefResolver, serverResolver } from "./Refs.js"
import {
  openReports,
  type ReportTally,
  type ReportTarget,
  settledFormats,
  type Summary,
  writeReports
} from "./Report.js"
import { createRunDir, lockRunDir, nowIso } from "./RunDir.js"
import { endSession, runTraffic, summaryOf } from "./RunEnd.js"
import { nextReady, type ScanNeeds, type ScanResult, scanRows, waitingRows } from "./Scan.js"
import { send, wouldBe } from "./Send.js"
import {
  absentBefore,
  beforeImage,
  createOnlyGiven,
  type Existing,
  intentOf,
  isPathWrite,
  isUpdate,
  modeProblem,
  plan,
  written
} from "./WritePlan.js"

export interface ImportJob extends RowSettings {
  /** `import`, `rerun`, `resume`, `onboard` …: recorded in the journal and the summary. */
  readonly command: string
  readonly resource: ResourceName
  readonly file: string
  readonly read: ReadSettings
  readonly mode: Mode
  readonly dryRun: boolean
  readonly verify: boolean
  /** Created for a new run (refused if it already holds one). */
  readonly runDir: string
  /** Rows are numbered by this column of the source (`_row`: a rerun keeps the original row numbers). */
  readonly rowColumn?: string | undefined
  readonly parent?: ParentRun | undefined
  /** Default: `serverResolver` (list calls, cached for the run). */
  readonly resolver?: RefResolver | undefined
  /** Completes when the run should stop sending (signals). */
  readonly stop?: Effect.Effect<void> | undefined
  /** After a stop, how long rows in flight may take to finish before they are left in doubt (default 10 s). */
  readonly graceMs?: number | undefined
  /** Rows in progress at once (default 32); the client bounds requests in flight and the budget itself. */
  readonly concurrency?: number | undefined
  /** `--concurrency` (the client's requests in flight) when given: recorded so that `resume` keeps it. */
  readonly clientConcurrency?: number | undefined
  readonly progress?: Progress | undefined
  /** With `verify`: how long queued rows are waited for (default 6 min: the spec's "within up to 5 minutes"). */
  readonly verifyWaitMs?: number | undefined
  /** With `verify`: between two reads of the records that should show the queued rows (default 10 s). */
  readonly verifyPollMs?: number | undefined
  /** Human messages (warnings); default: ignored. */
  readonly say?: ((line: string) => Effect.Effect<void>) | undefined
  /**
   * The export fingerprints the rows are checked against (update, upsert); default: those of the export that
   * wrote `file`, when it is one (a rerun passes its parent's).
   */
  readonly fingerprints?: string | undefined
  /**
   * The export the rows came from (default: the export that wrote `file`, when it is one; a rerun passes its
   * parent's): its ids are not used against another server or account (`Origin.ts`).
   */
  readonly origin?: ExportOrigin | undefined
  /** `--merge` / `--overwrite`: what a record changed on the server since the export gets (default `stop`). */
  readonly onConflict?: OnConflict | undefined
  /**
   * Opens the run's journal (default `openJournal`): a fleet worker also records each line in its shared store,
   * only while it holds the job's lease, so an append fails (and the run stops sending) once the lease is lost.
   */
  readonly journal?: ((path: string) => Effect.Effect<JournalWriter, WriteError, Scope.Scope>) | undefined
  /**
   * Whether the run holds the writer lock of its (server, account, resource) (default true, Locks.ts): a fleet
   * worker does not, its leases keep the chunks of a job apart and they run at once by design.
   */
  readonly writerLock?: boolean | undefined
  /**
   * `--send-write-only`: an update sends create-only fields (Resources.ts: passwords) too. Without it they are
   * sent when a record is created only, and the report says a row's value was not sent.
   */
  readonly sendWriteOnly?: boolean | undefined
  /** `--dry-run --plan PLAN`: the plan file the dry run writes (Plan.ts). */
  readonly planOut?: string | undefined
  /**
   * `fsm-bulk apply PLAN`: the plan the run applies. A row is sent only when it is in the plan, the record reads as
   * the plan read it and the write is the planned one; otherwise it is `conflict`, not sent.
   */
  readonly applying?: {
    readonly plan: LoadedPlan
    readonly approvedBy?: string | undefined
    /** `--force-base-url`: the plan was made against another server or account (a rehearsal on a copy). */
    readonly otherTarget?: boolean | undefined
  } | undefined
}

export interface RunResult {
  readonly runDir: string
  readonly summary: Summary
  /** 0 every row ended well, 1 some did not, 3 the run stopped before every row was sent. */
  readonly exitCode: number
  readonly interrupted: boolean
}

export type ImportError = ApiAborted | InputError | RunError | WriteError | UsageError

type Valid = Extract<RowResult, { _tag: "Valid" }>

/** The hint printed and written for a run that stopped early. */
export const resumeHint = (runDir: string) => `continue it with \`fsm-bulk resume ${shellQuote(runDir)}\``

/** Starts a new run of `job`. */
export const runImport = (job: ImportJob): Effect.Effect<RunResult, ImportError, Api> => execute(job, undefined)

/** Continues the run whose journal is `prior` (see `Resume.ts`). */
export const continueRun = (job: ImportJob, prior: JournalContents): Effect.Effect<RunResult, ImportError, Api> =>
  execute(job, prior)

const execute = Effect.fn("Import.run")(function*(job: ImportJob, prior: JournalContents | undefined) {
  const api = yield* Api
  const say = job.say ?? (() => Effect.void)
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
      const journal = yield* (job.journal ?? openJournal)(Path.join(runDir, journalFile))
      if (prior === undefined) {
        const header: Header = {
          state: "header",
          version: 1,
          tool: "fsm-bulk",
          command: job.command,
          resource: r.name,
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
        yield* journal.append({
          state: "resumed",
          command: job.command,
          at: yield* nowIso,
          rate: formatRate(api.budget)
        })
      }

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
      const collector = job.planOut !== undefined && job.dryRun ? makePlanCollector(job.planOut) : undefined
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
      if (collector !== undefined && job.planOut !== undefined && Either.isRight(outcome)) {
        yield* collector.write({
          toolVersion: version,
          command: job.command,
          created: yield* nowIso,
          resource: r.name,
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
        yield* say(
          `plan: ${Path.resolve(job.planOut)} (review it with \`fsm-bulk plan show\`, send it with \`fsm-bulk apply\`)`
        )
      }
      return (yield* endSession(journal, report, session, aborted)) satisfies RunResult
    })
  )
})

/** What the run's journal and summary say of the plan it applies. */
const appliedPlan = (a: NonNullable<ImportJob["applying"]>): AppliedPlan => ({
  file: a.plan.file,
  sha256: a.plan.sha256,
  ...(a.approvedBy !== undefined ? { approvedBy: a.approvedBy } : {}),
  target: a.plan.content.target
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
  if (a.otherTarget === true) return
  const sameServer = plan.target.baseUrl === api.baseUrl
  const sameAccount = plan.target.account === undefined || plan.target.account === api.account
  if (!sameServer || !sameAccount) {
    return yield* new UsageError({
      message: `the plan ${a.plan.file} was made against ${
        !sameServer ? plan.target.baseUrl : `another account of ${plan.target.baseUrl}`
      }, not ${api.baseUrl}${
        !sameServer ? "" : " with these credentials"
      }: nothing was sent. Apply it where it was made, or pass --force-base-url to apply a plan rehearsed on a copy (each row is still sent only if the record here reads as the plan read it)`
    })
  }
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
    yield* say(
      `note: ${file} was ${foreign}: its rows are not checked for edits made on the server since the export, and its ids are not used`
    )
    return undefined
  }
  return { fingerprints: base.fingerprints, onConflict } satisfies StaleCheck
})

// --- the run's mutable state ---------------------------------------------------------------------------------

interface RunState {
  /** The outcomes an earlier session reached (resume). */
  readonly prior: ReadonlyMap<number, Outcome>
  /**
   * Only for a run whose report cannot follow its sending (rows sent in later passes, `--verify`): each row's
   * outcome, for the report written at the end from the source read again. Empty otherwise: outcomes travel with
   * the stream that sends the rows, to the report.
   */
  readonly late: Map<number, Outcome>
  /** Rows whose write was announced in this session and whose answer has not come. */
  readonly inFlight: Set<number>
  /**
   * The outcome of each row this session finished, set as its `done` line is handed to the journal and kept until
   * the row's report line is out: a row interrupted after that (a stop's grace ran out during the write) is
   * reported with it, as the journal has it.
   */
  readonly settled: Map<number, Outcome>
  /**
   * Rows whose write left for the server in this session (an attempt passed its permit and budget): only these,
   * and rows an earlier session left in flight, may have reached it. A row announced but still queued when the run
   * stopped was never sent.
   */
  readonly left: Set<number>
  /** Rows an earlier session left in flight (resume): their `sending` line. */
  readonly priorSending: Map<number, Sending>
  /** Rows an earlier session finished. */
  readonly priorDone: ReadonlySet<number>
  /** Rows an earlier session sent that `--verify` still has to confirm (resume): they are prepared and confirmed. */
  readonly queuedBefore: (row: number) => boolean
  stopped: boolean
  /** Set when a write failed because the whole run must stop (credentials rejected …). */
  aborted: ApiAborted | undefined
}

/**
 * A row an earlier session left in flight whose read before found no record: the record its write lands on now
 * is the one that session created, so the run created it, whatever this session's answer says (a resent upsert
 * answers 200).
 */
const createdBy = (outcome: Outcome, earlier: Sending | undefined): Outcome =>
  earlier?.absent === true && outcome.status === "updated" ? { ...outcome, status: "created" } : outcome

/** Whether the run confirms the rows the API only queued (`--verify`). */
const verifyingOf = (job: ImportJob) => job.verify && !job.dryRun && confirmable(resourceOf(job.resource))

const makeRunState = (prior: JournalContents | undefined, verifying: boolean): RunState => {
  const outcomes = new Map<number, Outcome>()
  const priorSending = new Map<number, Sending>()
  const priorDone = new Set<number>()
  for (const [row, s] of prior?.rows ?? []) {
    if (s.last === "done" && s.outcome !== undefined) {
      outcomes.set(row, s.outcome)
      priorDone.add(row)
    } else if (s.last === "sending" && s.sending !== undefined) priorSending.set(row, s.sending)
  }
  const queuedBefore = (row: number) => verifying && priorDone.has(row) && outcomes.get(row)?.status === "queued"
  return {
    prior: outcomes,
    late: new Map(),
    inFlight: new Set(),
    settled: new Map(),
    left: new Set(),
    priorSending,
    priorDone,
    queuedBefore,
    stopped: false,
    aborted: undefined
  }
}

/**
 * What the scan gathers for the lookups. Read before write: the records an update, upsert or delete touches are
 * read first, in batches, for their before-images and so that rows equal to the server are `unchanged` and send
 * nothing. Sub-collections and actions cannot be read back.
 */
const scanNeeds = (
  job: ImportJob,
  state: RunState,
  alternateKeys: Readonly<Record<string, unknown>> | undefined
): ScanNeeds => {
  const r = resourceOf(job.resource)
  const listable = listedAs(r) !== undefined
  // Creates are read before too: a key already on the server is refused unsent, and a key found absent is the proof
  // that a record found after a lost answer is the run's own (`absent` in the journal).
  // A plan is applied with the dry run's lookups, so that each row's write is decided as the plan decided it.
  const rehearsed = job.dryRun || job.applying !== undefined
  const lookupMode = listable && (rehearsed || !isPathWrite(r))
  return {
    skip: (row) => state.priorDone.has(row) && !state.queuedBefore(row),
    // Rows an earlier session left in flight are looked up by key whatever the mode.
    lookByKey: (row) => r.key !== undefined && listable && (lookupMode || state.priorSending.has(row)),
    lookById: lookupMode && (rehearsed || job.mode !== "create") && r.id !== undefined,
    resource: r.name,
    selfRefs: r.fields.filter((f) => f.ref?.resource === r.name).map((f) => refKey(f.ref!)),
    // A record that holds a row's alternate key under another key is found before anything is sent (not for
    // deletes, which write nothing).
    alternates: listable && !isPathWrite(r) && job.mode !== "delete" ? Object.keys(alternateKeys ?? {}) : []
  }
}

// --- scanning, lookups and sending ---------------------------------------------------------------------------

interface SendInput {
  readonly job: ImportJob
  readonly resourceName: ResourceName
  readonly input: Input
  readonly validator: () => ReturnType<typeof makeValidator>
  readonly journal: JournalWriter
  readonly state: RunState
  readonly stale: StaleCheck | undefined
  /** The export's fingerprints, by `fingerprintKey`. */
  readonly bases: ReadonlyMap<string, Fingerprint> | undefined
  /** The rows came from an export of another server or account: why, and its manifest. */
  readonly foreign: { readonly why: string; readonly manifest: string } | undefined
  /** `--dry-run --plan`: each row's entry of the plan. */
  readonly collector: PlanCollector | undefined
}

/**
 * Preparing the sending (step 3): the references and the records the rows write, read in batches before anything
 * is sent (from what the scan gathered), and the plan of each row once its references are resolved. Sends nothing.
 */
const prepareRows = Effect.fn("Import.prepareRows")(function*(s: SendInput, scan: ScanResult) {
  const { job } = s
  const r = resourceOf(s.resourceName)

  // 3. References and existing records.
  const resolver = s.job.resolver ?? (yield* serverResolver)
  yield* resolver.prepare(scan.demands)
  // A list that cannot be read leaves its rows `failed` ("could not look … up"); an `ApiAborted` (credentials
  // rejected, token refused twice) is not a lookup problem: it aborts the run before any write.
  const lookup = (by: string, values: ReadonlySet<string>) =>
    values.size === 0
      ? Effect.succeed(undefined)
      : findRecords(r, by, values).pipe(
        Effect.map((found): Either.Either<Found, ListFailed> => Either.right(found)),
        Effect.catchTag("ListFailed", (e) => Effect.succeed(Either.left(e))),
        Effect.map((found) => ({ by, found }))
      )
  const byKey = r.key !== undefined ? yield* lookup(r.key, scan.keys) : undefined
  const byId = r.id !== undefined ? yield* lookup(r.id.name, scan.ids) : undefined
  // One lookup per alternate key for all the rows (filtered calls or a walk, whichever costs less), as for keys.
  const byAlternate: Array<{ by: string; found: Either.Either<Found, ListFailed>; severity: "invalid" | "warning" }> =
    []
  for (const [by, values] of scan.alternates) {
    const looked = yield* lookup(by, values)
    const severity = s.input.mapping?.alternateKeys[by]
    if (looked !== undefined && severity !== undefined) byAlternate.push({ ...looked, severity })
  }
  const listed = listedAs(r)
  /**
   * A server record holding the row's alternate key (its CPF/CNPJ) under another key: the row names a record
   * that already exists, and writing it would make a second one. `invalid` (the profile's choice) stops the row
   * unsent; `warning` notes it on the row. A list that cannot be read leaves the row `failed`, unsent.
   */
  const alternateCheck = (
    v: Valid
  ): { readonly invalid?: string; readonly failed?: string; readonly warnings: Array<string> } => {
    const warnings: Array<string> = []
    if (listed === undefined) return { warnings }
    const idProperty = r.id !== undefined ? keyProperty(listed, r.id.name) : undefined
    const keyOf = r.key !== undefined ? keyProperty(listed, r.key) : undefined
    for (const a of byAlternate) {
      const value = keyText(v.payload[a.by]).trim()
      if (value === "") continue
      if (Either.isLeft(a.found)) {
        return { failed: `${a.by}: could not check "${value}" against the server: ${a.found.left.message}`, warnings }
      }
      const others = (a.found.right.get(value) ?? []).filter((record) => {
        if (v.id !== undefined && idProperty !== undefined && recordKey(record, idProperty) === String(v.id)) {
          return false
        }
        return keyOf === undefined || v.key === undefined || normalKey(recordKey(record, keyOf)) !== normalKey(v.key)
      })
      if (others.length === 0) continue
      const record = others[0]!
      const named = [
        keyOf !== undefined && recordKey(record, keyOf) !== "" ? `${r.key} "${recordKey(record, keyOf)}"` : undefined,
        idProperty !== undefined ? `id ${recordKey(record, idProperty)}` : undefined
      ].filter((x) => x !== undefined).join(", ")
      const message = `${a.by}: "${value}" is already on the server, in the record of ${named || "another key"}${
        others.length > 1 ? ` (and ${others.length - 1} more)` : ""
      }: ${a.by} is an alternate key, so this row would make a second record of it`
      if (a.severity === "invalid") return { invalid: message, warnings }
      warnings.push(message)
    }
    return { warnings }
  }
  const existingOf = (v: Valid): Existing => {
    const from = (l: { by: string; found: Either.Either<Found, ListFailed> } | undefined, value: string): Existing => {
      if (l === undefined) return { _tag: "NotLooked" }
      if (Either.isLeft(l.found)) return { _tag: "Unavailable", message: l.found.left.message }
      return { _tag: "Found", records: l.found.right.get(value) ?? [], by: l.by, value }
    }
    if (v.key !== undefined) return from(byKey, v.key.trim())
    if (v.id !== undefined) return from(byId, String(v.id))
    return { _tag: "NotLooked" }
  }

  // Rows naming records that other rows of the file create wait for a later pass.
  const waiting = new Map(
    yield* waitingRows(
      scan,
      (by, value) =>
        Effect.map(
          resolver.resolve({ field: "", column: "", resource: r.name, by, values: [value], list: false }),
          Either.isRight
        )
    )
  )

  /** The row's write, its references resolved into `payload`, and the before-image of the record it changes. */
  const planRow = (v: Valid, payload: Readonly<Record<string, unknown>>) => {
    const existing = existingOf(v)
    const earlier = s.state.priorSending.get(v.row)
    const action = plan({
      resource: r,
      mode: job.mode,
      dryRun: job.dryRun || job.applying !== undefined,
      row: { row: v.row, payload, key: v.key, id: v.id, files: v.files },
      existing,
      interrupted: earlier?.intent,
      interruptedAbsent: earlier?.absent,
      ...(s.stale !== undefined
        ? { base: s.bases?.get(fingerprintKey(v.key, v.id) ?? ""), onConflict: s.stale.onConflict }
        : {}),
      sendWriteOnly: job.sendWriteOnly
    })
    // A row an earlier session left in flight keeps that session's before-image: the record read now may already
    // hold that session's write.
    const before = earlier !== undefined ? earlier.before : beforeImage(action, existing)
    // So does its proof that the record was not there before (the lookup now may find that session's record).
    const absent = earlier !== undefined ? earlier.absent === true : absentBefore(action, existing)
    // A write of an earlier session found landed: the record as the lookup found it is the record as it left it.
    const found = existing._tag === "Found" && existing.records.length === 1 ? existing.records[0] : undefined
    // Create-only fields (passwords) the row gives but an update leaves out: noted on the row.
    const withheld = job.sendWriteOnly === true || !isUpdate(action) ? [] : createOnlyGiven(r, payload)
    return { action, before, absent, found, withheld, existing }
  }
  return { total: scan.total, resolver, waiting, planRow, alternateCheck }
})

/** Rows whose outcomes may wait, in source order, for the report while an earlier row is still being sent. */
const reportWindow = (concurrency: number) => Math.max(1024, concurrency * 32)

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
  const say = job.say ?? (() => Effect.void)
  const r = resourceOf(s.resourceName)
  const concurrency = job.concurrency ?? 32

  // --verify: rows the API only queued, with what was sent, to be confirmed once the sending is over.
  const verifying = verifyingOf(job)
  const queued: Array<Queued> = []
  const { queuedBefore } = state

  const { alternateCheck, planRow, resolver, total, waiting } = yield* prepareRows(s, scan)
  if (job.progress !== undefined) yield* job.progress.begin(total, state.priorDone.size)

  // 4. Sending, with a stop request turned into a bounded wait for the rows in flight.
  const abandon = yield* Deferred.make<void>()
  /** Completed on a stop: rows whose write has not left yet give up at once (only rows sent get the grace). */
  const stopping = yield* Deferred.make<void>()
  if (job.stop !== undefined) {
    yield* Effect.forkScoped(
      Effect.gen(function*() {
        yield* job.stop!
        state.stopped = true
        yield* Deferred.succeed(stopping, undefined)
        yield* Effect.sleep(job.graceMs ?? 10_000)
        yield* Deferred.succeed(abandon, undefined)
      })
    )
  }

  /** The plan's entry of each row being planned, until its outcome is known (`--dry-run --plan`). */
  const planning = new Map<number, Omit<PlanRow, "row" | "status">>()

  const finish = (row: number, outcome: Outcome, sent?: unknown, after?: RecordImage) =>
    Effect.gen(function*() {
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
      yield* journal.append({
        state: "done",
        row,
        ...outcome,
        ...(sent !== undefined ? { sent } : {}),
        ...(after !== undefined ? { after } : {}),
        at: yield* nowIso
      })
      if (job.progress !== undefined) yield* job.progress.row
      return outcome
    })

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
      }
      if (queuedBefore(v.row)) {
        // Sent by an earlier session: only its confirmation is left.
        const outcome = state.prior.get(v.row)!
        queued.push({ row: v.row, payload, outcome })
        return outcome
      }
      const { absent, action, before, existing, found, withheld } = planRow(v, payload)
      if (job.applying !== undefined) {
        const why = planVerdict(r, v.row, job.applying.plan.rows.get(v.row), action, existing)
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
          ...(write !== undefined ? { write } : {})
        })
      }
      let outcome: Outcome
      let body: unknown = undefined
      let after: RecordImage | undefined = undefined
      if (job.dryRun) outcome = wouldBe(r, action)
      else if (action._tag === "Settle") {
        outcome = action.outcome
        if (outcome.status === "created" || outcome.status === "updated") after = found
      } else {
        yield* journal.append({
          state: "sending",
          row: v.row,
          ...(v.key !== undefined ? { key: v.key } : {}),
          ...(v.id !== undefined ? { id: v.id } : {}),
          intent: intentOf(action)!,
          ...(before !== undefined ? { before } : {}),
          ...(absent ? { absent } : {}),
          at: yield* nowIso
        })
        state.inFlight.add(v.row)
        const sent = yield* Effect.either(send(r, action, { absent, onSent: () => state.left.add(v.row) }))
        if (Either.isLeft(sent)) {
          // The run is aborted (credentials rejected …): this write never reached the server. The rows in flight
          // finish; no new row starts.
          state.inFlight.delete(v.row)
          state.aborted ??= sent.left
          state.stopped = true
          yield* journal.append({ state: "unsent", row: v.row, at: yield* nowIso })
          return undefined
        }
        outcome = createdBy(sent.right.outcome, state.priorSending.get(v.row))
        after = sent.right.after
        body = written(r, action)
      }
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
        : job.stop === undefined
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
    const window = reportWindow(concurrency)
    // How many rows (by position in the pass) have left the reordering; a row starts only within `window` of it,
    // so the rows held back behind a slow one stay bounded. The oldest row never waits, so the pass moves on.
    let released = 0
    /** Completed when `released` moves on, for the rows waiting to start (made only when one waits). */
    let moved: Deferred.Deferred<void> | undefined
    const within = (at: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (at < released + window) return Effect.void
        moved ??= Deferred.unsafeMake<void>(FiberId.none)
        return Effect.zipRight(Deferred.await(moved), within(at))
      })
    type Line = readonly [SourceRow, Outcome]
    const held = new Map<number, Line | undefined>()
    return input.rows.pipe(
      Stream.mapEffect((row) =>
        state.stopped
          ? Effect.succeed({ row, result: undefined as RowResult | undefined })
          : Effect.map(validatePass.validate(row), (result): { row: SourceRow; result: RowResult | undefined } => ({
            row,
            result
          }))
      ),
      Stream.zipWithIndex,
      Stream.mapEffect(([{ result, row }, at]) => {
        const n = row.row
        const line = (): Effect.Effect<Line | undefined, ImportError, Api> => {
          if (!selected(n)) return Effect.succeed(undefined)
          if (state.priorDone.has(n) && !queuedBefore(n)) return Effect.succeed([row, state.prior.get(n)!])
          // Not reached, or not finished: a row `--verify` was to confirm keeps its earlier outcome.
          const unfinished = () => state.prior.get(n) ?? missing(n)
          if (result === undefined) return Effect.succeed([row, unfinished()])
          return Effect.map(attempt(result), (outcome): Line => {
            const final = outcome ?? unfinished()
            // Kept only until the row's line is out: memory does not grow with the file.
            state.settled.delete(n)
            return [row, final]
          })
        }
        return Effect.map(Effect.zipRight(within(at), Effect.suspend(line)), (l) => [at, l] as const)
      }, { concurrency, unordered: true }),
      // Back in source order.
      Stream.mapChunksEffect((chunk) => {
        for (const [at, l] of chunk) held.set(at, l)
        const from = released
        const out: Array<Line> = []
        while (held.has(released)) {
          const l = held.get(released)
          held.delete(released)
          released += 1
          if (l !== undefined) out.push(l)
        }
        const lines = Chunk.unsafeFromArray(out)
        if (moved === undefined || released === from) return Effect.succeed(lines)
        const wake = moved
        moved = undefined
        return Effect.as(Deferred.succeed(wake, undefined), lines)
      })
    )
  }

  if (waiting.size === 0 && !verifying) {
    // Settled in one pass: its lines are the report.
    const writer = yield* openReports(target)
    yield* Stream.runForEachChunk(pass(() => true), (chunk) => writer.writeAll(Chunk.toReadonlyArray(chunk)))
    if (job.progress !== undefined) yield* job.progress.end
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
  if (job.progress !== undefined) yield* job.progress.end

  if (queued.length > 0 && !state.stopped) {
    const waitMs = job.verifyWaitMs ?? 6 * 60_000
    yield* say(
      `verify: waiting up to ${formatDuration(waitMs)} for ${queued.length} queued row${
        queued.length > 1 ? "s" : ""
      } to show on the server`
    )
    const confirmed = yield* confirmQueued(r, queued, { waitMs, pollMs: job.verifyPollMs ?? 10_000, stop: job.stop })
    for (const [row, outcome] of confirmed) {
      state.late.set(row, outcome)
      yield* journal.append({ state: "done", row, ...outcome, at: yield* nowIso })
    }
  }
  return undefined
})
