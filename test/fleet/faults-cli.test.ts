/**
 * No job lost, whatever the store or the set-up does (issue 29), on each backend, with the real servers and the
 * built CLI:
 *
 * - a worker whose FSM_FLEET_KEY is not the fleet's refuses to start (exit 2), and `accounts add` with it too;
 * - a job whose account was removed while it was queued ends failed (exit 2, nothing sent), also in parts (the
 *   whole failed, exit 2, with its parts' reason), and `wait` returns;
 * - store faults while a job is taken, written and ended (PostgreSQL: a 300 ms `statement_timeout` meeting slow
 *   statements when the job is marked running and when it is marked done, and the connection of a journal insert
 *   killed with `pg_terminate_backend`; Redis: a restart of the server, with its append-only file, mid-job) are
 *   outlasted: the job ends done, one record per valid row;
 * - an account replaced by `accounts add` (another address and credentials) gets the next job at its new address;
 *   an account removed while its job runs stops the job's sending (no more than the requests already in flight
 *   leave after the removal) and the job ends failed, exit 3 (rows were sent);
 * - a job no live worker can serve (a format newer than they know) ends failed, exit 2, with each worker's reason,
 *   and no worker takes it twice (before, it went round the queue for good).
 *
 * The workers, `accounts add` and `accounts remove` (where the change lands on a job running or on a refused key) are
 * the built CLI, spawned; `submit import` (but where the file it reads is the point), `wait`, `status` and the removal
 * of a queued job's account are made in the test's process (./in-process.ts), on the same code: they are not what
 * these tests are about, and each spawn costs about a second of CPU. `wait`'s exit code is the job's `exit_code`
 * (3 only for a cancelled job, which none of these is); test/fleet/cli.test.ts spawns `submit`, `wait` and `status`
 * for their contract.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { execFileSync } from "node:child_process"
import { closeSync, constants, openSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import * as Path from "node:path"
import { jobFormat } from "../../src/fleet/Queue.js"
import type { RequestLogEntry } from "../../src/sandbox/Sandbox.js"
import { customersFile, startDrillSandbox, tempDir } from "../drills/support.js"
import { accountsRemoveAs, ended, statusAs, submitCustomers } from "./in-process.js"
import {
  availableBackends,
  type Backend,
  eventually,
  fleetEnv,
  initFleet,
  lastJson,
  query,
  queueNewerJob,
  runCli,
  runCliWithin,
  startFleetBackend,
  startPostgres,
  startRedisWith,
  startWorker,
  withStore
} from "./support.js"

/** Each test once per backend (`$backend` in its name). */
const each = it.scopedLive.each(availableBackends)

const otherKey = Buffer.alloc(32, 9).toString("base64")
const writes = (log: ReadonlyArray<RequestLogEntry>, apiKey: string) =>
  log.filter((e) => e.apiKey === apiKey && e.method !== "GET" && !/\/login$/i.test(e.path))

/** An initialised fleet on `url`, account `acme` on a fresh sandbox, and the CLI with the fleet's environment. */
const fleetOn = (url: string) =>
  Effect.gen(function*() {
    const sandbox = yield* startDrillSandbox({
      rate: { limit: 10_000, windowMs: 1_000 },
      accounts: [{ apiKey: "acme-key", apiToken: "acme-token" }]
    })
    const account = sandbox.accounts[0]!
    const dir = yield* tempDir
    const env = fleetEnv(url)
    const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
      Effect.promise(() => runCli(args, { ...env, ...extra }))
    yield* initFleet(url, [{ name: "acme", baseUrl: sandbox.url, ...account }])
    /** `submit import customers FILE --account acme [--chunk-rows N]`, in process: the job's id. */
    const submit = (file: string, chunkRows?: number) => submitCustomers(url, file, "acme", chunkRows)
    /** `wait JOB`, in process: the job's row once it has ended; it fails after `ms` (a job nobody will end). */
    const wait = (job: string, detail: () => string, ms = 90_000) => ended(url, job, ms, detail)
    return { sandbox, account, dir, env, run, submit, wait }
  })

