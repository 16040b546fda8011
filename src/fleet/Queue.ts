/**
 * The engine: BullMQ on its PostgreSQL backend, or on its Redis backend for a `redis://` address, one queue
 * `fsm-bulk` whose jobs carry only our job id (what to run is in the fleet store's jobs, credentials in its
 * accounts, never in job data; Store.ts, RedisStore.ts). Workers pull jobs when they have room; a job whose worker
 * stops renewing its lock (killed, paused) goes back to the queue after the lock expires and another worker takes
 * it over, so attempts and stalls are allowed many times: our journal, not the queue, decides what was done. Besides
 * BullMQ's own fetch, each worker's takeover slots claim such jobs themselves, in BullMQ's table or keys (one statement,
 * one script), so that new jobs queued ahead of them do not delay them (`startEngineWorker`).
 */
import type { BackendClasses, IQueueBackend, Job, JobsOptions, PgPool } from "bullmq"
import type { Scope } from "effect"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { createHash, randomUUID } from "node:crypto"
import type { Pool } from "pg"
import { UsageError } from "../Errors.js"
import { describeCause, FleetError } from "./Errors.js"
import { errorsHeard, loadBullmq, loadIoredis, scopedPgPool } from "./Packages.js"
import {
  isTransient,
  luaPastDeadline,
  pgTimeouts,
  redisReconnectDelay,
  serverDeadline,
  storeAnswerTimeoutMs
} from "./Store.js"

const queueName = "fsm-bulk"

/** What a queued job carries: our job id only. */
export interface JobData {
  readonly job: string
}

/**
 * The format of the jobs this version submits: what a worker must understand to run them as submitted (the
 * whole-file verdicts a part carries, the settings of its spec). Each job carries it (`spec.jobFormat`); a worker
 * leaves a job of a newer format to a newer worker instead of running it wrongly. Raise it when a job's meaning
 * changes so that an older worker would send what it should not.
 */
export const jobFormat = 2

/** How long a worker's hold on a job lasts without renewal (FSM_FLEET_LEASE_MS; default 30 s, at least 1 s). */
export const leaseMs = Effect.gen(function*() {
  const ms = yield* Config.option(Config.integer("FSM_FLEET_LEASE_MS")).pipe(
    Effect.orElseSucceed(() => Option.none<number>())
  )
  return Option.getOrElse(Option.filter(ms, (n) => n >= 1_000), () => 30_000)
})

/** A `redis://` or `rediss://` (TLS) address: the fleet on Redis. */
export const isRedisUrl = (url: string): boolean => /^rediss?:/i.test(url.trim())

/**
 * An address as text with its password hidden, also when it does not parse as a URL (`redactUrl` in Store.ts is for
 * those that do): everything between `//USER:` and the last `@` (a password may hold `/` and `@`; more hidden is safe).
 */
const withoutPassword = (text: string): string => text.replace(/^([^/]*\/\/[^/:@]*:).*@/, "$1***@")

/** The `--fleet` address, checked: a postgres:// or redis:// URL. */
export const fleetUrl = (text: string): Effect.Effect<string, UsageError> =>
  Effect.suspend(() => {
    let url: URL
    try {
      url = new URL(text.trim())
    } catch {
      return Effect.fail(
        new UsageError({
          message: `--fleet / FSM_FLEET_URL: "${
            withoutPassword(text.trim())
          }" is not an address (postgres://… or redis://…)`
        })
      )
    }
    if (url.protocol === "postgres:" || url.protocol === "postgresql:") return Effect.succeed(text.trim())
    if (url.protocol === "redis:" || url.protocol === "rediss:") return Effect.succeed(text.trim())
    return Effect.fail(
      new UsageError({
        message: `--fleet / FSM_FLEET_URL: ${url.protocol} is not supported: use postgres://… or redis://…`
      })
    )
  })

const engine = loadBullmq

/** A failure of the engine's store, classified as the fleet store's own are (`isTransient`, Store.ts). */
const failed = (what: string) => (cause: unknown) =>
  new FleetError({
    reason: isTransient(cause) ? "Unavailable" : "Refused",
    message: `${what}: ${describeCause(cause)}`,
    cause
  })

/** Creates (or upgrades) BullMQ's tables; idempotent. */
export const migrateEngine = (pool: Pool) =>
  Effect.flatMap(engine, (bullmq) =>
    Effect.tryPromise({
      try: () => bullmq.runMigrations(pool),
      catch: failed("cannot create the queue's tables")
    }))

