/**
 * What the fleet keeps beside the queue engine's own data: accounts (credentials sealed, see Secrets.ts), jobs
 * (what to run, where it stands, its outcome), files (each job's source and the reports its run wrote), leases
 * (one epoch per job: who may write its journal now), the journal lines themselves, and the egress-id lock.
 *
 * Every statement the fleet runs is one named operation of `FleetStore`; the commands, the worker and the
 * submitter hold no SQL. The PostgreSQL implementation is here (schema `fsm_bulk`, in the same database as
 * BullMQ's tables); the Redis one, with the same guarantees, in RedisStore.ts.
 *
 * The rule that makes a job have one writer, which every implementation keeps: a journal line is appended only
 * by an operation that also finds the job's lease at the writer's epoch, in one atomic step, so a takeover (which
 * raises the epoch) refuses every later line of the old owner. In PostgreSQL it is one statement, with the lease
 * row locked for share, so a takeover waits for a line being written.
 */
import type { Scope } from "effect"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { Pool, QueryResultRow } from "pg"
import { registerUrlPassword } from "../Secrets.js"
import { describeCause, FleetError } from "./Errors.js"
import { isRedisUrl, migrateEngine } from "./Queue.js"

export const schema = "fsm_bulk"

/** States a job does not leave. */
export const finalStates: ReadonlyArray<string> = ["done", "cancelled", "failed"]

/**
 * The state of a job whose `submit` stored it but has not yet queued it all (`addJobs`, then the queue, then
 * `markQueued`). A submit killed in between leaves it so; a worker's sweep (`unqueued`) queues it.
 */
export const submittingState = "submitting"

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
interface NewJob {
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

type Op<A> = Effect.Effect<A, FleetError>

export interface FleetStore {
  readonly backend: "postgres" | "redis"
  /** Creates what the engine and the tool need (idempotent). */
  readonly init: Op<void>
  /** Fails, saying to run `fleet init`, when the fleet was not initialised. */
  readonly requireInit: Op<void>
  /** What in the server's settings weakens the guarantees below (none: the settings are fit), one line each. */
  readonly settingsWarnings: Op<ReadonlyArray<string>>

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
   * all of them or none, so a submit killed midway never leaves a parent without its parts.
   */
  readonly addJobs: (jobs: ReadonlyArray<NewJob>) => Op<void>
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
  /** Records a run's end, only while `epoch` holds the job's lease. */
  readonly finishJob: (
    id: string,
    epoch: number,
    end: { readonly exitCode: number; readonly summary: unknown; readonly rows: number }
  ) => Op<void>
  /** Records a run's failure, only while `epoch` holds the job's lease. */
  readonly failJob: (
    id: string,
    epoch: number,
    end: { readonly exitCode: number; readonly error: string }
  ) => Op<void>
  /**
   * A chunked job ends when its last chunk ends: its state and exit code then follow from its chunks' (`settled`:
   * every part failed → failed, with the largest of their exit codes and their reasons; else done with 3 if one
   * was stopped, cancelled or failed, naming the failed ones' reasons, else 1 if one had rows that did not end
   * well, else 0). Nothing while a chunk has not ended, or when the parent already ended.
   */
  readonly settleParent: (parent: string) => Op<void>
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
  /** Raises the job's lease epoch whoever held it: its holder's next line or request is refused. */
  readonly takeLease: (job: string, owner: string) => Op<number>
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

export const unavailable = (url: string, cause: unknown) =>
  new FleetError({
    reason: "Unavailable",
    message: `the fleet store ${redactUrl(url)} cannot be used: ${describeCause(cause)}`,
    cause
  })

export const notInitialised = new FleetError({
  reason: "Unavailable",
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

/** The fleet's store at `url` (checked by `fleetUrl`: postgres:// or redis://), for the scope. */
export const openStore = (url: string): Effect.Effect<FleetStore, FleetError, Scope.Scope> =>
  isRedisUrl(url)
    ? Effect.flatMap(Effect.promise(() => import("./RedisStore.js")), (m) => m.openRedisStore(url))
    : openPostgresStore(url)

// --- PostgreSQL ----------------------------------------------------------------------------------------------------

const ddl = `
CREATE SCHEMA IF NOT EXISTS ${schema};
CREATE TABLE IF NOT EXISTS ${schema}.accounts (
  name text PRIMARY KEY,
  base_url text NOT NULL,
  rate text,
  secret text NOT NULL,
  created timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS ${schema}.jobs (
  id text PRIMARY KEY,
  kind text NOT NULL,
  account text NOT NULL,
  resource text,
  spec jsonb NOT NULL,
  state text NOT NULL,
  rows integer NOT NULL DEFAULT 0,
  exit_code integer,
  summary jsonb,
  error text,
  owner text,
  parent text,
  created timestamptz NOT NULL DEFAULT now(),
  finished timestamptz
);
CREATE TABLE IF NOT EXISTS ${schema}.files (
  job text NOT NULL,
  name text NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (job, name)
);
CREATE TABLE IF NOT EXISTS ${schema}.leases (
  job text PRIMARY KEY,
  epoch integer NOT NULL,
  owner text NOT NULL,
  taken timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS ${schema}.journal (
  job text NOT NULL,
  seq bigserial,
  epoch integer NOT NULL,
  line text NOT NULL,
  PRIMARY KEY (job, seq)
);
`

const unfinished = (param: string) =>
  `EXISTS (SELECT 1 FROM ${schema}.jobs WHERE id = ${param} AND state NOT IN ('done', 'cancelled', 'failed'))`

const underLease = (job: string, epoch: string) =>
  `EXISTS (SELECT 1 FROM ${schema}.leases WHERE job = ${job} AND epoch = ${epoch})`

/** The store on PostgreSQL: a pool for the scope. */
const openPostgresStore = (url: string): Effect.Effect<FleetStore, FleetError, Scope.Scope> =>
  Effect.gen(function*() {
    const pg = yield* Effect.promise(() => import("pg"))
    const pool: Pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        registerUrlPassword(url)
        const p = new pg.default.Pool({ connectionString: url, max: 6 })
        // An idle client that loses its server must not crash the process: the next query reports it.
        p.on("error", () => undefined)
        return p
      }),
      (p) => Effect.promise(() => p.end()).pipe(Effect.ignore)
    )
    const run = (text: string, values?: ReadonlyArray<unknown>) =>
      Effect.tryPromise({
        try: () => pool.query(text, values as Array<unknown> | undefined),
        catch: (cause) => unavailable(url, cause)
      })
    const query = <R extends QueryResultRow = QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) =>
      Effect.map(run(text, values), (r) => r.rows as ReadonlyArray<R>)
    /** The number of rows the statement touched. */
    const count = (text: string, values?: ReadonlyArray<unknown>) =>
      Effect.map(run(text, values), (r) => r.rowCount ?? 0)
    yield* query("SELECT 1")

