/**
 * Generated histories of the fleet (issue 29): what users and servers do to a fleet — jobs submitted, workers
 * started and killed with SIGKILL, the store failing (PostgreSQL: every connection ended with
 * `pg_terminate_backend`; Redis: the server restarted with its append-only file), an account moved to another
 * address with other credentials, an account removed, a job cancelled — generated from a seed, run against a real
 * store, two sandboxes and the built CLI, checked, and shrunk like model.ts's histories.
 *
 * Spawned: the workers (killed, frozen, what is tested), `accounts add|remove` and the slow submits (killed with
 * SIGKILL while staging). A plain `submit`, `cancel`, the drain's `wait` and a refused job's `status` are made in
 * this process, as the commands make them (test/fleet/in-process.ts: the commands' own store, settings read from the
 * fleet's environment, the same src/ functions): their effect on the store and queue is the commands', without a
 * CLI start (about a second of CPU) each. Their contract is test/fleet/cli.test.ts's.
 *
 * The world is not model.ts's (one sandbox, one account, in-process runs): a store of the backend, two sandboxes
 * (the "old" and "new" addresses of every account), two accounts, up to three workers each on a loopback address
 * of its own, all with one budget. So the fleet's actions have their own table, `fleetActions`, with the same
 * shape (weight, generate, run, simplify); the shrinking is model.ts's (`shrinkWith`).
 *
 * The invariants, over the whole history once every job was given a worker and waited for (`checkFleet`):
 * - no job lost: every job ends (`wait` returns) in done, failed or cancelled; a job whose account stayed and that
 *   nobody cancelled ends done, exit 0;
 * - one record per key: no account on either sandbox holds two records of one key; every key of a job that ended
 *   done is on one of its account's sandboxes;
 * - the budget: no loopback address sent more than the budget in any window (both sandboxes' requests together:
 *   the budget is the address's) and no request was answered with a rate limit;
 * - no request after an account's removal, and no write to an account's old address after it moved, beyond the
 *   requests already past the worker's look-up at that moment (the per-job concurrency times the account's jobs
 *   then running);
 * - a job no worker can serve (`refused-job`: a newer job format) ends failed, exit 2, with the workers' refusals,
 *   nothing of it journalled, and `status` shows what `wait` returned;
 * - no phantom job: every job the store shows (`status`'s list) is one a submit of the history made visible (a
 *   submit killed while staging its parts, `slow-submit` with `kill`, leaves none);
 * - nothing crashed: no worker or command died of an uncaught error or a defect (`crashes`);
 * - no staging left behind: once the drain is over, every submission a killed submit left staged is reclaimed by a
 *   worker's sweep (within the reclaim age and a lease), and a live one held between two batches for longer than the
 *   reclaim age (`slow-submit`) was never reclaimed: it publishes and its job ends done like any other.
 */