/** What the fleet does with the queue, on either backend. */
export interface FleetQueue {
  readonly add: (name: string, data: JobData, options: JobsOptions) => Promise<unknown>
  readonly remove: (id: string) => Promise<unknown>
  /** A job with its lock's calls (the takeover slot runs one it claimed). */
  readonly getJob: (id: string) => Promise<Job<JobData> | undefined>
  readonly close: () => Promise<void>
  readonly disconnect: () => Promise<void>
  readonly on: (event: "error", listener: (error: Error) => void) => unknown
}

/**
 * The queue, for submitting and cancelling, closed with the scope. Its connection's errors are the calls' to report
 * (`enqueue` fails with them): unheard, BullMQ printed each reconnection's stack trace. Closing waits at most a few
 * seconds for a server that does not answer (down), then drops the connection: closing alone waited for it to return.
 */
export const openQueue = (url: string): Effect.Effect<FleetQueue, never, Scope.Scope> =>
  Effect.gen(function*() {
    const [bullmq, lease] = yield* Effect.all([engine, leaseMs])
    return yield* Effect.acquireRelease(
      Effect.sync((): FleetQueue => {
        const queue: FleetQueue = isRedisUrl(url)
          ? new (bullmq.withBackend(bullmq.createRedisBackend).Queue)<JobData>(queueName, {
            connection: { url, retryStrategy: redisReconnectDelay }
          })
          : new (bullmq.withBackend(bullmq.createPostgresBackend).Queue)<JobData>(queueName, {
            // BullMQ passes these on to its pg.Pool: every statement bounded (Store.ts), every connection's errors heard
            // (Packages.ts). A queue opens no LISTEN connection (a worker does: startEngineWorker).
            connection: { connectionString: url, max: 2, ...pgTimeouts(lease), ...errorsHeard }
          })
        queue.on("error", () => undefined)
        return queue
      }),
      (q) =>
        // A release runs uninterruptibly: without `interruptible`, the timeout could not end the wait.
        Effect.promise(() => q.close()).pipe(
          Effect.interruptible,
          Effect.timeout(3_000),
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => void q.disconnect().catch(() => undefined)))
        )
    )
  })

/**
 * Queues job `id` (BullMQ's job id is ours: adding it twice queues it once). A queue that does not answer within a
 * lease fails as one that cannot be reached (`Unavailable`): on Redis, BullMQ's client waits for the server to come
 * back instead of failing, and a `submit` whose jobs were stored hung for as long as the server was down.
 */
export const enqueue = (queue: FleetQueue, id: string) =>
  Effect.flatMap(leaseMs, (ms) =>
    Effect.tryPromise({
      try: () =>
        queue.add("run", { job: id }, {
          jobId: id,
          attempts: 1_000,
          backoff: { type: "fixed", delay: 500 },
          removeOnComplete: true,
          removeOnFail: 100
        }),
      catch: failed("cannot queue the job")
    }).pipe(
      Effect.timeoutFail({
        duration: ms,
        onTimeout: () =>
          new FleetError({
            reason: "Unavailable",
            message: `cannot queue the job: the queue did not answer in ${ms} ms`
          })
      }),
      Effect.asVoid
    ))

/** Takes a queued job off the queue, when it is waiting (a running one is stopped through its lease). */
export const dequeue = (queue: FleetQueue, id: string) =>
  Effect.tryPromise({ try: () => queue.remove(id), catch: failed("cannot remove the job from the queue") }).pipe(
    Effect.ignore
  )

/**
 * Gives a parked job (`LeftForOthers`: in the queue's delayed state) again now instead of at its park's end: true
 * when it was parked and is waiting now, false when it was not parked (taken, ended, gone) or the queue failed.
 */
export const promote = (queue: FleetQueue, id: string) =>
  Effect.tryPromise(async () => {
    const job = await queue.getJob(id)
    if (job === undefined || !(await job.isDelayed())) return false
    await job.promote()
    return true
  }).pipe(Effect.orElseSucceed(() => false))

/**
 * How often a worker runs BullMQ's own stall check (the queue moves a job whose lock lapsed back to the waiting list,
 * marking every active job on one pass and moving those still lapsed on the next): every half lease, at least every
 * 500 ms. It is not what takes a killed worker's job over: every slot's claim (`claimExpiredSql`, `claimExpiredLua`)
 * takes an active job whose lock lapsed directly, at the takeover slots' poll (`takeoverPollMs`), so a job waits at
 * most the lease and a poll after its worker's kill whatever this is. It was a quarter lease, at most a second: each
 * pass one round trip from every idle worker and, on PostgreSQL, a write of every active job's row (the mark), for
 * nothing the claim had not done already (docs/benchmarks.md, "An idle worker").
 */
