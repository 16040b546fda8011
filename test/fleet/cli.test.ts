/**
 * The fleet's commands, spawned as users run them, against a throwaway PostgreSQL (and, where redis-server is
 * installed, a throwaway Redis) and the real sandbox:
 * `fleet init` (twice), accounts with credentials encrypted at rest, a submit refused offline (nothing queued),
 * one import run end to end by a worker bound to its own address, `wait`'s exit code, `fetch`'s run directory
 * (which `rerun` and `report` take unchanged), `cancel`, a second worker on the same egress id or on the same source
 * address refused, and a worker whose hold on its egress id is lost stopping (exit 2); one set-up for all of it.
 * What a test only sets up or waits on without checking it as a command (the job `cancel` is given, the hand-back
 * test's job and its end) is made in process (./in-process.ts, as the spawned command would make it): each spawned
 * command costs about a second of CPU (docs/benchmarks.md, "The test suite's time"). Two commands that never reach the
 * store run on PostgreSQL's pass only (`onPostgres`): `accounts add` without FSM_FLEET_KEY (refused before the store is
 * opened) and `report` of the fetched run directory (local files, whose content both passes check).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import pg from "pg"
import { openStore } from "../../src/fleet/Stores.js"
import { customersFile, readJournal, readReport, startDrillSandbox, statusCounts, tempDir } from "../drills/support.js"
import { submitImportAs, waitAs } from "./in-process.js"
import type { Backend } from "./support.js"
import {
  availableBackends,
  eventually,
  fleetEnv,
  initFleet,
  lastJson,
  queueContents,
  runCli,
  startFleetBackend,
  startWorker,
  withStore
} from "./support.js"

/**
 * Takes worker `egressId`'s hold from it. PostgreSQL: the connection holding the advisory lock dies. Redis: the lock
 * is found taken by another worker (as when this one was paused past the lock's expiry).
 */
const loseHold = (backend: Backend, url: string, egressId: string) =>
  Effect.promise(async () => {
    if (backend === "redis") {
      const other = new Redis(url)
      await other.set(`fsm-bulk:egress:${egressId}`, "another-host/1/x", "PX", 60_000)
      await other.quit()
    } else {
      const other = new pg.Client({ connectionString: url })
      await other.connect()
      await other.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
      )
      await other.end()
    }
  })

/** Each test once per backend (`$backend` in its name). */
const each = it.scopedLive.each(availableBackends)

/** `check` on PostgreSQL's pass only (PostgreSQL's always runs): for what no backend changes. */
const onPostgres = (backend: Backend, check: Effect.Effect<void>) => backend === "postgres" ? check : Effect.void

