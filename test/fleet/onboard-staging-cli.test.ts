/**
 * `submit onboard` stores its input staged as an import's `submit` does (issue 29, round 2), on each backend with the
 * real servers and the built CLI, a customer's workbook (sheets `Segmentos`, `Clientes`, Portuguese headers, read
 * through `--map` profiles):
 *
 * - two submits held after their first piece (`FSM_FLEET_DEBUG_HOLD_STAGING`, pieces of 4 KiB), a reclaim age of 2 s
 *   and a worker sweeping every second: nothing of either is visible (`status`), `cancel` of one is refused; the one
 *   killed (-9) is reclaimed by the sweep, the live one, held four reclaim ages, publishes and runs to `done`, one
 *   record per row. Before, `submit onboard` stored everything in one transaction / script: it was never held;
 * - a workbook larger than one piece (> 4 MiB: 40 customers and a 4.5 MiB picture, as a workbook with a photo or a
 *   logo has) is stored in 4 MiB pieces, staged until published, and what the worker reads back (`source/…`) is the
 *   workbook byte for byte. Before, it was one value in one transaction / script. Its size is a picture's, not rows':
 *   48,000 rows of noise took 6 s of CPU to write and 6 s to validate a backend, and how many rows is not the point.
 *
 * The held submits and the worker are spawned (a kill -9 and a hold are the point); `status`, `cancel` and `wait` run
 * in the test's process through the commands' own functions (./in-process.ts `*As`): a spawned command costs about a
 * second of CPU before it does anything. test/fleet/staging-cli.test.ts spawns the `cancel` a staged submission
 * refuses.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { readFileSync, statSync } from "node:fs"
import * as Path from "node:path"
import { cancelAs, statusListAs, waitAs } from "./in-process.js"
import {
  acmeFleet,
  availableBackends,
  eventually,
  lastJson,
  query,
  stagedSubmissions,
  startFleetBackend,
  startHeldSubmit,
  startWorker,
  withStore
} from "./support.js"
import { customerWorkbook } from "./workbook.js"

const each = it.scopedLive.each(availableBackends)

const reclaimMs = 2_000

/** The bytes of staged files' pieces in the store (PostgreSQL: `file_pieces`; Redis: the `JOB:staged:NAME` strings). */
const stagedBytes = (url: string) =>
  Effect.promise(async (): Promise<ReadonlyArray<number>> => {
    if (url.startsWith("redis")) {
      const client = new Redis(url)
      try {
        const keys = (await client.keys("fsm-bulk:job:*:staged:*")).sort()
        return Promise.all(keys.map((k) => client.strlen(k)))
      } finally {
        await client.quit()
      }
    }
    const rows = await query(url, "SELECT length(content)::int AS n FROM fsm_bulk.file_pieces ORDER BY job, name, at")
    return (rows as Array<{ n: number }>).map((r) => r.n)
  })

