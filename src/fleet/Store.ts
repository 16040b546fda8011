/**
 * What the fleet keeps beside the queue engine's own data: accounts (credentials sealed, see Secrets.ts), jobs
 * (what to run, where it stands, its outcome), files (each job's source and the reports its run wrote), leases
 * (one epoch per job: who may write its journal now), the journal lines themselves, and the egress-id lock.
 *
 * This is the port: every statement the fleet runs is one named operation of `FleetStore`; the commands, the
 * worker and the submitter hold no SQL or Redis command. One module per backend implements it, with the same
 * guarantees: PgStore.ts (schema `fsm_bulk`, in the same database as BullMQ's tables) and RedisStore.ts;
 * Stores.ts opens the one a fleet URL names.
 *
 * The rule that makes a job have one writer, which every implementation keeps: a journal line is appended only
 * by an operation that also finds the job's lease at the writer's epoch, in one atomic step, so a takeover (which
 * raises the epoch) refuses every later line of the old owner. In PostgreSQL it is one statement, with the lease
 * row locked for share, so a takeover waits for a line being written.
 */
import type { Scope } from "effect"
import type * as Effect from "effect/Effect"
import { describeCause, FleetError } from "./Errors.js"

export const schema = "fsm_bulk"

/** States a job does not leave. */
export const finalStates: ReadonlyArray<string> = ["done", "cancelled", "failed"]

/**
 * The state of a job whose `submit` stored it but has not yet queued it all (`addJobs`, then the queue, then
 * `markQueued`). A submit killed in between leaves it so; a worker's sweep (`unqueued`) queues it.
 */
export const submittingState = "submitting"

/**
 * The state of a submission's jobs while `submit` stores them in batches (`stageJob`, `stageFile`, `stageParts`), so
 * that its memory holds a few parts, not the file: nothing reads them (the queue has none of their ids, `status`
 * lists none, a worker's sweep queues none) until `publishJobs` makes all of them `submitting` in one small step. A
 * submit killed while staging leaves them so; `reclaimStaging` (the next submit, a worker's sweep) removes them and
 * their files once they have not been touched for `stagingReclaimMs`. A live submit touches its submission with every
 * batch and with a heartbeat (`touchStaging`, every `stagingHeartbeatMs`) however long it spends between batches.
 */
export const stagingState = "staging"

/**
 * How long a submission may sit staged untouched before it counts as abandoned (its submit killed) and is
 * reclaimed: ten leases, at least a minute (a live submit touches it with every batch and its heartbeat).
 */
export const stagingReclaimMs = (leaseMs: number): number => {
  // Tests only: `FSM_FLEET_STAGING_RECLAIM_MS` (a test reclaims a killed submit's parts without waiting a minute).
  const set = Number(process.env.FSM_FLEET_STAGING_RECLAIM_MS ?? "")
  return Number.isInteger(set) && set > 0 ? set : Math.max(60_000, 10 * leaseMs)
}

/**
 * How often a live `submit` touches its staged submission (`touchStaging`) between batches: about a lease, and at
 * least five times within the reclaim age, so a submit slow between two batches (a slow store, disk or machine, a big
 * workbook being split) is never taken for a dead one.
 */
export const stagingHeartbeatMs = (leaseMs: number): number =>
  Math.max(100, Math.min(leaseMs, Math.floor(stagingReclaimMs(leaseMs) / 5)))

export interface JobRow {
  readonly id: string
  readonly kind: string
  readonly account: string
  readonly resource: string | null
  readonly spec: Record<string, unknown>
  readonly state: string
  readonly rows: number
  readonly exit_code: number | null
  readonly summary: Record<string, unknown> | null
  readonly error: string | null
  readonly owner: string | null
  readonly parent: string | null
  readonly created: Date
  readonly finished: Date | null
}

/** A job as submitted: it starts `queued`. */
export interface NewJob {
  readonly id: string
  readonly kind: string
  readonly account: string
  readonly resource: string | null
  readonly spec: unknown
  readonly rows: number
  readonly parent: string | null
}