const fleet = (backend: Backend) => Effect.flatMap(startFleetBackend(backend), (server) => fleetOn(server.url))

describe("no job lost (issue 29)", () => {
  each(
    "a worker or an `accounts add` whose key is not the fleet's is refused, exit 2 ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { env, run } = yield* fleet(b.backend)
        const worker = yield* Effect.promise(() =>
          runCliWithin(["worker", "--egress-id", "wrong-key"], { ...env, FSM_FLEET_KEY: otherKey }, 30_000)
        )
        assert.strictEqual(worker.code, 2, `the worker did not refuse to start:\n${worker.stderr}`)
        assert.include(worker.stderr, "FSM_FLEET_KEY is not this fleet's key")
        assert.include(worker.stderr, `account "acme"`)
        const add = yield* run(["accounts", "add", "beta", "--base-url", "http://127.0.0.1:9/v2"], {
          FSM_FLEET_KEY: otherKey,
          FSM_API_KEY: "k",
          FSM_API_TOKEN: "t"
        })
        assert.strictEqual(add.code, 2, add.stderr)
        assert.include(add.stderr, "FSM_FLEET_KEY is not this fleet's key")
        // Nothing was added: read in process (`accounts list` is cli.test.ts's to spawn).
        const listed = yield* withStore(env.FSM_FLEET_URL!, (store) => store.accounts)
        assert.deepStrictEqual(listed.map((a) => a.name), ["acme"], "the refused `accounts add` added nothing")
      }),
    { timeout: 120_000 }
  )

  each(
    "a job whose account was removed while it was queued ends failed, exit 2, also in parts ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { dir, env, sandbox, submit, wait } = yield* fleet(b.backend)
        // The two submits, and later the two waits, side by side: neither depends on the other.
        const [single, parted] = yield* Effect.all([
          submit(customersFile(dir, "um.csv", 10).file),
          submit(customersFile(dir, "partes.csv", 30).file, 10)
        ], { concurrency: "unbounded" })
        // Removed in process, as `accounts remove` removes it (the command is spawned below, where it lands mid-job).
        assert.strictEqual((yield* accountsRemoveAs(env, "acme")).code, 0)
        const worker = yield* startWorker(["--egress-id", "w-removed"], env)
        const [waited, whole] = yield* Effect.all([wait(single, worker.stderr), wait(parted, worker.stderr)], {
          concurrency: "unbounded"
        })
        assert.strictEqual(waited.exit_code, 2, `${JSON.stringify(waited)}\n${worker.stderr()}`)
        assert.strictEqual(waited.state, "failed")
        // A job in parts ends when its parts have: each failed (exit 2, nothing sent), so the whole failed too, exit
        // 2, with their reason (not "done", exit 3: a job nothing of which ran did not end well or half-way).
        assert.strictEqual(whole.exit_code, 2, `${JSON.stringify(whole)}\n${worker.stderr()}`)
        assert.strictEqual(whole.state, "failed")
        assert.include(whole.error ?? "", `every part failed: account "acme" was removed`)
        // `status`, read in process as the command reads it (its output is cli.test.ts's to spawn).
        const shown = yield* statusAs(env, parted)
        assert.deepStrictEqual([shown.value?.state, shown.value?.exitCode], ["failed", 2], JSON.stringify(shown))
        const parts = yield* withStore(env.FSM_FLEET_URL!, (store) => store.parts(parted))
        assert.deepStrictEqual(parts.map((p) => [p.state, p.exit_code]), [["failed", 2], ["failed", 2], ["failed", 2]])
        const row = yield* withStore(env.FSM_FLEET_URL!, (store) => store.job(single))
        assert.include(row.error ?? "", `account "acme" was removed`)
        assert.strictEqual((yield* sandbox.control.requests).length, 0, "nothing was sent")
      }),
    { timeout: 180_000 }
  )

  each(
    "an account replaced gets its next job at its new address; one removed stops its job's sending ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { account, dir, env, run, sandbox, submit, wait } = yield* fleet(b.backend)
        const moved = yield* startDrillSandbox({
          rate: { limit: 10_000, windowMs: 1_000 },
          accounts: [{ apiKey: "moved-key", apiToken: "moved-token" }]
        })
        const worker = yield* startWorker(["--egress-id", "w-moved", "--rate", "10/1s"], env)
        const first = yield* submit(customersFile(dir, "primeiro.csv", 5).file)
        assert.strictEqual((yield* wait(first, worker.stderr)).exit_code, 0, worker.stderr())
        assert.strictEqual((yield* sandbox.control.records(account.apiKey, "customers")).length, 5)

        // Replaced: the worker that served the account sends the next job to the new address, new credentials.
        const replaced = yield* run(["accounts", "add", "acme", "--base-url", moved.url], {
          FSM_API_KEY: "moved-key",
          FSM_API_TOKEN: "moved-token"
        })
        assert.strictEqual(replaced.code, 0, replaced.stderr)
        const before = (yield* sandbox.control.requests).length
        const second = yield* submit(customersFile(dir, "segundo.csv", 8).file)
        assert.strictEqual((yield* wait(second, worker.stderr)).exit_code, 0, worker.stderr())
        assert.strictEqual((yield* sandbox.control.requests).length, before, "nothing more to the old address")
        assert.strictEqual((yield* moved.control.records("moved-key", "customers")).length, 8)

        // Removed while its job runs (10 requests a second): the job stops sending, and ends failed, exit 3. 400 rows
        // (40 s) so that the removal, a spawned command, lands mid-job however slow its start (with 80, a start of
        // more than 6 s at load 16 let the job end first); a job that stops at the removal costs none of them.
        const third = yield* submit(customersFile(dir, "terceiro.csv", 400).file)
        yield* eventually(
          "the third job sends",
          () => Effect.runPromise(Effect.map(moved.control.requests, (log) => writes(log, "moved-key").length >= 18)),
          60_000,
          worker.stderr
        )
        assert.strictEqual((yield* run(["accounts", "remove", "acme"])).code, 0)
        const atRemoval = writes(yield* moved.control.requests, "moved-key").length
        const waited = yield* wait(third, worker.stderr)
        assert.strictEqual(waited.exit_code, 3, `${JSON.stringify(waited)}\n${worker.stderr()}`)
        assert.strictEqual(waited.state, "failed")
        const after = writes(yield* moved.control.requests, "moved-key").length - atRemoval
        // At most the requests already past their check when the removal was made (the worker's concurrency at 10/s).
        assert.isAtMost(after, 6, `${after} requests after the account was removed`)
        assert.isBelow(atRemoval + after, 8 + 400, "the job stopped before its end")
      }),
    { timeout: 240_000 }
  )
})

