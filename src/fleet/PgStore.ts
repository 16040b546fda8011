/**
 * The fleet's store on PostgreSQL (the port and its guarantees: Store.ts): schema `fsm_bulk`, in the same
 * database as BullMQ's tables. A journal line is appended by one statement that finds the job's lease at the
 * writer's epoch with the lease row locked for share, so a takeover waits for a line being written; what must
 * change together runs in one `transaction`.
 */
import type { Scope } from "effect"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Pool, PoolClient, PoolConfig, QueryResult, QueryResultRow } from "pg"
import { registerUrlPassword } from "../Secrets.js"
import { FleetError } from "./Errors.js"
import { scopedPgPool } from "./Packages.js"
import { leaseMs, migrateEngine, returnedIndexDdl } from "./Queue.js"
import {
  egressTaken,
  type FleetStore,
  type JobFile,
  type JobRow,
  type Lease,
  type NewJob,
  noJob,
  notInitialised,
  type Op,
  pgTimeouts,
  schema,
  settled,
  sourceTaken,
  stagingGone,
  stagingState,
  storeFailure,
  submittingState
} from "./Store.js"

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
-- A staged file's pieces ("submit" stores a file a piece at a time, each a row), joined into files when published.
CREATE TABLE IF NOT EXISTS ${schema}.file_pieces (
  job text NOT NULL,
  name text NOT NULL,
  at bigint NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (job, name, at)
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
-- Indexes added after a fleet's tables may exist: "fleet init" (idempotent) adds them to an existing fleet.
-- "rowsDone" (status, wait) goes from a job and its parts to their journals and a step's stream ("JOB/…").
CREATE INDEX IF NOT EXISTS jobs_parent ON ${schema}.jobs (parent);
CREATE INDEX IF NOT EXISTS journal_job_root ON ${schema}.journal (split_part(job, '/', 1));
-- The takeover claim (Queue.ts) finds jobs handed back to BullMQ's queue through this one.
${returnedIndexDdl};
`

/** The indexes `ddl` adds to a fleet made before them, with what goes slow without each (`missingIndexes`). */
const addedIndexes = [
  { name: `${schema}.jobs_parent`, serves: "`status` and `wait` read every journal line to count rows done" },
  { name: `${schema}.journal_job_root`, serves: "`status` and `wait` read every journal line to count rows done" },
  {
    name: "bullmq.job_returned",
    serves: "each worker's takeover claim reads every waiting job of the queue at each free slot"
  }
]

/**
 * The tables `ddl` adds to a fleet made before them. Without one a command of this version fails (a staged `submit`
 * stores its file's pieces in `file_pieces`, a worker's sweep removes them), so `requireInit` asks for them all.
 */
const addedTables = [`${schema}.file_pieces`]

/** A fleet made by an older version, without tables this one writes. */
const olderFleet = (missing: ReadonlyArray<string>) =>
  new FleetError({
    reason: "Refused",
    message: `the fleet's database was made by an older version: it lacks ${missing.join(", ")}, which this version ` +
      `writes; run \`fsm-bulk fleet init\` once (it is idempotent, and keeps every job and account)`
  })

/** Each of the tables `$1` names, in its order: its name if it exists, else null. */
const tablesStatement =
  `SELECT to_regclass(name)::text AS t FROM unnest($1::text[]) WITH ORDINALITY AS x(name, n) ORDER BY n`

/** Whether a fleet is ready for this version, from `tablesStatement` on the jobs table and `addedTables`. */
const readiness = (rows: ReadonlyArray<{ readonly t: string | null }>): Effect.Effect<void, FleetError> => {
  if (rows[0]?.t == null) return Effect.fail(notInitialised)
  const missing = addedTables.filter((_, i) => rows[i + 1]?.t == null)
  return missing.length === 0 ? Effect.void : Effect.fail(olderFleet(missing))
}

/** The name (application_name) of the session that holds a worker's egress id, before the id. */
const egressSession = "fsm-bulk egress "

