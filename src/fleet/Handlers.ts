/**
 * What the commands of fleet/Commands.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { readCredentials, validateBaseUrl } from "../cli/Connection.js"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { onConflictOf, readProfiles, readSettings, withProfile } from "../cli/Parsing.js"
import { say, summary as printSummary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { csvDialect } from "../export/Commands.js"
import { resourceName } from "../import/Commands.js"
import { journalFile } from "../import/Journal.js"
import type { Summary } from "../import/Report.js"
import { summaryFile } from "../import/RunDir.js"
import { modeProblem } from "../import/WritePlan.js"
import { pollFor } from "../onboard/Commands.js"
import { resource as resourceOf } from "../Resources.js"
import { shielded, stopOnSignals } from "../Signals.js"
import { formatRate, parseDuration, parseRate } from "../Units.js"
import { mergeChunks } from "./Chunks.js"
import {
  type accountsAddConfig,
  type accountsListConfig,
  type accountsRemoveConfig,
  type cancelConfig,
  type fetchConfig,
  type initConfig,
  type statusConfig,
  type submitExportConfig,
  type submitImportConfig,
  type submitOnboardConfig,
  type waitConfig,
  type workerConfig
} from "./Commands.js"
import { FleetError } from "./Errors.js"
import { dequeue, fleetUrl, leaseMs, openQueue } from "./Queue.js"
import { checkFleetKey, fleetKey, seal } from "./Secrets.js"
import {
  finalStates,
  type FleetStore,
  type JobRow,
  lostDataError,
  missingIndexesWarning,
  stagingState
} from "./Store.js"
import { openStore } from "./Stores.js"
import { type ImportSpec, submitExport, submitImport, submitOnboard } from "./Submit.js"
import { openOutlasting, outlastingStore } from "./Transient.js"
import { fetchExport, fetchOnboard } from "./Whole.js"

const usage = (message: string) => new UsageError({ message })

/** The store of an initialised fleet, for the command's scope (test/fleet/in-process.ts opens it so too). */
export const fleetStore = (text: string) =>
  Effect.gen(function*() {
    const url = yield* fleetUrl(text)
    // A short store fault (a server restarting, a killed connection, a statement timeout) is outlasted for up to a
    // lease, as a worker outlasts it (Transient.ts): `wait` keeps waiting, `submit` stores and queues its job once.
    const windowMs = yield* leaseMs
    const stored = yield* openOutlasting(openStore(url), windowMs, sayRetry)
    const store = outlastingStore(stored, windowMs, sayRetry)
    yield* store.requireInit
    // `stored` is the store as it is, for the worker, which outlasts faults its own way.
    return { url, store, stored }
  })

/** Says that the store failed and is tried again: once for each new failure, not at every retry. */
let lastRetry = ""
/** Forgets the last failure said, as a new process starts (for test runners that keep modules between files). */
export const forgetLastRetry = (): void => {
  lastRetry = ""
}
const sayRetry = (e: FleetError) =>
  Effect.suspend(() => {
    if (e.message === lastRetry) return Effect.void
    lastRetry = e.message
    return say(`the fleet store failed, trying again (for up to a lease, FSM_FLEET_LEASE_MS): ${e.message}`)
  })

/**
 * What `status` and `wait` check before they say anything of the fleet: an eviction policy that lets the server
 * drop the fleet's keys (a warning: what they read may be incomplete), and data the store has lost (exit 2, said
 * plainly, rather than "no job" or a wait that never ends).
 */
export const checkIntact = Effect.fn("Fleet.checkIntact")(function*(store: FleetStore) {
  const finding = yield* store.lostData
  if (finding !== undefined) return yield* lostDataError(finding)
})

const warnEviction = Effect.fn("Fleet.warnEviction")(function*(store: FleetStore) {
  const policy = yield* store.evictionPolicy
  if (policy !== undefined) {
    yield* say(
      `warning: the fleet's Redis server runs with maxmemory-policy ${policy}: it may evict the fleet's jobs, ` +
        `journals and leases, so what is said here may be incomplete and workers refuse to start; set ` +
        `maxmemory-policy noeviction (docs/fleet.md, "On Redis")`
    )
  }
})

