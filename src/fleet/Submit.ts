/**
 * Submitting work to the fleet: the file is validated offline first, exactly as `validate` does (an unreadable
 * file or a contradiction exits 2 and nothing is queued), then stored with the job's settings and queued. The
 * job in the fleet's store holds what to run; the queue's job carries only its id.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { randomUUID } from "node:crypto"
import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import * as Path from "node:path"
import { pipeline } from "node:stream/promises"
import { Notices, say } from "../console/Output.js"
import { InputError } from "../Errors.js"
import { prepareExport } from "../export/Export.js"
import { fingerprintsName } from "../export/Fingerprint.js"
import { type CsvDialect, type ExportFormat, manifestFile } from "../export/Manifest.js"
import { openInput } from "../import/Input.js"
import type { Mode, OnConflict, ParseSettings, ReadSettings } from "../import/Journal.js"
import { reportCsv } from "../import/RunDir.js"
import { runValidate } from "../import/ValidateRun.js"
import type { ProfileRecord } from "../mapping/Profile.js"
import { prepareOnboarding } from "../onboard/Onboard.js"
import { scanSelfReferences } from "../onboard/SelfRefs.js"
import { resource as resourceOf, type ResourceName } from "../Resources.js"
import { type Chunk, chunkRead, invalidRows, rowColumn, splitSource } from "./Chunks.js"
import { describeCause, FleetError } from "./Errors.js"
import { enqueue, type FleetQueue, jobFormat, leaseMs } from "./Queue.js"
import { ownedScratch } from "./Scratch.js"
import {
  type FleetStore,
  type JobFile,
  type NewJob,
  stagingGone,
  stagingHeartbeatMs,
  stagingReclaimMs
} from "./Store.js"
import { outlastingFaults } from "./Transient.js"

/** What an import job runs: the `import` command's settings (the file is stored beside it). */
export interface ImportSpec {
  readonly resource: string
  readonly mode: Mode
  readonly dryRun: boolean
  readonly verify: boolean
  readonly verifyWaitMs: number
  readonly read: ReadSettings
  readonly dateFormat: ParseSettings["dateFormat"]
  readonly decimal: ParseSettings["decimal"]
  readonly fileName: string
  /** A chunk's rows are numbered by this column (the source's row numbers). */
  readonly rowColumn?: string
}

/**
 * A job's spec with the job format it needs (`jobFormat`, not `format`: an export's spec has its own `format`, the
 * files' csv or xlsx, which a property of that name would overwrite).
 */
const formatted = <S extends object>(spec: S): S & { readonly jobFormat: number } => ({ ...spec, jobFormat })

/**
 * The most parts a file is split into: each costs the store a job, a file and a queue entry, and a file of a
 * million rows in parts of one row would take minutes and hundreds of megabytes to split for no gain. A smaller
 * `--chunk-rows` is raised to fit (rows ÷ 1,000, rounded up).
 */
export const maxParts = 1_000

/** A fresh job id. */
const newJobId = (): string => randomUUID()

interface Submitted {
  readonly job: string
  readonly rows: number
  readonly invalid: number
  /** Parts the file was split into (0: one job). */
  readonly chunks: number
  /** Why a file larger than a part was not split (its rows name each other), when it was not. */
  readonly whole?: string
  /** False when it was stored but could not be queued now: a worker's sweep queues it. */
  readonly queued: boolean
}

