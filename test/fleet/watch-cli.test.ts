/**
 * Following and stopping running jobs, as users do: `status --watch` prints until the job ends and exits by
 * itself; `cancel` of a job a worker is running stops its sending (no row is sent after the cancel that was not
 * already in flight), the job ends cancelled (what `wait` exits 3 for), and `fetch` gives a run directory whose
 * unsent rows `resume` finishes, with one record per valid row. The same for a job split into parts: the cancel
 * stops every part.
 *
 * Spawned: the worker, and the commands these tests are about (`status --watch`, `cancel`, `fetch`, `resume`). The
 * set-up and what only observes is made in process (./in-process.ts): `submit import`, and the job's end and state
 * read from the store where `wait` and `status --json` were spawned (`wait`'s exit 3 and `status --json`'s
 * "cancelled" for a cancelled job are asserted by test/fleet/cli.test.ts, and `wait`'s 3 for a cancel of a running
 * job by test/fleet/onboard-cli.test.ts). A spawned command costs about a second of CPU before it does anything.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import type { RequestLogEntry } from "../../src/sandbox/Sandbox.js"
import { customersFile, readJournal, readReport, startDrillSandbox, statusCounts, tempDir } from "../drills/support.js"
import { ended, jobStatus, submitCustomers } from "./in-process.js"
import {
  bin,
  eventually,
  fleetEnv,
  initFleet,
  query,
  runCli,
  startPostgres,
  startWorker,
  withStore
} from "./support.js"

const address = (e: RequestLogEntry) => (e.client ?? "").replace(/^::ffff:/, "")

/** The fleet, one account on the sandbox, and a way to run the CLI with the fleet's environment. */
const setUp = Effect.gen(function*() {
  const pgServer = yield* startPostgres
  const account = { apiKey: "watch-key", apiToken: "watch-token" }
  const sandbox = yield* startDrillSandbox({ rate: { limit: 10_000, windowMs: 1_000 }, accounts: [account] })
  const dir = yield* tempDir
  const env = fleetEnv(pgServer.url)
  const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
    Effect.promise(() => runCli(args, { ...env, ...extra }))
  // The account's own budget (10/1s) below the worker's: a worker runs its parts together (fleet/Pace.ts).
  yield* initFleet(pgServer.url, [{ name: "acme", baseUrl: sandbox.url, ...account, rate: "10/1s" }])
  const journalCount = (job: string) =>
    Effect.promise(async () =>
      (await query(
        pgServer.url,
        `SELECT count(*)::int AS n FROM fsm_bulk.journal l JOIN fsm_bulk.jobs j ON j.id = l.job
         WHERE coalesce(j.parent, j.id) = $1`,
        [job]
      ))[0].n as number
    )
  return { pgServer, account, sandbox, dir, env, run, journalCount }
})