/** Indexes `fleet init` would add, said once (a look that fails says nothing: the command works without them). */
const warnMissingIndexes = Effect.fn("Fleet.warnMissingIndexes")(function*(store: FleetStore) {
  const warning = missingIndexesWarning(yield* Effect.orElseSucceed(store.missingIndexes, () => []))
  if (warning !== undefined) yield* say(`warning: ${warning}`)
})

/** A job `wait` or `status --watch` saw, gone from the store since. */
const jobGone = (id: string) =>
  lostDataError(`job ${id} was in the fleet store and its record is gone while it was followed`)

// --- fleet init ------------------------------------------------------------------------------------------------

export const handleInit = (a: Input<typeof initConfig>) =>
  Effect.gen(function*() {
    const url = yield* fleetUrl(a.fleet)
    const store = yield* openStore(url)
    yield* store.init
    for (const warning of yield* store.settingsWarnings) yield* say(`warning: ${warning}`)
    yield* printSummary(a.json, { command: "fleet init", ready: true }, ["fleet ready: queue and tables in place"])
    return 0 as ExitCode
  }).pipe(Effect.scoped)

// --- accounts ----------------------------------------------------------------------------------------------------

const accountName = (name: string) =>
  /^[A-Za-z0-9][\w.-]{0,62}$/.test(name)
    ? Effect.succeed(name)
    : Effect.fail(usage(`account name "${name}": letters, digits, ".", "_" and "-" only (at most 63)`))

export const handleAccountsAdd = (a: Input<typeof accountsAddConfig>) =>
  Effect.gen(function*() {
    const name = yield* accountName(a.name)
    const baseUrl = yield* validateBaseUrl(a.baseUrl)
    if (Option.isSome(a.rate)) {
      yield* Either.mapLeft(parseRate(a.rate.value), (why) => usage(`--rate: ${why}`))
    }
    const credentials = yield* readCredentials(a.credentials)
    if (Option.isNone(credentials)) {
      return yield* usage(
        `no credentials for account "${name}": set FSM_API_KEY and FSM_API_TOKEN, or pass --credentials FILE`
      )
    }
    const key = yield* fleetKey
    const { store } = yield* fleetStore(a.fleet)
    // Credentials sealed with another key than the fleet's could be opened by no worker.
    yield* checkFleetKey(store, key)
    yield* store.putAccount({ name, baseUrl, rate: Option.getOrNull(a.rate), secret: seal(key, credentials.value) })
    yield* printSummary(a.json, { command: "accounts add", account: name, baseUrl }, [
      `account ${name}: ${baseUrl} (credentials stored encrypted)`
    ])
    return 0 as ExitCode
  }).pipe(Effect.scoped)

export const handleAccountsList = (a: Input<typeof accountsListConfig>) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    const accounts = yield* store.accounts
    if (a.json) yield* Console.log(JSON.stringify({ accounts }))
    else {
      for (const r of accounts) yield* Console.log(`${r.name}\t${r.baseUrl}${r.rate !== null ? `\t${r.rate}` : ""}`)
    }
    return 0 as ExitCode
  }).pipe(Effect.scoped)

export const handleAccountsRemove = (a: Input<typeof accountsRemoveConfig>) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    const removed = yield* store.removeAccount(a.name)
    if (!removed) {
      return yield* new FleetError({ reason: "NotFound", message: `no account "${a.name}" in this fleet` })
    }
    yield* say(`account ${a.name} removed`)
    return 0 as ExitCode
  }).pipe(Effect.scoped)

// --- worker ------------------------------------------------------------------------------------------------------

/**
 * The worker, loaded when this command runs: its HTTP agents (Fence.ts) bring in the platform's HTTP client
 * (undici, about 20 MB of the process), which no other fleet command needs.
 */
const loadWorker = Effect.promise(() => import("./Worker.js"))

