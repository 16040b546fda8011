/**
 * What the fleet does when its store is left incomplete (issue 29), on each backend, with the real servers and the
 * built CLI:
 *
 * - a `submit` killed (-9) once its jobs are stored and before they are queued: the job shows `submitting`, a
 *   worker's sweep queues it, and it runs to its end once, one record per row (before: the parent sat `queued`
 *   with nobody to take it, and `wait` never returned);
 * - a store that lost the fleet's data while `wait` followed a job (PostgreSQL: the job's rows deleted; Redis:
 *   FLUSHALL): `wait` says the store lost data, exit 2, not "no job"; on Redis `status` says so too, a listed job
 *   whose record was evicted is named, a running worker stops (exit 2), and a server whose maxmemory-policy may
 *   evict keys is refused by `worker` (exit 2) and warned of by `status`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { spawn } from "node:child_process"
import { openStore } from "../../src/fleet/Stores.js"
import { customersFile, startDrillSandbox, tempDir } from "../drills/support.js"
import {
  availableBackends,
  bin,
  eventually,
  fleetEnv,
  initFleet,
  lastJson,
  query,
  runCli,
  runCliWithin,
  sqlSession,
  startFleetBackend,
  startWorker
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

/** An initialised fleet with account `acme` on a fresh sandbox. */
const fleetOn = (url: string) =>
  Effect.gen(function*() {
    const sandbox = yield* startDrillSandbox({
      rate: { limit: 10_000, windowMs: 1_000 },
      accounts: [{ apiKey: "acme-key", apiToken: "acme-token" }]
    })
    const dir = yield* tempDir
    const env = fleetEnv(url, { FSM_FLEET_LEASE_MS: "2000" })
    const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
      Effect.promise(() => runCli(args, { ...env, ...extra }))
    // `fleet init` and `accounts add` in process (the store's own calls, as the commands make them): they are not
    // this file's point, and the Redis case sets the fleet up four times (8 spawned commands before).
    const setUp = initFleet(url, [{ name: "acme", baseUrl: sandbox.url, apiKey: "acme-key", apiToken: "acme-token" }])
    yield* setUp
    return { sandbox, dir, env, run, setUp }
  })