import { Effect, Scope } from "effect"
import { Redis } from "ioredis"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { jobFormat } from "../../src/fleet/Queue.js"
import type { RequestLogEntry, RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { noFaults, startSandbox } from "../../src/sandbox/Sandbox.js"
import { type FreezingProxy, freezingProxy, throughProxy } from "../fleet/freezing-proxy.js"
import { cancelAs, statusAs, submitImportAs, waitAs, type Waited } from "../fleet/in-process.js"
import type { Backend, RunningWorker } from "../fleet/support.js"
import {
  fleetEnv,
  initFleet,
  lastJson,
  query,
  queueNewerJob,
  runCli,
  stagedSubmissionsPoll,
  startHeldSubmit,
  startPostgres,
  startRedisWith,
  startWorker,
  withStore
} from "../fleet/support.js"
import { temporaryDir } from "../support.js"
import type { Rng } from "./model.js"
import { rng, shrinkWith } from "./model.js"

// --- actions ---------------------------------------------------------------------------------------------------

export type FleetAction =
  /** Rows `first`… (modulo the pool) of account `account`'s keys, upsert; in parts of `chunkRows` when given. */
  | {
    readonly kind: "submit"
    readonly account: number
    readonly first: number
    readonly rows: number
    readonly chunkRows: number | undefined
  }
  | { readonly kind: "worker-start"; readonly slot: number }
  | { readonly kind: "worker-kill"; readonly slot: number }
  /**
   * PostgreSQL: the fleet's connections ended (`pg_terminate_backend`), the workers' egress-id sessions (the
   * advisory locks) too when `sessions`; Redis: the server restarted (`downMs` down).
   */
  | { readonly kind: "store-fault"; readonly downMs: number; readonly sessions: boolean }
  /**
   * The store unusable for longer than a lease (`downMs`): PostgreSQL, the leases table locked and every statement
   * that waits on it ended (`pg_terminate_backend`, every 250 ms); Redis, the server down. Jobs are handed back.
   */
  | { readonly kind: "store-outage"; readonly downMs: number }
  /**
   * The path between worker `slot` and the store goes silent, as when a NAT or a firewall in between loses the
   * connections' state or the server freezes: every connection the worker has open now stops carrying anything either
   * way and nothing is closed (test/fleet/freezing-proxy.ts); connections it opens later pass. After `holdMs` the
   * frozen ones are reset. Shorter than the store's answer timeout, the worker's statements end on the reset; longer,
   * on their timeout.
   */
  | { readonly kind: "store-freeze"; readonly slot: number; readonly holdMs: number }
  /**
   * The store ends the sessions of one worker slot's connections (through its proxy, ./freezing-proxy.ts), as
   * `pg_terminate_backend` does: on PostgreSQL one idle at once, one waiting for an answer right after it, the
   * server's FATAL message in the answer's packet, so a connection checked out between two statements ends there
   * (a worker died of that in the CI run of stop 44); on Redis each closed at once. Its egress hold ends with it on
   * PostgreSQL: the worker stops and hands its jobs back.
   */
  | { readonly kind: "store-session-end"; readonly slot: number }
  /** `accounts add` again with the other sandbox's address and credentials. */
  | { readonly kind: "account-move"; readonly account: number }
  | { readonly kind: "account-remove"; readonly account: number }
  /** `cancel` of the `job`-th job submitted (modulo their number). */
  | { readonly kind: "cancel"; readonly job: number }
  /** The fleet left to work until the sandboxes saw `requests` more requests (or nothing is left to do). */
  | { readonly kind: "let-run"; readonly requests: number }
  /** A job of `account` that no worker can serve (a newer job format, as a newer version submits): refused. */
  | { readonly kind: "refused-job"; readonly account: number }
  /**
   * A `submit` of `rows` rows in parts of two, a part a batch, held between its first and second batch for `holdMs`
   * (a slow store, disk or machine: `FSM_FLEET_DEBUG_HOLD_STAGING`) while the fleet works and sweeps; then let go, or
   * killed with SIGKILL when `kill` (a closed terminal).
   */
  | {
    readonly kind: "slow-submit"
    readonly account: number
    readonly first: number
    readonly rows: number
    readonly holdMs: number
    readonly kill: boolean
  }

export type FleetKind = FleetAction["kind"]

/** Features of fleet histories that `FLEET_KNOWN_OPEN` may leave out. */
export type FleetFeature = "egress-sessions-killed"

/**
 * Features that break an invariant today because of an open defect: left out unless HISTORY_ALL=1. Delete the
 * line once the fix is merged.
 */
export const FLEET_KNOWN_OPEN: Partial<Record<FleetFeature, string>> = {}

export const fleetFeaturesOf = (all: boolean): ReadonlySet<FleetFeature> =>
  new Set((["egress-sessions-killed"] as const).filter((f) => all || FLEET_KNOWN_OPEN[f] === undefined))
type Of<K extends FleetKind> = Extract<FleetAction, { kind: K }>

/** The budget of every address, on both sides (the workers' `--rate`, and what the checker holds them to). */
export const fleetRate = { limit: 20, windowMs: 2_000 }
/** A worker's requests in flight per job at `fleetRate` (Worker.ts: 0.3 s of the budget, doubled, at least 2). */
const perJobInFlight = Math.max(2, Math.ceil((fleetRate.limit / fleetRate.windowMs) * 1000 * 0.3) * 2)
const accountCount = 2
const slots = 3
/** Each account's keys: upserts of overlapping ranges meet the same records. */
const poolSize = 60
const leaseMs = 3_000
/**
 * How long a staged submission may go untouched before a worker's sweep reclaims it (`FSM_FLEET_STAGING_RECLAIM_MS`;
 * ten leases, at least a minute, outside tests): short, so a `slow-submit` is held past it and a killed one's staging
 * is reclaimed within the history.
 */
const stagingReclaimMs = 2_500

export const keyOf = (account: number, n: number) => `H${account}-${String((n % poolSize) + 1).padStart(2, "0")}`

// --- the world -----------------------------------------------------------------------------------------------

interface Job {
  readonly id: string
  readonly account: number
  readonly keys: ReadonlyArray<string>
  readonly step: number
  cancelled: boolean
  /** A job no worker can serve (`refused-job`): it must end failed with the workers' refusals, nothing sent. */
  readonly refused?: boolean
}

/** A change of an account's settings: the requests of its old address (or any, after a removal) that may follow. */
interface Change {
  readonly account: number
  readonly step: number
  /** The sandbox it left (a move) — undefined: removed. */
  readonly from: 0 | 1 | undefined
  /** When `accounts add`/`remove` had returned (the sandboxes' clock: this process's). */
  readonly at: number
  /** Requests that may still arrive: past the worker's look-up when the change was made. */
  readonly tolerance: number
}

export interface FleetWorld {
  readonly backend: Backend
  readonly url: string
  /** Each worker slot's path to the store: its workers' fleet URL is the proxy's (`store-freeze`). */
  readonly proxies: ReadonlyArray<FreezingProxy>
  readonly restart: ((downMs: number) => Effect.Effect<void>) | undefined
  /** Every account is on both: `apiKey` `s{S}-key-{A}`. */
  readonly sandboxes: readonly [RunningSandbox, RunningSandbox]
  readonly dir: string
  readonly env: NodeJS.ProcessEnv
  readonly accounts: Array<{ at: 0 | 1; removed: boolean }>
  readonly jobs: Array<Job>
  readonly workers: Array<RunningWorker | undefined>
  /** Every worker started (by slot, then the drain's), for the logs kept when a job is lost. */
  readonly started: Array<{ readonly name: string; readonly worker: RunningWorker }>
  readonly changes: Array<Change>
  readonly output: Array<string>
  readonly scope: Scope.Scope
  counter: number
}

const credentials = (sandbox: number, account: number) => ({
  apiKey: `s${sandbox}-key-${account}`,
  apiToken: `s${sandbox}-token-${account}-7c1d`
})

const cli = (w: FleetWorld, args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
  Effect.promise(() => runCli(args, { ...w.env, ...extra })).pipe(
    Effect.tap((ran) => Effect.sync(() => w.output.push(ran.stdout, ran.stderr)))
  )

const alive = (worker: RunningWorker | undefined): worker is RunningWorker =>
  worker !== undefined && worker.child.exitCode === null && worker.child.signalCode === null

const requestsOf = (w: FleetWorld) =>
  Effect.map(Effect.all(w.sandboxes.map((s) => s.control.requests)), (logs) => logs.flat())

/** Jobs (or parts) of `account` running now. */
const runningOf = (w: FleetWorld, account: number) =>
  withStore(w.url, (store) =>
    Effect.gen(function*() {
      let running = 0
      for (const job of w.jobs.filter((j) => j.account === account)) {
        const parts = yield* store.parts(job.id)
        const leaves = parts.length > 0 ? parts : [yield* store.job(job.id)]
        running += leaves.filter((p) => p.state === "running").length
      }
      return running
    })).pipe(Effect.orElseSucceed(() => slots * 2))

/** A customers file as Brazilian implementers write one: `;`, Windows-1252, CRLF, accented names. */
const writeCustomers = (w: FleetWorld, keys: ReadonlyArray<string>) => {
  const file = Path.join(w.dir, `${String(++w.counter).padStart(3, "0")}-clientes.csv`)
  const lines = ["externalId;name", ...keys.map((k) => `${k};Padaria São João ${k}`)]
  writeFileSync(file, Buffer.from(`${lines.join("\r\n")}\r\n`, "latin1"))
  return file
}

/** What a step did, for the log. */
type Note = string

interface FleetSpec<K extends FleetKind> {
  readonly weight: number
  readonly generate: (g: Rng, features: ReadonlySet<FleetFeature>) => Of<K>
  readonly run: (w: FleetWorld, a: Of<K>, step: number) => Effect.Effect<Note>
  readonly simplify: (a: Of<K>) => Array<FleetAction>
}

/** The change of `account` made by `change`, with what may still arrive from before it. */
const changeAccount = (w: FleetWorld, account: number, change: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    const before = yield* runningOf(w, account)
    const from = w.accounts[account]!.at
    const made = yield* change
    const at = Date.now()
    const after = yield* runningOf(w, account)
    return { made, at, from, tolerance: perJobInFlight * Math.max(before, after) }
  })

export const fleetActions: { readonly [K in FleetKind]: FleetSpec<K> } = {
  submit: {
    weight: 3,
    generate: (g) => ({
      kind: "submit",
      account: g.int(accountCount),
      first: g.int(poolSize),
      rows: 4 + g.int(30),
      chunkRows: g.chance(0.4) ? 5 + g.int(10) : undefined
    }),
    run: (w, a, step) =>
      Effect.gen(function*() {
        const keys = Array.from({ length: a.rows }, (_, i) => keyOf(a.account, a.first + i))
        const file = writeCustomers(w, keys)
        const name = `acct${a.account}`
        // In process, as the command runs it (test/fleet/in-process.ts): what it does to the store and queue is the
        // point, not the CLI's start.
        const ran = yield* submitImportAs(w.env, file, name, { chunkRows: a.chunkRows })
        w.output.push(JSON.stringify(ran))
        if (w.accounts[a.account]!.removed) {
          return ran.code === 2 ? `refused (${name} was removed)` : `!submitted to removed ${name}: exit ${ran.code}`
        }
        if (ran.value === undefined) return `!submit failed, exit ${ran.code}: ${ran.error.slice(0, 300)}`
        const id = ran.value.job
        w.jobs.push({ id, account: a.account, keys, step, cancelled: false })
        return `job ${id} (${name}, ${a.rows} rows${a.chunkRows !== undefined ? `, parts of ${a.chunkRows}` : ""})`
      }),
    simplify: (a) => [
      ...(a.chunkRows !== undefined ? [{ ...a, chunkRows: undefined }] : []),
      ...(a.rows > 4 ? [{ ...a, rows: Math.max(4, Math.floor(a.rows / 2)) }] : [])
    ]
  },
  "worker-start": {
    weight: 2,
    generate: (g) => ({ kind: "worker-start", slot: g.int(slots) }),
    run: (w, a) =>
      Effect.gen(function*() {
        if (alive(w.workers[a.slot])) return `w${a.slot} is already running`
        w.workers[a.slot] = yield* Scope.extend(startWorkerAt(w, a.slot), w.scope)
        w.started.push({ name: `w${a.slot}`, worker: w.workers[a.slot]! })
        return `w${a.slot} started on 127.0.0.${31 + a.slot}`
      }),
    simplify: () => []
  },
  "worker-kill": {
    weight: 1,
    generate: (g) => ({ kind: "worker-kill", slot: g.int(slots) }),
    run: (w, a) =>
      Effect.sync(() => {
        const worker = w.workers[a.slot]
        if (!alive(worker)) return `w${a.slot} is not running`
        worker.child.kill("SIGKILL")
        return `w${a.slot} killed (SIGKILL)`
      }),
    simplify: () => []
  },
  "store-fault": {
    weight: 1,
    generate: (g, features) => ({
      kind: "store-fault",
      downMs: 200 + g.int(800),
      sessions: features.has("egress-sessions-killed") && g.chance(0.5)
    }),
    run: (w, a) =>
      w.restart !== undefined
        ? Effect.as(w.restart(a.downMs), `redis-server restarted, ${a.downMs} ms down`)
        : Effect.promise(() =>
          query(
            w.url,
            `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()
               AND ($1 OR pid NOT IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory'))`,
            [a.sessions]
          )
        ).pipe(Effect.map((rows) =>
          `pg_terminate_backend: ${String(rows[0]?.n)} connections ended${a.sessions ? ", egress sessions too" : ""}`
        )),
    simplify: (a) => [
      ...(a.sessions ? [{ ...a, sessions: false }] : []),
      ...(a.downMs > 200 ? [{ ...a, downMs: 200 }] : [])
    ]
  },
  "store-outage": {
    weight: 1,
    generate: (g) => ({ kind: "store-outage", downMs: leaseMs + 500 + g.int(2_500) }),
    run: (w, a) =>
      w.restart !== undefined
        ? Effect.as(w.restart(a.downMs), `redis-server down ${a.downMs} ms (longer than a lease)`)
        : Effect.promise(async () => {
          const client = new pg.Client({ connectionString: w.url })
          await client.connect()
          try {
            await client.query("BEGIN")
            await client.query("LOCK TABLE fsm_bulk.leases IN ACCESS EXCLUSIVE MODE")
            let ended = 0
            for (const until = Date.now() + a.downMs; Date.now() < until;) {
              const rows = await client.query(
                `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`
              )
              ended += Number(rows.rows[0]?.n ?? 0)
              await new Promise((r) => setTimeout(r, 250))
            }
            await client.query("COMMIT")
            return `leases locked ${a.downMs} ms (longer than a lease), ${ended} waiting statements ended`
          } finally {
            await client.end()
          }
        }),
    simplify: (a) => a.downMs > leaseMs + 500 ? [{ ...a, downMs: leaseMs + 500 }] : []
  },
  "store-freeze": {
    weight: 0.5,
    generate: (g) => ({ kind: "store-freeze", slot: g.int(slots), holdMs: 2_000 + g.int(14_000) }),
    run: (w, a) =>
      Effect.gen(function*() {
        const proxy = w.proxies[a.slot]!
        // A worker just started may not have connected yet: its connections are what the fault is about.
        for (const until = Date.now() + 15_000; alive(w.workers[a.slot]) && proxy.open() === 0 && Date.now() < until;) {
          yield* Effect.sleep(50)
        }
        const frozen = proxy.freeze()
        // The history goes on meanwhile; the reset comes on its own (or with the history's end).
        yield* Effect.forkIn(Effect.delay(Effect.sync(() => proxy.reset()), a.holdMs), w.scope)
        return `w${a.slot}'s path to the store silent: ${frozen} connections frozen, reset in ${a.holdMs} ms${
          alive(w.workers[a.slot]) ? "" : " (no worker running there)"
        }`
      }),
    simplify: (a) => (a.holdMs > 2_000 ? [{ ...a, holdMs: 2_000 }] : [])
  },
  "store-session-end": {
    weight: 0.5,
    generate: (g) => ({ kind: "store-session-end", slot: g.int(slots) }),
    run: (w, a) =>
      Effect.gen(function*() {
        const proxy = w.proxies[a.slot]!
        // A worker just started may not have connected yet: its connections are what the fault is about.
        for (const until = Date.now() + 15_000; alive(w.workers[a.slot]) && proxy.open() === 0 && Date.now() < until;) {
          yield* Effect.sleep(50)
        }
        const ended = proxy.endSessions(w.backend === "postgres")
        return `w${a.slot}'s store sessions ended by the server: ${ended} connections${
          alive(w.workers[a.slot]) ? "" : " (no worker running there)"
        }`
      }),
    simplify: () => []
  },
  "account-move": {
    weight: 1,
    generate: (g) => ({ kind: "account-move", account: g.int(accountCount) }),
    run: (w, a, step) =>
      Effect.gen(function*() {
        const account = w.accounts[a.account]!
        if (account.removed) return `acct${a.account} was removed: not moved`
        const to = account.at === 0 ? 1 : 0
        const change = yield* changeAccount(
          w,
          a.account,
          Effect.map(
            cli(w, ["accounts", "add", `acct${a.account}`, "--base-url", w.sandboxes[to].url], env(to, a.account)),
            (ran) => ran.code === 0
          )
        )
        if (!change.made) return `!accounts add (a move) failed`
        account.at = to
        w.changes.push({ account: a.account, step, from: change.from, at: change.at, tolerance: change.tolerance })
        return `acct${a.account} moved to sandbox ${to} (${change.tolerance} requests may still arrive)`
      }),
    simplify: () => []
  },
  "account-remove": {
    weight: 0.5,
    generate: (g) => ({ kind: "account-remove", account: g.int(accountCount) }),
    run: (w, a, step) =>
      Effect.gen(function*() {
        const account = w.accounts[a.account]!
        if (account.removed) return `acct${a.account} was removed already`
        const change = yield* changeAccount(
          w,
          a.account,
          Effect.map(cli(w, ["accounts", "remove", `acct${a.account}`]), (ran) => ran.code === 0)
        )
        if (!change.made) return `!accounts remove failed`
        account.removed = true
        w.changes.push({ account: a.account, step, from: undefined, at: change.at, tolerance: change.tolerance })
        return `acct${a.account} removed (${change.tolerance} requests may still arrive)`
      }),
    simplify: () => []
  },
  cancel: {
    weight: 0.5,
    generate: (g) => ({ kind: "cancel", job: g.int(8) }),
    run: (w, a) =>
      Effect.gen(function*() {
        if (w.jobs.length === 0) return "no job to cancel"
        const job = w.jobs[a.job % w.jobs.length]!
        const ran = yield* cancelAs(w.env, job.id)
        w.output.push(JSON.stringify(ran))
        job.cancelled = true
        return `cancel ${job.id}: exit ${ran.code}`
      }),
    simplify: () => []
  },
  "let-run": {
    weight: 2,
    generate: (g) => ({ kind: "let-run", requests: 5 + g.int(40) }),
    run: (w, a) =>
      Effect.gen(function*() {
        const start = (yield* requestsOf(w)).length
        // Bounded, not timed: a fleet with nothing to do (or no worker) sends nothing, and the history goes on.
        const deadline = Date.now() + 30_000
        while (Date.now() < deadline && w.workers.some(alive)) {
          if ((yield* requestsOf(w)).length - start >= a.requests) break
          yield* Effect.sleep(100)
        }
        return `${(yield* requestsOf(w)).length - start} requests`
      }),
    simplify: (a) => (a.requests > 5 ? [{ ...a, requests: 5 }] : [])
  },
  "refused-job": {
    weight: 0.5,
    generate: (g) => ({ kind: "refused-job", account: g.int(accountCount) }),
    run: (w, a, step) =>
      Effect.gen(function*() {
        // Stored and queued as a newer version's `submit` would: a format the workers of this build do not know.
        const id = `newer-${step}`
        yield* queueNewerJob(w.url, id, `acct${a.account}`)
        w.jobs.push({ id, account: a.account, keys: [], step, cancelled: false, refused: true })
        return `job ${id} (acct${a.account}) of job format ${jobFormat + 1}: no worker can serve it`
      }).pipe(Effect.catchAll((e) => Effect.succeed(`a newer job could not be stored (${String(e)})`))),
    simplify: () => []
  },
  "slow-submit": {
    weight: 1,
    generate: (g) => ({
      kind: "slow-submit",
      account: g.int(accountCount),
      first: g.int(poolSize),
      rows: 4 + g.int(12),
      holdMs: 500 + g.int(stagingReclaimMs * 2),
      kill: g.chance(0.3)
    }),
    run: (w, a, step) =>
      Effect.gen(function*() {
        const keys = Array.from({ length: a.rows }, (_, i) => keyOf(a.account, a.first + i))
        const file = writeCustomers(w, keys)
        const name = `acct${a.account}`
        const hold = Path.join(w.dir, `hold-${step}`)
        const args = ["submit", "import", "customers", file, "--account", name, "--mode", "upsert", "--chunk-rows", "2"]
        const submit = yield* Scope.extend(
          startHeldSubmit([...args, "--json"], w.env, hold, 1),
          w.scope
        )
        // Held after its first batch, or ended before it (a removed account is refused before anything is stored).
        yield* Effect.promise(async () => {
          while (!submit.held() && submit.running()) await new Promise((r) => setTimeout(r, 50))
        })
        if (!submit.held()) {
          const ran = yield* Effect.promise(() => submit.ended)
          w.output.push(ran.stdout, ran.stderr)
          if (w.accounts[a.account]!.removed && ran.code === 2) return `refused (${name} was removed)`
          return `!slow submit ended before its first batch, exit ${ran.code}: ${ran.stderr.slice(0, 300)}`
        }
        yield* Effect.sleep(a.holdMs)
        if (a.kill) {
          submit.child.kill("SIGKILL")
          const ran = yield* Effect.promise(() => submit.ended)
          w.output.push(ran.stdout, ran.stderr)
          return `submit of ${a.rows} rows (${name}) held ${a.holdMs} ms after its first batch, then killed`
        }
        submit.release()
        const ran = yield* Effect.promise(() => submit.ended)
        w.output.push(ran.stdout, ran.stderr)
        if (ran.code !== 0) {
          return `!slow submit (held ${a.holdMs} ms, staging reclaimed after ${stagingReclaimMs} untouched) failed, exit ${ran.code}: ${
            ran.stderr.slice(0, 300)
          }`
        }
        const id = lastJson(ran.stdout).job as string
        w.jobs.push({ id, account: a.account, keys, step, cancelled: false })
        return `job ${id} (${name}, ${a.rows} rows in parts of 2), held ${a.holdMs} ms after its first batch`
      }),
    simplify: (a) => [
      ...(a.kill ? [{ ...a, kill: false }] : []),
      ...(a.rows > 4 ? [{ ...a, rows: Math.max(4, Math.floor(a.rows / 2)) }] : []),
      ...(a.holdMs > 500 ? [{ ...a, holdMs: 500 }] : [])
    ]
  }
}

const env = (sandbox: number, account: number) => {
  const c = credentials(sandbox, account)
  return { FSM_API_KEY: c.apiKey, FSM_API_TOKEN: c.apiToken }
}

const startWorkerAt = (w: FleetWorld, slot: number) =>
  startWorker([
    "--egress-id",
    `w${slot}`,
    "--source-address",
    `127.0.0.${31 + slot}`,
    "--rate",
    `${fleetRate.limit}/${fleetRate.windowMs / 1000}s`,
    "--jobs",
    "2"
  ], { ...w.env, FSM_FLEET_URL: throughProxy(w.url, w.proxies[slot]!) })

// --- generating and shrinking ----------------------------------------------------------------------------------

const kinds = Object.keys(fleetActions) as Array<FleetKind>

/** The history of `seed`: a job first and a worker second, so every history has work under way. */
export const generateFleetHistory = (
  seed: number,
  length: number,
  features: ReadonlySet<FleetFeature>
): Array<FleetAction> => {
  const g = rng(seed)
  const total = kinds.reduce((s, k) => s + fleetActions[k].weight, 0)
  return Array.from({ length }, (_, i) => {
    let x = g.next() * total
    const kind = i === 0 ? "submit" : i === 1 ? "worker-start" : kinds.find((k) => (x -= fleetActions[k].weight) < 0)!
    return (fleetActions[kind] as unknown as FleetSpec<FleetKind>).generate(g, features)
  })
}

const smallerFleet = (history: ReadonlyArray<FleetAction>): Array<Array<FleetAction>> => [
  ...history.map((_, i) => history.filter((_, j) => j !== i)),
  ...history.flatMap((a, i) =>
    (fleetActions[a.kind] as unknown as FleetSpec<FleetKind>).simplify(a as never).map((b) =>
      history.map((x, j) => (j === i ? b : x))
    )
  )
]

export const shrinkFleet = <E>(
  history: ReadonlyArray<FleetAction>,
  fails: (h: ReadonlyArray<FleetAction>) => Effect.Effect<boolean, E>,
  budget: number
) => shrinkWith(history, smallerFleet, fails, budget)

// --- the invariants ------------------------------------------------------------------------------------------

const address = (e: RequestLogEntry) => (e.client ?? "").replace(/^::ffff:/, "")

/** The most requests any window of `windowMs` saw from each address. */
export const busiestWindows = (log: ReadonlyArray<RequestLogEntry>, windowMs: number): Map<string, number> => {
  const byAddress = new Map<string, Array<number>>()
  for (const e of log) byAddress.set(address(e), [...(byAddress.get(address(e)) ?? []), e.at])
  const out = new Map<string, number>()
  for (const [client, times] of byAddress) {
    const at = times.sort((a, b) => a - b)
    let most = 0
    let start = 0
    for (let end = 0; end < at.length; end++) {
      while (at[end]! - at[start]! >= windowMs) start++
      most = Math.max(most, end - start + 1)
    }
    out.set(client, most)
  }
  return out
}

const isWrite = (e: RequestLogEntry) => e.method !== "GET" && !/\/login$/i.test(e.path)

export interface Ended {
  readonly id: string
  readonly code: number | null
  readonly state: string | undefined
  /** A refused job's: `wait`'s error, what `status --json` then showed, and its journal's lines (rows sent). */
  readonly error?: string | undefined
  readonly status?: { readonly state: unknown; readonly exitCode: unknown; readonly error: unknown } | undefined
  readonly journal?: number | undefined
}

/**
 * A job no worker can serve (`refused-job`), as it ended: failed, exit 2, its error the workers' refusals (`no worker
 * can run it (refused by N): worker W: it needs job format F…`), nothing of it journalled (nothing sent), and
 * `status` showing what `wait` returned. A job cancelled first may end cancelled; one whose account was removed may
 * fail for that instead.
 */
const refusedJobChecks = (job: Job, end: Ended, removed: boolean): Array<string> => {
  const problems: Array<string> = []
  const label = `(refused) job ${job.id} (step ${job.step})`
  if (job.cancelled && end.state === "cancelled") return problems
  if (end.state !== "failed" || end.code !== 2) {
    problems.push(`${label} ended ${end.state}, exit ${end.code}, not failed with exit 2`)
  }
  if (!removed && !/^no worker can run it \(refused by \d+\): worker .*it needs job format/.test(end.error ?? "")) {
    problems.push(`${label}: its error does not give the workers' refusals: ${JSON.stringify(end.error)}`)
  }
  if ((end.journal ?? 0) > 0) problems.push(`${label}: ${end.journal} journal lines, something of it was run`)
  const shown = end.status
  if (shown === undefined || shown.state !== end.state || shown.exitCode !== end.code || shown.error !== end.error) {
    problems.push(
      `${label}: status shows ${JSON.stringify(shown)}, wait ended ${
        JSON.stringify({ state: end.state, exitCode: end.code, error: end.error })
      }`
    )
  }
  return problems
}

/**
 * Commands and workers of a history that died instead of ending as documented: Node's banner after an uncaught
 * error (a pg client's `error` event nobody listened to killed a worker so: test/fleet/pg-fatal.test.ts), or the CLI's
 * own words for a defect. `outputs`: what each printed, by name.
 */
export const crashes = (outputs: ReadonlyArray<{ readonly name: string; readonly text: string }>): Array<string> =>
  outputs.flatMap(({ name, text }) => {
    const at = text.search(/^Node\.js v\d+\.\d+\.\d+$|fsm-bulk: unexpected failure/m)
    if (at < 0) return []
    const before = text.slice(0, at).trimEnd().split("\n").slice(-12).join("\n")
    return [`(crash) ${name} died of an uncaught error:\n${before}\n${text.slice(at).split("\n", 1)[0]}`]
  })

/**
 * The fleet's invariants over what a history left: the jobs as `wait` ended them, the sandboxes' request logs
 * (in arrival order, with the client address) and records, and the changes of accounts made.
 */
export const checkFleet = (
  w: Pick<FleetWorld, "jobs" | "changes" | "accounts">,
  ended: ReadonlyArray<Ended>,
  logs: readonly [ReadonlyArray<RequestLogEntry>, ReadonlyArray<RequestLogEntry>],
  records: (sandbox: 0 | 1, account: number) => ReadonlyArray<Record<string, unknown>>
): Array<string> => {
  const problems: Array<string> = []
  // No job lost.
  for (const job of w.jobs) {
    const end = ended.find((e) => e.id === job.id)
    if (end === undefined || end.code === null) {
      problems.push(`(lost) job ${job.id} (step ${job.step}) never ended: wait did not return`)
      continue
    }
    if (!["done", "failed", "cancelled"].includes(end.state ?? "")) {
      problems.push(`(lost) job ${job.id} ended "wait" in state ${end.state} (exit ${end.code})`)
    }
    const removed = w.accounts[job.account]!.removed
    if (job.refused === true) {
      problems.push(...refusedJobChecks(job, end, removed))
      continue
    }
    if (!removed && !job.cancelled && (end.state !== "done" || end.code !== 0)) {
      problems.push(`(lost) job ${job.id} (step ${job.step}) ended ${end.state}, exit ${end.code}, not done`)
    }
    if (end.state === "done" && end.code === 0) {
      const there = new Set(
        ([0, 1] as const).flatMap((s) => records(s, job.account).map((r) => String(r.externalId)))
      )
      const missing = job.keys.filter((k) => !there.has(k))
      if (missing.length > 0) problems.push(`(lost) job ${job.id} ended done without records ${missing.join(", ")}`)
    }
  }
  // One record per key, on every sandbox, for every account.
  for (const s of [0, 1] as const) {
    for (let account = 0; account < w.accounts.length; account++) {
      const seen = new Map<string, number>()
      for (const r of records(s, account)) seen.set(String(r.externalId), (seen.get(String(r.externalId)) ?? 0) + 1)
      for (const [key, n] of seen) {
        if (n > 1) problems.push(`(one) ${n} records of ${key} (acct${account}, sandbox ${s})`)
      }
    }
  }
  // The budget of every address, both sandboxes' requests together.
  const all = [...logs[0], ...logs[1]]
  for (const [client, most] of busiestWindows(all, fleetRate.windowMs)) {
    if (most > fleetRate.limit) {
      problems.push(`(budget) ${client} sent ${most} requests in ${fleetRate.windowMs} ms (budget ${fleetRate.limit})`)
    }
  }
  const limited = all.filter((e) => e.status === 429)
  if (limited.length > 0) problems.push(`(budget) ${limited.length} requests answered with a rate limit`)
  // Nothing after a removal; no write to an old address after a move (until the account moved back).
  for (const c of w.changes) {
    const keys = new Set(([0, 1] as const).map((s) => credentials(s, c.account).apiKey))
    if (c.from === undefined) {
      const late = all.filter((e) => e.at > c.at && e.apiKey !== undefined && keys.has(e.apiKey))
      if (late.length > c.tolerance) {
        problems.push(
          `(removed) ${late.length} requests of acct${c.account} after its removal at step ${c.step} (${c.tolerance} may)`
        )
      }
      continue
    }
    const back = w.changes.find((d) => d.account === c.account && d.at > c.at && d.from !== c.from)
    const oldKey = credentials(c.from, c.account).apiKey
    const late = logs[c.from].filter((e) =>
      e.at > c.at && (back === undefined || e.at <= back.at) && e.apiKey === oldKey && isWrite(e)
    )
    if (late.length > c.tolerance) {
      problems.push(
        `(moved) ${late.length} writes of acct${c.account} to its old address (sandbox ${c.from}) after it moved at step ${c.step} (${c.tolerance} may)`
      )
    }
  }
  return problems
}

// --- one history -----------------------------------------------------------------------------------------------

/**
 * What the store holds that no submit of the history made: a job shown that the history does not know (a phantom:
 * a killed submit's staging made visible), and staged submissions still there once the drain is over and a sweep
 * had time to reclaim them (the drain's worker sweeps every half lease).
 */
const storeLeftovers = (w: FleetWorld) =>
  Effect.scoped(Effect.gen(function*() {
    const problems: Array<string> = []
    const known = new Set(w.jobs.map((j) => j.id))
    const shown = yield* withStore(w.url, (store) => store.recentJobs(1_000)).pipe(Effect.orElseSucceed(() => []))
    for (const job of shown) {
      if (!known.has(job.id)) problems.push(`(phantom) job ${job.id} (${job.state}) is shown but no submit made it`)
    }
    const until = Date.now() + stagingReclaimMs + 2 * leaseMs + 5_000
    // One connection for the poll (stagedSubmissionsPoll: a new one only after a failed read).
    const stagedNow = yield* stagedSubmissionsPoll(w.url)
    let staged = yield* stagedNow
    while (staged.length > 0 && Date.now() < until) {
      yield* Effect.sleep(250)
      staged = yield* stagedNow
    }
    if (staged.length > 0) {
      problems.push(`(staging) ${staged.length} staged submission(s) never reclaimed: ${staged.join(", ")}`)
    }
    return problems
  }))

/** What a refused job's end is checked on besides `wait`'s exit: its error, `status --json`, its journal's lines. */
const refusedEnd = (w: FleetWorld, id: string, waited: Waited) =>
  Effect.gen(function*() {
    const shown = yield* statusAs(w.env, id)
    w.output.push(JSON.stringify(shown))
    const status = shown.value
    const journal = yield* withStore(w.url, (store) => store.journalLines(id)).pipe(
      Effect.map((lines) => lines.length),
      Effect.orElseSucceed(() => undefined)
    )
    return {
      // `wait --json` and `status --json` print a job without an error as null; both read here as undefined.
      error: waited.status?.error ?? undefined,
      status: status === undefined
        ? undefined
        : { state: status.state, exitCode: status.exitCode, error: status.error ?? undefined },
      journal
    }
  })

/**
 * What the store holds of jobs that never ended (each job and its parts: their record, lease, journal's length; on
 * Redis the ending set and where BullMQ holds each leaf, on PostgreSQL BullMQ's row) and every worker's log, kept in
 * a folder that outlives the history (its path in the log): what a lost job is investigated with.
 */
const keepLostJobs = (w: FleetWorld, ids: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const dir = mkdtempSync(Path.join(tmpdir(), "fsm-fleet-lost-"))
    for (const [i, s] of w.started.entries()) writeFileSync(Path.join(dir, `${i}-${s.name}.log`), s.worker.stderr())
    const state: Record<string, unknown> = {}
    if (w.backend === "redis") {
      const r = new Redis(w.url, { maxRetriesPerRequest: 1 })
      try {
        const q = "bull:fsm-bulk:"
        const lists = {
          wait: await r.lrange(`${q}wait`, 0, -1),
          active: await r.lrange(`${q}active`, 0, -1),
          paused: await r.lrange(`${q}paused`, 0, -1),
          delayed: await r.zrange(`${q}delayed`, 0, -1),
          prioritized: await r.zrange(`${q}prioritized`, 0, -1),
          completed: await r.zrange(`${q}completed`, 0, -1),
          failed: await r.zrange(`${q}failed`, 0, -1),
          stalled: await r.smembers(`${q}stalled`)
        }
        state.ending = await r.zrange("fsm-bulk:ending", 0, -1)
        for (const id of ids) {
          const leaves = [id, ...(await r.smembers(`fsm-bulk:job:${id}:parts`)).sort()]
          for (const leaf of leaves) {
            const k = `fsm-bulk:job:${leaf}`
            const { spec: _spec, summary: _summary, ...job } = await r.hgetall(k)
            state[leaf] = {
              job,
              lease: await r.hgetall(`${k}:lease`),
              journal: await r.llen(`${k}:journal`),
              bullmq: await r.hgetall(`${q}${leaf}`),
              bullmqLock: await r.get(`${q}${leaf}:lock`),
              bullmqIn: Object.entries(lists).filter(([, l]) => l.includes(leaf)).map(([n]) => n)
            }
          }
        }
      } finally {
        r.disconnect()
      }
    } else {
      for (const id of ids) {
        state[id] = {
          jobs: await query(
            w.url,
            `SELECT j.id, j.state, j.owner, j.exit_code, j.error, j.finished, l.epoch, l.owner AS lease_owner,
                    (SELECT count(*) FROM fsm_bulk.journal WHERE job = j.id) AS journal
               FROM fsm_bulk.jobs j LEFT JOIN fsm_bulk.leases l ON l.job = j.id
              WHERE j.id = $1 OR j.parent = $1 ORDER BY j.id`,
            [id]
          ).catch((e: unknown) => String(e)),
          bullmq: await query(
            w.url,
            `SELECT id, state, attempts_made, stalled_count, locked_until_ms, processed_by FROM bullmq.job
              WHERE queue = 'fsm-bulk' AND id IN (SELECT id FROM fsm_bulk.jobs WHERE id = $1 OR parent = $1)`,
            [id]
          ).catch((e: unknown) => String(e))
        }
      }
    }
    writeFileSync(Path.join(dir, "store.json"), JSON.stringify(state, null, 2) + "\n")
    return `lost job(s) ${ids.join(", ")}: the store's state and every worker's log kept in ${dir}`
  })