    const takeLease = (job: string, owner: string) =>
      query<{ epoch: number }>(
        `INSERT INTO ${schema}.leases (job, epoch, owner) VALUES ($1, 1, $2)
         ON CONFLICT (job) DO UPDATE SET epoch = ${schema}.leases.epoch + 1, owner = $2, taken = now()
         RETURNING epoch`,
        [job, owner]
      ).pipe(Effect.map((rows) => rows[0]!.epoch))

    const store: FleetStore = {
      backend: "postgres",
      init: Effect.zipRight(migrateEngine(pool), Effect.asVoid(query(ddl))),
      requireInit: query<{ t: string | null }>(`SELECT to_regclass('${schema}.jobs')::text AS t`).pipe(
        Effect.flatMap((rows) => rows[0]?.t == null ? Effect.fail(notInitialised) : Effect.void)
      ),
      // PostgreSQL is durable as set up by default; a server run with fsync off is the operator's choice.
      settingsWarnings: Effect.succeed([]),

      putAccount: (a) =>
        Effect.asVoid(query(
          `INSERT INTO ${schema}.accounts (name, base_url, rate, secret) VALUES ($1, $2, $3, $4)
           ON CONFLICT (name) DO UPDATE SET base_url = EXCLUDED.base_url, rate = EXCLUDED.rate, secret = EXCLUDED.secret`,
          [a.name, a.baseUrl, a.rate, a.secret]
        )),
      account: (name) =>
        query<{ name: string; base_url: string; secret: string; rate: string | null }>(
          `SELECT name, base_url, secret, rate FROM ${schema}.accounts WHERE name = $1`,
          [name]
        ).pipe(Effect.map((rows) =>
          rows[0] === undefined
            ? undefined
            : { name: rows[0].name, baseUrl: rows[0].base_url, rate: rows[0].rate, secret: rows[0].secret }
        )),
      accounts: query<{ name: string; base_url: string; rate: string | null }>(
        `SELECT name, base_url, rate FROM ${schema}.accounts ORDER BY name`
      ).pipe(Effect.map((rows) => rows.map((r) => ({ name: r.name, baseUrl: r.base_url, rate: r.rate })))),
      removeAccount: (name) =>
        Effect.map(count(`DELETE FROM ${schema}.accounts WHERE name = $1`, [name]), (n) => n > 0),

      addJob: (j) =>
        Effect.asVoid(query(
          `INSERT INTO ${schema}.jobs (id, kind, account, resource, spec, state, rows, parent)
           VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7)`,
          [j.id, j.kind, j.account, j.resource, JSON.stringify(j.spec), j.rows, j.parent]
        )),
      // One statement: all the jobs or none.
      addJobs: (jobs) =>
        Effect.asVoid(query(
          `INSERT INTO ${schema}.jobs (id, kind, account, resource, spec, state, rows, parent)
           SELECT x.id, x.kind, x.account, x.resource, x.spec, '${submittingState}', x.rows, x.parent
           FROM jsonb_to_recordset($1::jsonb)
             AS x(id text, kind text, account text, resource text, spec jsonb, rows integer, parent text)`,
          [JSON.stringify(jobs)]
        )),
      markQueued: (id) =>
        Effect.asVoid(query(
          `UPDATE ${schema}.jobs SET state = 'queued' WHERE (id = $1 OR parent = $1) AND state = '${submittingState}'`,
          [id]
        )),
      unqueued: (olderThanMs) =>
        query<{ id: string; leaves: Array<string> | null }>(
          `SELECT j.id, (SELECT array_agg(c.id ORDER BY c.id) FROM ${schema}.jobs c WHERE c.parent = j.id) AS leaves
           FROM ${schema}.jobs j
           WHERE j.parent IS NULL AND j.state = '${submittingState}'
             AND j.created < now() - make_interval(secs => $1::double precision / 1000)`,
          [olderThanMs]
        ).pipe(Effect.map((rows) => rows.map((r) => ({ id: r.id, leaves: r.leaves ?? [r.id] })))),
      // PostgreSQL evicts nothing; a job deleted while `wait` follows it is said by `wait`.
      lostData: Effect.succeed(undefined),
      evictionPolicy: Effect.succeed(undefined),
      job: (id) =>
        query<JobRow>(`SELECT * FROM ${schema}.jobs WHERE id = $1`, [id]).pipe(
          Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(noJob(id)) : Effect.succeed(rows[0]))
        ),
      recentJobs: (limit) =>
        query<JobRow>(`SELECT * FROM ${schema}.jobs WHERE parent IS NULL ORDER BY created DESC LIMIT $1`, [limit]),
      parts: (parent) => query<JobRow>(`SELECT * FROM ${schema}.jobs WHERE parent = $1 ORDER BY id`, [parent]),
      markRunning: (id, owner) =>
        Effect.asVoid(query(
          `UPDATE ${schema}.jobs SET state = 'running', owner = $2 WHERE id = $1 AND state NOT IN ('done', 'cancelled', 'failed')`,
          [id, owner]
        )),
      finishJob: (id, epoch, end) =>
        Effect.asVoid(query(
          `UPDATE ${schema}.jobs SET state = 'done', exit_code = $2, summary = $3, rows = $4, finished = now()
           WHERE id = $1 AND ${underLease("$1", "$5")}`,
          [id, end.exitCode, JSON.stringify(end.summary), end.rows, epoch]
        )),
      failJob: (id, epoch, end) =>
        Effect.asVoid(query(
          `UPDATE ${schema}.jobs SET state = 'failed', exit_code = $2, error = $3, finished = now()
           WHERE id = $1 AND ${underLease("$1", "$4")}`,
          [id, end.exitCode, end.error, epoch]
        )),
      // The parts' outcomes read and the parent written in one statement (`settled` says what follows from what).
      settleParent: (parent) =>
        Effect.flatMap(
          query<{ state: string; exit_code: number | null; error: string | null }>(
            `SELECT state, exit_code, error FROM ${schema}.jobs WHERE parent = $1 ORDER BY id`,
            [parent]
          ),
          (parts) => {
            const end = settled(parts)
            return end === undefined ? Effect.void : Effect.asVoid(query(
              `UPDATE ${schema}.jobs p SET
                 state = CASE WHEN p.state = 'cancelled' THEN 'cancelled' ELSE $2 END,
                 exit_code = $3, error = $4, finished = now()
               WHERE p.id = $1 AND p.finished IS NULL AND NOT EXISTS (
                 SELECT 1 FROM ${schema}.jobs c WHERE c.parent = $1 AND c.state NOT IN ('done', 'cancelled', 'failed'))`,
              [parent, end.state, end.exitCode, end.error ?? null]
            ))
          }
        ),
      cancelJob: (id) =>
        query(
          `UPDATE ${schema}.jobs SET state = 'cancelled', finished = now() WHERE id = $1 AND state NOT IN ('done', 'cancelled', 'failed')`,
          [id]
        ).pipe(Effect.zipRight(takeLease(id, "cancel")), Effect.asVoid),
      rowsDone: (ids) =>
        query<{ job: string; n: string }>(
          `SELECT coalesce(j.parent, j.id) AS job, count(DISTINCT (l.job, l.line::jsonb->>'row')) AS n
           FROM ${schema}.journal l JOIN ${schema}.jobs j ON j.id = split_part(l.job, '/', 1)
           WHERE coalesce(j.parent, j.id) = ANY($1) AND l.line::jsonb->>'state' = 'done'
           GROUP BY coalesce(j.parent, j.id)`,
          [ids]
        ).pipe(Effect.map((rows) => new Map(rows.map((c) => [c.job, Number(c.n)])))),