describe("store faults are outlasted (issue 29)", () => {
  it.scopedLive(
    "postgres: statement timeouts when the job is taken and ended, a killed connection in a journal insert",
    () =>
      Effect.gen(function*() {
        const server = yield* startPostgres
        const { account, dir, env, sandbox, submit, wait } = yield* fleetOn(server.url)
        const input = customersFile(dir, "clientes.csv", 30)
        const job = yield* submit(input.file)
        // Marking the job running, and marking it done, meet a 3 s wait five times each (a statement timeout of
        // 300 ms cancels them); the 10th and 20th journal inserts lose their connection.
        yield* Effect.promise(() =>
          query(
            server.url,
            `CREATE SEQUENCE fault_running; CREATE SEQUENCE fault_done; CREATE SEQUENCE fault_journal;
           CREATE FUNCTION fault_jobs() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
             IF NEW.state = 'running' AND OLD.state <> 'running' AND nextval('fault_running') <= 5 THEN PERFORM pg_sleep(3); END IF;
             IF NEW.state = 'done' AND OLD.state <> 'done' AND nextval('fault_done') <= 5 THEN PERFORM pg_sleep(3); END IF;
             RETURN NEW; END $$;
           CREATE TRIGGER fault_jobs BEFORE UPDATE ON fsm_bulk.jobs FOR EACH ROW EXECUTE FUNCTION fault_jobs();
           CREATE FUNCTION fault_journal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
             IF nextval('fault_journal') IN (10, 20) THEN
               PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(3);
             END IF;
             RETURN NEW; END $$;
           CREATE TRIGGER fault_journal BEFORE INSERT ON fsm_bulk.journal FOR EACH ROW EXECUTE FUNCTION fault_journal();
           ALTER DATABASE ${server.database} SET statement_timeout = '300ms';`
          )
        )
        const worker = yield* startWorker(["--egress-id", "w-faults"], env)
        const waited = yield* wait(job, worker.stderr, 120_000)
        assert.strictEqual(waited.exit_code, 0, `${JSON.stringify(waited)}\n${worker.stderr()}`)
        assert.strictEqual(waited.state, "done")
        const faults = yield* Effect.promise(() =>
          query(
            server.url,
            `SELECT (SELECT last_value FROM fault_running) AS r, (SELECT last_value FROM fault_done) AS d,
                    (SELECT last_value FROM fault_journal) AS j`
          )
        )
        assert.isAbove(Number(faults[0].r), 5, "every fault at pickup was met")
        assert.isAbove(Number(faults[0].d), 5, "every fault at the end was met")
        assert.isAbove(Number(faults[0].j), 20, "both killed journal inserts were met")
        assert.include(worker.stderr(), "the fleet store failed, trying again")
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
      }),
    { timeout: 240_000 }
  )

  it.scopedLive.skipIf(!availableBackends.some((b) => b.backend === "redis"))(
    "redis: a restart of the server mid-job",
    () =>
      Effect.gen(function*() {
        const server = yield* startRedisWith({ persistent: true })
        const { account, dir, env, sandbox, submit, wait } = yield* fleetOn(server.url)
        const input = customersFile(dir, "clientes.csv", 60)
        const job = yield* submit(input.file)
        const worker = yield* startWorker(["--egress-id", "w-restart", "--rate", "20/1s"], env)
        const redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 50 })
        yield* Effect.addFinalizer(() => Effect.sync(() => redis.disconnect()))
        redis.on("error", () => undefined)
        yield* eventually(
          "the job is under way",
          async () => (await redis.llen(`fsm-bulk:job:${job}:journal`)) >= 15,
          60_000,
          worker.stderr
        )
        yield* server.restart(1_000)
        const waited = yield* wait(job, worker.stderr, 120_000)
        assert.strictEqual(waited.exit_code, 0, `${JSON.stringify(waited)}\n${worker.stderr()}`)
        assert.strictEqual(waited.state, "done")
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
      }),
    { timeout: 240_000 }
  )
})