/** An account as listed: never its credentials. */
interface AccountEntry {
  readonly name: string
  readonly baseUrl: string
  readonly rate: string | null
}

/** An account with its sealed credentials (Secrets.ts). */
export interface StoredAccount extends AccountEntry {
  readonly secret: string
}

/** A file stored with a job when it is submitted (`addJobs`): its `source/…` name and bytes. */
export interface JobFile {
  readonly job: string
  readonly name: string
  readonly content: Uint8Array
}

interface StoredFile {
  readonly name: string
  readonly content: Buffer
}

/** How a job that runs whole ended: its state, exit code, summary, rows (kept when undefined), and error. */
interface WholeJobEnd {
  readonly state: "done" | "failed"
  readonly exitCode: number
  readonly summary: unknown
  readonly rows: number | undefined
  readonly error: string | undefined
}

/**
 * The journal of one step of an onboarding job: its lines are kept under `JOB/RESOURCE` (each step is a run of
 * its own, with its own row numbers), written under the job's lease.
 */
export const stepStream = (job: string, step: string): string => `${job}/${step}`

/**
 * A journal line's own `state` and `row` (import/Journal.ts), read from the line as an object, never searched in its
 * text: a line's record images hold every field the server gave, which may include fields of the same names. Neither,
 * for a line that is not a JSON object (one cut short by a crash).
 */
export const journalLineFields = (line: string): { readonly state?: unknown; readonly row?: unknown } => {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === "object" && value !== null
      ? value as { readonly state?: unknown; readonly row?: unknown }
      : {}
  } catch {
    return {}
  }
}

export interface Lease {
  readonly epoch: number
  readonly owner: string
}

/**
 * A worker's hold on its egress id. Like a job's lease, it is fenced: each request of the worker passes `gate`
 * before it is sent and `refusal` where its bytes leave (Fence.ts), so a worker that wakes from a pause after its
 * id lapsed and was taken by another worker sends nothing more under it.
 */
export interface EgressHold {
  /** Ends if the hold is lost while the worker runs (its store connection died, or its lock lapsed and was taken). */
  readonly lost: Effect.Effect<void>
  /**
   * Before a request: confirms the hold when its last confirmation is old (the process may have been paused), and
   * waits while the store cannot answer. False when the hold is lost (`lost` then ends too).
   */
  readonly gate: Effect.Effect<boolean>
  /** Read synchronously where a request's bytes leave: why they must not (the hold is lost or unconfirmed). */
  readonly refusal: () => string | undefined
}

export type Op<A> = Effect.Effect<A, FleetError>

export interface FleetStore {
  readonly backend: "postgres" | "redis"
  /** Creates what the engine and the tool need (idempotent). */
  readonly init: Op<void>
  /** Fails, saying to run `fleet init`, when the fleet was not initialised. */
  readonly requireInit: Op<void>
  /** What in the server's settings weakens the guarantees below (none: the settings are fit), one line each. */
  readonly settingsWarnings: Op<ReadonlyArray<string>>
  /**
   * Indexes this version's statements need that the fleet's database lacks (it was made by an older version and
   * `fleet init` was not run again since), each as its name and what goes slow without it; none on Redis.
   */
  readonly missingIndexes: Op<ReadonlyArray<{ readonly name: string; readonly serves: string }>>

  // accounts
  /** Adds the account, or replaces its address, budget and credentials. */
  readonly putAccount: (account: StoredAccount) => Op<void>
  readonly account: (name: string) => Op<StoredAccount | undefined>
  /** Every account by name. */
  readonly accounts: Op<ReadonlyArray<AccountEntry>>
  /** False when there was no such account. */
  readonly removeAccount: (name: string) => Op<boolean>

