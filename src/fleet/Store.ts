/**
 * What the fleet keeps beside BullMQ's own tables, in the same PostgreSQL database (schema `fsm_bulk`):
 * accounts (credentials sealed, see Secrets.ts), jobs (what to run, where it stands, its outcome), files (each
 * job's source and the reports its run wrote), leases (one epoch per job: who may write its journal now) and
 * the journal lines themselves.
 *
 * The rule that makes a job have one writer: a journal line is inserted only by a statement that also finds the
 * job's lease at the writer's epoch, with the lease row locked for share, so a takeover (which raises the epoch)
 * waits for a line being written and every later line of the old owner is refused.
 */
import { Effect, type Scope } from "effect"
import type { Pool, PoolClient, QueryResultRow } from "pg"
import { describeCause, FleetError } from "./Errors.js"

export const schema = "fsm_bulk"

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

export interface Store {
  readonly pool: Pool
  readonly query: <R extends QueryResultRow = QueryResultRow>(
    text: string,
    values?: ReadonlyArray<unknown>
  ) => Effect.Effect<ReadonlyArray<R>, FleetError>
  /** Like `query`, but the number of rows the statement touched. */
  readonly count: (text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<number, FleetError>
}

const unavailable = (url: string, cause: unknown) =>
  new FleetError({
    reason: "Unavailable",
    message: `the fleet store ${redactUrl(url)} cannot be used: ${describeCause(cause)}`,
    cause
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

/** A pool on the fleet's PostgreSQL for the scope. */
export const openStore = (url: string): Effect.Effect<Store, FleetError, Scope.Scope> =>
  Effect.gen(function*() {
    const pg = yield* Effect.promise(() => import("pg"))
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const p = new pg.default.Pool({ connectionString: url, max: 6 })
        // An idle client that loses its server must not crash the process: the next query reports it.
        p.on("error", () => undefined)
        return p
      }),
      (p) => Effect.promise(() => p.end()).pipe(Effect.ignore)
    )
    const query = <R extends QueryResultRow = QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) =>
      Effect.tryPromise({
        try: () => pool.query<R>(text, values as Array<unknown> | undefined),
        catch: (cause) => unavailable(url, cause)
      }).pipe(Effect.map((r) => r.rows))
    const count = (text: string, values?: ReadonlyArray<unknown>) =>
      Effect.tryPromise({
        try: () => pool.query(text, values as Array<unknown> | undefined),
        catch: (cause) => unavailable(url, cause)
      }).pipe(Effect.map((r) => r.rowCount ?? 0))
    yield* query("SELECT 1")
    return { pool, query, count } satisfies Store
  })

/** Creates the fleet's tables (idempotent). */
export const initStore = (store: Store) => store.query(ddl)

/** A dedicated connection for the scope (session-level advisory locks live on it). */
export const dedicated = (store: Store): Effect.Effect<PoolClient, FleetError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => store.pool.connect(),
      catch: (cause) => new FleetError({ reason: "Unavailable", message: describeCause(cause), cause })
    }),
    (client) => Effect.sync(() => client.release(true))
  )

/** The store is initialised: `fleet init` ran. */
export const requireInit = (store: Store) =>
  store.query<{ t: string | null }>(`SELECT to_regclass('${schema}.jobs')::text AS t`).pipe(
    Effect.flatMap((rows) =>
      rows[0]?.t == null
        ? Effect.fail(
          new FleetError({ reason: "Unavailable", message: "the fleet is not initialised: run `fsm-bulk fleet init`" })
        )
        : Effect.void
    )
  )

// --- journal and leases ------------------------------------------------------------------------------------------

/** Raises the job's lease epoch whoever held it (a cancel): its holder's next line or request is refused. */
export const takeLease = (store: Store, job: string, owner: string) =>
  store.query<{ epoch: number }>(
    `INSERT INTO ${schema}.leases (job, epoch, owner) VALUES ($1, 1, $2)
     ON CONFLICT (job) DO UPDATE SET epoch = ${schema}.leases.epoch + 1, owner = $2, taken = now()
     RETURNING epoch`,
    [job, owner]
  ).pipe(Effect.map((rows) => rows[0]!.epoch))

const unfinished = (param: string) =>
  `EXISTS (SELECT 1 FROM ${schema}.jobs WHERE id = ${param} AND state NOT IN ('done', 'cancelled', 'failed'))`