/** Whether a reader holds the named pipe open (opening it to write without waiting fails when none does). */
const readerOpen = (fifo: string): boolean => {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
    return true
  } catch {
    return false
  }
}

describe("submit reads its file once (issue 29)", () => {
  each(
    "a file that changes while `submit` reads it is validated, split and stored in one version ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { dir, env, run } = yield* fleet(b.backend)
        // A named pipe that gives each reader the other version: the first read gets A, a second B, a third A…
        const version = (tag: string, bad: number) =>
          [
            "externalId,name,cpfCnpj",
            ...Array.from({ length: 30 }, (_, i) => `${tag}-${i + 1},Cliente ${i + 1},${i === bad ? "123" : ""}`)
          ]
            .join("\n") + "\n"
        const versions = [version("A", 4), version("B", 19)]
        const fifo = Path.join(dir, "clientes.csv")
        execFileSync("mkfifo", [fifo])
        let serving = true
        let served = 0
        const server = (async () => {
          while (serving) {
            await writeFile(fifo, versions[served % 2]!).catch(() => undefined)
            served++
            // The next version waits for the next reader: one still reading would get it appended to this one.
            while (serving && readerOpen(fifo)) await new Promise((r) => setTimeout(r, 10))
          }
        })()
        yield* Effect.addFinalizer(() =>
          Effect.promise(async () => {
            serving = false
            // A writer waiting for a reader is let go.
            closeSync(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK))
            await server
          })
        )
        // Spawned: how the command reads its file is the point here.
        const submitted = yield* run([
          "submit",
          "import",
          "customers",
          fifo,
          "--account",
          "acme",
          "--json",
          "--chunk-rows",
          "10"
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string
        const keys = (text: string) => [...text.matchAll(/\b([AB]-\d+)\b/g)].map((m) => m[1]!)
        const stored = yield* withStore(env.FSM_FLEET_URL!, (store) =>
          Effect.gen(function*() {
            const source = (yield* store.files(job, "source/"))[0]!.content.toString()
            const parts = yield* store.parts(job)
            const partRows: Array<string> = []
            for (const part of parts) {
              partRows.push(...keys((yield* store.files(part.id, "source/"))[0]!.content.toString()))
            }
            return { source, partRows, parts: parts.length }
          }))
        assert.strictEqual(served >= 1, true)
        assert.strictEqual(stored.parts, 3)
        assert.deepStrictEqual(stored.partRows, keys(stored.source), "the parts are the rows of the file stored")
        assert.strictEqual(stored.source, versions[0], "what was stored is the version read first")
      }),
    { timeout: 120_000 }
  )
})

