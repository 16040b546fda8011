/**
 * Transient store faults (issue 29, item 6), on each backend, with the real servers and the built CLI:
 *
 * - a store that cannot be used for longer than a lease while a job sends (PostgreSQL: the leases table locked
 *   under a 300 ms `statement_timeout`; Redis: the server down for more than two leases) does not end the job, nor
 *   leave it taken by nobody: the worker hands it back, and it ends done, exit 0, one record per row;
 * - `wait` and `submit` outlast a short fault (PostgreSQL: the jobs table locked under a 300 ms `statement_timeout`;
 *   Redis: a restart of the server) instead of exiting 2 while the job runs on, or after its job was stored;
 * - an onboarding whose step journal line cannot be recorded for longer than a lease (PostgreSQL: the journal table
 *   locked; Redis: the server down) is handed back, not failed, and ends done from its step journals.
 *
 * Which failures pass is decided in one place (Store.ts, `isTransient`): its table test is store-transient.test.ts.
 *
 * Spawned: the workers, which meet the faults, and the `wait` and `submit` of the second test, whose outlasting of
 * the fault is its point. The jobs the other tests need are queued, and every job's end is read, in the test's process
 * (./in-process.ts: what `submit` and `wait` call, without a CLI start of about a second of CPU each); `wait`'s exit
 * code is the job's `exit_code` (3 only for a cancelled job), and test/fleet/cli.test.ts spawns both commands for
 * their contract.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { customersFile } from "../drills/support.js"
import { ended, submitCustomers, submitOnboarding } from "./in-process.js"
import {
  acmeFleet,
  availableBackends,
  type Backend,
  eventually,
  lastJson,
  startCli,
  startPostgres,
  startRedisWith,
  startWorker
} from "./support.js"
import { workbookFile } from "./workbook.js"

const each = it.scopedLive.each(availableBackends)

/** A lease of 3 s: a fault "longer than a lease" stays short. */
const leaseEnv = { FSM_FLEET_LEASE_MS: "3000" }

/**
 * PostgreSQL under a 300 ms `statement_timeout` (every new session of the fleet's database), and `lock(table)`: an
 * ACCESS EXCLUSIVE lock on `fsm_bulk.TABLE` held by a session of the test's own until `release`.
 */
const lockablePostgres = Effect.gen(function*() {
  const server = yield* startPostgres
  const admin = new pg.Client({ connectionString: server.url })
  yield* Effect.promise(() => admin.connect())
  yield* Effect.addFinalizer(() => Effect.promise(() => admin.end().catch(() => undefined)))
  const timeouts = Effect.promise(() =>
    admin.query(`ALTER DATABASE ${server.database} SET statement_timeout = '300ms'`)
  )
  const lock = (table: string) =>
    Effect.promise(async () => {
      await admin.query("BEGIN")
      await admin.query(`LOCK TABLE fsm_bulk.${table} IN ACCESS EXCLUSIVE MODE`)
      return Effect.promise(() => admin.query("COMMIT"))
    })
  return { server, timeouts, lock }
})

/** The store fault of each backend: `hold` starts it, and gives what ends it. */
const faultOf = (backend: Backend, table: string) =>
  Effect.gen(function*() {
    if (backend === "postgres") {
      const pgFault = yield* lockablePostgres
      return { url: pgFault.server.url, before: pgFault.timeouts, hold: () => pgFault.lock(table) }
    }
    const redis = yield* startRedisWith({ persistent: true })
    return {
      url: redis.url,
      before: Effect.void,
      // Redis: the server stopped now; its end starts it again (the fault lasts until then).
      hold: () => redis.down
    }
  })

/**
 * The fault held from when job `job` has sent 15 requests (a worker at 20 a second: midway) until its worker gives
 * the job up, its retries (a whole lease) run out; then the job runs on and ends done, exit 0 (what `wait` exits
 * with), handed back once at least. Before the fix, the worker said "lease lost; another worker has it", and the job
 * was left taken by nobody.
 */
const faultUntilHandedBack = (
  fault: Effect.Effect.Success<ReturnType<typeof faultOf>>,
  env: NodeJS.ProcessEnv,
  sandbox: { readonly control: { readonly requests: Effect.Effect<ReadonlyArray<unknown>> } },
  job: string,
  egressId: string
) =>
  Effect.gen(function*() {
    yield* fault.before
    const worker = yield* startWorker(["--egress-id", egressId, "--rate", "20/1s"], env)
    yield* eventually(
      "the job sends",
      () => Effect.runPromise(Effect.map(sandbox.control.requests, (log) => log.length >= 15)),
      60_000,
      worker.stderr
    )
    const end = yield* fault.hold()
    yield* eventually(
      "the worker gives the job up",
      // This job's own lines only: the worker's "stopping; jobs in progress … are handed back" is not the job's.
      () => worker.stderr().includes(`job ${job} handed back`) || worker.stderr().includes(`job ${job}: lease `),
      120_000,
      worker.stderr
    )
    yield* end
    const waited = yield* ended(fault.url, job, 120_000, worker.stderr)
    assert.deepStrictEqual(
      [waited.state, waited.exit_code],
      ["done", 0],
      `${JSON.stringify(waited)}\n${worker.stderr()}`
    )
    assert.include(worker.stderr(), `job ${job} handed back`, worker.stderr())
    return worker
  })