describe("the store left incomplete (issue 29)", () => {
  each(
    "a submit killed between storing its jobs and queueing them: the job still runs, once ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const { dir, env, run, sandbox } = yield* fleetOn(server.url)
        const store = yield* openStore(server.url)
        // 12 parts of one row. `submit` kills itself once its jobs are stored and before they are queued
        // (FSM_FLEET_DEBUG_KILL_AFTER_STORE); `status` below checks that it stopped there (the job shows
        // `submitting`), so the test cannot pass with a kill that came after the queueing. It had 120 parts, so that
        // the test's own kill landed in time without the knob: running 120 one-row jobs cost about 25 s a backend.
        const input = customersFile(dir, "clientes.csv", 12)
        const submit = spawn(
          process.execPath,
          [bin, "submit", "import", "customers", input.file, "--account", "acme", "--chunk-rows", "1"],
          { env: { ...env, FSM_FLEET_DEBUG_KILL_AFTER_STORE: "1" }, stdio: "ignore" }
        )
        const ended = new Promise<void>((resolve) => submit.on("exit", () => resolve()))
        let job: string | undefined
        yield* eventually("the parent job is stored", async () => {
          job = (await Effect.runPromise(Effect.orDie(store.recentJobs(1))))[0]?.id
          if (job !== undefined) submit.kill("SIGKILL")
          return job !== undefined
        }, 60_000)
        yield* Effect.promise(() => ended)
        const listed = yield* run(["status", job!, "--json"])
        assert.strictEqual(listed.code, 0, listed.stderr)
        const shown = lastJson(listed.stdout).jobs as Array<{ readonly state: string }>
        assert.strictEqual(shown[0]?.state, "submitting", `killed before its jobs were queued:\n${listed.stdout}`)

        const worker = yield* startWorker(["--egress-id", "w-sweep", "--rate", "1000/1s", "--jobs", "4"], env)
        const waited = yield* Effect.promise(() => runCliWithin(["wait", job!, "--json"], env, 120_000))
        assert.strictEqual(waited.code, 0, `${listed.stdout}\n${waited.stdout}\n${waited.stderr}\n${worker.stderr()}`)
        assert.strictEqual(lastJson(waited.stdout).state, "done")
        assert.strictEqual(lastJson(waited.stdout).done, 12)
        const records = yield* sandbox.control.records("acme-key", "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
      }),
    { timeout: 300_000 }
  )

  each(
    "a store that lost the fleet's data is said to have, exit 2, not \"no job\" ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const { dir, env, run, setUp } = yield* fleetOn(server.url)
        const submitted = yield* run([
          "submit",
          "import",
          "customers",
          customersFile(dir, "clientes.csv", 5).file,
          "--account",
          "acme",
          "--json"
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string
        // `wait` follows the job (no worker runs it); once it has read it, the store loses it.
        const waiting = runCliWithin(["wait", job], env, 60_000)
        const redis = b.backend === "redis" ? new Redis(server.url) : undefined
        yield* Effect.addFinalizer(() => Effect.promise(async () => void (await redis?.quit())))
        if (redis !== undefined) {
          yield* eventually(
            "wait reads the job",
            async () => (await redis.client("LIST") as string).split("\n").some((c) => / cmd=hgetall /.test(c))
          )
          yield* Effect.promise(() => redis.flushall())
        } else {
          // Finished, not only begun: a read still running may take its snapshot after the DELETE and see no job
          // at all (then "no job" is the right answer). An idle connection whose last statement was the read has
          // answered it; `wait` then sleeps 500 ms before reading again. Sessions of this test's database only: the
          // run's files share the cluster, and another file's `wait` reads its jobs with the same statement (seen
          // there, this test deleted the job before its own `wait` had read it and got "no job", in a run of the
          // fleet's cli files three at a time).
          // Polled on one session of the test's, not a connection a read.
          const session = yield* sqlSession(server.url)
          yield* eventually("wait has read the job", async () =>
            (await session.query(
              "SELECT 1 FROM pg_stat_activity WHERE state = 'idle' AND datname = current_database() " +
                "AND query LIKE 'SELECT * FROM fsm_bulk.jobs WHERE id = $1%'"
            )).length > 0)
          yield* Effect.promise(() => query(server.url, "DELETE FROM fsm_bulk.jobs"))
        }
        const waited = yield* Effect.promise(() => waiting)
        assert.strictEqual(waited.code, 2, waited.stderr)
        assert.include(waited.stderr, "the fleet store has lost data")
        assert.include(waited.stderr, job)
        assert.notInclude(waited.stderr, "no job")
        if (redis === undefined) return

        // Redis: `status` after a FLUSHALL says the data is gone, not only "run fleet init".
        const status = yield* run(["status"])
        assert.strictEqual(status.code, 2, status.stderr)
        assert.include(status.stderr, "lost the fleet's data")

        // A listed job whose record was evicted is named.
        yield* setUp
        const again = yield* run([
          "submit",
          "import",
          "customers",
          customersFile(dir, "b.csv", 3).file,
          "--account",
          "acme",
          "--json"
        ])
        const evicted = lastJson(again.stdout).job as string
        yield* Effect.promise(() => redis.del(`fsm-bulk:job:${evicted}`))
        const listed = yield* run(["status"])
        assert.strictEqual(listed.code, 2, listed.stderr)
        assert.include(listed.stderr, evicted)

        // A running worker whose store is flushed stops, exit 2, saying why.
        yield* Effect.promise(() => redis.flushall())
        yield* setUp
        const worker = yield* startWorker(["--egress-id", "w-flushed"], env)
        yield* eventually("the worker is ready", () => worker.stderr().includes("ready"), 60_000, worker.stderr)
        yield* Effect.promise(() => redis.flushall())
        // Effect's timeout, not a raced setTimeout: no 60 s timer is left running once the worker has exited.
        const code = yield* Effect.promise(() => worker.exit).pipe(
          Effect.timeoutTo({ duration: "60 seconds", onSuccess: (c): unknown => c, onTimeout: () => "still running" })
        )
        assert.strictEqual(code, 2, worker.stderr())
        assert.match(worker.stderr(), /has lost (the fleet.s )?data/)

        // An eviction policy: the worker refuses to start, `status` warns.
        yield* setUp
        yield* Effect.promise(() => redis.config("SET", "maxmemory-policy", "allkeys-lru"))
        const refused = yield* Effect.promise(() => runCliWithin(["worker", "--egress-id", "w-lru"], env, 30_000))
        assert.strictEqual(refused.code, 2, refused.stderr)
        assert.include(refused.stderr, "maxmemory-policy allkeys-lru")
        const warned = yield* run(["status"])
        assert.strictEqual(warned.code, 0, warned.stderr)
        assert.include(warned.stderr, "maxmemory-policy allkeys-lru")
      }),
    { timeout: 300_000 }
  )
})