/** Tests only: `submit` kills itself (SIGKILL) once its jobs are stored and before they are queued. */
const killAfterStore = process.env.FSM_FLEET_DEBUG_KILL_AFTER_STORE === "1"
/** Tests only: `submit` kills itself (SIGKILL) with its files read and split, just before it stores anything. */
const killBeforeStore = process.env.FSM_FLEET_DEBUG_KILL_BEFORE_STORE === "1"
/** Tests only: `submit` kills itself (SIGKILL) once it has stored its first batch of parts, before it publishes them. */
const killWhileStaging = process.env.FSM_FLEET_DEBUG_KILL_WHILE_STAGING === "1"
/** Tests only: `submit` stops itself (SIGSTOP) once its jobs are stored: a test breaks the queue, then continues it. */
const stopAfterStore = process.env.FSM_FLEET_DEBUG_STOP_AFTER_STORE === "1"
/**
 * Tests only: `FSM_FLEET_DEBUG_HOLD_STAGING=PATH`: once its first batch of parts is stored (an onboarding: its first
 * piece of a file), `submit` writes `PATH.held` and waits, between two batches, until `PATH` exists (a test holds a live
 * submit as long as it likes). `FSM_FLEET_DEBUG_KILL_WHILE_STAGING` kills it at the same point.
 */
const holdStaging = process.env.FSM_FLEET_DEBUG_HOLD_STAGING ?? ""
const heldUntilReleased = Effect.suspend(() => {
  writeFileSync(`${holdStaging}.held`, String(process.pid))
  return Effect.repeat(Effect.sync(() => existsSync(holdStaging)), {
    until: (released) => released,
    schedule: Schedule.spaced("50 millis")
  })
})
/** The test hooks' point (above): what a submit does once it has stored its first batch or piece while staging. */
const firstStaged = Effect.suspend(() => {
  if (killWhileStaging) process.kill(process.pid, "SIGKILL")
  return holdStaging !== "" ? heldUntilReleased : Effect.void
})

/**
 * Makes a submission's jobs visible (`stored`: a job, or a parent and all its parts, with their source files, in one
 * atomic step, `submitting`); queues what runs (`leaves`: the parts, or the job); then marks them `queued`. A submit
 * killed in between leaves them `submitting` (`status` shows it) and a worker's sweep queues them (Worker.ts): never a
 * parent without its parts, never a job stored and queued by nobody, never a file stored that no job refers to.
 */
const queueSubmission = Effect.fn("Fleet.queueSubmission")(function*(
  store: FleetStore,
  queue: FleetQueue,
  stored: Effect.Effect<void, FleetError>,
  first: string,
  leaves: ReadonlyArray<string>
) {
  if (killBeforeStore) process.kill(process.pid, "SIGKILL")
  yield* stored
  if (killAfterStore) process.kill(process.pid, "SIGKILL")
  if (stopAfterStore) process.kill(process.pid, "SIGSTOP")
  // Stored: from here the job will run. A queue still failing after its faults were outlasted leaves it
  // `submitting`, which a worker's sweep queues within about a lease; so the submit succeeds and says so (an exit 2
  // would read "nothing was submitted", and the same file submitted again would run twice).
  const windowMs = yield* leaseMs
  const queued = yield* Effect.forEach(
    leaves.length > 0 ? leaves : [first],
    (j) => outlastingFaults(windowMs, sayRetry)(enqueue(queue, j)),
    { discard: true }
  ).pipe(Effect.zipRight(store.markQueued(first)), Effect.either)
  if (queued._tag === "Left") {
    yield* say(
      `warning: job ${first} is stored but could not be queued now (${queued.left.message}): a worker queues it ` +
        `within about a lease (it shows as submitting until then); do not submit the file again`
    )
  }
  return queued._tag === "Right"
})

/** Jobs and their files stored whole in one step (`addJobs`), queued as `queueSubmission` says. */
const queueJobs = (
  store: FleetStore,
  queue: FleetQueue,
  jobs: readonly [NewJob, ...ReadonlyArray<NewJob>],
  files: ReadonlyArray<JobFile>
) => queueSubmission(store, queue, store.addJobs(jobs, files), jobs[0].id, [])

/**
 * The bytes `submit` holds in memory at once while it stores an import: a piece of the source file, or a batch of
 * parts (at most `stagePartsMax` of them). Tests set a small one with `FSM_FLEET_STAGE_BYTES`.
 */