export const handleWorker = (a: Input<typeof workerConfig>) =>
  Effect.gen(function*() {
    const rate = yield* Either.mapLeft(parseRate(a.rate), (why) => usage(`--rate / FSM_RATE: ${why}`))
    if (a.jobs < 1) return yield* usage(`--jobs: ${a.jobs} is not a positive number`)
    const key = yield* fleetKey
    const { stored: store, url } = yield* fleetStore(a.fleet)
    const lease = yield* leaseMs
    return yield* shielded(Effect.scoped(Effect.gen(function*() {
      const stop = yield* stopOnSignals({ stopping: "stopping: jobs in progress stop sending and are handed back" })
      yield* say(`worker ${a.egressId}: budget ${formatRate(rate)}, ${a.jobs} jobs at once`)
      const { runWorker } = yield* loadWorker
      yield* runWorker(store, url, key, {
        egressId: a.egressId,
        sourceAddress: Option.getOrUndefined(a.sourceAddress),
        rate,
        jobs: a.jobs,
        leaseMs: lease,
        say
      }, stop.stopped)
      return 0 as ExitCode
    })))
  }).pipe(Effect.scoped)

// --- submit --------------------------------------------------------------------------------------------------------

export const handleSubmitImport = (a: Input<typeof submitImportConfig>) =>
  Effect.gen(function*() {
    if (a.chunkRows < 1) return yield* usage(`--chunk-rows: ${a.chunkRows} is not a positive number`)
    const resource = yield* resourceName(a.resource)
    const problem = modeProblem(resourceOf(resource), a.mode)
    if (problem !== undefined) return yield* usage(problem)
    const verifyWaitMs = yield* Either.mapLeft(parseDuration(a.verifyWait), (why) => usage(`--verify-wait: ${why}`))
    const { store, url } = yield* fleetStore(a.fleet)
    const queue = yield* openQueue(url)
    const submitted = yield* submitImport(store, queue, a.account, a.file, {
      resource,
      mode: a.mode,
      dryRun: a.dryRun,
      verify: a.verify,
      verifyWaitMs,
      read: yield* withProfile(readSettings(a.parsing), a.map),
      dateFormat: a.parsing.dateFormat,
      decimal: a.parsing.decimal
    }, a.chunkRows)
    yield* say(
      `${
        submitted.queued ? "queued" : "stored (not queued yet)"
      } job ${submitted.job}: import ${resource} for ${a.account}, ${submitted.rows} rows${
        submitted.chunks > 0 ? ` in ${submitted.chunks} parts` : ""
      }${submitted.invalid > 0 ? ` (${submitted.invalid} invalid: they will be reported, not sent)` : ""}${
        submitted.whole !== undefined
          ? `; not split into parts, because its rows name each other (${submitted.whole}): one worker runs it`
          : ""
      }`
    )
    if (a.json) yield* Console.log(JSON.stringify(submitted))
    else yield* Console.log(submitted.job)
    return 0 as ExitCode
  }).pipe(Effect.scoped)

export const handleSubmitOnboard = (a: Input<typeof submitOnboardConfig>) =>
  Effect.gen(function*() {
    const answerWaitMs = yield* Either.mapLeft(parseDuration(a.answerWait), (why) => usage(`--verify-wait: ${why}`))
    const onConflict = yield* onConflictOf(a.conflicts)
    const { store, url } = yield* fleetStore(a.fleet)
    const queue = yield* openQueue(url)
    const submitted = yield* submitOnboard(store, queue, a.account, a.input, {
      dryRun: a.dryRun,
      verify: a.verify,
      answerWaitMs,
      answerPollMs: pollFor(answerWaitMs),
      read: readSettings(a.parsing),
      maps: yield* readProfiles(a.map),
      dateFormat: a.parsing.dateFormat,
      decimal: a.parsing.decimal,
      onConflict
    })
    yield* say(
      `${
        submitted.queued ? "queued" : "stored (not queued yet)"
      } job ${submitted.job}: onboard ${a.input} for ${a.account}, ${submitted.rows} rows in ${submitted.steps.length} steps (${
        submitted.steps.join(" → ")
      })${a.dryRun ? ", dry run" : ""}`
    )
    if (a.json) yield* Console.log(JSON.stringify(submitted))
    else yield* Console.log(submitted.job)
    return 0 as ExitCode
  }).pipe(Effect.scoped)