describe("fleet commands", () => {
  each("init, accounts, submit, worker, wait, fetch, rerun, cancel ($backend)", (b) =>
    Effect.gen(function*() {
      const pgServer = yield* startFleetBackend(b.backend)
      const sandbox = yield* startDrillSandbox({
        rate: { limit: 10_000, windowMs: 1_000 },
        accounts: [{ apiKey: "sandbox-key", apiToken: "sandbox-token" }, { apiKey: "beta-key", apiToken: "beta-token" }]
      })
      const dir = yield* tempDir
      const env = fleetEnv(pgServer.url)
      const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
        Effect.promise(() => runCli(args, { ...env, ...extra }))

      const init = yield* run(["fleet", "init"])
      assert.strictEqual(init.code, 0, init.stderr)
      // The test server keeps nothing on disk: `fleet init` says what that costs.
      if (b.backend === "redis") assert.include(init.stderr, "warning: the Redis server runs with appendonly no")
      else assert.notInclude(init.stderr, "warning")
      assert.strictEqual((yield* run(["fleet", "init"])).code, 0, "init is idempotent")

      const account = sandbox.accounts[0]!
      yield* onPostgres(
        b.backend,
        Effect.gen(function*() {
          const withoutKey = yield* run(["accounts", "add", "acme", "--base-url", sandbox.url], {
            FSM_FLEET_KEY: "",
            FSM_API_KEY: account.apiKey,
            FSM_API_TOKEN: account.apiToken
          })
          assert.strictEqual(withoutKey.code, 2)
          assert.include(withoutKey.stderr, "FSM_FLEET_KEY is not set")
        })
      )

      const added = yield* run(["accounts", "add", "acme", "--base-url", sandbox.url], {
        FSM_API_KEY: account.apiKey,
        FSM_API_TOKEN: account.apiToken
      })
      assert.strictEqual(added.code, 0, added.stderr)
      const listed = yield* run(["accounts", "list", "--json"])
      assert.deepStrictEqual(lastJson(listed.stdout), {
        accounts: [{ name: "acme", baseUrl: sandbox.url, rate: null }]
      })
      const stored = yield* withStore(pgServer.url, (store) => store.account("acme"))
      assert.notInclude(JSON.stringify(stored), account.apiToken, "credentials are encrypted at rest")

      // Bad input: exit 2, nothing queued.
      const broken = Path.join(dir, "broken.csv")
      writeFileSync(broken, "")
      const refused = yield* run(["submit", "import", "customers", broken, "--account", "acme"])
      assert.strictEqual(refused.code, 2, refused.stderr)
      const unknown = yield* run(["submit", "import", "customers", broken, "--account", "nobody-here"])
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.stderr, `no account "nobody-here"`)
      assert.deepStrictEqual(yield* withStore(pgServer.url, (store) => store.recentJobs(10)), [])

      // One job, end to end.
      const input = customersFile(dir, "clientes.csv", 60, [7])
      const submitted = yield* run(["submit", "import", "customers", input.file, "--account", "acme", "--json"])
      assert.strictEqual(submitted.code, 0, submitted.stderr)
      const job = lastJson(submitted.stdout).job as string
      assert.match(job, /^[0-9a-f-]{36}$/)
      const queued = yield* queueContents(pgServer.url)
      assert.include(queued, job)
      assert.notInclude(queued, account.apiToken, "no credential in the queue's job data")

      const worker = yield* startWorker(["--egress-id", "w11", "--source-address", "127.0.0.11", "--jobs", "2"], env)
      const waited = yield* run(["wait", job, "--json"])
      assert.strictEqual(waited.code, 1, `${waited.stdout}\n${waited.stderr}\n${worker.stderr()}`)
      assert.strictEqual(lastJson(waited.stdout).state, "done")
      assert.notInclude(worker.stderr(), account.apiToken)

      const log = yield* sandbox.control.requests
      assert.isAbove(log.length, 0)
      assert.deepStrictEqual([...new Set(log.map((e) => e.client?.replace(/^::ffff:/, "")))], ["127.0.0.11"])
      const records = yield* sandbox.control.records(account.apiKey, "customers")
      assert.strictEqual(records.length, input.valid.length)

      // A second worker on the same egress id is refused.
      const twin = yield* run(["worker", "--egress-id", "w11"])
      assert.strictEqual(twin.code, 2)
      assert.include(twin.stderr, "another worker already runs with --egress-id w11")
      // Nor is a worker of another egress id on its source address, named (issue 29, 3c: three ids on one address
      // drew 205 rate-limit answers, each spending the whole budget).
      const sameAddress = yield* run(["worker", "--egress-id", "w16", "--source-address", "127.0.0.11"])
      assert.strictEqual(sameAddress.code, 2, sameAddress.stderr)
      assert.include(
        sameAddress.stderr,
        "another worker (--egress-id w11) already sends from --source-address 127.0.0.11"
      )
      assert.isNull(worker.child.exitCode, "the first worker runs on")

      const out = Path.join(dir, "fetched")
      const fetched = yield* run(["fetch", job, "--out", out])
      assert.strictEqual(fetched.code, 0, fetched.stderr)
      const report = readReport(out)
      assert.strictEqual(report.length, 60)
      assert.deepStrictEqual(statusCounts(report), { created: 59, invalid: 1 })
      assert.deepStrictEqual(report.map((r) => Number(r._row)), Array.from({ length: 60 }, (_, i) => i + 2))
      assert.strictEqual(readJournal(out)[0]!.source.file, Path.join(out, "source", "clientes.csv"))
      assert.isTrue(existsSync(Path.join(out, "report.html")))
      assert.strictEqual(JSON.parse(readFileSync(Path.join(out, "summary.json"), "utf8")).runDir, out)
      const again = yield* run(["fetch", job, "--out", out])
      assert.strictEqual(again.code, 2, "fetch never overwrites")

      // The fetched run directory is a standard one: report and rerun take it.
      yield* onPostgres(b.backend, Effect.map(run(["report", out]), (r) => assert.strictEqual(r.code, 0, r.stderr)))
      // Credentials go only to a base URL the user pairs with them, never to one a fetched directory names.
      const rerun = yield* run(["rerun", out, "--json"], {
        FSM_API_KEY: account.apiKey,
        FSM_API_TOKEN: account.apiToken,
        FSM_BASE_URL: sandbox.url
      })
      assert.strictEqual(rerun.code, 0, rerun.stderr)
      assert.include(rerun.stderr, "nothing to rerun")

      // A worker whose hold on its egress id is lost stops, exit 2 (a stop by SIGTERM, exit 0, is the next test's).
      yield* loseHold(b.backend, pgServer.url, "w11")
      assert.strictEqual(yield* Effect.promise(() => worker.exit), 2, worker.stderr())
      assert.include(worker.stderr(), "its hold on the egress id was lost")

      // Cancel: a queued job is taken off the queue; wait exits 3. The job is queued in process (`submit` spawned is
      // checked above).
      const second = yield* submitImportAs(env, input.file, "acme")
      assert.strictEqual(second.code, 0, second.value === undefined ? second.error : "")
      const job2 = second.value!.job
      assert.strictEqual((yield* run(["cancel", job2])).code, 0)
      assert.strictEqual((yield* run(["wait", job2])).code, 3)
      const status = yield* run(["status", "--json"])
      const jobs = lastJson(status.stdout).jobs as Array<Record<string, unknown>>
      assert.deepStrictEqual(jobs.map((j) => [j.job, j.state]).sort(), [[job, "done"], [job2, "cancelled"]].sort())
    }), { timeout: 300_000 })

  each("a worker stopped mid-job hands it back, and another finishes it ($backend)", (b) =>
    Effect.gen(function*() {
      const pgServer = yield* startFleetBackend(b.backend)
      const sandbox = yield* startDrillSandbox({
        rate: { limit: 10_000, windowMs: 1_000 },
        accounts: [{ apiKey: "sandbox-key", apiToken: "sandbox-token" }, { apiKey: "beta-key", apiToken: "beta-token" }]
      })
      const dir = yield* tempDir
      const env = fleetEnv(pgServer.url)
      // A worker stopped mid-job hands it back; the next one finishes it, no record twice. The fleet is set up, the
      // job queued and its end awaited in process (`fleet init`, `accounts add`, `submit` and `wait` are the first
      // test's point, not this one's: here the workers are).
      const beta = sandbox.accounts[1]!
      const input = customersFile(dir, "clientes.csv", 150, [7])
      yield* initFleet(pgServer.url, [{ name: "beta", baseUrl: sandbox.url, ...beta }])
      const slow = yield* submitImportAs(env, input.file, "beta")
      assert.strictEqual(slow.code, 0, slow.value === undefined ? slow.error : "")
      const job3 = slow.value!.job
      const stopping = yield* startWorker(
        ["--egress-id", "w12", "--source-address", "127.0.0.12", "--rate", "10/1s"],
        env
      )
      // Its journal read through one store while the worker sends (a store opened for each read: a connection each).
      const store = yield* Effect.orDie(openStore(pgServer.url))
      yield* eventually(
        "the worker sends rows (10 journal lines)",
        async () => (await Effect.runPromise(store.journalLines(job3))).length >= 10,
        60_000,
        stopping.stderr
      )
      stopping.child.kill("SIGTERM")
      assert.strictEqual(
        yield* Effect.promise(() => stopping.exit),
        0,
        stopping.stderr()
      )
      assert.include(stopping.stderr(), `job ${job3} handed back`)
      const next = yield* startWorker(["--egress-id", "w13", "--source-address", "127.0.0.13"], env)
      const waited = yield* waitAs(env, job3, 240_000)
      assert.strictEqual(waited.code, 1, `${waited.error ?? ""}\n${next.stderr()}`)
      next.child.kill("SIGTERM")
      const betaRecords = yield* sandbox.control.records(beta.apiKey, "customers")
      assert.deepStrictEqual(betaRecords.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
    }), { timeout: 300_000 })
})