const stalledInterval = (leaseMs: number): number => Math.max(500, Math.floor(leaseMs / 2))

/**
 * How often a worker whose takeover slot is free asks the store for a job to take over: a sixth of the lease, between
 * 250 ms and 1 s. A killed worker's job is then taken within the lease and this of the kill.
 */
const takeoverPollMs = (leaseMs: number): number => Math.max(250, Math.min(1_000, Math.floor(leaseMs / 6)))

/**
 * How many taken-over jobs a worker runs at once besides its `jobs` job slots: as many as it has job slots. A worker
 * killed while running N jobs is then taken over at once by any survivor of at least N slots, however busy, instead
 * of one job a survivor and the rest waiting for job slots to free (a part's time each: 10.8 and 15.1 s with a 6 s
 * lease in the scale smoke, issue 29). The worker's budget is one for all its slots (Worker.ts), so a busy worker that
 * takes jobs over sends no faster: its jobs share the same requests a second. New work is not starved: the takeover
 * slots take only jobs to take over, the job slots still take new jobs as they free.
 */
export const takeoverSlots = (jobs: number): number => Math.max(1, jobs)

/**
 * A job this worker refused (it cannot serve it: a newer format, an account its key cannot open), left for the other
 * workers: the queue parks it (`parkMs`) instead of giving it again after the 500 ms back-off, which had this worker's
 * free slots claim it again and again while the workers that could serve it were busy (about 120 claims a minute, each
 * a round of store statements; and each hand-back spent one of the job's 1,000 queue attempts, so by the queue's
 * settings it would have failed there for good after about eight minutes). `JobRunner.ts` fails a job's run with it.
 */
export class LeftForOthers extends Error {}

/** What running a job the queue gave ends with: done (or handed back), or refused and left for the others. */
type RunOutcome = void | "left-for-others"

/**
 * How long a refused job stays parked (`LeftForOthers`): ten leases, at least a minute. Every other worker's claim takes
 * a parked job at once (`claimExpiredSql`, `claimExpiredLua`), a worker that refused it never does; once the time is
 * up the queue gives it again to any worker, so the refusers look again whether it should end (every live worker
 * refused it) once a park, not every half second.
 */
export const parkMs = (leaseMs: number): number => Math.max(60_000, 10 * leaseMs)

/**
 * A job the queue holds back for more than this is a parked one (the claim takes it); the queue's own delays (the
 * back-off of a job handed back) are 500 ms.
 */
const parkedAfterMs = 5_000

/**
 * A job handed back to the queue after a stall or by its worker (its stall count or attempts raised), as the claim on
 * PostgreSQL looks for it; the index `job_returned` (`returnedIndexDdl`, made by `fleet init`) holds only these.
 */
const returnedJob = "state = 'waiting' AND (stalled_count > 0 OR attempts_made > 0)"

/**
 * The index the claim on PostgreSQL finds returned jobs by, in BullMQ's schema (BullMQ's own `job_ready_idx` holds
 * every waiting job: on a queue of 100,000 new jobs the claim read them all, at every free slot's fetch). Made by
 * `fleet init` (PgStore.ts), after BullMQ's tables.
 */
export const returnedIndexDdl =
  `CREATE INDEX IF NOT EXISTS job_returned ON bullmq.job (queue, seq) WHERE ${returnedJob}`

/**
 * The takeover claim on PostgreSQL, in BullMQ's own table, one statement: a job handed back to the queue after a stall
 * or by its worker, first in the order they came back (index `job_returned`), else a job parked because a worker
 * refused it (`LeftForOthers`; BullMQ's `job_delayed_idx`), else an active job whose lock lapsed (its worker died or
 * stalled), the oldest expiry first (BullMQ's `job_active_idx`); each is looked for only when there is none before
 * it, and none this worker refused ($6). It is made active under the slot's lock as BullMQ's own claim makes it
 * (`move_to_active`), the row locked `FOR UPDATE SKIP LOCKED` as there and as the stall sweep locks it: a job is
 * claimed once, by this or by the queue's own fetch. A job not started yet is never taken here. Times are BullMQ's
 * (the worker's clock in ms, as its locks are set and swept). The server runs and commits the statement whenever it
 * gets it, also after its client gave up on it (`query_timeout`), as when the path comes back or a frozen server wakes;
 * the lock it then sets counts from the sending ($2), at least an answer timeout (a lease) before: lapsed already, the
 * job claimable at once by any slot. Counted from the server's clock instead, such a claim would strand its job for a
 * lease, as the Redis claim did without its deadline (test/fleet/late-claim-cli.test.ts).
 */