  // jobs
  readonly addJob: (job: NewJob) => Op<void>
  /**
   * Stores a submission's jobs (a job, or a chunked job with all its parts) in one atomic step, `submitting`:
   * all of them or none, so a submit killed midway never leaves a parent without its parts. Their source files
   * (customer data) are stored in the same step: a killed submit never leaves a file that no job refers to.
   */
  readonly addJobs: (jobs: ReadonlyArray<NewJob>, files: ReadonlyArray<JobFile>) => Op<void>
  /** Stores a submission's parent job `staging` (`stagingState`): the start of a staged submission. */
  readonly stageJob: (job: NewJob) => Op<void>
  /**
   * Writes `content` into the staged job's file at byte `offset` (what was after it replaced), so a file is stored a
   * piece at a time and a piece written again (an answer lost) changes nothing. Fails (`Refused`) when the job is no
   * longer staged (reclaimed); touches it otherwise.
   */
  readonly stageFile: (file: JobFile, offset: number) => Op<void>
  /**
   * Stores a batch of the staged job `parent`'s parts, `staging`, with their files, in one atomic step (again:
   * nothing changes). Fails (`Refused`) when the parent is no longer staged (reclaimed); touches it otherwise.
   */
  readonly stageParts: (parent: string, jobs: ReadonlyArray<NewJob>, files: ReadonlyArray<JobFile>) => Op<void>
  /**
   * The staged job `id` and its parts `staging` → `submitting` in one atomic step, once it holds `count` jobs (itself
   * and its parts); fails (`Refused`) when it does not (reclaimed). Asked again once published, it changes nothing.
   */
  readonly publishJobs: (id: string, count: number) => Op<void>
  /**
   * The staged job `id` touched now (the heartbeat of a live submit): false when it is no longer staged (reclaimed, or
   * published). Never waits for a batch being stored (that batch touches it itself) and is not queued behind one.
   */
  readonly touchStaging: (id: string) => Op<boolean>
  /** Removes the staged job `id`, its parts and their files (nothing when it was published). */
  readonly discardStaging: (id: string) => Op<void>
  /** Removes the staged submissions untouched for `olderThanMs` (their submit was killed), with their files: how many. */
  readonly reclaimStaging: (olderThanMs: number) => Op<number>
  /** The job (and its parts) `submitting` → `queued`: everything it runs is on the queue. */
  readonly markQueued: (id: string) => Op<void>
  /**
   * Submissions left `submitting` for more than `olderThanMs` (their `submit` was killed before it queued them):
   * each job, with what must be on the queue for it to run (its parts, or itself).
   */
  readonly unqueued: (
    olderThanMs: number
  ) => Op<ReadonlyArray<{ readonly id: string; readonly leaves: ReadonlyArray<string> }>>
  /**
   * What says that the store lost data the fleet had (on Redis: its marker key gone while its data remains, a job
   * listed whose record is gone; after a FLUSHALL, eviction or a restart without persistence), or none.
   */
  readonly lostData: Op<string | undefined>
  /** The server's eviction policy when it is not `noeviction` (Redis; keys the fleet needs can vanish), or none. */
  readonly evictionPolicy: Op<string | undefined>
  /** The job, or a `NotFound` failure. */
  readonly job: (id: string) => Op<JobRow>
  /** Jobs without a parent, newest first. */
  readonly recentJobs: (limit: number) => Op<ReadonlyArray<JobRow>>
  /** The parts of a chunked job, by id (their order in the file). */
  readonly parts: (parent: string) => Op<ReadonlyArray<JobRow>>
  /** Marks a job that has not ended as running on `owner` (an egress id). */
  readonly markRunning: (id: string, owner: string) => Op<void>
  /**
   * Records a run's end (`done`), in one atomic step that holds only while `epoch` holds the job's lease and the job
   * was not cancelled: true when recorded. False when the lease was lost (another worker took the job, or `cancel`
   * raised its epoch): nothing is written, and the caller must not say the job ended nor settle its parent. Asked
   * again after a lost answer, it records the same end again (true) while the lease still holds.
   */
  readonly finishJob: (
    id: string,
    epoch: number,
    end: { readonly exitCode: number; readonly summary: unknown; readonly rows: number }
  ) => Op<boolean>
  /** Records a run's failure (`failed`), under the same rule as `finishJob`: true when recorded, false when not. */
  readonly failJob: (
    id: string,
    epoch: number,
    end: { readonly exitCode: number; readonly error: string }
  ) => Op<boolean>
  /**
   * A chunked job ends when its last chunk ends: its state and exit code then follow from its chunks' (`settled`:
   * every part failed → failed, with the largest of their exit codes and their reasons; else done with 3 if one
   * was stopped, cancelled or failed, naming the failed ones' reasons, else 1 if one had rows that did not end
   * well, else 0). Nothing while a chunk has not ended, or when the parent already ended.
   */
  readonly settleParent: (parent: string) => Op<boolean>
  /**
   * Jobs in parts that have not ended although a part of theirs has (on PostgreSQL: every part): their last part's
   * worker stopped between the part's end and the job's (`finishJob`/`failJob`, then `settleParent`: two steps), or
   * its `settleParent` failed past its retries. A worker's sweep settles them (Worker.ts), so such a job still ends.
   */
  readonly unsettledParents: Op<ReadonlyArray<string>>
  /**
   * Cancels a job that has not ended, and raises its lease epoch whoever held it: its holder's next line or
   * request is refused.
   */
  readonly cancelJob: (id: string) => Op<void>
  /** For each job of `ids` (a chunked one with its parts): the distinct rows its journal says are done. */
  readonly rowsDone: (ids: ReadonlyArray<string>) => Op<ReadonlyMap<string, number>>