describe("submit onboard stores its input staged, as an import's submit does (issue 29)", () => {
  each(
    "held while staging it is seen by nobody; killed, it is reclaimed; alive past the reclaim age, it runs ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const { dir, env, sandbox } = yield* acmeFleet(server.url, {
          env: { FSM_FLEET_LEASE_MS: "2000", FSM_FLEET_STAGING_RECLAIM_MS: String(reclaimMs) }
        })
        const customers = 40
        const input = yield* customerWorkbook(dir, customers)
        const args = ["submit", "onboard", input.file, ...input.maps, "--account", "acme", "--json"]
        const alive = yield* startHeldSubmit(args, env, Path.join(dir, "alive"), 4096)
        const killed = yield* startHeldSubmit(args, env, Path.join(dir, "killed"), 4096)
        yield* eventually(
          "both submits are held after their first piece",
          () => alive.held() && killed.held(),
          120_000,
          () => `alive: ${alive.stderr()}\nkilled: ${killed.stderr()}`
        )
        const heldAt = Date.now()
        const staged = yield* stagedSubmissions(server.url)
        assert.strictEqual(staged.length, 2)
        assert.isAbove(statSync(input.file).size, 4096, "the workbook is more than one piece")
        assert.deepStrictEqual(yield* stagedBytes(server.url), [4096, 4096], "one piece of each stored, staged")
        const status = yield* statusListAs(env)
        assert.strictEqual(status.code, 0, JSON.stringify(status))
        const listed = JSON.stringify({ jobs: status.value })
        for (const id of staged) assert.notInclude(listed, id, "a staged submission is seen by nobody")
        const cancelled = yield* cancelAs(env, staged[0]!)
        assert.strictEqual(cancelled.code, 2, JSON.stringify(cancelled))
        assert.include(
          "error" in cancelled ? cancelled.error : "",
          `${staged[0]} is not a job: a submission still being stored by \`submit\``
        )

        killed.child.kill("SIGKILL")
        yield* Effect.promise(() => killed.ended)
        const worker = yield* startWorker(["--egress-id", "w-onb", "--rate", "1000/1s"], env)
        yield* eventually(
          "the worker reclaims the killed submit's staging",
          () => worker.stderr().includes("removed 1 submission(s) whose submit stopped while storing their parts"),
          120_000,
          () => `${worker.stderr()}\n${alive.stderr()}`
        )
        // What is awaited here is time itself: the age a reclaim judges by, the worker sweeping all along.
        yield* eventually("four reclaim ages pass", () => Date.now() - heldAt > 4 * reclaimMs, 120_000)
        assert.strictEqual((yield* stagedSubmissions(server.url)).length, 1, worker.stderr())
        assert.deepStrictEqual(yield* stagedBytes(server.url), [4096], "the killed submit's piece removed with it")
        assert.isTrue(alive.running(), alive.stderr())

        alive.release()
        const submitted = yield* Effect.promise(() => alive.ended)
        assert.strictEqual(submitted.code, 0, `${submitted.stdout}\n${submitted.stderr}\n${worker.stderr()}`)
        const job = lastJson(submitted.stdout).job as string
        const waited = yield* waitAs(env, job, 180_000)
        assert.strictEqual(waited.code, 0, `${JSON.stringify(waited)}\n${worker.stderr()}`)
        const records = yield* sandbox.control.records("acme-key", "customers")
        assert.deepStrictEqual(
          records.map((r) => r.externalId).sort(),
          Array.from({ length: customers }, (_, i) => `C-${i + 1}`).sort(),
          "one record per row"
        )
        assert.strictEqual((yield* sandbox.control.records("acme-key", "segments")).length, 2)
        assert.deepStrictEqual(yield* stagedSubmissions(server.url), [], "nothing left staged")
        assert.deepStrictEqual(yield* stagedBytes(server.url), [])
      }),
    { timeout: 420_000 }
  )

  each(
    "a workbook of more than one 4 MiB piece is stored in pieces and read back byte for byte ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const { dir, env } = yield* acmeFleet(server.url)
        const piece = 4 * 1024 * 1024
        const input = yield* customerWorkbook(dir, 40, 0, piece + piece / 8)
        const bytes = readFileSync(input.file)
        assert.isAbove(bytes.length, piece, "the workbook is more than one piece")
        const submit = yield* startHeldSubmit(
          ["submit", "onboard", input.file, ...input.maps, "--account", "acme", "--json"],
          env,
          Path.join(dir, "held")
        )
        yield* eventually(
          "the submit is held after its first piece",
          () => submit.held(),
          240_000,
          () => submit.stderr()
        )
        assert.deepStrictEqual(yield* stagedBytes(server.url), [piece], "its first 4 MiB piece stored, staged")
        assert.strictEqual((yield* stagedSubmissions(server.url)).length, 1)
        submit.release()
        const submitted = yield* Effect.promise(() => submit.ended)
        assert.strictEqual(submitted.code, 0, `${submitted.stdout}\n${submitted.stderr}`)
        const job = lastJson(submitted.stdout).job as string
        assert.strictEqual(lastJson(submitted.stdout).rows, 2 + 40, "the picture is no row, and hides none")
        assert.deepStrictEqual(yield* stagedBytes(server.url), [], "its pieces joined when published")
        const stored = yield* withStore(server.url, (store) => store.files(job, "source/")).pipe(Effect.orDie)
        assert.deepStrictEqual(stored.map((f) => f.name), ["source/cadastro.xlsx"])
        assert.isTrue(stored[0]!.content.equals(bytes), "what the worker reads is the workbook byte for byte")
      }),
    { timeout: 420_000 }
  )
})