      putFile: (job, name, content) =>
        Effect.asVoid(query(
          `INSERT INTO ${schema}.files (job, name, content) VALUES ($1, $2, $3)
           ON CONFLICT (job, name) DO UPDATE SET content = EXCLUDED.content`,
          [job, name, Buffer.from(content)]
        )),
      files: (job, prefix) =>
        query<{ name: string; content: Buffer }>(
          `SELECT name, content FROM ${schema}.files WHERE job = $1 AND starts_with(name, $2) ORDER BY name`,
          [job, prefix]
        ),

      takeLease,
      takeOpenLease: (job, owner) =>
        query<{ epoch: number }>(
          `INSERT INTO ${schema}.leases (job, epoch, owner) SELECT $1, 1, $2 WHERE ${unfinished("$1")}
           ON CONFLICT (job) DO UPDATE SET epoch = ${schema}.leases.epoch + 1, owner = $2, taken = now()
             WHERE ${unfinished("$1")}
           RETURNING epoch`,
          [job, owner]
        ).pipe(Effect.map((rows) => rows[0]?.epoch)),
      holdsLease: (job, epoch) =>
        query(`SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2`, [job, epoch]).pipe(
          Effect.map((rows) => rows.length === 1)
        ),
      lease: (job) =>
        query<Lease>(`SELECT epoch, owner FROM ${schema}.leases WHERE job = $1`, [job]).pipe(
          Effect.map((rows) => rows[0])
        ),
      appendLine: (job, epoch, line) =>
        count(
          `INSERT INTO ${schema}.journal (job, epoch, line)
           SELECT $1, $2, $3 WHERE EXISTS (
             SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE)`,
          [job, epoch, line]
        ).pipe(Effect.map((n) => n === 1)),
      journalLines: (job) =>
        query<{ line: string }>(`SELECT line FROM ${schema}.journal WHERE job = $1 ORDER BY seq`, [job]).pipe(
          Effect.map((rows) => rows.map((r) => r.line))
        ),