export const claimExpiredSql = `
WITH returned AS (
  SELECT queue, id FROM bullmq.job
   WHERE queue = $1 AND ${returnedJob} AND NOT (id = ANY($6::text[]))
   ORDER BY seq
   LIMIT 1
   FOR UPDATE SKIP LOCKED
), parked AS (
  SELECT queue, id FROM bullmq.job
   WHERE queue = $1 AND state = 'delayed' AND process_at_ms > $2::bigint + ${parkedAfterMs} AND NOT (id = ANY($6::text[]))
     AND NOT EXISTS (SELECT FROM returned)
   ORDER BY process_at_ms
   LIMIT 1
   FOR UPDATE SKIP LOCKED
), lapsed AS (
  SELECT queue, id FROM bullmq.job
   WHERE queue = $1 AND state = 'active' AND locked_until_ms < $2 AND NOT (id = ANY($6::text[]))
   ORDER BY locked_until_ms
   LIMIT 1
   FOR UPDATE SKIP LOCKED
), expired AS (
  SELECT queue, id FROM returned
  UNION ALL
  SELECT queue, id FROM parked
  UNION ALL
  SELECT queue, id FROM lapsed WHERE NOT EXISTS (SELECT FROM returned) AND NOT EXISTS (SELECT FROM parked)
), claimed AS (
  UPDATE bullmq.job j
     SET stalled_count = j.stalled_count + CASE WHEN j.state = 'active' THEN 1 ELSE 0 END,
         state = 'active', lock_token = $3, locked_until_ms = $2 + $4, processed_at_ms = $2, processed_by = $5,
         attempts_started = j.attempts_started + 1, stalled_marked = false, process_at_ms = NULL, delay_ms = 0
    FROM expired WHERE j.queue = expired.queue AND j.id = expired.id
  RETURNING j.id
)
SELECT id, bullmq.publish_event($1, 'active', jsonb_build_object('jobId', id, 'prev', 'takeover')) FROM claimed`

/**
 * The same claim on Redis, one script over BullMQ's keys (KEYS: active, wait, stalled, events, delayed; ARGV: key
 * prefix, token, lock ms, now, how many of the wait list's next jobs to look at, the delayed set's score from which a
 * job is parked, the claim's deadline on the server's clock (`serverDeadline`), then the ids of the jobs this worker
 * refused): a job back in the wait list after a stall or a hand-back (its `stc` or `atm` raised), the next the queue
 * would give first, else a job parked because a worker refused it (`LeftForOthers`), else an active job whose lock key
 * is gone, the longest active first; none this worker refused. It is made active with this worker's lock key (and out
 * of the stall check's set, as BullMQ's lock renewal takes it), as `moveToActive` makes a job active. A claim that
 * arrives past its deadline claims nothing (-1): its slot gave up on it, and ioredis sent it again at its
 * reconnection; landed, it made the job active under a token no slot held, claimed by nobody for a lease.
 */
const claimExpiredLua = `
${luaPastDeadline("ARGV[7]")}
local refused = {}
for i = 8, #ARGV do refused[ARGV[i]] = true end
local function claim(id, from)
  local key = ARGV[1] .. id
  if from == "wait" then
    redis.call("LREM", KEYS[2], 1, id)
    redis.call("LPUSH", KEYS[1], id)
  elseif from == "delayed" then
    redis.call("ZREM", KEYS[5], id)
    redis.call("LPUSH", KEYS[1], id)
  else
    redis.call("HINCRBY", key, "stc", 1)
  end
  redis.call("SET", key .. ":lock", ARGV[2], "PX", ARGV[3])
  redis.call("SREM", KEYS[3], id)
  redis.call("HSET", key, "processedOn", ARGV[4])
  redis.call("HINCRBY", key, "ats", 1)
  redis.call("XADD", KEYS[4], "*", "event", "active", "jobId", id, "prev", "takeover")
  return id
end
local waiting = redis.call("LRANGE", KEYS[2], -tonumber(ARGV[5]), -1)
for i = #waiting, 1, -1 do
  local f = redis.call("HMGET", ARGV[1] .. waiting[i], "stc", "atm")
  if (tonumber(f[1] or "0") > 0 or tonumber(f[2] or "0") > 0) and not refused[waiting[i]] then
    return claim(waiting[i], "wait")
  end
end
local parked = redis.call("ZRANGEBYSCORE", KEYS[5], ARGV[6], "+inf", "LIMIT", 0, tonumber(ARGV[5]))
for i = 1, #parked do
  if not refused[parked[i]] then return claim(parked[i], "delayed") end
end
local active = redis.call("LRANGE", KEYS[1], 0, -1)
for i = #active, 1, -1 do
  if redis.call("EXISTS", ARGV[1] .. active[i] .. ":lock") == 0 and not refused[active[i]] then
    return claim(active[i], "active")
  end
end
return false`

