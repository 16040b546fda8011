/**
 * What `status`, `wait` and `cancel` run, loaded when one of them runs (cli/Lazy.ts): they read and mark jobs in the
 * store, and load neither the import pipeline nor the export that `submit` and `fetch` need (FetchHandlers.ts,
 * SubmitHandlers.ts).
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { say, summary as printSummary } from "../console/Output.js"
import { type cancelConfig, type statusConfig, type waitConfig } from "./Commands.js"
import { fleetStore } from "./CommandStore.js"
import { FleetError } from "./Errors.js"
import { dequeue, openQueue } from "./Queue.js"
import {
  finalStates,
  type FleetStore,
  type JobRow,
  lostDataError,
  missingIndexesWarning,
  stagingState
} from "./Store.js"

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

// --- status, wait -------------------------------------------------------------------------------

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

// --- cancel --------------------------------------------------------------------------------------------------------

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