/**
 * The distinct rows done in the journals of each job of `$1` and its parts (a step's stream `JOB/…` counts for
 * JOB). The jobs are found by their id or their parent (primary key, `jobs_parent`) and their lines through
 * `journal_job_root`, so a call reads those jobs' lines only, not every line of the database.
 */
export const rowsDoneStatement = `
SELECT coalesce(j.parent, j.id) AS job, count(DISTINCT (l.job, l.line::jsonb->>'row')) AS n
FROM ${schema}.jobs j JOIN ${schema}.journal l ON split_part(l.job, '/', 1) = j.id
WHERE (j.id = ANY($1) OR j.parent = ANY($1)) AND coalesce(j.parent, j.id) = ANY($1)
  AND l.line::jsonb->>'state' = 'done'
GROUP BY coalesce(j.parent, j.id)`

/**
 * A job's end is written only while the writer's epoch holds its lease, the lease row locked for share as a journal
 * line's is: a takeover waits for the end being written (and then reads the job ended: `takeOpenIn`), and an end
 * waiting behind a takeover or a cancel finds the new epoch and writes nothing. (An end never overwrites `cancelled`
 * either: a cancel made by an older version, which marked the job before it raised the epoch, is refused the same.)
 */
const underLease = (job: string, epoch: string) =>
  `EXISTS (SELECT 1 FROM ${schema}.leases WHERE job = ${job} AND epoch = ${epoch} FOR SHARE)`

type On = (text: string, values?: ReadonlyArray<unknown>) => Op<QueryResult>