  // files
  /** Stores a file of the job (replacing one of the same name). */
  readonly putFile: (job: string, name: string, content: Uint8Array) => Op<void>
  /** The job's files whose names start with `prefix`, by name. */
  readonly files: (job: string, prefix: string) => Op<ReadonlyArray<StoredFile>>

  // leases and the journal
  /**
   * Takes the lease of a job that has not ended, in one step: the next epoch, or none when the job ended
   * meanwhile (a worker that stalled while another finished it must not take it again).
   */
  readonly takeOpenLease: (job: string, owner: string) => Op<number | undefined>
  /** True while `epoch` is the job's current lease. */
  readonly holdsLease: (job: string, epoch: number) => Op<boolean>
  /** The job's current lease, if one was ever taken. */
  readonly lease: (job: string) => Op<Lease | undefined>
  /** Appends a journal line if `epoch` still holds the lease, atomically; false when it does not (nothing written). */
  readonly appendLine: (job: string, epoch: number, line: string) => Op<boolean>
  /**
   * Appends journal lines in their order if `epoch` still holds the lease, all in one step (one statement, one
   * script): all of them or, when it does not hold, none (false). What a journal's group commit writes.
   */
  readonly appendLines: (job: string, epoch: number, lines: ReadonlyArray<string>) => Op<boolean>
  /** The job's journal lines in the order they were written. */
  readonly journalLines: (job: string) => Op<ReadonlyArray<string>>

  // jobs that run whole (onboard, export)
  /**
   * Appends a line to another journal of the job (`stream`: an onboarding step's, `stepStream`) if `epoch` still
   * holds the job's lease, atomically as `appendLine`; false when it does not. `journalLines(stream)` reads it.
   */
  readonly appendStreamLine: (job: string, epoch: number, stream: string, line: string) => Op<boolean>
  /** Stores (or replaces) a file of the job if `epoch` still holds its lease, atomically; false when it does not. */
  readonly putFileUnderLease: (job: string, epoch: number, name: string, content: Uint8Array) => Op<boolean>
  /**
   * Ends a job in one atomic step that holds only while `epoch` holds its lease: its outputs (`out/…`) replaced
   * by `outputs` as a whole, and its outcome recorded. False when the lease was lost: nothing is written, so the
   * files a job leaves are those of one run, never a mix of two owners'.
   */
  readonly endWhole: (
    job: string,
    epoch: number,
    outputs: ReadonlyArray<{ readonly name: string; readonly content: Uint8Array }>,
    end: WholeJobEnd
  ) => Op<boolean>