/**
 * Takes the lease of a job that has not ended, in one statement: the next epoch, or none when the job ended
 * meanwhile (a worker that stalled while another finished it must not take it again).
 */
export const takeOpenLease = (store: Store, job: string, owner: string) =>
  store.query<{ epoch: number }>(
    `INSERT INTO ${schema}.leases (job, epoch, owner) SELECT $1, 1, $2 WHERE ${unfinished("$1")}
     ON CONFLICT (job) DO UPDATE SET epoch = ${schema}.leases.epoch + 1, owner = $2, taken = now()
       WHERE ${unfinished("$1")}
     RETURNING epoch`,
    [job, owner]
  ).pipe(Effect.map((rows) => rows[0]?.epoch))

/** True while `epoch` is the job's current lease. */
export const holdsLease = (store: Store, job: string, epoch: number) =>
  store.query(`SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2`, [job, epoch]).pipe(
    Effect.map((rows) => rows.length === 1)
  )

/** Appends a journal line if `epoch` still holds the lease; false when it does not (nothing written). */
export const appendLine = (store: Store, job: string, epoch: number, line: string) =>
  store.count(
    `INSERT INTO ${schema}.journal (job, epoch, line)
     SELECT $1, $2, $3 WHERE EXISTS (
       SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE)`,
    [job, epoch, line]
  ).pipe(Effect.map((n) => n === 1))

/** The job's journal lines in the order they were written. */
export const journalLines = (store: Store, job: string) =>
  store.query<{ line: string }>(`SELECT line FROM ${schema}.journal WHERE job = $1 ORDER BY seq`, [job]).pipe(
    Effect.map((rows) => rows.map((r) => r.line))
  )

// --- files ---------------------------------------------------------------------------------------------------------

export const putFile = (store: Store, job: string, name: string, content: Uint8Array) =>
  store.query(
    `INSERT INTO ${schema}.files (job, name, content) VALUES ($1, $2, $3)
     ON CONFLICT (job, name) DO UPDATE SET content = EXCLUDED.content`,
    [job, name, Buffer.from(content)]
  )

export const files = (store: Store, job: string, prefix: string) =>
  store.query<{ name: string; content: Buffer }>(
    `SELECT name, content FROM ${schema}.files WHERE job = $1 AND starts_with(name, $2) ORDER BY name`,
    [job, prefix]
  )

// --- jobs ------------------------------------------------------------------------------------------------------------

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

export const jobRow = (store: Store, id: string) =>
  store.query<JobRow>(`SELECT * FROM ${schema}.jobs WHERE id = $1`, [id]).pipe(
    Effect.flatMap((rows) =>
      rows[0] === undefined
        ? Effect.fail(new FleetError({ reason: "NotFound", message: `no job ${id} in this fleet` }))
        : Effect.succeed(rows[0])
    )
  )

/** States a job does not leave. */
export const finalStates: ReadonlyArray<string> = ["done", "cancelled", "failed"]

/**
 * A chunked job ends when its last chunk ends: its state and exit code then follow from its chunks' (3 if one
 * was stopped, cancelled or failed, else 1 if one had rows that did not end well, else 0).
 */
export const settleParent = (store: Store, parent: string) =>
  store.query(
    `UPDATE ${schema}.jobs p SET
       state = CASE WHEN p.state = 'cancelled' THEN 'cancelled' ELSE 'done' END,
       exit_code = (SELECT CASE WHEN bool_or(c.state <> 'done' OR c.exit_code >= 2) THEN 3 ELSE max(c.exit_code) END
                    FROM ${schema}.jobs c WHERE c.parent = p.id),
       finished = now()
     WHERE p.id = $1 AND p.finished IS NULL AND NOT EXISTS (
       SELECT 1 FROM ${schema}.jobs c WHERE c.parent = $1 AND c.state NOT IN ('done', 'cancelled', 'failed'))`,
    [parent]
  )

// --- onboard and export jobs ---------------------------------------------------------------------------------------

/** The account is in the fleet. */
export const accountExists = (store: Store, name: string) =>
  store.query(`SELECT 1 FROM ${schema}.accounts WHERE name = $1`, [name]).pipe(Effect.map((rows) => rows.length > 0))