describe("transient store faults (issue 29, item 6)", () => {
  each(
    "a store unusable for longer than a lease: the job is handed back, not lost, and ends done ($backend)",
    (b) =>
      Effect.gen(function*() {
        const fault = yield* faultOf(b.backend, "leases")
        const { account, dir, env, sandbox } = yield* acmeFleet(fault.url, { env: leaseEnv })
        const input = customersFile(dir, "clientes.csv", 60)
        const job = yield* submitCustomers(fault.url, input.file, "acme")
        const worker = yield* faultUntilHandedBack(fault, env, sandbox, job, "w-transient")
        assert.include(worker.stderr(), "the fleet store failed, trying again")
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
      }),
    { timeout: 300_000 }
  )

  each(
    "`wait` and `submit` outlast a short store fault instead of exiting 2 ($backend)",
    (b) =>
      Effect.gen(function*() {
        const fault = yield* faultOf(b.backend, "jobs")
        const { account, dir, env, sandbox } = yield* acmeFleet(fault.url, { env: leaseEnv })
        // The second file's 8 keys are the first's 5 and 3 more (upsert: one record per key).
        const first = customersFile(dir, "primeiro.csv", 5)
        const second = customersFile(dir, "segundo.csv", 8)
        // Queued before the fault, in process: the job the spawned `wait` follows through it.
        const job = yield* submitCustomers(fault.url, first.file, "acme")
        yield* fault.before
        // `wait` follows the job (no worker yet) when the fault starts; `submit` starts during it.
        const waiting = yield* startCli(["wait", job, "--json"], env)
        yield* eventually("wait has started", () => waiting.running(), 30_000)
        const end = yield* fault.hold()
        const submitting = yield* startCli(
          ["submit", "import", "customers", second.file, "--account", "acme", "--json"],
          env
        )
        const met = (c: { readonly stderr: () => string; readonly running: () => boolean }) => () =>
          c.stderr().includes("the fleet store failed, trying again") || !c.running()
        yield* eventually("wait meets the fault", met(waiting), 60_000, waiting.stderr)
        yield* eventually("submit meets the fault", met(submitting), 60_000, submitting.stderr)
        yield* end
        const stored = yield* Effect.promise(() => submitting.ended)
        assert.strictEqual(stored.code, 0, `submit during the fault:\n${stored.stderr}`)
        const worker = yield* startWorker(["--egress-id", "w-short"], env)
        const waited = yield* Effect.promise(() => waiting.ended)
        assert.strictEqual(waited.code, 0, `wait during the fault:\n${waited.stderr}\n${worker.stderr()}`)
        assert.strictEqual(lastJson(waited.stdout).state, "done")
        const secondJob = lastJson(stored.stdout).job as string
        const again = yield* ended(fault.url, secondJob, 120_000, worker.stderr)
        assert.deepStrictEqual(
          [again.state, again.exit_code],
          ["done", 0],
          `${JSON.stringify(again)}\n${worker.stderr()}`
        )
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(
          records.map((r) => r.externalId).sort(),
          [...second.valid].sort(),
          "one record per key of both files"
        )
      }),
    { timeout: 300_000 }
  )

  each(
    "an onboarding whose step journal cannot be written for longer than a lease is handed back and ends done ($backend)",
    (b) =>
      Effect.gen(function*() {
        const fault = yield* faultOf(b.backend, "journal")
        const { account, dir, env, sandbox } = yield* acmeFleet(fault.url, { env: leaseEnv })
        const workbook = yield* workbookFile(dir, "cadastro.xlsx", 60)
        const job = yield* submitOnboarding(fault.url, workbook, "acme")
        const worker = yield* faultUntilHandedBack(fault, env, sandbox, job, "w-onboard")
        // On PostgreSQL only the journal is locked: the journal line is what fails, and the lease is confirmed all
        // along on connections of its own (PgStore.ts, `leaseConnections`). Before those, the journal's tries could
        // hold every place of the store's pool, the lease's confirmation waited for one, and the job was handed back
        // as "could not confirm lease N for a whole lease" (once in four runs; test/fleet/lease-connection.test.ts).
        if (b.backend === "postgres") {
          assert.match(worker.stderr(), /the fleet store could not record a journal line/, worker.stderr())
          assert.notMatch(worker.stderr(), /could not confirm lease/, worker.stderr())
        }
        assert.notMatch(worker.stderr(), new RegExp(`job ${job} failed`), worker.stderr())
        const keys = (resource: "customers" | "equipments" | "segments", key: string) =>
          Effect.map(sandbox.control.records(account.apiKey, resource), (rs) => rs.map((r) => String(r[key])).sort())
        assert.deepStrictEqual(
          yield* keys("customers", "externalId"),
          Array.from({ length: 60 }, (_, i) => `C-${i + 1}`).sort(),
          "one record per customer row"
        )
        assert.deepStrictEqual(yield* keys("equipments", "externalId"), ["E-1", "E-2", "E-3", "E-4", "E-5"])
        assert.deepStrictEqual(yield* keys("segments", "description"), ["Atacado", "Varejo"])
      }),
    { timeout: 300_000 }
  )
})
