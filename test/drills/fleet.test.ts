/**
 * The fleet drill, on one machine: a throwaway PostgreSQL, a sandbox whose budget is counted per client address,
 * three workers whose requests leave from 127.0.0.11, .12 and .13, three accounts, one file large enough to be
 * split into parts. Midway one worker is killed (SIGKILL) and another paused (SIGSTOP) past its lease; the
 * others take their jobs over from the journal. The paused worker is woken (SIGCONT) once every job has ended.
 *
 * Then: exactly one record per valid row per account; each job's fetched report has the same rows and statuses
 * as a single import of the same file (in process: the pipeline `fsm-bulk import` runs); no address ever exceeded
 * the budget in any window and no request was answered "rate limit exceeded"; the woken worker sent nothing until
 * it exited (the lease fence at the socket refuses even a request that was past its lease check when the process
 * was stopped) and no record exists twice.
 *
 * The same drill runs on the Redis backend (a throwaway redis-server) where redis-server is installed
 * (scripts/ensure-redis.sh, run by `pretest`, installs it).
 *
 * The workers are the built CLI, spawned (killed, paused, woken: what the drill is about); `submit import`, `wait` and
 * `fetch` are made in this process as the commands make them (test/fleet/in-process.ts: their store, settings and
 * src/ functions), without a CLI start (about a second of CPU) each; test/fleet/cli.test.ts spawns them for their
 * contract.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import type { FleetStore } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import type { RequestLogEntry } from "../../src/sandbox/Sandbox.js"
import { noFaults, startSandbox } from "../../src/sandbox/Sandbox.js"
import { fetchAs, submitImportAs, waitAs } from "../fleet/in-process.js"
import {
  availableBackends,
  bin,
  eventually,
  fleetEnv,
  initFleet,
  startFleetBackend,
  withStore
} from "../fleet/support.js"
import { importInto } from "../import/support.js"
import { customersFile, readReport, statusCounts, tempDir } from "./support.js"

/** The budget of every address, on both sides. */
const rate = { limit: 40, windowMs: 2_000 }
const leaseMs = 3_000

/**
 * The parts of `jobs` running now: their ids, owners (egress ids), lease epochs and journal lines so far. Read through
 * one store the test opened (it is polled every 200 ms: a store opened a read was a connection, on PostgreSQL a
 * server process, each time).
 */
const runningParts = (store: FleetStore, jobs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const parts = (yield* Effect.forEach(jobs, (job) => store.parts(job))).flat().filter((p) => p.state === "running")
    return yield* Effect.forEach(parts, (p) =>
      Effect.gen(function*() {
        const lease = yield* store.lease(p.id)
        return {
          id: p.id,
          owner: p.owner!,
          epoch: lease?.epoch ?? 0,
          lines: (yield* store.journalLines(p.id)).length
        }
      }))
  }).pipe(Effect.orDie)

/** A worker's line saying it lost part `id`'s lease or handed the part back. */
const gaveUp = (id: string) => new RegExp(`job ${id}[: ].*\\b(lost|handed back)\\b`)

/** Each backend's drill (`$backend` in the name). */
const each = it.scopedLive.each(availableBackends)

const address = (e: RequestLogEntry) => (e.client ?? "").replace(/^::ffff:/, "")

/** The most requests any window of `windowMs` saw from one address. */
const busiestWindow = (log: ReadonlyArray<RequestLogEntry>, client: string, windowMs: number) => {
  const at = log.filter((e) => address(e) === client).map((e) => e.at).sort((a, b) => a - b)
  let most = 0
  let start = 0
  for (let end = 0; end < at.length; end++) {
    while (at[end]! - at[start]! >= windowMs) start++
    most = Math.max(most, end - start + 1)
  }
  return most
}