const stageBytes = (): number => {
  const set = Number(process.env.FSM_FLEET_STAGE_BYTES ?? "")
  return Number.isInteger(set) && set > 0 ? set : 4 * 1024 * 1024
}
const stagePartsMax = 50

/**
 * Stores the file at `path` as the staged job's file `name`, a piece of `stageBytes` at a time; `afterFirst` runs once
 * its first piece is stored.
 */
const stageSource = Effect.fn("Fleet.stageSource")(function*(
  store: FleetStore,
  job: string,
  name: string,
  path: string,
  afterFirst: Effect.Effect<void> = Effect.void
) {
  const piece = Buffer.alloc(stageBytes())
  yield* Effect.acquireUseRelease(
    Effect.sync(() => openSync(path, "r")),
    (fd) =>
      Effect.iterate(0, {
        while: (offset) => offset >= 0,
        body: (offset) =>
          Effect.suspend(() => {
            const n = readSync(fd, piece, 0, piece.length, offset)
            // The first piece is stored even when empty (an empty file is a file); -1 ends the loop.
            if (n === 0 && offset > 0) return Effect.succeed(-1)
            return store.stageFile({ job, name, content: piece.subarray(0, n) }, offset).pipe(
              Effect.zipRight(offset === 0 ? afterFirst : Effect.void),
              Effect.as(n === 0 ? -1 : offset + n)
            )
          })
      }),
    (fd) => Effect.sync(() => closeSync(fd))
  )
})

/**
 * Parts as the split writes them, stored in batches of about `stageBytes` (or `stagePartsMax` parts) while the rest of
 * the file is still being split: `written` takes each part file, `flush` stores what is left. A part's file is
 * removed from the scratch folder once stored, so neither memory nor the disk holds more than a batch.
 */
const stagingParts = (store: FleetStore, parent: string, partJob: (chunk: Chunk, id: string) => NewJob) => {
  let pending: Array<{ readonly job: NewJob; readonly path: string }> = []
  let bytes = 0
  let made = 0
  let batches = 0
  const flush = Effect.suspend(() => {
    if (pending.length === 0) return Effect.void
    const batch = pending
    pending = []
    bytes = 0
    const files = batch.map((p) => ({
      job: p.job.id,
      name: `source/${Path.basename(p.path)}`,
      content: readFileSync(p.path)
    }))
    return store.stageParts(parent, batch.map((p) => p.job), files).pipe(
      Effect.tap(() => {
        for (const p of batch) rmSync(p.path, { force: true })
        batches += 1
      }),
      Effect.zipRight(Effect.suspend(() => batches === 1 ? firstStaged : Effect.void))
    )
  })
  const written = (chunk: Chunk) =>
    Effect.suspend(() => {
      made += 1
      pending.push({ job: partJob(chunk, `${parent}-part${String(made).padStart(4, "0")}`), path: chunk.path })
      bytes += statSync(chunk.path).size
      return bytes >= stageBytes() || pending.length >= stagePartsMax ? flush : Effect.void
    })
  return { written, flush, count: () => made }
}

const sayRetry = (e: FleetError) => say(`the fleet store failed, trying again: ${e.message}`)

/**
 * A live submit's heartbeat: its staged submission `id` touched every `stagingHeartbeatMs`, so however long the submit
 * spends between two batches (a slow store, disk or machine, a big file being split) no reclaim takes it for a dead
 * one; a killed submit's stops with it, and its staging is reclaimed as before. Runs until the staging it races ends
 * (stored, failed or interrupted); fails only when the submission is gone (reclaimed meanwhile: the submit stops now,
 * not at its next batch). A touch that fails (the store unreachable) is said and tried again at the next beat: the
 * submission may then be reclaimed, which the next batch or the publishing step finds (they check it is there).
 */