/** Inserts jobs in `state` (ids already there are left as they are: a step asked again after its answer was lost). */
const insertJobs = (on: On, jobs: ReadonlyArray<NewJob>, state: string) =>
  on(
    `INSERT INTO ${schema}.jobs (id, kind, account, resource, spec, state, rows, parent)
     SELECT x.id, x.kind, x.account, x.resource, x.spec, $2, x.rows, x.parent
     FROM jsonb_to_recordset($1::jsonb)
       AS x(id text, kind text, account text, resource text, spec jsonb, rows integer, parent text)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(jobs), state]
  )

/** Inserts (or replaces) jobs' files. */
const insertFiles = (on: On, files: ReadonlyArray<JobFile>) =>
  Effect.forEach(files, (f) =>
    on(
      `INSERT INTO ${schema}.files (job, name, content) VALUES ($1, $2, $3)
       ON CONFLICT (job, name) DO UPDATE SET content = EXCLUDED.content`,
      [f.job, f.name, Buffer.from(f.content)]
    ), { discard: true })

/**
 * Removes staged submissions (parents `staging` picked by `which`), their parts and all their files. A parent
 * whose row a batch holds (`touchStaged` in an open transaction) is skipped: that submit is alive, and deleting
 * the parent under it would leave the parts its batch commits a moment later outside this statement's snapshot,
 * staged for good with no parent. Staged parts whose parent is gone (left so by a version without that rule) go
 * too.
 */
const dropStagedStatement = (which: string) =>
  `WITH old AS (SELECT id FROM ${schema}.jobs WHERE parent IS NULL AND state = '${stagingState}' AND ${which}
                FOR UPDATE SKIP LOCKED),
   gone AS (DELETE FROM ${schema}.jobs j WHERE j.state = '${stagingState}'
              AND (j.id IN (SELECT id FROM old) OR j.parent IN (SELECT id FROM old)
                OR (j.parent IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM ${schema}.jobs p WHERE p.id = j.parent))) RETURNING j.id),
   files AS (DELETE FROM ${schema}.files WHERE job IN (SELECT id FROM gone) RETURNING 1),
   pieces AS (DELETE FROM ${schema}.file_pieces WHERE job IN (SELECT id FROM gone) RETURNING 1)
   SELECT count(*) AS n FROM old`

/** The jobs in parts not ended (`finished` unset: a cancelled one has it) every part of which has (`unsettledParents`). */
const unsettledStatement = `SELECT p.id FROM ${schema}.jobs p
  WHERE p.parent IS NULL AND p.finished IS NULL AND EXISTS (SELECT 1 FROM ${schema}.jobs c WHERE c.parent = p.id)
    AND NOT EXISTS (
      SELECT 1 FROM ${schema}.jobs c WHERE c.parent = p.id AND c.state NOT IN ('done', 'cancelled', 'failed'))`

/**
 * The heartbeat of a live submit (`touchStaging`, on a pool connection of its own): its staged parent touched now;
 * `there` false once it is not staged (reclaimed, published). A batch holds the row (and touches it itself) and a
 * reclaim skips a held row: the heartbeat skips a held row too (SKIP LOCKED) and never waits for either; a row it could
 * not touch now is said gone only when not staged.
 */
const touchStagingStatement = `WITH held AS (SELECT id FROM ${schema}.jobs WHERE id = $1 AND state = '${stagingState}'
                 FOR NO KEY UPDATE SKIP LOCKED),
   touched AS (UPDATE ${schema}.jobs SET created = now() WHERE id IN (SELECT id FROM held) RETURNING 1)
   SELECT EXISTS (SELECT 1 FROM touched)
     OR EXISTS (SELECT 1 FROM ${schema}.jobs WHERE id = $1 AND state = '${stagingState}') AS there`

const stillStaged = (rows: ReadonlyArray<{ readonly there: boolean }>): boolean => rows[0]?.there === true

/** A pool on `url` for the scope (its password kept out of every message). */
const scopedPool = (url: string, options: PoolConfig) =>
  Effect.zipRight(Effect.sync(() => registerUrlPassword(url)), scopedPgPool({ connectionString: url, ...options }))

/**
 * A statement on a connection of the pool, given back after it (closed after a failure, as `pool.query` does). A
 * try given up on (a running job's store operation past what was left of its lease, Transient.ts) closes its
 * connection at once: left waiting for its answer (a lock held; a session opened before a statement timeout was set),
 * it kept its place in the pool until the answer timeout, and the pool's few places filled with such tries.
 */
const statementOn = (pool: Pool, url: string) => (text: string, values?: ReadonlyArray<unknown>) =>
  Effect.async<QueryResult, FleetError>((resume) => {
    let state: "connecting" | PoolClient | "ended" = "connecting"
    const end = (c: PoolClient, error: Error | undefined) => {
      state = "ended"
      c.release(error)
    }
    pool.connect().then(
      (c) => {
        if (state === "ended") return c.release()
        state = c
        c.query(text, values as Array<unknown> | undefined).then(
          (r) => {
            if (state !== c) return
            end(c, undefined)
            resume(Effect.succeed(r))
          },
          (cause: unknown) => {
            if (state !== c) return
            end(c, cause instanceof Error ? cause : new Error(String(cause)))
            resume(Effect.fail(storeFailure(url, cause)))
          }
        )
      },
      (cause: unknown) => {
        if (state === "ended") return
        state = "ended"
        resume(Effect.fail(storeFailure(url, cause)))
      }
    )
    return Effect.sync(() => {
      if (typeof state === "object") end(state, new Error("the try was given up"))
      else state = "ended"
    })
  })

/** The store's pool of a worker's (or a command's) statements: its jobs' data, journals, leases taken, sweeps. */
export const dataConnections = 6

/**
 * The pool of the lease's confirmations (`holdsLease`) alone, beside `dataConnections`: a confirmation never waits for
 * a place behind the jobs' data statements. Those can hold every place of theirs at once (the tries of a journal that
 * cannot be written, each waiting on a lock for what is left of its lease): the confirmation then waited, could fail
 * for want of a place, and the job was handed back as "could not confirm lease N for a whole lease" instead of for
 * what failed (issue 29, test/fleet/lease-connection.test.ts). A confirmation reads one row by its key and takes no
 * lock, so it waits for nobody on the server either. Two places: one try left waiting on a dead connection (until it
 * is given up, which closes it) does not hold the next job's confirmation. Opened when first used, so a worker
 * without a job (and a command) opens none; kept open for a lease after the last confirmation (they come every third
 * of one while a job runs). Taking a lease (`takeOpenLease`) stays with the data: it waits by design for a journal
 * line being written (the lease row locked for share), which here would hold the worker's other jobs' confirmations
 * behind it; and it comes before the job's lease, so a wait for a place delays the job's start, nothing more.
 */
export const leaseConnections = 2

/** Sessions of the lease's confirmations are named so (`pg_stat_activity`'s application_name). */
export const leaseSession = "fsm-bulk lease"

/** The store's pools for the scope (`dataConnections`, `leaseConnections`), with their timeouts for a lease of `ms`. */
const storePools = (url: string, ms: number) => {
  const timeouts = pgTimeouts(ms)
  return Effect.all({
    timeouts: Effect.succeed(timeouts),
    data: scopedPool(url, { max: dataConnections, ...timeouts }),
    lease: scopedPool(url, {
      max: leaseConnections,
      ...timeouts,
      idleTimeoutMillis: ms,
      application_name: leaseSession
    })
  })
}

/** `holdsLease` with the statements of `on` (the lease's own pool). */
const holdsLeaseOn = (on: On) => (job: string, epoch: number) =>
  Effect.map(
    on(`SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2`, [job, epoch]),
    (r) => r.rows.length === 1
  )

/** The next epoch of job `$1`'s lease, taken by `$2` whoever held it (1 for the first): `takeOpenLease`, `cancel`. */
const raiseLease = `INSERT INTO ${schema}.leases (job, epoch, owner) VALUES ($1, 1, $2)
  ON CONFLICT (job) DO UPDATE SET epoch = ${schema}.leases.epoch + 1, owner = $2, taken = now()
  RETURNING epoch`

/**
 * `cancel` in one transaction (PgStore's `cancelJob`), the epoch raised first: no instant in which the job shows
 * cancelled while its holder's lease still holds (a journal line, an end or a request of the holder passing then). The
 * lease row is locked before the job's row, as a journal line and a job's end lock them, so a cancel and an end wait
 * for each other in one order. Two statements before, the first committed on its own (test/fleet/job-end.test.ts).
 */
const cancelIn = (on: On, id: string) =>
  Effect.gen(function*() {
    yield* on(raiseLease, [id, "cancel"])
    yield* on(
      `UPDATE ${schema}.jobs SET state = 'cancelled', finished = now()
       WHERE id = $1 AND state NOT IN ('done', 'cancelled', 'failed')`,
      [id]
    )
    return true
  })

/**
 * `publishJobs` in one transaction (PgStore's): the staged submission `id` made visible (`submitting`) with its `count`
 * jobs, its file's pieces joined. The parent's row is locked first (a reclaim removing it is waited for, and one after
 * it skips it), then the jobs are counted by a statement of their own, whose snapshot is taken after the lock. Counted
 * first, the jobs of a reclaim not yet committed were all there, the marking found them gone, and the submission was
 * said published: its `submit` queued jobs that no longer existed (issue 29, test/fleet/staging-publish.test.ts).
 */
const publishIn = (on: On, id: string, count: number) =>
  Effect.gen(function*() {
    const parent = yield* on(`SELECT 1 FROM ${schema}.jobs WHERE id = $1 FOR NO KEY UPDATE`, [id])
    if (parent.rowCount !== 1) return yield* Effect.fail(stagingGone(id))
    const held = yield* on(`SELECT count(*) AS n FROM ${schema}.jobs WHERE id = $1 OR parent = $1`, [id])
    if (Number(held.rows[0]?.n ?? 0) !== count) return yield* Effect.fail(stagingGone(id))
    // The sweep's age of a submission left unqueued runs from here.
    yield* on(
      `UPDATE ${schema}.jobs SET state = '${submittingState}', created = now()
       WHERE (id = $1 OR parent = $1) AND state = '${stagingState}'`,
      [id]
    )
    // Its file's pieces joined in order, once (published again: none are left).
    yield* on(
      `WITH pieces AS (DELETE FROM ${schema}.file_pieces WHERE job = $1 RETURNING *)
       INSERT INTO ${schema}.files (job, name, content)
       SELECT job, name, string_agg(content, ''::bytea ORDER BY at) FROM pieces GROUP BY job, name
       ON CONFLICT (job, name) DO UPDATE SET content = EXCLUDED.content`,
      [id]
    )
    return true
  })

/**
 * `takeOpenLease` in one transaction (PgStore's): the epoch raised first, which waits for whoever holds the lease row
 * (a journal line, an end being written; a cancel or another takeover), then the job's state read by a statement of its
 * own, whose snapshot (READ COMMITTED: one per statement) is taken once the row is this transaction's: an end committed
 * during the wait is seen, and the transaction is rolled back, nothing taken. One statement before: its snapshot was
 * taken before it waited, it read the job not ended, and a worker took the lease of an ended job and ran it again
 * (issue 29, test/fleet/takeover-end.test.ts). Every end and cancel goes through the lease row (`underLease`,
 * `cancelIn`): once this transaction holds it, none can end the job at the old epoch, so the state read stays true
 * until the commit. The lease row before the job's, as everywhere; the job's row is read, not locked.
 *
 * A take its worker gave up on never commits later (on Redis it could: Store.ts's `serverDeadline`): the client
 * sends COMMIT only once it has the raise's answer, and the server ends a session left idle in the transaction after
 * `idle_in_transaction_session_timeout`, the client's own answer timeout (`pgTimeouts`), counted from before the client
 * sent it; until then the raised row is locked, so a later take waits behind it and never lands under it
 * (test/fleet/late-take-cli.test.ts).
 */
const takeOpenIn = (on: On, job: string, owner: string, taken: (epoch: number) => void) =>
  Effect.gen(function*() {
    const raised = yield* on(raiseLease, [job, owner])
    const open = yield* on(
      `SELECT 1 FROM ${schema}.jobs WHERE id = $1 AND state NOT IN ('done', 'cancelled', 'failed')`,
      [job]
    )
    taken(raised.rows[0].epoch)
    return open.rowCount === 1
  })

/**
 * The store on PostgreSQL: a pool for the scope (and one for the lease's confirmations, `leaseConnections`), every
 * statement and connection of them bounded in time (`pgTimeouts`, Store.ts: a server that stops answering fails the
 * statement, which is tried again on a new connection).
 */
export const openPgStore = (url: string): Effect.Effect<FleetStore, FleetError, Scope.Scope> =>
  Effect.gen(function*() {
    const { data: pool, lease: leasePool, timeouts } = yield* storePools(url, yield* leaseMs)
    const run = statementOn(pool, url)
    const query = <R extends QueryResultRow = QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) =>
      Effect.map(run(text, values), (r) => r.rows as ReadonlyArray<R>)
    /** The number of rows the statement touched. */
    const count = (text: string, values?: ReadonlyArray<unknown>) =>
      Effect.map(run(text, values), (r) => r.rowCount ?? 0)
    yield* query("SELECT 1")

    /**
     * `body` in one transaction on a connection of its own (the only way the store runs one): committed when it
     * returns true, rolled back when it returns false or fails.
     */
    const transaction = (body: (on: On) => Op<boolean>): Op<boolean> =>
      Effect.scoped(Effect.gen(function*() {
        // A transaction that failed (or was interrupted) closes its connection instead of giving it back, which rolls
        // it back on the server: a statement of it may still be waiting for its answer (`query_timeout` fails the
        // call, not the statement), and a ROLLBACK sent behind it would wait as long, as would the pool's next user.
        const client = yield* Effect.acquireRelease(
          Effect.tryPromise({ try: () => pool.connect(), catch: (cause) => storeFailure(url, cause) }),
          (client, exit) =>
            Effect.sync(() => client.release(Exit.isFailure(exit) ? new Error("the transaction failed") : undefined))
        )
        const on = (text: string, values: ReadonlyArray<unknown> = []) =>
          Effect.tryPromise({
            try: () => client.query(text, values as Array<unknown>),
            catch: (cause) => storeFailure(url, cause)
          })
        yield* on("BEGIN")
        const commit = yield* body(on)
        yield* on(commit ? "COMMIT" : "ROLLBACK")
        return commit
      }))

    // One statement for the lines of a group commit: the lease is looked up (and locked for share) once for all.
    const appendLines = (job: string, epoch: number, lines: ReadonlyArray<string>) =>
      count(
        `INSERT INTO ${schema}.journal (job, epoch, line)
         SELECT $1, $2, t.line FROM unnest($3::text[]) WITH ORDINALITY AS t(line, i)
         WHERE EXISTS (SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE)
         ORDER BY t.i`,
        [job, epoch, lines]
      ).pipe(Effect.map((n) => n === lines.length && n > 0))
    /** In a transaction: the staged job touched (now), or a refusal when it is no longer staged (reclaimed). */
    const touchStaged = (on: On, id: string) =>
      Effect.flatMap(
        on(`UPDATE ${schema}.jobs SET created = now() WHERE id = $1 AND state = '${stagingState}'`, [id]),
        (r) => (r.rowCount ?? 0) === 1 ? Effect.void : Effect.fail(stagingGone(id))
      )
    const dropStaged = (which: string, values: ReadonlyArray<unknown>) =>
      query<{ n: string }>(dropStagedStatement(which), values).pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)))

    const store: FleetStore = {
      backend: "postgres",
      // On a pool of its own without an answer timeout (0: none): an index `fleet init` adds to a big fleet's journal
      // can take minutes, and a statement given up on the client still runs on the server (`init` is an operator's,
      // watched). One connection: BullMQ's migrations, handed a pool, send their BEGIN … COMMIT through `pool.query`.
      init: Effect.scoped(Effect.gen(function*() {
        const own = yield* scopedPool(url, { max: 1, ...timeouts, query_timeout: 0 })
        yield* migrateEngine(own)
        yield* Effect.tryPromise({ try: () => own.query(ddl), catch: (cause) => storeFailure(url, cause) })
      })),
      requireInit: query<{ t: string | null }>(tablesStatement, [[`${schema}.jobs`, ...addedTables]]).pipe(
        Effect.flatMap(readiness)
      ),
      settingsWarnings: Effect.succeed([]), // durable as PostgreSQL is set up by default; fsync off is the operator's choice
      missingIndexes: query<{ name: string }>(
        `SELECT schemaname || '.' || indexname AS name FROM pg_indexes WHERE schemaname || '.' || indexname = ANY($1)`,
        [addedIndexes.map((index) => index.name)]
      ).pipe(Effect.map((rows) => {
        const present = new Set(rows.map((r) => r.name))
        return addedIndexes.filter((index) => !present.has(index.name))
      })),

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
      // One transaction: all the jobs and their files or none. Tried again after a commit whose answer was lost
      // (Transient.ts), it finds its own jobs there (their ids are new to the fleet) and changes nothing.
      addJobs: (jobs, files) =>
        Effect.asVoid(transaction((on) =>
          Effect.gen(function*() {
            yield* insertJobs(on, jobs, submittingState)
            yield* insertFiles(on, files)
            return true
          })
        )),
      stageJob: (j) =>
        Effect.asVoid(query(
          `INSERT INTO ${schema}.jobs (id, kind, account, resource, spec, state, rows, parent)
           VALUES ($1, $2, $3, $4, $5, '${stagingState}', $6, $7) ON CONFLICT (id) DO NOTHING`,
          [j.id, j.kind, j.account, j.resource, JSON.stringify(j.spec), j.rows, j.parent]
        )),
      // Each piece a row of its own at its offset (what was after it removed): written again, it is the same file.
      // Rewriting the stored value so far with each piece (`substring(…) || piece`) cost in the square of the file.
      stageFile: (f, offset) =>
        Effect.asVoid(transaction((on) =>
          Effect.gen(function*() {
            yield* touchStaged(on, f.job)
            yield* on(`DELETE FROM ${schema}.file_pieces WHERE job = $1 AND name = $2 AND at > $3`, [
              f.job,
              f.name,
              offset
            ])
            yield* on(
              `INSERT INTO ${schema}.file_pieces (job, name, at, content) VALUES ($1, $2, $3, $4)
               ON CONFLICT (job, name, at) DO UPDATE SET content = EXCLUDED.content`,
              [f.job, f.name, offset, Buffer.from(f.content)]
            )
            return true
          })
        )),
      stageParts: (parent, jobs, files) =>
        Effect.asVoid(transaction((on) =>
          Effect.gen(function*() {
            yield* touchStaged(on, parent)
            yield* insertJobs(on, jobs, stagingState)
            yield* insertFiles(on, files)
            return true
          })
        )),
      publishJobs: (id, count) => Effect.asVoid(transaction((on) => publishIn(on, id, count))),
      touchStaging: (id) => Effect.map(query<{ there: boolean }>(touchStagingStatement, [id]), stillStaged),
      discardStaging: (id) => Effect.asVoid(dropStaged("id = $1", [id])),
      reclaimStaging: (olderThanMs) =>
        dropStaged("created < now() - make_interval(secs => $1::double precision / 1000)", [olderThanMs]),
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
        query<JobRow>(
          `SELECT * FROM ${schema}.jobs WHERE parent IS NULL AND state <> '${stagingState}' ORDER BY created DESC LIMIT $1`,
          [limit]
        ),
      parts: (parent) => query<JobRow>(`SELECT * FROM ${schema}.jobs WHERE parent = $1 ORDER BY id`, [parent]),
      markRunning: (id, owner) =>
        Effect.asVoid(query(
          `UPDATE ${schema}.jobs SET state = 'running', owner = $2 WHERE id = $1 AND state NOT IN ('done', 'cancelled', 'failed')`,
          [id, owner]
        )),
      finishJob: (id, epoch, end) =>
        Effect.map(
          count(
            `UPDATE ${schema}.jobs SET state = 'done', exit_code = $2, summary = $3, rows = $4, finished = now()
             WHERE id = $1 AND state <> 'cancelled' AND ${underLease("$1", "$5")}`,
            [id, end.exitCode, JSON.stringify(end.summary), end.rows, epoch]
          ),
          (n) => n === 1
        ),
      failJob: (id, epoch, end) =>
        Effect.map(
          count(
            `UPDATE ${schema}.jobs SET state = 'failed', exit_code = $2, error = $3, finished = now()
             WHERE id = $1 AND state <> 'cancelled' AND ${underLease("$1", "$4")}`,
            [id, end.exitCode, end.error, epoch]
          ),
          (n) => n === 1
        ),
      // The parts' outcomes read and the parent written in one statement (`settled` says what follows from what).
      settleParent: (parent) =>
        Effect.flatMap(
          query<{ state: string; exit_code: number | null; error: string | null }>(
            `SELECT state, exit_code, error FROM ${schema}.jobs WHERE parent = $1 ORDER BY id`,
            [parent]
          ),
          (parts) => {
            const end = settled(parts)
            return end === undefined ? Effect.succeed(false) : Effect.map(
              count(
                `UPDATE ${schema}.jobs p SET
                 state = CASE WHEN p.state = 'cancelled' THEN 'cancelled' ELSE $2 END,
                 exit_code = $3, error = $4, finished = now()
               WHERE p.id = $1 AND p.finished IS NULL AND NOT EXISTS (
                 SELECT 1 FROM ${schema}.jobs c WHERE c.parent = $1 AND c.state NOT IN ('done', 'cancelled', 'failed'))`,
                [parent, end.state, end.exitCode, end.error ?? null]
              ),
              (n) => n > 0
            )
          }
        ),
      unsettledParents: Effect.map(query<{ id: string }>(unsettledStatement), (rows) => rows.map((r) => r.id)),
      cancelJob: (id) => Effect.asVoid(transaction((on) => cancelIn(on, id))),
      rowsDone: (ids) =>
        query<{ job: string; n: string }>(rowsDoneStatement, [ids]).pipe(
          Effect.map((rows) => new Map(rows.map((c) => [c.job, Number(c.n)])))
        ),

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

      takeOpenLease: (job, owner) =>
        Effect.suspend(() => {
          let epoch: number | undefined
          return Effect.map(
            transaction((on) => takeOpenIn(on, job, owner, (e) => (epoch = e))),
            (open) => open ? epoch : undefined
          )
        }),
      holdsLease: holdsLeaseOn(statementOn(leasePool, url)), // never behind the jobs' statements
      lease: (job) =>
        query<Lease>(`SELECT epoch, owner FROM ${schema}.leases WHERE job = $1`, [job]).pipe(
          Effect.map((rows) => rows[0])
        ),
      appendLine: (job, epoch, line) => appendLines(job, epoch, [line]),
      appendLines,
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
        transaction((on) =>
          Effect.gen(function*() {
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
          })
        ),

      // A session-level advisory lock on a connection of its own: it dies with the connection, so with the process.
      holdEgress: (id, sourceAddress) =>
        Effect.gen(function*() {
          const client = yield* Effect.acquireRelease(
            Effect.tryPromise({ try: () => pool.connect(), catch: (cause) => storeFailure(url, cause) }),
            (client) => Effect.sync(() => client.release(true))
          )
          const lost = yield* Deferred.make<void>()
          // The lock lives as long as its connection, whatever the worker's pauses: only the connection's end loses it.
          // Listened for before the first statement: a connection that ends before that fails its statements, one that
          // ends after is seen here (its `end` is emitted once, and may come before this fiber goes on).
          let gone = false
          const lose = () => {
            gone = true
            Deferred.unsafeDone(lost, Effect.void)
          }
          client.on("error", lose)
          client.on("end", lose)
          const got = yield* Effect.tryPromise({
            try: () =>
              client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [
                `fsm-bulk egress ${id}`
              ]),
            catch: (cause) => storeFailure(url, cause)
          })
          if (got.rows[0]?.ok !== true) return yield* egressTaken(id)
          // The session's name says whose it is: for a refusal of its source address, and for `liveWorkers`.
          yield* Effect.tryPromise({
            try: () => client.query("SELECT set_config('application_name', $1, false)", [`${egressSession}${id}`]),
            catch: (cause) => storeFailure(url, cause)
          })
          if (sourceAddress !== undefined) {
            // The address's lock on the same connection.
            const held = yield* Effect.tryPromise({
              try: async () => {
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
                  other: name.startsWith(egressSession) ? name.slice(egressSession.length) : undefined
                }
              },
              catch: (cause) => storeFailure(url, cause)
            })
            if (!held.ok) return yield* sourceTaken(sourceAddress, held.other)
          }
          return {
            lost: Deferred.await(lost),
            gate: Effect.sync(() => !gone),
            refusal: () => gone ? `the hold on --egress-id ${id} was lost` : undefined
          }
        }),
      // The sessions holding an egress id are named after it (application_name: visible to every role).
      liveWorkers: query<{ id: string }>(
        `SELECT DISTINCT substr(application_name, $1) AS id FROM pg_stat_activity
          WHERE datname = current_database() AND starts_with(application_name, $2)`,
        [egressSession.length + 1, egressSession]
      ).pipe(Effect.map((rows) => rows.map((r) => r.id)))
    }
    return store
  })