export const handleSubmitExport = (a: Input<typeof submitExportConfig>) =>
  Effect.gen(function*() {
    const csv = yield* csvDialect(a)
    const { store, url } = yield* fleetStore(a.fleet)
    const queue = yield* openQueue(url)
    const submitted = yield* submitExport(store, queue, a.account, {
      resources: a.resources,
      format: a.format,
      csv,
      since: Option.getOrUndefined(a.since),
      until: Option.getOrUndefined(a.until)
    })
    yield* say(
      `${submitted.queued ? "queued" : "stored (not queued yet)"} job ${submitted.job}: export ${
        submitted.resources.join(", ")
      } of ${a.account} (${a.format})`
    )
    if (a.json) yield* Console.log(JSON.stringify(submitted))
    else yield* Console.log(submitted.job)
    return 0 as ExitCode
  }).pipe(Effect.scoped)

// --- status, wait, fetch, cancel -------------------------------------------------------------------------------

export interface JobStatus {
  readonly job: string
  readonly account: string
  readonly kind: string
  readonly resource: string | null
  readonly state: string
  readonly rows: number
  readonly done: number
  readonly exitCode: number | null
  readonly owner: string | null
  readonly error: string | null
}

export const statusOf = (store: FleetStore, rows: ReadonlyArray<JobRow>) =>
  Effect.gen(function*() {
    const done = yield* store.rowsDone(rows.map((r) => r.id))
    return rows.map((r): JobStatus => ({
      job: r.id,
      account: r.account,
      kind: r.kind,
      resource: r.resource,
      state: r.state,
      rows: r.rows,
      // An export keeps no journal: its rows are done when it is.
      done: r.kind === "export" && r.state === "done" ? r.rows : done.get(r.id) ?? 0,
      exitCode: r.exit_code,
      owner: r.owner,
      error: r.error
    }))
  })

const statusLine = (s: JobStatus) =>
  `${s.job}  ${s.account}  ${s.kind} ${s.resource ?? ""}  ${s.state}  ${s.done}/${s.rows}${
    s.exitCode !== null ? `  exit ${s.exitCode}` : ""
  }${s.owner !== null && s.state === "running" ? `  on ${s.owner}` : ""}${s.error !== null ? `  ${s.error}` : ""}`

export const handleStatus = (a: Input<typeof statusConfig>) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    yield* warnEviction(store)
    yield* warnMissingIndexes(store)
    let seen = false
    while (true) {
      yield* checkIntact(store)
      const rows = Option.isSome(a.job)
        ? [yield* store.job(a.job.value).pipe(followed(a.job.value, seen))]
        : yield* store.recentJobs(200)
      seen = true
      const statuses = yield* statusOf(store, rows)
      if (a.json) yield* Console.log(JSON.stringify({ jobs: statuses }))
      else for (const s of statuses) yield* Console.log(statusLine(s))
      if (!a.watch || statuses.every((s) => finalStates.includes(s.state))) return 0 as ExitCode
      yield* Effect.sleep(2_000)
    }
  }).pipe(Effect.scoped)

/** A job's look-up: once it was seen, its absence is a loss of data, not "no job". */
const followed = (id: string, seen: boolean) => (job: Effect.Effect<JobRow, FleetError>) =>
  Effect.catchIf(job, (e) => seen && e.reason === "NotFound", () => Effect.fail(jobGone(id)))

/** A job's exit code as the contract defines it: its run's, or 3 when it was cancelled. */
export const jobExitCode = (row: JobRow): ExitCode => (row.state === "cancelled" ? 3 : (row.exit_code ?? 3)) as ExitCode