  // workers
  /**
   * Holds egress id `id` for the scope, or fails (`Locked`) when another live worker holds it. The hold lapses
   * with its process, however that ends. With `sourceAddress` (the worker's `--source-address`), the address is
   * held too: a live worker of another egress id leaving from it is refused (`Locked`, naming that id), as two
   * ids on one address would each spend the whole of the address's budget.
   */
  readonly holdEgress: (
    id: string,
    sourceAddress?: string
  ) => Effect.Effect<EgressHold, FleetError, Scope.Scope>
  /** The egress ids held now: the workers alive, who could still take a job. */
  readonly liveWorkers: Op<ReadonlyArray<string>>
}

/** A chunked job's end, from its parts' ends (all of them ended): none while one has not. */
export const settled = (
  parts: ReadonlyArray<{ readonly state: string; readonly exit_code: number | null; readonly error: string | null }>
): { readonly state: "done" | "failed"; readonly exitCode: number | null; readonly error?: string } | undefined => {
  if (parts.some((p) => !finalStates.includes(p.state))) return undefined
  const failed = parts.filter((p) => p.state === "failed")
  const worst = parts.reduce<number | null>(
    (w, p) => p.exit_code === null ? w : w === null ? p.exit_code : Math.max(w, p.exit_code),
    null
  )
  // The failed parts' reasons, each once (a thousand parts failing for one reason say it once).
  const reasons = [...new Set(failed.map((p) => p.error ?? "no reason recorded"))]
  const said = reasons.slice(0, 3).join("; ") + (reasons.length > 3 ? `; and ${reasons.length - 3} more` : "")
  if (parts.length > 0 && failed.length === parts.length) {
    return { state: "failed", exitCode: Math.max(2, worst ?? 2), error: `every part failed: ${said}` }
  }
  const bad = parts.some((p) => p.state !== "done" || (p.exit_code ?? 0) >= 2)
  return {
    state: "done",
    exitCode: bad ? 3 : worst,
    ...(failed.length > 0 ? { error: `${failed.length} of ${parts.length} parts failed: ${said}` } : {})
  }
}

/**
 * PostgreSQL's error classes (the first two characters of a SQLSTATE) and codes that pass: a connection lost
 * (08), a transaction rolled back by a conflict (40: serialization, deadlock), resources short for now (53: disk
 * full, out of memory, too many connections), a lock not granted (55P03) or an object in use (55006), an operator's
 * or a timeout's intervention (57014 statement timeout, 57P01–57P03 and 57P05: shutdown, restart, starting up, idle
 * session ended), a system error such as an I/O error (58), a session ended for idling in a transaction (25P03).
 */
const pgTransientClasses: ReadonlyArray<string> = ["08", "40", "53", "58"]
const pgTransientCodes: ReadonlyArray<string> = ["55P03", "55006", "57014", "57P01", "57P02", "57P03", "57P05", "25P03"]

/**
 * The pause before a Redis connection's next reconnection attempt, for every connection of the fleet's (the store's,
 * the takeover claim's, and the queue's and workers' BullMQ connections): 100 ms more per attempt, at most one
 * second. BullMQ's own default grows to 20 s (`e^attempt` ms), so after a Redis restart of a few seconds a worker
 * could sit idle for up to 20 s more with the server back.
 */
export const redisReconnectDelay = (attempt: number): number => Math.min(100 * Math.max(1, attempt), 1_000)

/**
 * How long anything the fleet asks its store may wait for an answer before it fails as one without an answer
 * (`Unavailable`, then tried again within the lease, Transient.ts): a lease, at least 10 s. On both backends, for every
 * connection the fleet opens (the store's, the takeover claim's, and on PostgreSQL BullMQ's pools too):
 *
 * - Redis: a command's `commandTimeout`. Without it a command had no end: a connection killed after the command was
 *   sent (an answer past the server's `client-output-buffer-limit`, a proxy resetting it) was opened again and the
 *   command sent again by the client, every time, so a worker's read of a claimed job's workbook never failed: the job
 *   held, its lock renewed, `wait` never returning (test/fleet/claimed-read-cli.test.ts).
 * - PostgreSQL (`pgTimeouts`): a statement's answer and a new connection. Without them a server, or a NAT or failover
 *   in between, that stopped answering without resetting the connection held a worker's statement for ever (until TCP
 *   keep-alive noticed, hours): the job never ended (test/fleet/stalled-store-cli.test.ts).
 */
