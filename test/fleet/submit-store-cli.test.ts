/**
 * `submit`'s two paths between storing a submission and queueing it (issue 29), on each backend, with the real
 * servers and the built CLI:
 *
 * - stored but not queued: the queue fails past the lease once the jobs are stored (PostgreSQL: BullMQ's job table
 *   locked under a 300 ms `statement_timeout`; Redis: the server stopped, `submit` paused in that instant with
 *   `FSM_FLEET_DEBUG_STOP_AFTER_STORE`): `submit` exits 0 with a warning, the job shows `submitting`, and a worker's
 *   sweep queues it; it ends done, one record per row;
 * - the answer of the step that stores a submission lost after it was committed (`FSM_FLEET_DEBUG_LOSE_ANSWER`): the
 *   step is asked again and the job and its parts are stored once, with one file each.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { customersFile } from "../drills/support.js"
import {
  acmeFleet,
  availableBackends,
  type Backend,
  eventually,
  isStopped,
  lastJson,
  runCliWithin,
  startCli,
  startFleetBackend,
  startPostgres,
  startRedisWith,
  startWorker,
  withStore
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

/** A lease of 3 s: a fault "longer than a lease" stays short. */
const leaseEnv = { FSM_FLEET_LEASE_MS: "3000" }

/**
 * A backend whose queue can be broken while the fleet's own data stays: `hold` starts the fault and gives what
 * ends it (PostgreSQL: BullMQ's `job` table locked, every session under a 300 ms `statement_timeout`; Redis: the
 * server stopped, its append-only file keeping what was stored).
 */
const queueFault = (backend: Backend) =>
  Effect.gen(function*() {
    if (backend === "redis") {
      const redis = yield* startRedisWith({ persistent: true })
      return { url: redis.url, hold: () => redis.down }
    }
    const server = yield* startPostgres
    const admin = new pg.Client({ connectionString: server.url })
    yield* Effect.promise(() => admin.connect())
    yield* Effect.addFinalizer(() => Effect.promise(() => admin.end().catch(() => undefined)))
    yield* Effect.promise(() => admin.query(`ALTER DATABASE ${server.database} SET statement_timeout = '300ms'`))
    const hold = () =>
      Effect.promise(async () => {
        await admin.query("BEGIN")
        await admin.query("LOCK TABLE bullmq.job IN ACCESS EXCLUSIVE MODE")
        return Effect.promise(() => admin.query("COMMIT"))
      })
    return { url: server.url, hold }
  })

describe("submit between storing and queueing (issue 29)", () => {
  each(
    "stored but not queued: submit exits 0 with a warning, and a worker's sweep queues the job ($backend)",
    (b) =>
      Effect.gen(function*() {
        const fault = yield* queueFault(b.backend)
        const { account, dir, env, run, sandbox } = yield* acmeFleet(fault.url, { env: leaseEnv })
        const input = customersFile(dir, "clientes.csv", 30)
        const submitting = yield* startCli(
          ["submit", "import", "customers", input.file, "--account", "acme", "--chunk-rows", "10", "--json"],
          { ...env, FSM_FLEET_DEBUG_STOP_AFTER_STORE: "1" }
        )
        yield* eventually("submit has stored its jobs", () => isStopped(submitting.child.pid!), 60_000)
        const end = yield* fault.hold()
        submitting.child.kill("SIGCONT")
        const submitted = yield* Effect.promise(() => submitting.ended)
        yield* end
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        assert.include(submitted.stderr, "is stored but could not be queued now")
        assert.include(submitted.stderr, "do not submit the file again")
        assert.include(submitted.stderr, "stored (not queued yet) job")
        assert.strictEqual(lastJson(submitted.stdout).queued, false, submitted.stdout)
        const job = lastJson(submitted.stdout).job as string
        const shown = yield* run(["status", job, "--json"])
        const [status] = lastJson(shown.stdout).jobs as Array<{ state: string }>
        assert.strictEqual(status?.state, "submitting", shown.stdout)
        // No worker was running: the sweep of the first one started queues it, once its submission is a lease old.
        const worker = yield* startWorker(["--egress-id", "w-sweep"], env)
        const waited = yield* Effect.promise(() => runCliWithin(["wait", job, "--json"], env, 120_000))
        assert.strictEqual(waited.code, 0, `${waited.stdout}\n${waited.stderr}\n${worker.stderr()}`)
        assert.include(worker.stderr(), `job ${job} was left unqueued by its submit`)
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
      }),
    { timeout: 240_000 }
  )

  each(
    "a submission whose stored answer was lost is stored once: one job, its parts once, one file each ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(b.backend)
        const { account, dir, env, run, sandbox } = yield* acmeFleet(url, { env: leaseEnv })
        const input = customersFile(dir, "clientes.csv", 30)
        const submitted = yield* run(
          ["submit", "import", "customers", input.file, "--account", "acme", "--chunk-rows", "10", "--json"],
          { FSM_FLEET_DEBUG_LOSE_ANSWER: "publishJobs" }
        )
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        assert.include(submitted.stderr, "the connection was lost before the answer came")
        const job = lastJson(submitted.stdout).job as string
        const stored = yield* withStore(url, (store) =>
          Effect.gen(function*() {
            const jobs = yield* store.recentJobs(100)
            const parts = yield* store.parts(job)
            const files = yield* Effect.forEach([job, ...parts.map((p) => p.id)], (id) => store.files(id, "source/"))
            return { jobs: jobs.map((j) => [j.id, j.state]), parts: parts.map((p) => p.state), files }
          }))
        assert.deepStrictEqual(stored.jobs, [[job, "queued"]], "one job")
        assert.deepStrictEqual(stored.parts, ["queued", "queued", "queued"], "its three parts, once each")
        assert.deepStrictEqual(stored.files.map((f) => f.length), [1, 1, 1, 1], "one source file each")
        const worker = yield* startWorker(["--egress-id", "w-once"], env)
        const waited = yield* Effect.promise(() => runCliWithin(["wait", job, "--json"], env, 120_000))
        assert.strictEqual(waited.code, 0, `${waited.stdout}\n${waited.stderr}\n${worker.stderr()}`)
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
      }),
    { timeout: 240_000 }
  )
})