const heartbeat = (store: FleetStore, id: string, everyMs: number): Effect.Effect<never, FleetError> =>
  Effect.forever(
    Effect.sleep(everyMs).pipe(
      Effect.zipRight(Effect.either(Effect.suspend(() => store.touchStaging(id)))),
      Effect.flatMap((touched) =>
        touched._tag === "Left"
          ? sayRetry(touched.left)
          : touched.right
          ? Effect.void
          : Effect.fail(stagingGone(id))
      )
    )
  )

/**
 * A submission stored staged (`staging`: seen by nobody) a few megabytes at a time by `stage` (the parent `job`'s
 * files a piece at a time, an import's parts in batches), its heartbeat touching it meanwhile, then made visible in one
 * small step and queued (`queueSubmission`; `leaves`: the parts `stage` stored, none for a job that runs whole). A
 * submit that fails or is stopped meanwhile removes what it staged; one killed leaves it to be reclaimed (Store.ts) by
 * the next submit or a worker's sweep, which this submit runs first.
 */
const stagedSubmission = Effect.fn("Fleet.stagedSubmission")(function*<E, R>(
  store: FleetStore,
  queue: FleetQueue,
  job: NewJob,
  stage: Effect.Effect<void, E, R>,
  leaves: () => ReadonlyArray<string> = () => []
) {
  const windowMs = yield* leaseMs
  yield* Effect.ignore(store.reclaimStaging(stagingReclaimMs(windowMs)))
  yield* store.stageJob(job)
  const discard = Effect.ignore(store.discardStaging(job.id))
  yield* Effect.raceFirst(
    Effect.onError(stage, () => discard),
    heartbeat(store, job.id, stagingHeartbeatMs(windowMs))
  )
  const parts = leaves()
  return yield* queueSubmission(
    store,
    queue,
    store.publishJobs(job.id, 1 + parts.length).pipe(Effect.onError(() => discard)),
    job.id,
    parts
  )
})