export const storeAnswerTimeoutMs = (leaseMs: number): number => Math.max(10_000, leaseMs)

/**
 * The deadline of a Redis command about to be sent that must not run once its sender stopped waiting for it (a lease
 * take, RedisStore.ts; the takeover claim, Queue.ts): the server's clock now (`time`, its `TIME` reply, read just
 * before) plus the store's answer timeout, in ms on that clock. ioredis sends a command again when its connection comes
 * back, also one whose caller gave up on it ("Command timed out"), and a server that was frozen runs what it had
 * received when it wakes: a take given up on while the path to the store was silent landed later, over the lease of
 * the worker that took the job meanwhile (issue 29, seed 896; test/fleet/late-take-cli.test.ts), and a claim given up
 * on made its job active under a token no slot held, which nobody could claim for a lease
 * (test/fleet/late-claim-cli.test.ts). The script refuses what arrives past its deadline (`luaPastDeadline`). The
 * client gives up on the command (its `commandTimeout`, armed when it is sent, after this time was read) no sooner
 * than that deadline on the server's clock: only the two clocks' rates must agree over an answer timeout, not their
 * times (a step of the server's clock moves the deadline by as much).
 */
export const serverDeadline = (time: ReadonlyArray<number | string>, leaseMs: number): string =>
  String(Number(time[0]) * 1_000 + Math.floor(Number(time[1]) / 1_000) + storeAnswerTimeoutMs(leaseMs))

/**
 * A Lua script's first statement that refuses a command arriving past its deadline (`serverDeadline`, in `arg`, say
 * `ARGV[3]`): the script ends at once with -1, having done nothing.
 */
export const luaPastDeadline = (arg: string): string =>
  `local t = redis.call('TIME')
    if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(${arg}) then return -1 end`

/**
 * The timeouts of every PostgreSQL pool the fleet opens (`pg.Pool` options, also passed through BullMQ's PostgreSQL
 * backend to its pools), all `storeAnswerTimeoutMs`:
 *
 * - `query_timeout`: a statement without an answer fails on the client ("Query read timeout"; `isTransient`: tried
 *   again). The client it ran on still waits for that answer: it is released with the error, so the pool closes it
 *   (`client.release(err)`, `pool.query` does so itself) and the next try opens a new connection;
 * - `connectionTimeoutMillis`: a new connection (or a wait for a free one of the pool) that takes longer fails;
 * - `idle_in_transaction_session_timeout` (sent to the server with the connection): a session left idle inside a
 *   transaction (its client gone silent between two statements) is ended by the server, which rolls the transaction
 *   back and frees its row locks; without it the retry on a new connection would wait on them for as long;
 * - `keepAlive`: TCP keep-alive on every connection, from a lease of silence on (then the system's probe interval), so
 *   an idle connection whose peer is gone (the egress id's session) ends instead of lasting for ever.
 */
export const pgTimeouts = (leaseMs: number) => {
  const ms = storeAnswerTimeoutMs(leaseMs)
  return {
    query_timeout: ms,
    connectionTimeoutMillis: ms,
    idle_in_transaction_session_timeout: ms,
    keepAlive: true,
    keepAliveInitialDelayMillis: leaseMs
  }
}

/**
 * Redis's answers that pass: a server loading its data after a restart, busy with a script, a replica that took over
 * and does not accept writes yet (READONLY, MASTERDOWN), a write refused while the disk cannot persist (MISCONF) or
 * memory is full (OOM, under `noeviction`), and the cluster's and replication's "try again".
 */
const redisTransientReplies: ReadonlyArray<string> = [
  "LOADING",
  "BUSY",
  "TRYAGAIN",
  "CLUSTERDOWN",
  "MASTERDOWN",
  "READONLY",
  "MISCONF",
  "OOM",
  "NOREPLICAS"
]