/** The Redis claim's SHA-1, by which it runs once the server knows it (`EVALSHA`). */
const claimExpiredDigest = createHash("sha1").update(claimExpiredLua).digest("hex")

/** How many of the wait list's next jobs the Redis claim looks at (the most parts one submission makes). */
const claimScanLimit = 1_000

/** A Redis connection as `keptAnswering` sees it (ioredis's, also under BullMQ's wrapper). */
interface RedisConnection {
  readonly status: string
  readonly ping: () => Promise<unknown>
  readonly disconnect: (reconnect?: boolean) => void
}

/** ioredis's failure of a command that got no answer within its `commandTimeout` (the connection is kept). */
const isAnswerTimeout = (e: unknown): boolean => e instanceof Error && e.message === "Command timed out"

/**
 * Keeps a Redis connection of the fleet answering, for the scope (the queue side's, the claims', the store's own and
 * its lease confirmations'): every half lease a PING, and a connection that gives it no answer within the store's
 * answer timeout while ioredis counts it ready is closed (ioredis destroys its socket two seconds later), so that ioredis opens it again and sends again what it had sent unanswered. BullMQ
 * gives its commands no answer timeout (only its blocking read has a watchdog of its own, which resets that
 * connection), and a command's answer timeout (`commandTimeout`, the store's and the claims') fails the command but
 * keeps its connection: on a path gone silent without a reset (a NAT or firewall that lost the connection's state) the worker's
 * fetch and lock renewals waited for as long as the kernel kept the connection (about 15 minutes on Linux's defaults
 * with data unacknowledged; for ever when something in between acknowledges it), and its claims failed each after 10 s,
 * while its egress id lived on another connection: it took no job and counted as live, so a refused job waited for its
 * refusal (issue 29, seed 896; test/fleet/queue-silent-cli.test.ts). The store's own commands failed each after 10 s
 * the same way, for good (test/fleet/store-silent.test.ts). A connection reconnecting is left to ioredis:
 * closed then, it stopped reconnecting (BullMQ's #4585).
 */
export const keptAnswering = (connection: Promise<unknown>, leaseMs: number): Effect.Effect<void, never, Scope.Scope> =>
  Effect.asVoid(Effect.forkScoped(
    Effect.gen(function*() {
      const c = (yield* Effect.promise(() => connection)) as RedisConnection
      for (;;) {
        yield* Effect.sleep(Math.max(250, Math.floor(leaseMs / 2)))
        if (c.status !== "ready") continue
        // A failure is an answer (or a connection being replaced): only silence counts, and so does ioredis's own
        // answer timeout (`commandTimeout`, the store's and the claims' connections), which fails the PING and keeps
        // the connection.
        const answered = yield* Effect.promise(() => c.ping().then(() => true, (e: unknown) => !isAnswerTimeout(e)))
          .pipe(
            Effect.timeoutTo({ duration: storeAnswerTimeoutMs(leaseMs), onSuccess: (a) => a, onTimeout: () => false })
          )
        if (!answered && c.status === "ready") c.disconnect(true)
      }
    }).pipe(Effect.catchAllCause(() => Effect.void))
  ))

/** The Redis connection a BullMQ worker or queue on Redis sends its commands on (its backend's raw client). */
const redisClientOf = (side: unknown): Promise<unknown> =>
  (side as { readonly backend: { readonly client: Promise<unknown> } }).backend.client

/** The takeover slot's claim: the id of a job it now holds under `token`, or none. */
type ClaimExpired = (token: string) => Promise<string | undefined>

/**
 * The takeover claim on the queue's store at `url`, on a connection of its own, closed with the scope; it skips the
 * jobs `refused` gives (those this worker refused).
 */