/** The submit's scratch folder (its copy of the file, validation report, parts): one a killed submit left is removed. */
const scratchDir = Effect.acquireRelease(
  ownedScratch("fsm-submit-"),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

export const submitImport = Effect.fn("Fleet.submitImport")(function*(
  store: FleetStore,
  queue: FleetQueue,
  account: string,
  file: string,
  spec: Omit<ImportSpec, "fileName">,
  chunkRows: number
) {
  if ((yield* store.account(account)) === undefined) {
    return yield* new FleetError({
      reason: "NotFound",
      message: `no account "${account}" in this fleet: add it with \`fsm-bulk accounts add ${account} --base-url …\``
    })
  }
  // Offline validation into a scratch directory: the same reading and rules as the worker's run.
  const scratch = yield* scratchDir
  // The file is read once, streamed into the scratch folder (a piece at a time, not the whole file in memory): what
  // is validated, scanned, split and stored is that copy. A file changed while `submit` runs (an editor saving it, a
  // transfer still writing) cannot be validated in one version and split or stored in another (whose rows the
  // verdicts would not fit). Read as a stream, not copied by the system: a pipe or a process substitution has no size
  // to copy (`copyFile` gave an empty copy of a named pipe).
  const copy = Path.join(scratch, "source", Path.basename(file))
  mkdirSync(Path.dirname(copy), { recursive: true })
  yield* Effect.tryPromise({
    try: () => pipeline(createReadStream(file), createWriteStream(copy)),
    catch: (cause) => new InputError({ file, detail: `cannot read the file: ${describeCause(cause)}`, cause })
  })
  // What is said about the copy names the user's file.
  const named = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.catchIf(
      effect,
      (e): e is E & InputError => e instanceof InputError && e.file === copy,
      (e) => Effect.fail(new InputError({ ...e, file, detail: e.detail.split(copy).join(file) }))
    )
  const checked = yield* named(
    runValidate({
      resource: spec.resource as ResourceName,
      file: copy,
      read: spec.read,
      dateFormat: spec.dateFormat,
      decimal: spec.decimal,
      mode: spec.mode,
      attachmentsRoot: undefined,
      runDir: Path.join(scratch, "validate"),
      verdictsOnly: true
    }).pipe(Effect.provide(Notices.none))
  )
  const id = newJobId()
  const fileName = Path.basename(file)
  const full: ImportSpec = { ...spec, fileName }
  const resource = spec.resource as ResourceName
  // Rows that name other rows of the file (a parent equipment) are sent after them by one import; parts run on
  // different workers at once, so such a file is not split.
  const whole = checked.summary.rows > chunkRows
    ? yield* openInput(copy, spec.read, spec.resource).pipe(
      // Through the profile, when there is one: the links are between the resource's columns.
      Effect.flatMap((input) => scanSelfReferences(resourceOf(resource), input.source)),
      Effect.map(({ firstLink: l }) =>
        l === undefined ? undefined : `row ${l.row} names the record row ${l.names} writes (${l.column})`
      ),
      // Rows naming each other in a cycle: one import reports them; they are not split either.
      Effect.catchTag("InputError", (e) => Effect.succeed(e.message.split(copy).join(file)))
    )
    : undefined
  const chunked = checked.summary.rows > chunkRows && whole === undefined
  const job = (job: string, parent: string | null, s: ImportSpec, rows: number): NewJob => ({
    id: job,
    kind: parent === null ? "import" : "chunk",
    account,
    resource: spec.resource,
    spec: formatted(s),
    rows,
    parent
  })
  // Each part: its own file, read as written, with the formats the whole file settled on.
  const parts = stagingParts(store, id, (chunk, part) =>
    job(part, id, {
      ...full,
      fileName: Path.basename(chunk.path),
      // A part is in the customer's columns when the file has a profile: it is read through the same one.
      read: spec.read.map !== undefined ? { ...chunkRead, map: spec.read.map } : chunkRead,
      dateFormat: checked.formats.dateFormat,
      decimal: checked.formats.decimal,
      rowColumn
    }, chunk.rows))
  const staged = Effect.gen(function*() {
    yield* stageSource(store, id, `source/${fileName}`, copy)
    if (!chunked) return
    yield* named(splitSource(
      copy,
      spec.read,
      resource,
      // At most `maxParts` parts, however small `--chunk-rows` is.
      Math.max(chunkRows, Math.ceil(checked.summary.rows / maxParts)),
      scratch,
      yield* invalidRows(Path.join(checked.runDir, reportCsv), resource),
      checked.formats.decimal,
      parts.written
    ))
    yield* parts.flush
  })
  const leaves = () => Array.from({ length: parts.count() }, (_, i) => `${id}-part${String(i + 1).padStart(4, "0")}`)
  const queued = yield* stagedSubmission(store, queue, job(id, null, full, checked.summary.rows), staged, leaves)
  return {
    job: id,
    rows: checked.summary.rows,
    invalid: checked.summary.counts.invalid ?? 0,
    chunks: parts.count(),
    ...(whole === undefined ? {} : { whole }),
    queued
  } satisfies Submitted
})

/**
 * What an onboard job runs: the `onboard` command's settings; its input (a workbook, or a directory of
 * `<resource>.csv|.xlsx` files) is stored beside it under `source/`, named `input`.
 */
export interface OnboardSpec {
  readonly input: string
  readonly kind: "workbook" | "directory"
  /** The steps, in dependency order. */
  readonly resources: ReadonlyArray<string>
  readonly dryRun: boolean
  readonly verify: boolean
  readonly answerWaitMs: number
  readonly answerPollMs: number
  readonly read: Omit<ReadSettings, "sheet" | "map">
  readonly dateFormat: ParseSettings["dateFormat"]
  readonly decimal: ParseSettings["decimal"]
  readonly onConflict?: OnConflict | undefined
  /** `--map`: the steps' mapping profiles (file, sha256, content), applied by the worker as recorded here. */
  readonly maps?: ReadonlyArray<ProfileRecord> | undefined
}

/** What an export job runs: the `export` command's settings. */
export interface ExportSpec {
  readonly resources: ReadonlyArray<string>
  readonly format: ExportFormat
  readonly csv?: CsvDialect | undefined
  readonly since?: string | undefined
  readonly until?: string | undefined
}

const requireAccount = (store: FleetStore, account: string) =>
  Effect.flatMap(store.account(account), (known) =>
    known !== undefined
      ? Effect.void
      : new FleetError({
        reason: "NotFound",
        message: `no account "${account}" in this fleet: add it with \`fsm-bulk accounts add ${account} --base-url …\``
      }))

interface SubmittedOnboarding {
  readonly job: string
  readonly rows: number
  readonly steps: ReadonlyArray<string>
  readonly queued: boolean
}

/**
 * Queues an onboarding: checked offline first exactly as `onboard` checks it before sending (sheets or files,
 * their order, every file's columns and formats, rows naming each other in a cycle), so a bad input fails here
 * and nothing is queued; then the input is stored with the job.
 */
export const submitOnboard = Effect.fn("Fleet.submitOnboard")(function*(
  store: FleetStore,
  queue: FleetQueue,
  account: string,
  input: string,
  settings: Omit<OnboardSpec, "input" | "kind" | "resources">
) {
  yield* requireAccount(store, account)
  const scratch = yield* scratchDir
  const prepared = yield* prepareOnboarding({
    command: "onboard",
    input,
    runDir: Path.join(scratch, "onboard"),
    ...settings
  })
  const name = Path.basename(prepared.input.path)
  // A directory: its step files, and the export's manifest and fingerprints beside them when it is an export
  // (the stale-edit check of `--merge`/`--overwrite` reads them).
  const stored = prepared.input.kind === "workbook"
    ? [{ name, path: prepared.input.path }]
    : [
      ...prepared.steps.flatMap((s) => [s.input.file, fingerprintsName(s.input.file)]),
      Path.join(prepared.input.path, manifestFile)
    ].filter((path) => existsSync(path)).map((path) => ({ name: `${name}/${Path.basename(path)}`, path }))
  const id = newJobId()
  const spec: OnboardSpec = {
    ...settings,
    input: name,
    kind: prepared.input.kind,
    resources: prepared.steps.map((s) => s.input.resource)
  }
  const rows = prepared.steps.reduce((n, s) => n + s.rows, 0)
  const job: NewJob = { id, kind: "onboard", account, resource: null, spec: formatted(spec), rows, parent: null }
  const queued = yield* stagedSubmission(
    store,
    queue,
    job,
    Effect.forEach(
      stored,
      (f, i) => stageSource(store, id, `source/${f.name}`, f.path, i === 0 ? firstStaged : Effect.void),
      {
        discard: true
      }
    )
  )
  return { job: id, rows, steps: spec.resources, queued } satisfies SubmittedOnboarding
})

/** Queues an export: the resource names and dates are checked first, as `export` checks them (nothing is queued). */
export const submitExport = Effect.fn("Fleet.submitExport")(function*(
  store: FleetStore,
  queue: FleetQueue,
  account: string,
  spec: ExportSpec
) {
  yield* requireAccount(store, account)
  const scratch = yield* scratchDir
  const prepared = yield* prepareExport({
    resources: spec.resources,
    out: Path.join(scratch, "export"),
    format: spec.format,
    ...(spec.csv !== undefined ? { csv: spec.csv } : {}),
    since: spec.since,
    until: spec.until,
    say: () => Effect.void
  })
  const id = newJobId()
  const queued = yield* queueJobs(store, queue, [
    { id, kind: "export", account, resource: null, spec: formatted(spec), rows: 0, parent: null }
  ], [])
  return { job: id, resources: prepared.walks.flatMap((w) => w.outputs.map((o) => o.resource.name)), queued }
})