/**
 * Whether a store driver's failure may pass if the operation is tried again: the one place that decides it, for both
 * backends (and the queue engine's calls, Queue.ts). The server's own refusal of a statement or a script (a SQLSTATE
 * outside the passing classes above; a Redis error reply other than those above) will not pass; every failure
 * without an answer from the server (a connection refused, reset or closed, a timeout, the client's retries used up
 * while it reconnects) may, and so does anything unknown: trying again for a bounded time is safe (Transient.ts).
 */
export const isTransient = (cause: unknown): boolean => {
  if (typeof cause !== "object" || cause === null) return true
  const e = cause as {
    readonly code?: unknown
    readonly severity?: unknown
    readonly name?: unknown
    message?: unknown
  }
  // PostgreSQL's answer: a SQLSTATE with its severity (a Node system error's code, EPIPE say, has no severity).
  if (typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === "string") {
    return pgTransientClasses.includes(e.code.slice(0, 2)) || pgTransientCodes.includes(e.code)
  }
  // Redis's answer: an error reply, named by its first word.
  if (e.name === "ReplyError" && typeof e.message === "string") {
    return redisTransientReplies.includes(e.message.split(/[\s:]/, 1)[0]!.toUpperCase())
  }
  return true
}

/** A failure of the fleet store at `url`: `Unavailable` when it may pass (`isTransient`), else `Refused`. */
export const storeFailure = (url: string, cause: unknown) =>
  isTransient(cause)
    ? new FleetError({
      reason: "Unavailable",
      message: `the fleet store ${redactUrl(url)} cannot be used: ${describeCause(cause)}`,
      cause
    })
    : new FleetError({
      reason: "Refused",
      message: `the fleet store ${redactUrl(url)} refused an operation: ${describeCause(cause)}`,
      cause
    })

export const notInitialised = new FleetError({
  reason: "Refused",
  message: "the fleet is not initialised: run `fsm-bulk fleet init`"
})

/** The store lost data the fleet had (`lostData`'s finding): nothing it says can be trusted whole. */
export const lostDataError = (finding: string) =>
  new FleetError({
    reason: "Lost",
    message: `the fleet store has lost data: ${finding}. It was evicted or deleted (on Redis: a maxmemory-policy ` +
      `other than noeviction, a FLUSHALL, a restart without persistence; on PostgreSQL: rows deleted by hand): ` +
      `jobs and their journals may be gone, submit them again (docs/fleet.md, "Faults")`
  })

/** A staged submission that is no longer there whole (reclaimed as abandoned while its submit was slow). */
export const stagingGone = (id: string) =>
  new FleetError({
    reason: "Refused",
    message: `the parts of job ${id} being stored were removed meanwhile (a submission untouched for a while counts ` +
      `as abandoned and is reclaimed): nothing of it was queued; submit the file again`
  })

export const noJob = (id: string) => new FleetError({ reason: "NotFound", message: `no job ${id} in this fleet` })

export const egressTaken = (id: string) =>
  new FleetError({
    reason: "Locked",
    message:
      `another worker already runs with --egress-id ${id}: one worker per egress address, as the budget is counted per address`
  })

export const sourceTaken = (address: string, other: string | undefined) =>
  new FleetError({
    reason: "Locked",
    message: `another worker${
      other !== undefined ? ` (--egress-id ${other})` : ""
    } already sends from --source-address ${address}: the API counts its budget per address, so two egress ids on one address would spend it twice; run this worker with another --source-address, or not at all`
  })

/** The address without its password, for messages. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return "(the --fleet address)"
  }
}

/**
 * The warning for indexes `fleet init` would add (`FleetStore.missingIndexes`), or none: said once by `worker` and
 * `status`, which work without them, only slower.
 */
export const missingIndexesWarning = (
  missing: ReadonlyArray<{ readonly name: string; readonly serves: string }>
): string | undefined =>
  missing.length === 0 ?
    undefined :
    `the fleet's database lacks ${missing.length === 1 ? "an index" : `${missing.length} indexes`} this version uses (${
      missing.map((m) => `${m.name}: ${m.serves}`).join("; ")
    }); everything still works, only slower: run \`fsm-bulk fleet init\` once to add ${
      missing.length === 1 ? "it" : "them"
    } (it is idempotent, and keeps every job and account)`