export const openClaim = (
  url: string,
  leaseMs: number,
  name: string,
  refused: () => ReadonlyArray<string>
): Effect.Effect<ClaimExpired, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (isRedisUrl(url)) {
      const { Redis } = yield* loadIoredis
      const client = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const c = new Redis(url, {
            maxRetriesPerRequest: 3,
            commandTimeout: storeAnswerTimeoutMs(leaseMs),
            connectTimeout: 10_000,
            retryStrategy: redisReconnectDelay
          })
          c.on("error", () => undefined)
          return c
        }),
        (c) => Effect.sync(() => c.disconnect())
      )
      yield* keptAnswering(Promise.resolve(client), leaseMs)
      const prefix = `bull:${queueName}:`
      return async (token) => {
        // The server's clock first: the claim carries a deadline on it (`serverDeadline`).
        const deadline = serverDeadline(await client.time(), leaseMs)
        const now = Date.now()
        const keysAndArgs = [
          `${prefix}active`,
          `${prefix}wait`,
          `${prefix}stalled`,
          `${prefix}events`,
          `${prefix}delayed`,
          prefix,
          token,
          String(leaseMs),
          String(now),
          String(claimScanLimit),
          // BullMQ's delayed set scores a job by its time times 0x1000.
          String((now + parkedAfterMs) * 0x1000),
          deadline,
          ...refused()
        ]
        // By its digest: each poll sent the script's 2 KB and had the server hash them. A server that does not know it
        // yet (restarted, flushed) is sent its text.
        const id = await client.evalsha(claimExpiredDigest, 5, ...keysAndArgs).catch((e: unknown) => {
          if (!(e instanceof Error) || !e.message.startsWith("NOSCRIPT")) throw e
          return client.eval(claimExpiredLua, 5, ...keysAndArgs)
        })
        // None found (false), or -1: the claim arrived past its deadline, nothing claimed.
        return typeof id === "string" ? id : undefined
      }
    }
    // `pool.query` closes a client whose statement timed out (`pgTimeouts`, Store.ts) instead of reusing it.
    const pool = yield* scopedPgPool({ connectionString: url, max: 1, ...pgTimeouts(leaseMs) })
    return async (token) => {
      const result = await pool.query<{ id: string }>(claimExpiredSql, [
        queueName,
        Date.now(),
        token,
        leaseMs,
        name,
        [...refused()]
      ])
      return result.rows[0]?.id
    }
  })

/**
 * BullMQ's worker whose every fetch tries the takeover claim first (`claim`, under the fetch's own token) and only
 * then the queue's own fetch: a job slot that comes free takes a job whose worker died, stalled or handed it back
 * before any new job. The claimed job is run as a fetched one (its lock renewed by the worker's lock manager, ended
 * with its token). A finished job never fetches the next one in the same step (BullMQ's fetch-next, which would skip
 * the claim): the slot asks again, claim first.
 */
const claimingFirst = <B extends IQueueBackend, C>(
  Base: BackendClasses<B, C>["Worker"],
  claim: ClaimExpired,
  unstarted: Set<string>
) =>
  class ClaimingWorker extends Base<JobData> {
    protected override async moveToActive(token: string, name?: string): Promise<Job<JobData>> {
      // A claim that fails (the store unreachable) leaves the fetch to the queue, which meets the same fault.
      const id = await claim(token).catch(() => undefined)
      const job = id === undefined ? undefined : await this.Job.fromId<JobData>(this, id).catch(() => undefined)
      if (job === undefined) return super.moveToActive(token, name)
      job.token = token
      return job
    }
    override processJob(job: Job<JobData>, token: string) {
      // Started now (BullMQ calls the processor in this call): it no longer holds back the next fetch (`pacedFetch`).
      unstarted.delete(token)
      return super.processJob(job, token, () => false)
    }
  }

/** How often a job slot held back by its worker's pace (`pacedFetch`) asks again: in process, no store read. */
const pacePollMs = 100

/**
 * Paces the job slots' fetch of a `worker` (BullMQ's, built by `claimingFirst`): a slot asks the queue for a job only
 * when `mayTakeMore` says the worker may take a further one (Pace.ts), and meanwhile asks that again every
 * `pacePollMs`. Not while a job it fetched has not been started yet (`unstarted`): BullMQ's loop fetches until its
 * slots are full before it starts any, so it would wait on its own fetch; it starts that job first. The whole fetch is
 * held back, BullMQ's blocking wait for a new job included (`_getNextJob`, private in its types): a worker that may not
 * take a job does not take the queue's wake-up from one that may, nor leave the job waiting for its own wait's end.
 */
/**
 * Throws unless a worker made from `prototype` (a BullMQ Worker class's) has the fetch `pacedFetch` holds back: it is
 * BullMQ's own, not its API, and a version without it would leave the job slots unpaced without a word. Checked before
 * the worker is made, so that it stops at its start instead (docs/fleet.md, "When a worker takes a further job").
 */
