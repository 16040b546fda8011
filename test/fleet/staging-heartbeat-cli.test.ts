/**
 * A live `submit` keeps its staging alive (issue 29, staging heartbeat), on each backend with the real servers and
 * the built CLI. Two submits of a file in 15 parts (a batch a part) are held between their first and second batch
 * (`FSM_FLEET_DEBUG_HOLD_STAGING`), with a test's reclaim age of 2 s and a worker sweeping every second:
 *
 * - one is killed with -9 while held: its staging is reclaimed by the worker's sweep, as before;
 * - the other, alive, is held for four reclaim ages past its last batch, then let go: it publishes every part and
 *   the job runs to `done`, one record per row; its check of the file, in its scratch folder, wrote report.csv and
 *   summary.json only (no report.xlsx nor report.html made to be thrown away). Before, the reclaim age ran from the last batch: the sweep removed
 *   the live submit's staging too, and the submit then stopped (`the parts of job … were removed meanwhile`, exit 2).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, readdirSync } from "node:fs"
import * as Path from "node:path"
import { customersFile } from "../drills/support.js"
import {
  acmeFleet,
  availableBackends,
  eventually,
  lastJson,
  runCliWithin,
  stagedSubmissions,
  startFleetBackend,
  startHeldSubmit,
  startWorker
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

const reclaimMs = 2_000

describe("a live submit's staging is kept alive by its heartbeat (issue 29)", () => {
  each(
    "held between two batches for four reclaim ages it still publishes every part; one killed is reclaimed ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const { dir, env, sandbox } = yield* acmeFleet(server.url, {
          env: { FSM_FLEET_LEASE_MS: "2000", FSM_FLEET_STAGING_RECLAIM_MS: String(reclaimMs) }
        })
        const input = customersFile(dir, "clientes.csv", 30)
        const args = ["submit", "import", "customers", input.file, "--account", "acme", "--chunk-rows", "2", "--json"]
        // The live one with a TMPDIR of its own: its scratch folder is looked at while it is held.
        const aliveTmp = Path.join(dir, "alive-tmp")
        mkdirSync(aliveTmp)
        const alive = yield* startHeldSubmit(args, { ...env, TMPDIR: aliveTmp }, Path.join(dir, "alive"), 1)
        const killed = yield* startHeldSubmit(args, env, Path.join(dir, "killed"), 1)
        yield* eventually(
          "both submits are held after their first batch",
          () => alive.held() && killed.held(),
          120_000,
          () => `${alive.stderr()}\n${killed.stderr()}`
        )
        const heldAt = Date.now()
        // The submit's check of the file wrote the verdicts it reads and nothing a person would (`verdictsOnly`: no
        // report.xlsx nor report.html made to be thrown away).
        const scratch = readdirSync(aliveTmp).filter((name) => name.startsWith("fsm-submit-"))
        assert.strictEqual(scratch.length, 1, readdirSync(aliveTmp).join(", "))
        assert.deepStrictEqual(readdirSync(Path.join(aliveTmp, scratch[0]!, "validate")).sort(), [
          "report.csv",
          "summary.json"
        ])
        assert.strictEqual((yield* stagedSubmissions(server.url)).length, 2)
        killed.child.kill("SIGKILL")
        yield* Effect.promise(() => killed.ended)

        // A worker sweeps every half lease: the killed submit's staging goes, the live one's stays.
        const worker = yield* startWorker(["--egress-id", "w-beat", "--rate", "1000/1s", "--jobs", "4"], env)
        yield* eventually(
          "the worker reclaims the killed submit's staging",
          () => worker.stderr().includes("removed 1 submission(s) whose submit stopped while storing their parts"),
          120_000,
          () => `${worker.stderr()}\n${alive.stderr()}`
        )
        // The live submit held well past the reclaim age since its last batch, the worker sweeping all along (what is
        // awaited here is time itself: the age a reclaim judges by).
        yield* eventually("four reclaim ages pass", () => Date.now() - heldAt > 4 * reclaimMs, 120_000)
        assert.strictEqual((yield* stagedSubmissions(server.url)).length, 1, worker.stderr())
        assert.isTrue(alive.running(), alive.stderr())

        alive.release()
        const submitted = yield* Effect.promise(() => alive.ended)
        assert.strictEqual(submitted.code, 0, `${submitted.stdout}\n${submitted.stderr}\n${worker.stderr()}`)
        assert.strictEqual(lastJson(submitted.stdout).chunks, 15)
        const job = lastJson(submitted.stdout).job as string
        const waited = yield* Effect.promise(() => runCliWithin(["wait", job, "--json"], env, 120_000))
        assert.strictEqual(waited.code, 0, `${waited.stdout}\n${waited.stderr}\n${worker.stderr()}`)
        const records = yield* sandbox.control.records("acme-key", "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
        assert.deepStrictEqual(yield* stagedSubmissions(server.url), [], "nothing left staged")
        assert.notInclude(worker.stderr(), "removed 2 submission(s)")
      }),
    { timeout: 300_000 }
  )
})