describe("fleet drill", () => {
  each(
    "three workers, three accounts, a split file; kill -9 one, pause another past its lease ($backend)",
    (b) =>
      Effect.gen(function*() {
        const pgServer = yield* startFleetBackend(b.backend)
        const accounts = [1, 2, 3].map((i) => ({ apiKey: `key-${i}`, apiToken: `token-${i}` }))
        const sandbox = yield* startSandbox({
          port: 0,
          rate,
          accounts,
          faults: { ...noFaults, latencyMs: 30 }
        })
        const dir = yield* tempDir
        const env = fleetEnv(pgServer.url, { FSM_FLEET_LEASE_MS: String(leaseMs) })
        yield* initFleet(pgServer.url, accounts.map((a, i) => ({ name: `acct${i + 1}`, baseUrl: sandbox.url, ...a })))
        const files = [
          customersFile(dir, "big.csv", 240, [5, 130]),
          customersFile(dir, "a2.csv", 90, [40]),
          customersFile(dir, "a3.csv", 90, [])
        ]
        const jobs: Array<string> = []
        for (const [i, f] of files.entries()) {
          const submitted = yield* submitImportAs(env, f.file, `acct${i + 1}`, { mode: "create", chunkRows: 80 })
          assert.strictEqual(submitted.code, 0, JSON.stringify(submitted))
          assert.strictEqual(submitted.value?.chunks, i === 0 ? 3 : 2)
          jobs.push(submitted.value!.job)
        }

        const started = Date.now()
        const workers = new Map<
          string,
          { child: ReturnType<typeof spawn>; stderr: () => string; exit: Promise<number | null> }
        >()
        for (const n of [11, 12, 13]) {
          const id = `w${n}`
          const child = spawn(process.execPath, [
            bin,
            "worker",
            "--egress-id",
            id,
            "--source-address",
            `127.0.0.${n}`,
            "--rate",
            `${rate.limit}/${rate.windowMs / 1000}s`,
            "--jobs",
            "2"
          ], { env, stdio: ["ignore", "ignore", "pipe"] })
          let stderr = ""
          child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
          const exit = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
          workers.set(id, { child, stderr: () => stderr, exit })
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              child.kill("SIGCONT")
              if (child.exitCode === null) child.kill("SIGKILL")
            })
          )
        }

        // Midway: two workers each running a job.
        let owners: Array<string> = []
        const reader = yield* openStore(pgServer.url).pipe(Effect.orDie)
        const deadline = Date.now() + 90_000
        while (owners.length < 2) {
          assert.isBelow(Date.now(), deadline, "two workers running jobs with rows done within 90 s")
          yield* Effect.sleep(200)
          owners = [
            ...new Set((yield* runningParts(reader, jobs)).filter((p) => p.lines > 20).map((p) => p.owner))
          ].sort()
        }
        const [killed, paused] = [owners[0]!, owners[1]!]
        workers.get(paused)!.child.kill("SIGSTOP")
        workers.get(killed)!.child.kill("SIGKILL")
        // The paused worker's parts, read once it is stopped: read before, a part it finished in between counted as
        // one it held, and a finished part is never taken over.
        const held = (yield* runningParts(reader, jobs)).filter((p) => p.owner === paused)

        // Every job ends: the survivor takes over the killed worker's jobs, and the paused one's once its lease lapses.
        for (const job of jobs) {
          const waited = yield* waitAs(env, job, 240_000)
          assert.include([0, 1], waited.code, `${job}: ${JSON.stringify(waited)}`)
        }
        const ended = Date.now()
        const takenOver = yield* withStore(pgServer.url, (store) => Effect.forEach(held, (h) => store.lease(h.id)))
        for (const [i, h] of held.entries()) {
          assert.isAbove(takenOver[i]!.epoch, h.epoch, `${h.id} was taken over`)
        }

        // The paused worker wakes after its lease was lost: it sends nothing, not even a request that had passed its
        // lease check when the process was stopped (the fence at the socket refuses it), and no record exists twice
        // (counted below, after the wake). Awaited, not slept on: the woken worker says each held part's lease lost
        // (or hands it back), then it is stopped and its exit awaited, so all it sent after waking is in the log.
        const sleeper = workers.get(paused)!
        const saidBefore = sleeper.stderr().length
        const woke = Date.now()
        sleeper.child.kill("SIGCONT")
        yield* eventually(
          "the woken worker gives up every part it held",
          () => held.every((h) => gaveUp(h.id).test(sleeper.stderr().slice(saidBefore))),
          60_000,
          sleeper.stderr
        )
        sleeper.child.kill("SIGTERM")
        yield* Effect.promise(() => sleeper.exit)
        const log = yield* sandbox.control.requests
        const pausedAddress = `127.0.0.${paused.slice(1)}`
        const afterWaking = log.filter((e) => address(e) === pausedAddress && e.at >= woke)
        assert.deepStrictEqual(
          afterWaking.map((e) => `${e.method} ${e.path}`),
          [],
          "the woken worker sent nothing"
        )

        // The budget per address, and no rate-limit answer.
        for (const n of [11, 12, 13]) {
          assert.isAtMost(busiestWindow(log, `127.0.0.${n}`, rate.windowMs), rate.limit, `127.0.0.${n}`)
        }
        assert.strictEqual(log.filter((e) => e.status === 403 || e.status === 429).length, 0, "no rate-limit answer")
        const addresses = ["127.0.0.11", "127.0.0.12", "127.0.0.13"]
        assert.deepStrictEqual(log.filter((e) => !addresses.includes(address(e))), [], "every request from a worker")

        // One record per valid row per account; reports as a single import's.
        const single = yield* startSandbox({ port: 0, rate: { limit: 10_000, windowMs: 1_000 }, accounts })
        for (const [i, f] of files.entries()) {
          const stored = yield* sandbox.control.records(accounts[i]!.apiKey, "customers")
          const keys = stored.map((c) => String(c.externalId))
          assert.deepStrictEqual([...keys].sort(), [...f.valid].sort(), `account ${i + 1}: one record per valid row`)

          const out = Path.join(dir, `fetched-${i + 1}`)
          const fetched = yield* fetchAs(env, jobs[i]!, out)
          assert.strictEqual(fetched.code, 0, JSON.stringify(fetched))
          // The single import in process: the same pipeline as `fsm-bulk import`, without a CLI start per file.
          const alone = Path.join(dir, `alone-${i + 1}`)
          const imported = yield* importInto(
            single,
            { resource: "customers", file: f.file, mode: "create", runDir: alone },
            accounts[i]!.apiKey
          )
          assert.strictEqual(imported.exitCode, f.invalid.length > 0 ? 1 : 0)
          const rowsOf = (runDir: string) => readReport(runDir).map((r) => [r._row, r._status, r.externalId])
          assert.deepStrictEqual(rowsOf(out), rowsOf(alone), `account ${i + 1}: the same rows and statuses`)
          assert.deepStrictEqual(statusCounts(readReport(out)), {
            created: f.valid.length,
            ...(f.invalid.length > 0 ? { invalid: f.invalid.length } : {})
          })
        }

        for (const [id, w] of workers) {
          if (id !== killed) w.child.kill("SIGTERM")
        }
        // The drill's figures (docs/fleet.md quotes them).
        const perAddress = Object.fromEntries(
          [11, 12, 13].map((n) => [`127.0.0.${n}`, log.filter((e) => address(e) === `127.0.0.${n}`).length])
        )
        console.log(
          `fleet drill (${b.backend}): ${files.reduce((n, f) => n + f.rows, 0)} rows, ${jobs.length} jobs (7 parts), ` +
            `${(ended - started) / 1000} s from the workers' start to the last job's end, ${log.length} requests ` +
            `${JSON.stringify(perAddress)}, budget ${rate.limit}/${rate.windowMs} ms per address; killed ${killed}, ` +
            `paused ${paused} (${held.length} jobs taken over)`
        )
      }),
    300_000
  )
})
