/**
 * The fleet's store on Redis, beside BullMQ's own keys (`bull:fsm-bulk:*`) in the same server. Keys, all under
 * `fsm-bulk:`:
 *
 * - `fsm-bulk:version`: set by `fleet init` (what `requireInit` looks for);
 * - `fsm-bulk:accounts`: a hash, account name → JSON { baseUrl, rate, secret } (the credentials sealed by
 *   Secrets.ts exactly as in PostgreSQL: only the sealed text is stored);
 * - `fsm-bulk:jobs`: a sorted set of the jobs without a parent, scored by their creation time;
 * - `fsm-bulk:job:ID`: a hash of the job's fields (spec and summary as JSON, times in epoch milliseconds);
 * - `fsm-bulk:submitting`: a sorted set of the submissions not yet all queued (`submitting`), by creation time;
 * - `fsm-bulk:staging`: a sorted set of the submissions being stored in batches (`staging`), by their last batch's
 *   time; their jobs are listed nowhere else until published (`publishJobs`);
 * - `fsm-bulk:job:ID:parts`: a set, the parts of a chunked job;
 * - `fsm-bulk:job:ID:files`: a hash, file name → its bytes (binary values, not text);
 * - `fsm-bulk:job:ID:staged`, `fsm-bulk:job:ID:staged:NAME`: a staged job's files being written a piece at a time
 *   (their names; each one's bytes), moved into its files when it is published;
 * - `fsm-bulk:job:ID:lease`: a hash { epoch, owner, taken };
 * - `fsm-bulk:job:ID:journal`: a list, the journal lines in the order they were written;
 * - `fsm-bulk:job:ID:done`: a set, the rows whose `done` line was appended (what `status` counts);
 * - `fsm-bulk:egress:ID`: the egress-id lock, a token with an expiry.
 *
 * The guarantees are those of the PostgreSQL store, kept by Lua scripts (Redis runs a script as one step: no
 * other command runs between its reads and its writes):
 *
 * - a journal line is appended only while the lease is at the writer's epoch: one script checks the epoch and
 *   appends, so a takeover (a script raising the epoch) either comes before the check, and the line is refused,
 *   or after the append, and the next owner reads the line;
 * - a job's end (done, failed) is recorded only under the writer's lease, a lease is taken only on a job that
 *   has not ended and only before its deadline on the server's clock (`serverDeadline`: a take given up on by its worker
 *   and sent again later takes nothing), and a cancel raises the epoch in the same step as it marks the job cancelled;
 * - the egress id is a key set only when absent (SET NX) with an expiry, renewed while the worker lives and
 *   deleted when it exits; a crashed worker's lock lapses when its expiry passes.
 *
 * One Redis server (or a primary with replicas), not a Redis Cluster: the scripts that settle a chunked job read
 * its parts' keys, which a cluster may place on other nodes. What persistence the guarantees need is said in
 * docs/fleet.md (an acknowledged write must survive a restart: AOF with `appendfsync everysec` or `always`).
 */