/** A queued job of a kind that runs whole (onboard, export): what to run, and the rows it reads when known. */
export const insertJob = (
  store: Store,
  job: {
    readonly id: string
    readonly kind: string
    readonly account: string
    readonly resource: string | null
    readonly spec: unknown
    readonly rows: number
  }
) =>
  store.query(
    `INSERT INTO ${schema}.jobs (id, kind, account, resource, spec, state, rows) VALUES ($1, $2, $3, $4, $5, 'queued', $6)`,
    [job.id, job.kind, job.account, job.resource, JSON.stringify(job.spec), job.rows]
  )

/**
 * The journal of one step of an onboarding job: its lines are kept under `JOB/RESOURCE` (each step is a run of
 * its own, with its own row numbers), written under the job's lease.
 */
export const stepStream = (job: string, step: string): string => `${job}/${step}`

/** Appends a line to one of the job's journals (`stream`) if `epoch` still holds the job's lease; false if not. */
export const appendStreamLine = (store: Store, job: string, epoch: number, stream: string, line: string) =>
  store.count(
    `INSERT INTO ${schema}.journal (job, epoch, line)
     SELECT $3, $2, $4 WHERE EXISTS (
       SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE)`,
    [job, epoch, stream, line]
  ).pipe(Effect.map((n) => n === 1))

/** Stores (or replaces) one of the job's files if `epoch` still holds its lease; false if not (nothing written). */
export const putFileUnderLease = (store: Store, job: string, epoch: number, name: string, content: Uint8Array) =>
  store.count(
    `INSERT INTO ${schema}.files (job, name, content)
     SELECT $1, $3, $4 WHERE EXISTS (SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE)
     ON CONFLICT (job, name) DO UPDATE SET content = EXCLUDED.content`,
    [job, epoch, name, Buffer.from(content)]
  ).pipe(Effect.map((n) => n === 1))

/** How a job that runs whole ended: its state, exit code, summary and rows (`error` when it failed). */
export interface JobEnd {
  readonly state: "done" | "failed"
  readonly exitCode: number
  readonly summary: unknown
  readonly rows: number | undefined
  readonly error: string | undefined
}

/**
 * Ends a job in one transaction, only while `epoch` holds its lease: its outputs (`out/…`) replaced by `outputs`
 * as a whole and its outcome recorded. False when the lease was lost: nothing is written, so the files a job
 * leaves are those of one run, never a mix of two owners'.
 */
export const finishUnderLease = (
  store: Store,
  job: string,
  epoch: number,
  outputs: ReadonlyArray<{ readonly name: string; readonly content: Uint8Array }>,
  end: JobEnd
): Effect.Effect<boolean, FleetError> =>
  Effect.scoped(Effect.gen(function*() {
    const client = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => store.pool.connect(),
        catch: (cause) => new FleetError({ reason: "Unavailable", message: describeCause(cause), cause })
      }),
      (c) => Effect.sync(() => c.release())
    )
    const run = <R extends QueryResultRow>(text: string, values: ReadonlyArray<unknown> = []) =>
      Effect.tryPromise({
        try: () => client.query<R>(text, values as Array<unknown>),
        catch: (cause) => new FleetError({ reason: "Unavailable", message: describeCause(cause), cause })
      })
    yield* run("BEGIN")
    const ended = yield* Effect.gen(function*() {
      const held = yield* run(`SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $2 FOR SHARE`, [job, epoch])
      if (held.rowCount !== 1) return false
      yield* run(`DELETE FROM ${schema}.files WHERE job = $1 AND starts_with(name, 'out/')`, [job])
      for (const f of outputs) {
        yield* run(`INSERT INTO ${schema}.files (job, name, content) VALUES ($1, $2, $3)`, [
          job,
          `out/${f.name}`,
          Buffer.from(f.content)
        ])
      }
      yield* run(
        `UPDATE ${schema}.jobs SET state = $2, exit_code = $3, summary = $4, rows = coalesce($5, rows), error = $6,
           finished = now() WHERE id = $1 AND state NOT IN ('done', 'cancelled', 'failed')`,
        [job, end.state, end.exitCode, JSON.stringify(end.summary ?? null), end.rows ?? null, end.error ?? null]
      )
      return true
    }).pipe(Effect.onError(() => run("ROLLBACK").pipe(Effect.ignore)))
    yield* run(ended ? "COMMIT" : "ROLLBACK")
    return ended
  }))