/**
 * `wait`'s watch: the job's row once it has ended, read every `pollMs`; the store checked intact before each read, and
 * a job gone once seen is a loss of data (exit 2), not "no job".
 */
export const untilEnded = (store: FleetStore, job: string, pollMs: number) =>
  Effect.gen(function*() {
    let seen = false
    while (true) {
      yield* checkIntact(store)
      const row = yield* store.job(job).pipe(followed(job, seen))
      seen = true
      if (finalStates.includes(row.state)) return row
      yield* Effect.sleep(pollMs)
    }
  })

export const handleWait = (a: Input<typeof waitConfig>) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    yield* warnEviction(store)
    yield* warnMissingIndexes(store)
    const row = yield* untilEnded(store, a.job, 500)
    const [status] = yield* statusOf(store, [row])
    yield* printSummary(a.json, { ...status, exitCode: jobExitCode(row), summary: row.summary }, [
      statusLine(status!)
    ])
    return jobExitCode(row)
  }).pipe(Effect.scoped)

/**
 * `fetch`'s work: the run directory of job `job`, once it has ended, written to `out` (a new or empty directory), and
 * its summary printed (one JSON line with `json`).
 */
export const fetchJob = (store: FleetStore, job: string, out: string, json: boolean) =>
  Effect.gen(function*() {
    const row = yield* store.job(job)
    if (!finalStates.includes(row.state)) {
      return yield* usage(`job ${job} is ${row.state}: fetch it once it has ended (fsm-bulk wait ${job})`)
    }
    const dir = Path.resolve(out)
    if (existsSync(dir) && !statSync(dir).isDirectory()) {
      return yield* usage(
        `--out ${out} is a file, not a directory: fetch into a new directory (nothing is overwritten)`
      )
    }
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      return yield* usage(`--out ${out} is not empty: fetch into a new directory (nothing is overwritten)`)
    }
    if (row.kind === "onboard") {
      const fetched = yield* fetchOnboard(store, row, dir)
      yield* printSummary(json, { job, runDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
        `job ${job} (onboard, ${row.state}) fetched into ${dir}: ${fetched.steps.length} step(s) with a journal${
          fetched.summary ? "" : "; it had not started, so there is no onboarding to resume"
        }`
      ])
      return 0 as ExitCode
    }
    if (row.kind === "export") {
      const written = yield* fetchExport(store, row, dir)
      yield* printSummary(json, { job, outDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
        written > 0
          ? `job ${job} (export, ${row.state}) fetched into ${dir}: ${written} files; check it with fsm-bulk verify ${dir}`
          : `job ${job} (export, ${row.state}) left no files: an export keeps its files only when it finishes`
      ])
      return 0 as ExitCode
    }
    const parts = yield* store.parts(job)
    if (parts.length > 0) return yield* fetchChunked(store, row, parts, Path.resolve(out), json)
    const lines = yield* store.journalLines(job)
    const sources = yield* store.files(job, "source/")
    const outs = yield* store.files(job, "out/")
    mkdirSync(Path.join(dir, "source"), { recursive: true })
    const source = sources[0]
    const sourceFile = source !== undefined ? Path.join(dir, "source", Path.basename(source.name)) : undefined
    if (source !== undefined && sourceFile !== undefined) writeFileSync(sourceFile, source.content)
    for (const f of outs) {
      const name = f.name.slice("out/".length)
      if (name === summaryFile) {
        const summary = JSON.parse(f.content.toString("utf8")) as Record<string, unknown>
        writeFileSync(
          Path.join(dir, name),
          JSON.stringify(
            { ...summary, runDir: dir, ...(sourceFile !== undefined ? { source: sourceFile } : {}) },
            null,
            2
          ) +
            "\n"
        )
      } else writeFileSync(Path.join(dir, name), f.content)
    }
    if (lines.length > 0) {
      const [head, ...rest] = lines
      const header = JSON.parse(head!) as { source: { file: string }; parse: { baseDir: string } }
      if (sourceFile !== undefined) {
        header.source.file = sourceFile
        header.parse.baseDir = Path.dirname(sourceFile)
      }
      writeFileSync(Path.join(dir, journalFile), [JSON.stringify(header), ...rest].join("\n") + "\n")
    }
    yield* printSummary(json, { job, runDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
      `job ${job} (${row.state}) fetched into ${dir}`
    ])
    return 0 as ExitCode
  })