describe("status --watch and cancel", () => {
  it.scopedLive("status --watch prints until the job ends, then exits", () =>
    Effect.gen(function*() {
      const { dir, env, pgServer } = yield* setUp
      const input = customersFile(dir, "clientes.csv", 40, [3])
      const job = yield* submitCustomers(pgServer.url, input.file, "acme")

      const watch = spawn(process.execPath, [bin, "status", job, "--watch"], { env, stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      watch.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
      const exited = new Promise<number | null>((r) => watch.on("exit", (code) => r(code)))
      yield* Effect.addFinalizer(() => Effect.sync(() => watch.exitCode === null && watch.kill("SIGKILL")))
      // It prints while the job waits for a worker, and goes on printing.
      yield* eventually("status --watch prints the queued job", () => stdout.includes("queued"))
      // At full speed: the first line (queued) is printed before the worker starts, the last once the job ended.
      const worker = yield* startWorker(["--egress-id", "w31"], env)
      const code = yield* Effect.promise(() => exited)
      assert.strictEqual(code, 0, `${stdout}\n${worker.stderr()}`)
      const lines = stdout.trim().split("\n")
      assert.isAtLeast(lines.length, 2, stdout)
      assert.include(lines[0]!, job)
      assert.include(lines[0]!, "queued")
      assert.include(lines.at(-1)!, "done")
      assert.include(lines.at(-1)!, "40/40")
      assert.include(lines.at(-1)!, "exit 1")
    }), { timeout: 300_000 })

  for (const parts of [false, true]) {
    it.scopedLive(
      `cancel of a running job${parts ? " in parts" : ""}: sending stops, the job ends cancelled, resume finishes`,
      () =>
        Effect.gen(function*() {
          const { account, dir, env, journalCount, pgServer, run, sandbox } = yield* setUp
          const input = customersFile(dir, "clientes.csv", 150, [7])
          // `submit import customers FILE --account acme --mode create [--chunk-rows 50]`
          const job = yield* submitCustomers(pgServer.url, input.file, "acme", parts ? 50 : 10_000, undefined, "create")
          const chunks = yield* withStore(pgServer.url, (store) => store.parts(job))
          assert.strictEqual(chunks.length, parts ? 3 : 0)

          const worker = yield* startWorker(
            ["--egress-id", "w32", "--source-address", "127.0.0.32", "--rate", "100/1s", "--jobs", "3"],
            env
          )
          yield* eventually("rows sent", () => Effect.runPromise(Effect.map(journalCount(job), (n) => n >= 20)))
          // Every part running when the cancel comes: the worker takes the next part a window after the last sends.
          if (parts) {
            yield* eventually(
              "every part running",
              () =>
                Effect.runPromise(
                  withStore(
                    pgServer.url,
                    (store) => Effect.map(store.parts(job), (r) => r.every((p) => p.state === "running"))
                  )
                ),
              60_000,
              worker.stderr
            )
          }
          const cancelled = yield* run(["cancel", job])
          assert.strictEqual(cancelled.code, 0, cancelled.stderr)
          assert.include(cancelled.stdout + cancelled.stderr, "cancelled")
          // What `wait` exits 3 for: the job ended cancelled.
          const waited = yield* ended(pgServer.url, job, 60_000, worker.stderr)
          assert.strictEqual(waited.state, "cancelled")

          // The worker notices at its next journal line or request, and sends nothing more.
          yield* eventually(
            "the worker stops the job",
            () => (worker.stderr().match(/lost; the job was cancelled/g) ?? []).length === (parts ? 3 : 1),
            30_000,
            worker.stderr
          )
          const quiet = (yield* sandbox.control.requests).filter((e) => address(e) === "127.0.0.32").length
          yield* Effect.sleep(2_000)
          const later = (yield* sandbox.control.requests).filter((e) => address(e) === "127.0.0.32").length
          assert.strictEqual(later, quiet, "no request after the worker stopped the job")
          assert.strictEqual((yield* jobStatus(pgServer.url, job)).state, "cancelled")

          // Only rows the journal had sent (before the cancel) reached the server.
          const out = Path.join(dir, "fetched")
          const fetched = yield* run(["fetch", job, "--out", out])
          assert.strictEqual(fetched.code, 0, fetched.stderr)
          const sent = new Set(readJournal(out).filter((l) => l.state === "sending").map((l) => l.row as number))
          const created = (yield* sandbox.control.records(account.apiKey, "customers")).map((c) => String(c.externalId))
          assert.isBelow(created.length, input.valid.length, "the cancel stopped the job before its end")
          for (const key of created) {
            const row = Number(key.slice("DRILL-".length)) + 1
            assert.isTrue(sent.has(row), `${key} (row ${row}) was sent under the lease`)
          }

          // The fetched run directory resumes: the unsent rows are sent, nothing twice.
          const resumed = yield* run(["resume", out, "--base-url", sandbox.url], {
            FSM_API_KEY: account.apiKey,
            FSM_API_TOKEN: account.apiToken
          })
          assert.strictEqual(resumed.code, 1, `${resumed.stdout}\n${resumed.stderr}`)
          const records = yield* sandbox.control.records(account.apiKey, "customers")
          assert.deepStrictEqual(records.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
          const report = readReport(out)
          assert.deepStrictEqual(report.map((r) => Number(r._row)), Array.from({ length: 150 }, (_, i) => i + 2))
          assert.deepStrictEqual(statusCounts(report), { created: 149, invalid: 1 })
        }),
      { timeout: 300_000 }
    )
  }
})