      appendStreamLine: (job, epoch, stream, line) =>
        count(
          `INSERT INTO ${schema}.journal (job, epoch, line)
           SELECT $3, $2, $4 WHERE EXISTS (
             SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE)`,
          [job, epoch, stream, line]
        ).pipe(Effect.map((n) => n === 1)),
      putFileUnderLease: (job, epoch, name, content) =>
        count(
          `INSERT INTO ${schema}.files (job, name, content)
           SELECT $1, $3, $4 WHERE EXISTS (SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE)
           ON CONFLICT (job, name) DO UPDATE SET content = EXCLUDED.content`,
          [job, epoch, name, Buffer.from(content)]
        ).pipe(Effect.map((n) => n === 1)),
      // One transaction on a connection of its own, the lease row locked for share (a takeover waits for it).
      endWhole: (job, epoch, outputs, end) =>
        Effect.scoped(Effect.gen(function*() {
          const client = yield* Effect.acquireRelease(
            Effect.tryPromise({ try: () => pool.connect(), catch: (cause) => unavailable(url, cause) }),
            (client) => Effect.sync(() => client.release())
          )
          const on = (text: string, values: ReadonlyArray<unknown> = []) =>
            Effect.tryPromise({
              try: () => client.query(text, values as Array<unknown>),
              catch: (cause) => unavailable(url, cause)
            })
          yield* on("BEGIN")
          const ended = yield* Effect.gen(function*() {
            const held = yield* on(
              `SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE`,
              [job, epoch]
            )
            if (held.rowCount !== 1) return false
            yield* on(`DELETE FROM ${schema}.files WHERE job = $1 AND starts_with(name, 'out/')`, [job])
            for (const f of outputs) {
              yield* on(`INSERT INTO ${schema}.files (job, name, content) VALUES ($1, $2, $3)`, [
                job,
                `out/${f.name}`,
                Buffer.from(f.content)
              ])
            }
            yield* on(
              `UPDATE ${schema}.jobs SET state = $2, exit_code = $3, summary = $4, rows = coalesce($5, rows),
                 error = $6, finished = now() WHERE id = $1 AND state NOT IN ('done', 'cancelled', 'failed')`,
              [job, end.state, end.exitCode, JSON.stringify(end.summary ?? null), end.rows ?? null, end.error ?? null]
            )
            return true
          }).pipe(Effect.onError(() => Effect.ignore(on("ROLLBACK"))))
          yield* on(ended ? "COMMIT" : "ROLLBACK")
          return ended
        })),

