/**
 * The lease fence at the socket (issue 16: "the paused worker sends nothing after it wakes"). A worker is stopped
 * (SIGSTOP, by the test hook FSM_FLEET_DEBUG_STOP_AFTER_GATE) in the instant after a request passed its lease
 * gate and before its bytes are written; another worker takes the job over once the lease lapses and finishes
 * it; the stopped worker is continued. Without the fence it sends that request when it wakes; with it, the write
 * is refused at the socket (the lease was confirmed too long ago on the monotonic clock), the request counts as
 * never sent, and its retry finds the lease lost: nothing reaches the server.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { RequestLogEntry } from "../../src/sandbox/Sandbox.js"
import { customersFile, readReport, startDrillSandbox, statusCounts, tempDir } from "../drills/support.js"
import {
  eventually,
  fleetEnv,
  initFleet,
  isStopped,
  lastJson,
  query,
  runCli,
  startPostgres,
  startWorker
} from "./support.js"

const address = (e: RequestLogEntry) => (e.client ?? "").replace(/^::ffff:/, "")

describe("the lease fence", () => {
  it.scopedLive(
    "a worker stopped between its lease gate and the socket write sends nothing when it wakes",
    () =>
      Effect.gen(function*() {
        const pgServer = yield* startPostgres
        const account = { apiKey: "fence-key", apiToken: "fence-token" }
        const sandbox = yield* startDrillSandbox({ rate: { limit: 10_000, windowMs: 1_000 }, accounts: [account] })
        const dir = yield* tempDir
        const env = fleetEnv(pgServer.url, { FSM_FLEET_LEASE_MS: "2000" })
        const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
          Effect.promise(() => runCli(args, { ...env, ...extra }))
        yield* initFleet(pgServer.url, [{ name: "acme", baseUrl: sandbox.url, ...account }])
        const input = customersFile(dir, "clientes.csv", 80, [])
        const submitted = yield* run([
          "submit",
          "import",
          "customers",
          input.file,
          "--account",
          "acme",
          "--mode",
          "create",
          "--json"
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string

        // The 12th request to pass the gate stops the worker before it is written.
        const paused = yield* startWorker(
          ["--egress-id", "w21", "--source-address", "127.0.0.21", "--rate", "20/1s"],
          { ...env, FSM_FLEET_DEBUG_STOP_AFTER_GATE: "12" }
        )
        yield* eventually(
          "the worker stops itself after its 12th gate",
          () => isStopped(paused.child.pid!),
          60_000,
          () => paused.stderr()
        )
        const [held] = yield* Effect.promise(() =>
          query(pgServer.url, "SELECT epoch FROM fsm_bulk.leases WHERE job = $1", [job])
        )

        // Another worker takes the job over once the lease lapses, and finishes it.
        const other = yield* startWorker(["--egress-id", "w22", "--source-address", "127.0.0.22"], env)
        const waited = yield* run(["wait", job])
        assert.strictEqual(waited.code, 0, `${waited.stdout}\n${waited.stderr}\n${other.stderr()}`)
        const [now] = yield* Effect.promise(() =>
          query(pgServer.url, "SELECT epoch FROM fsm_bulk.leases WHERE job = $1", [job])
        )
        assert.isAbove(now.epoch, held.epoch, "the job was taken over")

        // The stopped worker wakes: its request past the gate is refused at the socket, its retry finds the lease lost.
        const woke = Date.now()
        paused.child.kill("SIGCONT")
        yield* eventually(
          "the woken worker sees its lease lost",
          () => /lease \d+ lost/.test(paused.stderr()),
          30_000,
          () => paused.stderr()
        )
        yield* Effect.sleep(1_000)
        const log = yield* sandbox.control.requests
        const afterWaking = log.filter((e) => address(e) === "127.0.0.21" && e.at >= woke)
        assert.deepStrictEqual(
          afterWaking.map((e) => `${e.method} ${e.path}`),
          [],
          "the woken worker sent nothing"
        )
        assert.isAbove(log.filter((e) => address(e) === "127.0.0.21").length, 0, "it had sent before it was stopped")

        // One record per row; the report as a single import's.
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
        const out = `${dir}/fetched`
        assert.strictEqual((yield* run(["fetch", job, "--out", out])).code, 0)
        assert.deepStrictEqual(statusCounts(readReport(out)), { created: 80 })
      }),
    { timeout: 300_000 }
  )
})