import type { Scope } from "effect"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { Redis as RedisClient } from "ioredis"
import { createHash, randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { registerUrlPassword } from "../Secrets.js"
import { FleetError } from "./Errors.js"
import { monotonicMs } from "./Lease.js"
import { loadIoredis } from "./Packages.js"
import { keptAnswering, leaseMs } from "./Queue.js"
import {
  egressTaken,
  type FleetStore,
  type JobRow,
  journalLineFields,
  type Lease,
  lostDataError,
  luaPastDeadline,
  type NewJob,
  noJob,
  notInitialised,
  redactUrl,
  redisReconnectDelay,
  serverDeadline,
  settled,
  sourceTaken,
  stagingGone,
  stagingState,
  storeAnswerTimeoutMs,
  type StoredAccount,
  storeFailure,
  submittingState
} from "./Store.js"

const prefix = "fsm-bulk:"
const versionKey = `${prefix}version`
const accountsKey = `${prefix}accounts`
const jobsKey = `${prefix}jobs`
const jobKey = (id: string) => `${prefix}job:${id}`
const partsKey = (id: string) => `${jobKey(id)}:parts`
const filesKey = (id: string) => `${jobKey(id)}:files`
const leaseKey = (id: string) => `${jobKey(id)}:lease`
const journalKey = (id: string) => `${jobKey(id)}:journal`
const doneKey = (id: string) => `${jobKey(id)}:done`
/** Submissions not yet all on the queue (`submitting`), scored by their creation time. */
const submittingKey = `${prefix}submitting`
/**
 * Jobs in parts one of whose parts has ended (`endJob` adds the parent) and that have not been seen ended since
 * (`settleParent` removes them): what `unsettledParents` gives a worker's sweep.
 */
const endingKey = `${prefix}ending`
/** Submissions being stored in batches (`staging`), scored by the time of their last batch. */
const stagingKey = `${prefix}staging`
const egressKey = (id: string) => `${prefix}egress:${id}`
/** The source address a worker leaves from: its egress id and lock token, with the egress lock's expiry. */
const sourceKey = (address: string) => `${prefix}source:${address}`

/**
 * How long an egress-id lock outlives its last renewal: how soon a crashed worker's id can be used again
 * (`FSM_FLEET_EGRESS_MS`, for tests; 15 s by default).
 */
const egressLockMs = (): number => {
  const ms = Number(process.env.FSM_FLEET_EGRESS_MS ?? "")
  return Number.isInteger(ms) && ms >= 300 ? ms : 15_000
}

/** Jobs checked per round trip when looking for records the server lost (`lostData`). */
const lostDataPage = 1_000

/** The states a job does not leave, as a Lua test of `s` (a state, or false for a missing one). */
const luaFinal = `(s == 'done' or s == 'cancelled' or s == 'failed')`

/** A MULTI's answers: the first failure among them thrown. */
const failed = (results: Array<[Error | null, unknown]> | null): void => {
  for (const [error] of results ?? []) if (error !== null) throw error
}

/**
 * A lease take that reached the server past its deadline (`serverDeadline`): nothing was taken. `Unavailable`, as a take
 * without an answer: a caller still waiting asks again, with a new deadline.
 */
const lateTake = (url: string, job: string) =>
  new FleetError({
    reason: "Unavailable",
    message: `the fleet store ${
      redactUrl(url)
    } received the take of job ${job}'s lease after its answer timeout: nothing was taken`
  })

/** A staging script's refusal (`STAGINGGONE`: the submission was reclaimed) as the store's own error. */
const refusedAsGone = (id: string) => <A>(op: Effect.Effect<A, FleetError>) =>
  Effect.catchIf(
    op,
    (e) => e.reason === "Refused" && e.message.includes("STAGINGGONE"),
    () => Effect.fail(stagingGone(id))
  )

const scripts = {
  /** KEYS: job, jobs, parts of the parent. ARGV: id, created, parent ('' for none), fields… */
  addJob: `
    if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('job ' .. ARGV[1] .. ' exists') end
    redis.call('HSET', KEYS[1], unpack(ARGV, 4))
    if ARGV[3] == '' then redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1]) else redis.call('SADD', KEYS[3], ARGV[1]) end
    return 1`,
  /**
   * KEYS: job, lease. ARGV: owner, now, the take's deadline (ms on the server's clock, `serverDeadline`). The next epoch,
   * nil when the job has ended (or is unknown), or -1, nothing taken, when the server's clock is past the deadline: the
   * take arrived after its worker gave up on it (`lateTake`).
   */
  takeOpenLease: `
    ${luaPastDeadline("ARGV[3]")}
    local s = redis.call('HGET', KEYS[1], 'state')
    if s == false or ${luaFinal} then return false end
    local e = redis.call('HINCRBY', KEYS[2], 'epoch', 1)
    redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'taken', ARGV[2])
    return e`,
  /**
   * KEYS: lease, journal (the job's, or one of its streams'), done. ARGV: epoch, then for each line: the line, what
   * the done set counts of a `done` line ('' for other lines). 1 when appended (all of them).
   */
  appendLine: `
    if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
    for i = 2, #ARGV, 2 do
      redis.call('RPUSH', KEYS[2], ARGV[i])
      if ARGV[i + 1] ~= '' then redis.call('SADD', KEYS[3], ARGV[i + 1]) end
    end
    return 1`,
  /** KEYS: lease, files. ARGV: epoch, name, content. 1 when stored. */
  putFileUnderLease: `
    if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
    redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
    return 1`,
  /**
   * KEYS: lease, files, job. ARGV: epoch, state, exit code, summary ('' for none), rows ('' to keep), error ('' for
   * none), now, then output name and content pairs. Under the lease at `epoch` only: the job's `out/` files
   * replaced by the outputs as a whole, and its outcome recorded if it has not ended. 1 when done.
   */
  endWhole: `
    if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
    for _, name in ipairs(redis.call('HKEYS', KEYS[2])) do
      if string.sub(name, 1, 4) == 'out/' then redis.call('HDEL', KEYS[2], name) end
    end
    for i = 8, #ARGV, 2 do redis.call('HSET', KEYS[2], 'out/' .. ARGV[i], ARGV[i + 1]) end
    local s = redis.call('HGET', KEYS[3], 'state')
    if s ~= false and not ${luaFinal} then
      redis.call('HSET', KEYS[3], 'state', ARGV[2], 'exit_code', ARGV[3], 'finished', ARGV[7])
      if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], 'summary', ARGV[4]) else redis.call('HDEL', KEYS[3], 'summary') end
      if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], 'rows', ARGV[5]) end
      if ARGV[6] ~= '' then redis.call('HSET', KEYS[3], 'error', ARGV[6]) else redis.call('HDEL', KEYS[3], 'error') end
    end
    return 1`,
  /** KEYS: job. ARGV: owner. */
  markRunning: `
    local s = redis.call('HGET', KEYS[1], 'state')
    if s == false or ${luaFinal} then return 0 end
    redis.call('HSET', KEYS[1], 'state', 'running', 'owner', ARGV[1])
    return 1`,
  /**
   * KEYS: job, lease, the parents ending. ARGV: epoch, fields… Writes the fields only under the lease at `epoch`
   * (1; 0 when the job is gone or the lease was lost: nothing written); a part's parent is listed as ending in the same
   * step, so a worker stopped before it settles the parent leaves it to a sweep.
   */
  endJob: `
    if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
    if redis.call('HGET', KEYS[2], 'epoch') ~= ARGV[1] then return 0 end
    redis.call('HSET', KEYS[1], unpack(ARGV, 2))
    local parent = redis.call('HGET', KEYS[1], 'parent')
    if parent then redis.call('ZADD', KEYS[3], 0, parent) end
    return 1`,
  /** KEYS: job, lease. ARGV: now. Marks the job cancelled if it has not ended, and raises the epoch. */
  cancelJob: `
    local s = redis.call('HGET', KEYS[1], 'state')
    if s ~= false and not ${luaFinal} then redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finished', ARGV[1]) end
    redis.call('HINCRBY', KEYS[2], 'epoch', 1)
    redis.call('HSET', KEYS[2], 'owner', 'cancel', 'taken', ARGV[1])
    return 1`,
  /**
   * KEYS: parent, its parts set. ARGV: the job key prefix, now. When every part has ended and the parent has not:
   * its state (cancelled stays cancelled, else done) and exit code (3 if a part did not end done or exited 2 or
   * more, else the largest).
   */
  /**
   * KEYS: parent, its parts set, the parents ending. ARGV: the job key prefix, now, state, exit code ('' for none),
   * error ('' for none), the parent's id: the end `settled` drew from the parts, written when every part has ended and
   * the parent has not (a cancelled parent stays cancelled); a parent ended (now or before) is no longer listed ending.
   */
  settleParent: `
    if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'finished') == 1 then
      redis.call('ZREM', KEYS[3], ARGV[6])
      return 0
    end
    for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do
      local s = redis.call('HGET', ARGV[1] .. id, 'state')
      if s == false or not ${luaFinal} then return 0 end
    end
    redis.call('ZREM', KEYS[3], ARGV[6])
    local state = ARGV[3]
    if redis.call('HGET', KEYS[1], 'state') == 'cancelled' then state = 'cancelled' end
    redis.call('HSET', KEYS[1], 'state', state, 'finished', ARGV[2])
    if ARGV[4] == '' then redis.call('HDEL', KEYS[1], 'exit_code') else redis.call('HSET', KEYS[1], 'exit_code', ARGV[4]) end
    if ARGV[5] == '' then redis.call('HDEL', KEYS[1], 'error') else redis.call('HSET', KEYS[1], 'error', ARGV[5]) end
    return 1`,
  /**
   * KEYS: the staged parent job, its staged files' names, staging. ARGV: its id, now, the file's name, offset, bytes.
   * The bytes written at the offset of a string of their own (`JOB:staged:NAME`, what was after them removed), moved
   * into the job's files when it is published; an error when the parent is no longer staged. Rewriting the stored
   * value so far with each piece (`string.sub(…) .. piece`) cost in the square of the file, the server blocked.
   */
  stageFile: `
    if redis.call('HGET', KEYS[1], 'state') ~= '${stagingState}' then return redis.error_reply('STAGINGGONE') end
    redis.call('ZADD', KEYS[3], 'XX', ARGV[2], ARGV[1])
    local k = KEYS[1] .. ':staged:' .. ARGV[3]
    local at = tonumber(ARGV[4])
    local stop = at + string.len(ARGV[5])
    if redis.call('STRLEN', k) > stop then
      if stop == 0 then redis.call('SET', k, '') else redis.call('SET', k, redis.call('GETRANGE', k, 0, stop - 1)) end
    end
    if stop > at then redis.call('SETRANGE', k, at, ARGV[5])
    elseif redis.call('EXISTS', k) == 0 then redis.call('SET', k, '') end
    redis.call('SADD', KEYS[2], ARGV[3])
    return 1`,
  /**
   * KEYS: the staged parent job, its parts set, staging. ARGV: the parent's id, now, the job key prefix, then per
   * part: its id, its file's name, the file's bytes, the count of its fields, its fields. An error when the parent
   * is no longer staged.
   */
  stageParts: `
    if redis.call('HGET', KEYS[1], 'state') ~= '${stagingState}' then return redis.error_reply('STAGINGGONE') end
    redis.call('ZADD', KEYS[3], 'XX', ARGV[2], ARGV[1])
    local i = 4
    while i <= #ARGV do
      local id, n = ARGV[i], tonumber(ARGV[i + 3])
      if redis.call('EXISTS', ARGV[3] .. id) == 0 then
        redis.call('HSET', ARGV[3] .. id, unpack(ARGV, i + 4, i + 3 + n))
      end
      redis.call('HSET', ARGV[3] .. id .. ':files', ARGV[i + 1], ARGV[i + 2])
      redis.call('SADD', KEYS[2], id)
      i = i + 4 + n
    end
    return 1`,
  /**
   * KEYS: the parent job, its parts set, staging, jobs, submitting. ARGV: its id, now, the job key prefix, the count
   * of jobs it must hold. Staged → submitting and listed, in one step; nothing when it was published already.
   */
  publishJobs: `
    local s = redis.call('HGET', KEYS[1], 'state')
    if s == false or redis.call('SCARD', KEYS[2]) + 1 ~= tonumber(ARGV[4]) then return redis.error_reply('STAGINGGONE') end
    if s ~= '${stagingState}' then return 0 end
    for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do redis.call('HSET', ARGV[3] .. id, 'state', '${submittingState}') end
    for _, name in ipairs(redis.call('SMEMBERS', KEYS[1] .. ':staged')) do
      local k = KEYS[1] .. ':staged:' .. name
      redis.call('HSET', KEYS[1] .. ':files', name, redis.call('GET', k) or '')
      redis.call('DEL', k)
    end
    redis.call('DEL', KEYS[1] .. ':staged')
    redis.call('HSET', KEYS[1], 'state', '${submittingState}', 'created', ARGV[2])
    redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
    redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1])
    redis.call('ZREM', KEYS[3], ARGV[1])
    return 1`,
  /**
   * KEYS: the staged parent job, staging. ARGV: its id, now. The heartbeat of a live submit: the submission touched,
   * 0 when it is no longer staged. A command of its own, not part of a batch's script.
   */
  touchStaging: `
    if redis.call('HGET', KEYS[1], 'state') ~= '${stagingState}' then return 0 end
    redis.call('ZADD', KEYS[2], 'XX', ARGV[2], ARGV[1])
    return 1`,
  /**
   * KEYS: the parent job, its parts set, staging. ARGV: its id, the job key prefix, and for a reclaim the time it must
   * have been untouched since (0 when a heartbeat or a batch touched it after: it is alive). A staged submission
   * removed with its parts and files (only its listing in staging when it was published): 1, or 0 when kept.
   */
  discardStaging: `
    if ARGV[3] ~= nil and ARGV[3] ~= '' then
      local touched = redis.call('ZSCORE', KEYS[3], ARGV[1])
      if touched and tonumber(touched) > tonumber(ARGV[3]) then return 0 end
    end
    if redis.call('HGET', KEYS[1], 'state') == '${stagingState}' then
      for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do
        redis.call('DEL', ARGV[2] .. id, ARGV[2] .. id .. ':files')
      end
      for _, name in ipairs(redis.call('SMEMBERS', KEYS[1] .. ':staged')) do redis.call('DEL', KEYS[1] .. ':staged:' .. name) end
      redis.call('DEL', KEYS[1], KEYS[1] .. ':files', KEYS[1] .. ':staged', KEYS[2])
    end
    redis.call('ZREM', KEYS[3], ARGV[1])
    return 1`,
  /** KEYS: submitting. ARGV: the job key prefix, the job's id. The job and its parts `submitting` → `queued`. */
  markQueued: `
    local ids = redis.call('SMEMBERS', ARGV[1] .. ARGV[2] .. ':parts')
    table.insert(ids, ARGV[2])
    for _, id in ipairs(ids) do
      if redis.call('HGET', ARGV[1] .. id, 'state') == '${submittingState}' then
        redis.call('HSET', ARGV[1] .. id, 'state', 'queued')
      end
    end
    redis.call('ZREM', KEYS[1], ARGV[2])
    return 1`,
  /** KEYS: done of the job, its parts set. ARGV: the job key prefix. Rows done in the job and its parts. */
  rowsDone: `
    local n = redis.call('SCARD', KEYS[1])
    for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do n = n + redis.call('SCARD', ARGV[1] .. id .. ':done') end
    return n`,
  /** KEYS: egress lock. ARGV: token, expiry ms. Renews the lock, or takes it again when it lapsed; 0 if another has it. */
  renewEgress: `
    local holder = redis.call('GET', KEYS[1])
    if holder == false then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
    if holder ~= ARGV[1] then return 0 end
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1`,
  /** KEYS: egress lock. ARGV: token. Deletes the lock if it is still this worker's. */
  releaseEgress: `
    if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
    return 1`
} as const

const decodeJob = (id: string, h: Record<string, string>): JobRow => ({
  id,
  kind: h.kind ?? "",
  account: h.account ?? "",
  resource: h.resource ?? null,
  spec: JSON.parse(h.spec ?? "{}") as Record<string, unknown>,
  state: h.state ?? "",
  rows: Number(h.rows ?? 0),
  exit_code: h.exit_code !== undefined ? Number(h.exit_code) : null,
  summary: h.summary !== undefined ? JSON.parse(h.summary) as Record<string, unknown> : null,
  error: h.error ?? null,
  owner: h.owner ?? null,
  parent: h.parent ?? null,
  created: new Date(Number(h.created ?? 0)),
  finished: h.finished !== undefined ? new Date(Number(h.finished)) : null
})

const onRedis = "(docs/fleet.md, \"On Redis\")"

/** A job's hash fields, in `state`, created at `created` (epoch ms). */
const jobFields = (j: NewJob, state: string, created: string): Array<string> => [
  "kind",
  j.kind,
  "account",
  j.account,
  "spec",
  JSON.stringify(j.spec),
  "state",
  state,
  "rows",
  String(j.rows),
  "created",
  created,
  ...(j.resource !== null ? ["resource", j.resource] : []),
  ...(j.parent !== null ? ["parent", j.parent] : [])
]

/** What in a Redis server's settings weakens the fleet's guarantees. */
const settingsWarnings = (
  appendonly: string | undefined,
  appendfsync: string | undefined,
  policy: string | undefined
): Array<string> => [
  ...(appendonly !== "yes"
    ? [
      `the Redis server runs with appendonly ${appendonly}: a restart forgets acknowledged journal lines, leases ` +
      `and jobs; set appendonly yes with appendfsync everysec or always ${onRedis}`
    ]
    : appendfsync === "no"
    ? [
      "the Redis server runs with appendfsync no: a crash of its host can forget many seconds of journal lines; " +
      `set appendfsync everysec or always ${onRedis}`
    ]
    : []),
  ...(policy !== "noeviction"
    ? [
      `the Redis server's maxmemory-policy is ${policy}: keys the fleet needs can be evicted; set noeviction ${onRedis}`
    ]
    : [])
]

/** The row of a journal line that says a row is done ('' for any other line). */
const doneRow = (line: string): string => {
  const { row, state } = journalLineFields(line)
  return state === "done" && row !== undefined ? String(row) : ""
}

/**
 * The options of the store's connections: a lost server is reconnected to; a command waits through a few attempts,
 * then fails (reported by the operation, as PostgreSQL's pool reports a lost connection). Connected when asked to, or
 * at the first command.
 */
const connectionOptions = (windowMs: number, connectionName?: string) => ({
  lazyConnect: true,
  maxRetriesPerRequest: 3,
  commandTimeout: storeAnswerTimeoutMs(windowMs),
  connectTimeout: 10_000,
  retryStrategy: redisReconnectDelay,
  ...(connectionName === undefined ? {} : { connectionName })
})

/** A connection's end with its scope (one never connected is only dropped). */
const closeConnection = (c: RedisClient) =>
  c.status === "wait"
    ? Effect.sync(() => c.disconnect())
    // A release runs uninterruptibly: without `interruptible`, the timeout could not end the wait.
    : Effect.promise(() => c.quit()).pipe(
      Effect.interruptible,
      Effect.timeout(5_000),
      Effect.ignore,
      Effect.ensuring(Effect.sync(() => c.disconnect()))
    )

/**
 * The name (CLIENT SETNAME) of the connection of the lease's confirmations (`holdsLease`), beside the store's own:
 * a confirmation is never sent behind a job's commands. They share one connection otherwise, and a command whose
 * answer ends its connection (an answer past the server's `client-output-buffer-limit`: a job's files read whole)
 * took the confirmations sent after it along, at every reconnection, as ioredis sends them again in order: the lease
 * was given up as "could not confirm lease N for a whole lease" instead of the read's failure (issue 29,
 * test/fleet/lease-connection.test.ts). Opened at the first confirmation, so a worker without a job opens none.
 */
export const leaseConnectionName = "fsm-bulk-lease"

/** A connection of the store opened by `open`, for the scope: closed with it, and kept answering (`keptAnswering`). */
const scopedConnection = <E>(open: Effect.Effect<RedisClient, E>, windowMs: number) =>
  Effect.tap(Effect.acquireRelease(open, closeConnection), (c) => keptAnswering(Promise.resolve(c), windowMs))

/** The connection of the lease's confirmations for the scope (`leaseConnectionName`); its errors the commands'. */
const leaseConnection = (
  Redis: Effect.Effect.Success<typeof loadIoredis>["Redis"],
  url: string,
  windowMs: number
): Effect.Effect<RedisClient, never, Scope.Scope> =>
  scopedConnection(
    Effect.sync(() => new Redis(url, connectionOptions(windowMs, leaseConnectionName)).on("error", () => undefined)),
    windowMs
  )

/** `holdsLease` on `c`: whether the lease of `job` is at `epoch`. */
const holdsLeaseOn = (c: RedisClient, url: string) => (job: string, epoch: number) =>
  Effect.tryPromise({ try: () => c.hget(leaseKey(job), "epoch"), catch: (e) => storeFailure(url, e) }).pipe(
    Effect.map((e) => e === String(epoch))
  )

/** The store's own connection for the scope, connected (or what it met: refused, unknown host, bad password). */
const storeConnection = (
  Redis: Effect.Effect.Success<typeof loadIoredis>["Redis"],
  url: string,
  windowMs: number
): Effect.Effect<RedisClient, FleetError, Scope.Scope> =>
  scopedConnection(
    Effect.tryPromise({
      try: async () => {
        registerUrlPassword(url)
        const c = new Redis(url, connectionOptions(windowMs))
        let last: unknown
        c.on("error", (e) => (last = e))
        try {
          await c.connect()
        } catch (cause) {
          c.disconnect()
          // What the connection met (refused, unknown host, bad password), rather than "Connection is closed".
          throw last ?? cause
        }
        return c
      },
      catch: (cause) => storeFailure(url, cause)
    }),
    windowMs
  )

/** The store on Redis: one connection for the scope (and one for the lease's confirmations, `leaseConnectionName`). */
export const openRedisStore = (url: string): Effect.Effect<FleetStore, FleetError, Scope.Scope> =>
  Effect.gen(function*() {
    const [{ Redis }, windowMs] = yield* Effect.all([loadIoredis, leaseMs])
    const client = yield* storeConnection(Redis, url, windowMs)
    const call = <A>(f: (c: RedisClient) => Promise<A>) =>
      Effect.tryPromise({ try: () => f(client), catch: (cause) => storeFailure(url, cause) })

    // Scripts run by their digest; a server that does not know one yet (restarted, flushed) is sent its text.
    const digests = Object.fromEntries(
      Object.entries(scripts).map(([name, lua]) => [name, createHash("sha1").update(lua).digest("hex")])
    ) as Record<keyof typeof scripts, string>
    const script = (
      name: keyof typeof scripts,
      keys: ReadonlyArray<string>,
      args: ReadonlyArray<string | number | Buffer>
    ) =>
      call(async (c) => {
        try {
          return await c.evalsha(digests[name], keys.length, ...keys, ...args)
        } catch (e) {
          if (!(e instanceof Error) || !e.message.startsWith("NOSCRIPT")) throw e
          return await c.eval(scripts[name], keys.length, ...keys, ...args)
        }
      })

    /** A job's journal lines (a group commit's), in one script under the lease at `epoch`: all of them or none. */
    const appendLines = (job: string, epoch: number, lines: ReadonlyArray<string>) =>
      Effect.map(
        script(
          "appendLine",
          [leaseKey(job), journalKey(job), doneKey(job)],
          [String(epoch), ...lines.flatMap((line) => [line, doneRow(line)])]
        ),
        (n) => n === 1 && lines.length > 0
      )

    /**
     * The jobs of `ids` that exist. An id with a colon is none (no job id has one): `JOB:files` or `JOB:lease` name
     * a job's other keys, not a job; and a hash without a kind is not a job's.
     */
    const jobs = (given: ReadonlyArray<string>) =>
      call(async (c) => {
        const ids = given.filter((id) => !id.includes(":"))
        const pipeline = c.pipeline()
        for (const id of ids) pipeline.hgetall(jobKey(id))
        const results = (await pipeline.exec()) ?? []
        return ids.flatMap((id, i) => {
          const [error, h] = results[i] ?? [null, {}]
          if (error !== null) throw error
          const fields = h as Record<string, string>
          return fields.kind === undefined ? [] : [decodeJob(id, fields)]
        })
      })
    const epochNow = () => String(Date.now())

    const store: FleetStore = {
      backend: "redis",
      // BullMQ creates its keys as it goes; the tool's keys likewise. What init leaves is the mark that it ran.
      init: Effect.asVoid(call((c) => c.set(versionKey, "1"))),
      // Without its marker the server is either new to the fleet or lost the fleet's data: said so, not just "init".
      requireInit: call(async (c) =>
        (await c.exists(versionKey)) === 1 ? "ok" : (await c.exists(jobsKey, accountsKey, "bull:fsm-bulk:meta")) > 0
          ? "partial"
          : "empty"
      ).pipe(
        Effect.flatMap((found) =>
          found === "ok"
            ? Effect.void
            : Effect.fail(
              found === "partial"
                ? lostDataError(`its marker ${versionKey} is gone while its other keys remain`)
                : new FleetError({
                  reason: "Lost",
                  message: `${notInitialised.message}; if it was, this Redis server has lost the fleet's data ` +
                    `(a FLUSHALL, evicted keys, or a restart without persistence): its accounts and jobs are gone, ` +
                    `add the accounts and submit the jobs again ${onRedis}`
                })
            )
        )
      ),
      missingIndexes: Effect.succeed([]), // Redis has no indexes: its keys are what the scripts read.
      settingsWarnings: call(async (c) => {
        const setting = async (name: string) => ((await c.config("GET", name)) as Array<string | undefined>)[1]
        try {
          return settingsWarnings(
            await setting("appendonly"),
            await setting("appendfsync"),
            await setting("maxmemory-policy")
          )
        } catch {
          return [
            "cannot read the Redis server's settings (CONFIG GET refused): check that it runs with appendonly yes, " +
            `appendfsync everysec or always, and maxmemory-policy noeviction ${onRedis}`
          ]
        }
      }),

      putAccount: (a) =>
        Effect.asVoid(
          call((c) =>
            c.hset(accountsKey, a.name, JSON.stringify({ baseUrl: a.baseUrl, rate: a.rate, secret: a.secret }))
          )
        ),
      account: (name) =>
        call((c) => c.hget(accountsKey, name)).pipe(
          Effect.map((text) => text === null ? undefined : ({ name, ...JSON.parse(text) } as StoredAccount))
        ),
      accounts: call((c) => c.hgetall(accountsKey)).pipe(
        Effect.map((all) =>
          Object.entries(all).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([name, text]) => {
            const { baseUrl, rate } = JSON.parse(text) as StoredAccount
            return { name, baseUrl, rate }
          })
        )
      ),
      removeAccount: (name) => Effect.map(call((c) => c.hdel(accountsKey, name)), (n) => n > 0),

      addJob: (j) => {
        const created = epochNow()
        return Effect.asVoid(script("addJob", [jobKey(j.id), jobsKey, partsKey(j.parent ?? j.id)], [
          j.id,
          created,
          j.parent ?? "",
          ...jobFields(j, "queued", created)
        ]))
      },
      // One MULTI: all the jobs and their files or none (Redis runs a transaction's commands as one step).
      addJobs: (all, files) =>
        call(async (c) => {
          const created = epochNow()
          const multi = c.multi()
          for (const f of files) multi.hset(filesKey(f.job), f.name, Buffer.from(f.content))
          for (const j of all) {
            multi.hset(jobKey(j.id), ...jobFields(j, submittingState, created))
            if (j.parent === null) multi.zadd(jobsKey, created, j.id).zadd(submittingKey, created, j.id)
            else multi.sadd(partsKey(j.parent), j.id)
          }
          const results = (await multi.exec()) ?? []
          for (const [error] of results) if (error !== null) throw error
        }),
      stageJob: (j) =>
        call(async (c) => {
          const created = epochNow()
          await c.multi().hset(jobKey(j.id), ...jobFields(j, stagingState, created)).zadd(stagingKey, created, j.id)
            .exec().then(failed)
        }),
      stageFile: (f, offset) =>
        Effect.asVoid(
          script("stageFile", [jobKey(f.job), `${jobKey(f.job)}:staged`, stagingKey], [
            f.job,
            epochNow(),
            f.name,
            offset,
            Buffer.from(f.content)
          ]).pipe(refusedAsGone(f.job))
        ),
      stageParts: (parent, parts, files) =>
        Effect.asVoid(
          script("stageParts", [jobKey(parent), partsKey(parent), stagingKey], [
            parent,
            epochNow(),
            jobKey(""),
            ...parts.flatMap((j) => {
              const file = files.find((f) => f.job === j.id)
              const fields = jobFields(j, stagingState, epochNow())
              return [j.id, file?.name ?? "", Buffer.from(file?.content ?? []), fields.length, ...fields]
            })
          ]).pipe(refusedAsGone(parent))
        ),
      publishJobs: (id, count) =>
        Effect.asVoid(
          script("publishJobs", [jobKey(id), partsKey(id), stagingKey, jobsKey, submittingKey], [
            id,
            epochNow(),
            jobKey(""),
            count
          ]).pipe(refusedAsGone(id))
        ),
      discardStaging: (id) =>
        Effect.asVoid(script("discardStaging", [jobKey(id), partsKey(id), stagingKey], [id, jobKey("")])),
      // The time taken when it runs (a heartbeat repeats the same effect).
      touchStaging: (id) =>
        Effect.suspend(() =>
          Effect.map(script("touchStaging", [jobKey(id), stagingKey], [id, epochNow()]), (n) => Number(n) === 1)
        ),
      // Each one removed only when it is still untouched since the cutoff in the script: a heartbeat or a batch between
      // the listing and the removal keeps it.
      reclaimStaging: (olderThanMs) => {
        const cutoff = Date.now() - olderThanMs
        return Effect.flatMap(
          call((c) => c.zrangebyscore(stagingKey, "-inf", cutoff)),
          (ids) =>
            Effect.map(
              Effect.forEach(
                ids,
                (id) => script("discardStaging", [jobKey(id), partsKey(id), stagingKey], [id, jobKey(""), cutoff])
              ),
              (removed) => removed.filter((n) => Number(n) === 1).length
            )
        )
      },
      markQueued: (id) => Effect.asVoid(script("markQueued", [submittingKey], [jobKey(""), id])),
      unqueued: (olderThanMs) =>
        call(async (c) => {
          const ids = await c.zrangebyscore(submittingKey, "-inf", Date.now() - olderThanMs)
          return Promise.all(ids.map(async (id) => {
            const parts = (await c.smembers(partsKey(id))).sort()
            return { id, leaves: parts.length > 0 ? parts : [id] }
          }))
        }),
      lostData: call(async (c) => {
        // Every job listed, a page at a time (memory bounded by the page, not the list): a listed job whose record
        // is gone was evicted or deleted, however old it is (an eviction takes the least used keys: old ones first).
        const missing: Array<string> = []
        let count = 0
        for (let start = 0;; start += lostDataPage) {
          const listed = await c.zrevrange(jobsKey, start, start + lostDataPage - 1)
          if (listed.length === 0) break
          const pipeline = c.pipeline()
          for (const id of listed) pipeline.exists(jobKey(id))
          const exists = ((await pipeline.exec()) ?? []).map(([error, n]) => {
            if (error !== null) throw error
            return n === 1
          })
          listed.forEach((id, i) => {
            if (exists[i]) return
            count++
            if (missing.length < 3) missing.push(id)
          })
          if (listed.length < lostDataPage) break
        }
        if (count > 0) {
          return `the records of ${count} listed job(s) are gone (${missing.join(", ")}${count > 3 ? ", …" : ""})`
        }
        if ((await c.exists(versionKey)) === 0 && (await c.exists(jobsKey, accountsKey, "bull:fsm-bulk:meta")) > 0) {
          return `its marker ${versionKey} is gone while its other keys remain`
        }
        return undefined
      }),
      evictionPolicy: call(async (c) => {
        try {
          const policy = ((await c.config("GET", "maxmemory-policy")) as Array<string | undefined>)[1]
          return policy !== undefined && policy !== "noeviction" ? policy : undefined
        } catch {
          // CONFIG refused (a managed server): not known here; `fleet init` said so.
          return undefined
        }
      }),
      job: (id) =>
        Effect.flatMap(
          jobs([id]),
          (found) => found[0] === undefined ? Effect.fail(noJob(id)) : Effect.succeed(found[0])
        ),
      recentJobs: (limit) => Effect.flatMap(call((c) => c.zrevrange(jobsKey, 0, limit - 1)), jobs),
      parts: (parent) => Effect.flatMap(call((c) => c.smembers(partsKey(parent))), (ids) => jobs([...ids].sort())),
      markRunning: (id, owner) => Effect.asVoid(script("markRunning", [jobKey(id)], [owner])),
      finishJob: (id, epoch, end) =>
        Effect.map(
          script("endJob", [jobKey(id), leaseKey(id), endingKey], [
            String(epoch),
            "state",
            "done",
            "exit_code",
            end.exitCode,
            "summary",
            JSON.stringify(end.summary),
            "rows",
            end.rows,
            "finished",
            epochNow()
          ]),
          (n) => n === 1
        ),
      failJob: (id, epoch, end) =>
        Effect.map(
          script("endJob", [jobKey(id), leaseKey(id), endingKey], [
            String(epoch),
            "state",
            "failed",
            "exit_code",
            end.exitCode,
            "error",
            end.error,
            "finished",
            epochNow()
          ]),
          (n) => n === 1
        ),
      settleParent: (parent) =>
        Effect.flatMap(
          Effect.flatMap(call((c) => c.smembers(partsKey(parent))), (ids) => jobs([...ids].sort())),
          (parts) => {
            const end = settled(parts)
            return end === undefined ? Effect.succeed(false) : Effect.map(
              script("settleParent", [jobKey(parent), partsKey(parent), endingKey], [
                jobKey(""),
                epochNow(),
                end.state,
                end.exitCode === null ? "" : String(end.exitCode),
                end.error ?? "",
                parent
              ]),
              (written) => written === 1
            )
          }
        ),
      unsettledParents: call((c) => c.zrange(endingKey, 0, 999)),
      cancelJob: (id) => Effect.asVoid(script("cancelJob", [jobKey(id), leaseKey(id)], [epochNow()])),
      rowsDone: (ids) =>
        Effect.forEach(ids, (id) =>
          Effect.map(
            script("rowsDone", [doneKey(id), partsKey(id)], [jobKey("")]),
            (n) => [id, Number(n)] as const
          )).pipe(Effect.map((entries) => new Map(entries))),

      putFile: (job, name, content) => Effect.asVoid(call((c) => c.hset(filesKey(job), name, Buffer.from(content)))),
      files: (job, start) =>
        call(async (c) => {
          const names = (await c.hkeys(filesKey(job))).filter((n) => n.startsWith(start)).sort()
          if (names.length === 0) return []
          const contents = await c.hmgetBuffer(filesKey(job), ...names)
          return names.flatMap((name, i) => {
            const content = contents[i]
            return content === null || content === undefined ? [] : [{ name, content }]
          })
        }),

      takeOpenLease: (job, owner) =>
        Effect.flatMap(
          Effect.map(call((c) => c.time()), (t) => serverDeadline(t, windowMs)),
          (deadline) =>
            Effect.flatMap(
              script("takeOpenLease", [jobKey(job), leaseKey(job)], [owner, epochNow(), deadline]),
              (e) => e === -1 ? Effect.fail(lateTake(url, job)) : Effect.succeed(e === null ? undefined : Number(e))
            )
        ),
      holdsLease: holdsLeaseOn(yield* leaseConnection(Redis, url, windowMs), url), // never behind the job's commands
      lease: (job) =>
        Effect.map(
          call((c) => c.hmget(leaseKey(job), "epoch", "owner")),
          ([epoch, owner]): Lease | undefined =>
            epoch === null || epoch === undefined ? undefined : { epoch: Number(epoch), owner: owner ?? "" }
        ),
      appendLine: (job, epoch, line) => appendLines(job, epoch, [line]),
      appendLines,
      journalLines: (job) => call((c) => c.lrange(journalKey(job), 0, -1)),

      // A stream's lines go to its own list, under the job's lease; its rows done count in the job's done set,
      // told apart from the job's own rows and other streams' by the stream's name.
      appendStreamLine: (job, epoch, stream, line) => {
        const row = doneRow(line)
        return Effect.map(
          script("appendLine", [leaseKey(job), journalKey(stream), doneKey(job)], [
            String(epoch),
            line,
            row === "" ? "" : `${stream}#${row}`
          ]),
          (n) => n === 1
        )
      },
      putFileUnderLease: (job, epoch, name, content) =>
        Effect.map(
          script("putFileUnderLease", [leaseKey(job), filesKey(job)], [String(epoch), name, Buffer.from(content)]),
          (n) => n === 1
        ),
      endWhole: (job, epoch, outputs, end) =>
        Effect.map(
          script("endWhole", [leaseKey(job), filesKey(job), jobKey(job)], [
            String(epoch),
            end.state,
            end.exitCode,
            end.summary === undefined || end.summary === null ? "" : JSON.stringify(end.summary),
            end.rows === undefined ? "" : end.rows,
            end.error ?? "",
            epochNow(),
            ...outputs.flatMap((f) => [f.name, Buffer.from(f.content)])
          ]),
          (n) => n === 1
        ),

      // Every egress-id lock, a page at a time (keys with an expiry: a dead worker's lapses within its expiry).
      liveWorkers: call(async (c) => {
        const ids = new Set<string>()
        let cursor = "0"
        do {
          const [next, keys] = await c.scan(cursor, "MATCH", `${egressKey("")}*`, "COUNT", 1_000)
          for (const key of keys) ids.add(key.slice(egressKey("").length))
          cursor = next
        } while (cursor !== "0")
        return [...ids]
      }),

      holdEgress: (id, sourceAddress) =>
        Effect.gen(function*() {
          const key = egressKey(id)
          const lockMs = egressLockMs()
          const token = `${hostname()}/${process.pid}/${randomBytes(6).toString("hex")}`
          // The monotonic clock (Lease.ts): a pause moves it on, a change of the wall clock does not.
          const clock = yield* Effect.clock
          const now = () => monotonicMs(clock)
          const asked = now()
          const got = yield* call((c) => c.set(key, token, "PX", lockMs, "NX"))
          if (got !== "OK") return yield* egressTaken(id)
          yield* Effect.addFinalizer(() => Effect.ignore(script("releaseEgress", [key], [token])))
          // The address, held the same way (value: the egress id, then the token), so that the refusal names its id.
          const source = sourceAddress === undefined
            ? undefined
            : { key: sourceKey(sourceAddress), value: `${id}\n${token}` }
          if (source !== undefined && sourceAddress !== undefined) {
            const took = yield* call((c) => c.set(source.key, source.value, "PX", lockMs, "NX"))
            if (took !== "OK") {
              const holder = yield* call((c) => c.get(source.key))
              return yield* sourceTaken(sourceAddress, holder === null ? undefined : holder.split("\n")[0])
            }
            yield* Effect.addFinalizer(() => Effect.ignore(script("releaseEgress", [source.key], [source.value])))
          }
          const lost = yield* Deferred.make<void>()
          // When the key was last set or renewed, on the monotonic clock, counted from when it was asked: the key
          // is this worker's until at least `lockMs` after that (Redis counts the expiry from when it ran the
          // command, later still). A worker paused past it may find it taken: its requests must not leave
          // meanwhile, so the fence refuses them once the confirmation is half the expiry old.
          let confirmed = asked
          let gone = false
          const fresh = Math.floor(lockMs / 3)
          const bound = Math.floor(lockMs / 2)
          /** Renews the key: true held, false lost to another worker, undefined when the store did not answer. */
          const renew = Effect.gen(function*() {
            const at = now()
            const held = yield* Effect.either(
              Effect.zipWith(
                script("renewEgress", [key], [token, lockMs]),
                source === undefined ? Effect.succeed(1) : script("renewEgress", [source.key], [source.value, lockMs]),
                (a, b) => a === 0 || b === 0 ? 0 : 1
              )
            )
            if (held._tag === "Left") return undefined
            if (held.right === 0) {
              gone = true
              yield* Deferred.succeed(lost, undefined)
              return false
            }
            confirmed = Math.max(confirmed, at)
            return true
          })
          // Renewed well within its expiry. Found taken by another worker (this one was paused past the expiry and
          // another started with the same id): this worker's hold is lost, and it stops.
          yield* Effect.forkScoped(
            Effect.gen(function*() {
              while (true) {
                yield* Effect.sleep(Math.floor(lockMs / 4))
                if ((yield* renew) === false) return
              }
            })
          )
          const gate: Effect.Effect<boolean> = Effect.gen(function*() {
            while (true) {
              if (gone) return false
              if (now() - confirmed < fresh) return true
              const held = yield* renew
              if (held !== undefined) return held
              // The store does not answer: whether the id is still this worker's cannot be known; wait.
              yield* Effect.sleep(250)
            }
          })
          const refusal = () => {
            if (gone) return `the hold on --egress-id ${id} was lost (another worker has it)`
            const age = now() - confirmed
            return age < bound
              ? undefined
              : `the hold on --egress-id ${id} was last confirmed ${
                Math.round(age)
              } ms ago (a request leaves within ${bound} ms of it)`
          }
          return { lost: Deferred.await(lost), gate, refusal }
        })
    }
    return store
  })