export const checkPaceable = (prototype: object): void => {
  if (typeof (prototype as { _getNextJob?: unknown })._getNextJob !== "function") {
    throw new Error(
      "this BullMQ's Worker has no _getNextJob (the fetch the fleet's pace holds back: src/fleet/Queue.ts, " +
        "pacedFetch); the bullmq package is not the version fsm-bulk was built with"
    )
  }
}

const pacedFetch = (worker: object, mayTakeMore: () => Promise<boolean>, unstarted: Set<string>) => {
  const w = worker as {
    _getNextJob: (token: string, options?: unknown) => Promise<unknown>
    readonly closing: Promise<void> | undefined
  }
  const fetch = w._getNextJob.bind(worker)
  w._getNextJob = async (token, options) => {
    if (unstarted.size > 0) {
      // BullMQ's loop starts it once this fetch has answered (after a turn of the event loop: never a spin).
      await new Promise((resolve) => setImmediate(resolve))
      return undefined
    }
    while (!(await mayTakeMore().catch(() => true))) {
      if (w.closing !== undefined) return undefined
      await new Promise((resolve) => setTimeout(resolve, pacePollMs))
    }
    const job = await fetch(token, options)
    if (job !== undefined) unstarted.add(token)
    return job
  }
}

/**
 * A worker pulling up to `jobs` jobs at once for the scope, plus up to as many taken-over jobs (`takeoverSlots`);
 * `process` runs one (its promise ends it). Every slot has a claim of its own (`claimExpiredSql`, `claimExpiredLua`)
 * that takes only jobs whose worker died, stalled or handed them back, never a new one. The `jobs` slots try it first
 * and only then take what the queue's shared fetch gives (new jobs, in their order), so a stranded job is never
 * started after a new one by a slot that could have claimed it; the takeover slots try only the claim, every poll
 * while they find nothing and again at once after each job found: a killed worker's jobs are all taken by a worker
 * even when its `jobs` slots are all busy and new jobs are queued. Without them, a killed worker's job waited for the
 * first survivor to finish a job (28–38 s, issue 29); when the slot took whatever the queue gave and put new jobs
 * back, it waited behind them (42–53 s with a 6 s lease, on PostgreSQL, where a stalled job goes back at the end of
 * the queue); with one takeover slot a worker, a killed worker's parts beyond the survivors' count waited for a slot
 * to free (15.9 and 25.9 s with a 6 s lease, on PostgreSQL; 10.8 and 15.1 s after the job slots claimed first).
 */