export const handleFetch = (a: Input<typeof fetchConfig>) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    return yield* fetchJob(store, a.job, a.out, a.json)
  }).pipe(Effect.scoped)

/** A chunked job's run directory: the original file, its chunks' journals joined, reports written again. */
const fetchChunked = (store: FleetStore, row: JobRow, parts: ReadonlyArray<JobRow>, dir: string, json: boolean) =>
  Effect.gen(function*() {
    const source = (yield* store.files(row.id, "source/"))[0]
    if (source === undefined) {
      return yield* new FleetError({ reason: "NotFound", message: `job ${row.id} has no source file` })
    }
    mkdirSync(Path.join(dir, "source"), { recursive: true })
    const sourceFile = Path.join(dir, "source", Path.basename(source.name))
    writeFileSync(sourceFile, source.content)
    const journals = yield* Effect.forEach(parts, (p) => store.journalLines(p.id))
    const spec = row.spec as unknown as ImportSpec
    const summary = yield* mergeChunks({
      dir,
      source: sourceFile,
      read: spec.read,
      sha256: createHash("sha256").update(source.content).digest("hex"),
      journals,
      summaries: parts.map((p) => p.state === "done" ? (p.summary as unknown as Summary) : undefined),
      write: (path, text) => Effect.sync(() => writeFileSync(path, text))
    })
    yield* printSummary(json, { job: row.id, runDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
      `job ${row.id} (${row.state}, ${parts.length} parts${
        summary === undefined ? ", none started" : ""
      }) fetched into ${dir}`
    ])
    return 0 as ExitCode
  })

/**
 * `cancel`'s work: the job and every part marked cancelled (its lease raised: a worker running it stops before its next
 * request) and taken out of the queue; a job that has already ended is left as it is (its state returned), a staged
 * submission refused.
 */
export const cancelWithParts = (store: FleetStore, url: string, job: string) =>
  Effect.gen(function*() {
    const row = yield* store.job(job)
    // Marked cancelled, a staged submission would no longer be staged: its submit would fail, and neither it nor
    // the reclaim would remove it, its files kept for good. It is not a job yet: refused.
    if (row.state === stagingState) {
      return yield* new FleetError({
        reason: "Refused",
        message: `${job} is not a job: a submission still being stored by \`submit\` (nothing of it is queued). ` +
          `Stop that submit (Ctrl-C) to remove it; a submit killed leaves it to be removed by the next submit or a ` +
          `worker's sweep`
      })
    }
    if (finalStates.includes(row.state)) return row.state
    // A job in parts is cancelled with every part, which workers take and run as jobs of their own.
    const ids = [job, ...(yield* store.parts(job)).map((p) => p.id)]
    const queue = yield* openQueue(url)
    for (const id of ids) {
      yield* store.cancelJob(id)
      yield* dequeue(queue, id)
    }
    return undefined
  })

export const handleCancel = (a: Input<typeof cancelConfig>) =>
  Effect.gen(function*() {
    const { store, url } = yield* fleetStore(a.fleet)
    const ended = yield* cancelWithParts(store, url, a.job)
    if (ended !== undefined) {
      yield* printSummary(a.json, { job: a.job, state: ended }, [`job ${a.job} has already ended: ${ended}`])
      return 0 as ExitCode
    }
    yield* printSummary(a.json, { job: a.job, state: "cancelled" }, [
      `job ${a.job} cancelled: nothing more is sent; its journal and rows done so far stay (fsm-bulk fetch ${a.job} --out DIR)`
    ])
    return 0 as ExitCode
  }).pipe(Effect.scoped)