      // A session-level advisory lock on a connection of its own: it dies with the connection, so with the process.
      holdEgress: (id, sourceAddress) =>
        Effect.gen(function*() {
          const client = yield* Effect.acquireRelease(
            Effect.tryPromise({ try: () => pool.connect(), catch: (cause) => unavailable(url, cause) }),
            (client) => Effect.sync(() => client.release(true))
          )
          const got = yield* Effect.tryPromise({
            try: () =>
              client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [
                `fsm-bulk egress ${id}`
              ]),
            catch: (cause) => unavailable(url, cause)
          })
          if (got.rows[0]?.ok !== true) return yield* egressTaken(id)
          if (sourceAddress !== undefined) {
            // The address's lock on the same connection; the session's name says whose it is, for the refusal.
            const held = yield* Effect.tryPromise({
              try: async () => {
                await client.query("SELECT set_config('application_name', $1, false)", [`fsm-bulk egress ${id}`])
                const r = await client.query<{ ok: boolean }>(
                  "SELECT pg_try_advisory_lock(hashtext('fsm-bulk source'), hashtext($1)) AS ok",
                  [sourceAddress]
                )
                if (r.rows[0]?.ok === true) return { ok: true as const }
                const other = await client.query<{ name: string | null }>(
                  `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                      AND l.classid = hashtext('fsm-bulk source')::oid AND l.objid = hashtext($1)::oid`,
                  [sourceAddress]
                )
                const name = other.rows[0]?.name ?? ""
                return {
                  ok: false as const,
                  other: name.startsWith("fsm-bulk egress ") ? name.slice("fsm-bulk egress ".length) : undefined
                }
              },
              catch: (cause) => unavailable(url, cause)
            })
            if (!held.ok) return yield* sourceTaken(sourceAddress, held.other)
          }
          const lost = yield* Deferred.make<void>()
          // The lock lives as long as its connection, whatever the worker's pauses: only the connection's end loses it.
          let gone = false
          const lose = () => {
            gone = true
            Deferred.unsafeDone(lost, Effect.void)
          }
          client.on("error", lose)
          client.on("end", lose)
          return {
            lost: Deferred.await(lost),
            gate: Effect.sync(() => !gone),
            refusal: () => gone ? `the hold on --egress-id ${id} was lost` : undefined
          }
        })
    }
    return store
  })