export const startEngineWorker = (
  url: string,
  options: {
    readonly jobs: number
    readonly leaseMs: number
    /** The jobs this worker refused: its claims skip them. */
    readonly refused: () => ReadonlyArray<string>
    /**
     * Whether the job slots take a further job now (Pace.ts; `pacedFetch`); without it a free job slot always asks
     * the queue. The takeover slots are not paced.
     */
    readonly mayTakeMore?: () => Promise<boolean>
  },
  process: (data: JobData) => Promise<RunOutcome>
): Effect.Effect<{ readonly close: Effect.Effect<void> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const bullmq = yield* engine
    const settings = {
      concurrency: options.jobs,
      lockDuration: options.leaseMs,
      stalledInterval: stalledInterval(options.leaseMs),
      maxStalledCount: 1_000
    }
    // A job this worker refused is parked for the others (`LeftForOthers`), not given again after the back-off.
    const park = (job: Job<JobData>, token: string) => job.moveToDelayed(Date.now() + parkMs(options.leaseMs), token)
    // The job slots' jobs fetched and not yet started (`pacedFetch`), by their fetch's token.
    const unstarted = new Set<string>()
    const processor = async (job: Job<JobData>, token?: string) => {
      if ((await process(job.data)) !== "left-for-others" || token === undefined) return
      await park(job, token)
      throw new bullmq.DelayedError()
    }
    // The job slots' claim, on a connection of its own: the takeover slot's may be waiting on a lock.
    const slotsClaim = yield* openClaim(url, options.leaseMs, `slots-${randomUUID()}`, options.refused)
    // On PostgreSQL, BullMQ's worker on a pool of ours (ended after the worker, which does not end a pool it is given):
    // its LISTEN connection is then one of the pool's, so it hears its errors as every other (`errorsHeard`,
    // Packages.ts) where BullMQ's own client for it did not while connecting or closing. A pool it is given is not
    // pinned to its schema by BullMQ, so here; the LISTEN connection is the fifth (pgTimeouts keeps TCP keepalive on).
    const pool = isRedisUrl(url) ? undefined : yield* scopedPgPool({
      connectionString: url,
      max: 5,
      options: `-c search_path=${bullmq.quoteSchemaName(bullmq.DEFAULT_SCHEMA)}`,
      ...pgTimeouts(options.leaseMs)
    })
    const worker = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const Redis = claimingFirst(bullmq.withBackend(bullmq.createRedisBackend).Worker, slotsClaim, unstarted)
        const Postgres = claimingFirst(bullmq.withBackend(bullmq.createPostgresBackend).Worker, slotsClaim, unstarted)
        if (options.mayTakeMore !== undefined) checkPaceable((isRedisUrl(url) ? Redis : Postgres).prototype)
        const w = isRedisUrl(url)
          ? new Redis(queueName, processor, { connection: { url, retryStrategy: redisReconnectDelay }, ...settings })
          // pg's Pool is what BullMQ takes for one (`isPgPool`: connect, query, end); its types declare fewer overloads.
          : new Postgres(queueName, processor, { connection: pool as unknown as PgPool, ...settings })
        // Before its loop's first fetch: the worker's run waits for its stall check's start first.
        if (options.mayTakeMore !== undefined) pacedFetch(w, options.mayTakeMore, unstarted)
        return w
      }),
      (w) => Effect.promise(() => w.close()).pipe(Effect.ignore)
    )
    // A lost connection is retried by the engine; its errors must not end the process.
    worker.on("error", () => undefined)

    // The takeover slots: a job claimed is run as the queue's own are, its lock renewed every half lease, and ended
    // in the queue with the claim's token (failed: given again after its back-off, as a job handed back is).
    const queue = yield* openQueue(url)
    if (isRedisUrl(url)) {
      // BullMQ's connections that answer commands (its blocking read's watchdog keeps that one): the worker's fetch,
      // lock renewals and ends; the takeover slots' job reads, lock renewals and ends.
      for (const side of [worker, queue]) yield* keptAnswering(redisClientOf(side), options.leaseMs)
    }
    const claim = yield* openClaim(url, options.leaseMs, `takeover-${randomUUID()}`, options.refused)
    const runClaimed = async (job: Job<JobData>, token: string): Promise<void> => {
      const renew = setInterval(
        () => void job.extendLock(token, options.leaseMs).catch(() => undefined),
        Math.floor(options.leaseMs / 2)
      )
      const outcome = await process(job.data).then((left) => left, (e: unknown) =>
        e instanceof Error ? e : new Error(String(e)))
      clearInterval(renew)
      await (outcome === undefined
        ? job.moveToCompleted(undefined, token, false)
        : outcome === "left-for-others"
        ? park(job, token)
        : job.moveToFailed(outcome, token, false))
        .catch(() =>
          undefined
        )
    }
    /** One claim: none found (false), or a job claimed, now running among `running` (true). */
    const takeOver = async (): Promise<boolean> => {
      const token = `${randomUUID()}:takeover`
      const id = await claim(token)
      if (id === undefined) return false
      const job = await queue.getJob(id)
      if (job === undefined) return true
      // Claimed as the worker began to stop: given back at once for another worker.
      if (closing) {
        await job.moveToFailed(new Error("the worker is stopping"), token, false).catch(() => undefined)
        return true
      }
      const run = runClaimed(job, token)
      running.add(run)
      void run.finally(() => running.delete(run))
      return true
    }
    let closing = false
    let claiming: Promise<boolean> | undefined
    const running = new Set<Promise<void>>()
    const slots = takeoverSlots(options.jobs)
    const slot = yield* Effect.forkScoped(Effect.gen(function*() {
      while (!closing) {
        // Every takeover slot busy: the next claim waits for one to free.
        if (running.size >= slots) {
          yield* Effect.promise(() => Promise.race(running))
          continue
        }
        // A claim that fails (the store unreachable) is tried again at the next poll. One that found a job claims
        // again at once: a dead worker's other jobs are taken in the same round, not one a poll.
        claiming = takeOver().catch(() => false)
        if (!(yield* Effect.promise(() => claiming!))) {
          yield* Effect.sleep(takeoverPollMs(options.leaseMs))
        }
      }
    }))
    return {
      close: Effect.gen(function*() {
        closing = true
        yield* Fiber.interrupt(slot)
        yield* Effect.promise(() => worker.close()).pipe(Effect.ignore)
        if (claiming !== undefined) yield* Effect.promise(() => claiming!)
        yield* Effect.promise(() => Promise.all(running))
      })
    }
  })