export interface FleetOutcome {
  readonly log: ReadonlyArray<string>
  readonly violations: ReadonlyArray<string>
  readonly spent: Readonly<Record<string, number>>
}

/** The store of `backend` for the scope; Redis persistent (append-only, every write), so it can be restarted. */
const startStore = (backend: Backend) =>
  backend === "postgres"
    ? Effect.map(startPostgres, (pg) => ({ url: pg.url, restart: undefined }))
    : Effect.map(startRedisWith({ persistent: true }), (r) => ({ url: r.url, restart: r.restart }))

/** Runs `history` on a fresh fleet of `backend`, then gives every job a worker, waits for them, and checks. */
export const runFleetHistory = (backend: Backend, history: ReadonlyArray<FleetAction>) =>
  Effect.scoped(Effect.gen(function*() {
    const scope = yield* Effect.scope
    const spent: Record<string, number> = {}
    const spend = (what: string, since: number) => void (spent[what] = (spent[what] ?? 0) + performance.now() - since)
    const started = performance.now()
    const store = yield* startStore(backend)
    const sandboxes = [
      yield* startSandbox({
        port: 0,
        rate: fleetRate,
        accounts: Array.from({ length: accountCount }, (_, a) => credentials(0, a)),
        faults: { ...noFaults, latencyMs: 20 }
      }),
      yield* startSandbox({
        port: 0,
        rate: fleetRate,
        accounts: Array.from({ length: accountCount }, (_, a) => credentials(1, a)),
        faults: { ...noFaults, latencyMs: 20 }
      })
    ] as const
    const storePort = Number(new URL(store.url).port)
    const w: FleetWorld = {
      backend,
      url: store.url,
      proxies: yield* Effect.forEach(Array.from({ length: slots }), () => freezingProxy(storePort)),
      restart: store.restart,
      sandboxes,
      dir: yield* temporaryDir("fsm-fleet-history-"),
      env: fleetEnv(store.url, {
        FSM_FLEET_LEASE_MS: String(leaseMs),
        FSM_FLEET_EGRESS_MS: String(leaseMs),
        FSM_FLEET_STAGING_RECLAIM_MS: String(stagingReclaimMs)
      }),
      accounts: Array.from({ length: accountCount }, () => ({ at: 0 as const, removed: false })),
      jobs: [],
      workers: Array.from({ length: slots }, () => undefined),
      started: [],
      changes: [],
      output: [],
      scope,
      counter: 0
    }
    const log: Array<string> = []
    // `fleet init` and each `accounts add` made in process, as the commands make them (3 spawned commands a
    // history before: the set-up is not what a history checks; moving an account is an action, spawned).
    yield* initFleet(
      store.url,
      Array.from(
        { length: accountCount },
        (_, a) => ({ name: `acct${a}`, baseUrl: sandboxes[0].url, ...credentials(0, a) })
      )
    )
    spend("set-up", started)
    const violations: Array<string> = []
    for (const [i, action] of history.entries()) {
      const at = performance.now()
      const note = yield* (fleetActions[action.kind] as unknown as FleetSpec<FleetKind>).run(w, action as never, i)
      spend(action.kind, at)
      log.push(`${i}. ${JSON.stringify(action)}\n   → ${note}`)
      if (note.startsWith("!")) violations.push(`step ${i}: ${note.slice(1)}`)
    }
    // Every job is given a worker (on an address of its own, so a killed worker's id and address are no obstacle)
    // and waited for: a job that never ends is lost.
    const draining = performance.now()
    const drain = yield* Scope.extend(
      startWorker([
        "--egress-id",
        "w-drain",
        "--source-address",
        "127.0.0.39",
        "--rate",
        `${fleetRate.limit}/${fleetRate.windowMs / 1000}s`,
        "--jobs",
        "4"
      ], w.env),
      scope
    )
    w.started.push({ name: "w-drain", worker: drain })
    const ended: Array<Ended> = []
    for (const job of w.jobs) {
      // `wait JOB`, in process as the command runs it; killed (code null) after 180 s (HISTORY_FLEET_WAIT_MS).
      const waited = yield* waitAs(w.env, job.id, Number(process.env.HISTORY_FLEET_WAIT_MS ?? 180_000))
      w.output.push(JSON.stringify(waited))
      ended.push({
        id: job.id,
        code: waited.code,
        state: waited.row?.state,
        ...(job.refused === true ? yield* refusedEnd(w, job.id, waited) : {})
      })
      if (waited.row?.state !== "done" || waited.code !== 0) {
        log.push(`${job.id}: ${String(waited.row?.error ?? waited.error)}`)
      }
    }
    spend("drain", draining)
    const lost = w.jobs.filter((j) => ended.find((e) => e.id === j.id)?.code === null).map((j) => j.id)
    if (lost.length > 0) log.push(yield* keepLostJobs(w, lost))
    violations.push(...(yield* storeLeftovers(w)))
    const logs = [yield* sandboxes[0].control.requests, yield* sandboxes[1].control.requests] as const
    const stored = new Map<string, ReadonlyArray<Record<string, unknown>>>()
    for (const s of [0, 1] as const) {
      for (let a = 0; a < accountCount; a++) {
        stored.set(`${s}:${a}`, yield* sandboxes[s].control.records(credentials(s, a).apiKey, "customers"))
      }
    }
    violations.push(...checkFleet(w, ended, logs, (s, a) => stored.get(`${s}:${a}`) ?? []))
    // Nothing died of an uncaught error: the workers (killed ones too, by what they printed) and the other commands.
    violations.push(...crashes([
      ...w.started.map((s) => ({ name: `worker ${s.name}`, text: s.worker.stderr() })),
      ...w.output.map((text, i) => ({ name: `command output ${i}`, text }))
    ]))
    // Secrets: no API token of any account in anything a command printed.
    for (const text of w.output) {
      for (let s = 0; s < 2; s++) {
        for (let a = 0; a < accountCount; a++) {
          if (text.includes(credentials(s, a).apiToken)) violations.push(`(secret) a command printed acct${a}'s token`)
        }
      }
    }
    log.push(
      `drain: ${ended.map((e) => `${e.id} ${e.state} exit ${e.code}`).join("; ")}; ${
        logs[0].length + logs[1].length
      } requests; w-drain ${alive(drain) ? "running" : "exited"}`
    )
    return { log, violations: [...new Set(violations)], spent } satisfies FleetOutcome
  }))