describe("jobs carry the format they need (issue 29)", () => {
  each(
    "a job no live worker can serve ends failed with each worker's reason, exit 2; none takes it twice ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { dir, env, submit, wait } = yield* fleet(b.backend)
        const url = env.FSM_FLEET_URL!
        // Two workers alive before the job is queued: it ends only once both refused it.
        const workers = [
          yield* startWorker(["--egress-id", "w-old-a"], env),
          yield* startWorker(["--egress-id", "w-old-b"], env)
        ]
        for (const w of workers) yield* eventually("the worker is ready", () => w.stderr().includes("ready"))
        // A job as a newer version would submit it: a format these workers do not know.
        yield* queueNewerJob(url, "from-the-future")
        const logs = () => workers.map((w) => w.stderr()).join("\n")
        const waited = yield* wait("from-the-future", logs)
        assert.strictEqual(
          waited.exit_code,
          2,
          `wait returns the job's exit code\n${JSON.stringify(waited)}\n${logs()}`
        )
        // `status from-the-future --json`, read in process as the command reads it (cli.test.ts spawns it).
        const status = (yield* statusAs(env, "from-the-future")).value
        assert.deepStrictEqual([status?.state, status?.exitCode], ["failed", 2], "status shows it")
        const error = status?.error ?? ""
        assert.include(error, "no worker can run it (refused by 2)")
        for (const id of ["w-old-a", "w-old-b"]) {
          assert.include(error, `worker ${id}: it needs job format ${jobFormat + 1}`)
          // Each said its refusal once, though the queue may have given it the job again.
          const said = workers.map((w) => w.stderr()).join("").split("\n")
            .filter((l) => l.includes(`worker ${id}: job from-the-future`))
          assert.isAtMost(said.length, 1, said.join("\n"))
        }
        const left = yield* withStore(
          url,
          (store) => Effect.all([store.job("from-the-future"), store.lease("from-the-future")])
        )
        assert.strictEqual(left[0].state, "failed")
        assert.strictEqual(left[0].exit_code, 2, "nothing of it was sent")
        // Its lease was taken only to end it (by one worker, or both at once), never to run it.
        assert.isDefined(left[1])
        assert.notInclude(logs(), "job from-the-future (import", "no worker ran it")
        // The workers run the jobs they know.
        const job = yield* submit(customersFile(dir, "clientes.csv", 5).file)
        assert.strictEqual((yield* wait(job, logs)).exit_code, 0, logs())
      }),
    { timeout: 150_000 }
  )
})