export interface FleetVerdict {
  readonly seed: number
  readonly backend: Backend
  readonly history: ReadonlyArray<FleetAction>
  readonly outcome: FleetOutcome
  readonly shrunk?: { readonly history: ReadonlyArray<FleetAction>; readonly outcome: FleetOutcome }
}

/** Generates and runs the fleet history of `seed`; a failing one is shrunk (each candidate run twice at most). */
export const checkFleetSeed = (
  seed: number,
  backend: Backend,
  options: {
    readonly length: number
    readonly shrinkBudget: number
    readonly features: ReadonlySet<FleetFeature>
    readonly history?: ReadonlyArray<FleetAction>
  }
) =>
  Effect.gen(function*() {
    const history = options.history ?? generateFleetHistory(seed, options.length, options.features)
    const outcome = yield* runFleetHistory(backend, history)
    if (outcome.violations.length === 0 || options.shrinkBudget === 0) {
      return { seed, backend, history, outcome } satisfies FleetVerdict
    }
    const failing = (h: ReadonlyArray<FleetAction>) =>
      Effect.gen(function*() {
        for (let i = 0; i < 2; i++) {
          const o = yield* runFleetHistory(backend, h)
          if (o.violations.length > 0) return o
        }
        return undefined
      })
    const small = yield* shrinkFleet(
      history,
      (h) => Effect.map(failing(h), (o) => o !== undefined),
      options.shrinkBudget
    )
    const smallOutcome = (yield* failing(small)) ?? (yield* runFleetHistory(backend, small))
    return { seed, backend, history, outcome, shrunk: { history: small, outcome: smallOutcome } } satisfies FleetVerdict
  })

export const describeFleetFailure = (v: FleetVerdict): string =>
  [
    `fleet history seed ${v.seed} (${v.backend}) broke an invariant:`,
    ...v.outcome.violations.map((x) => `  ${x}`),
    ...v.outcome.log.map((l) => `  ${l}`),
    ...(v.shrunk !== undefined
      ? [
        `shrunk to ${v.shrunk.history.length} of ${v.history.length} actions${
          v.shrunk.outcome.violations.length === 0 ? " (the shrunk history passed: a flaky one)" : ""
        }:`,
        ...v.shrunk.outcome.log.map((l) => `  ${l}`),
        ...v.shrunk.outcome.violations.map((x) => `  ✗ ${x}`),
        `shrunk history as JSON: HISTORY_FLEET_JSON='${JSON.stringify(v.shrunk.history)}'`
      ]
      : []),
    `replay: HISTORY_FLEET_SEED=${v.seed} HISTORY_FLEET_BACKEND=${v.backend} HISTORY_LENGTH=${v.history.length} ` +
    `npx vitest run test/history/fleet-cli.test.ts (HISTORY_ALL=1 for a FLEET_KNOWN_OPEN feature)`
  ].join("\n")
