/**
 * The refusal cap (`refusalLimit` in src/fleet/JobRunner.ts, docs/fleet.md "Faults"): a job that workers cannot serve
 * ends `failed` once 3 workers refused it, even while more live workers have not been asked, and not before the
 * third. Four live workers of an older version, a job of a newer format: it ends failed, exit 2, `refused by 3`, with
 * three refusals kept and the fourth worker never having refused it (had it ended at the second refusal, the error
 * would say `refused by 2`; without the cap it would wait for the fourth). Real worker processes, both backends.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { refusalLimit } from "../../src/fleet/JobRunner.js"
import { openStore } from "../../src/fleet/Stores.js"
import {
  acmeFleet,
  availableBackends,
  eventually,
  lastJson,
  queueNewerJob,
  startFleetBackend,
  startWorker
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

describe("the refusal cap", () => {
  each(
    "a job refused by 3 of 4 live workers ends failed at the third refusal ($backend)",
    (b) =>
      Effect.gen(function*() {
        assert.strictEqual(refusalLimit, 3, "the documented cap")
        const server = yield* startFleetBackend(b.backend)
        const { env, run } = yield* acmeFleet(server.url)
        const ids = ["w-a", "w-b", "w-c", "w-d"]
        const workers = yield* Effect.forEach(ids, (id) => startWorker(["--egress-id", id], env))
        for (const w of workers) yield* eventually("the worker is ready", () => w.stderr().includes("ready"))
        const logs = () => workers.map((w) => w.stderr()).join("\n")
        // A job as a newer version would submit it: a format these workers do not know.
        yield* queueNewerJob(server.url, "from-the-future")
        // While fewer than three refused it, it is not failed. Read every 100 ms through one store opened for the
        // test (an open per read cost a connection, on PostgreSQL a server process, twice a poll).
        const store = yield* openStore(server.url)
        const refusals = () => Effect.runPromise(store.files("from-the-future", "refusals/"))
        yield* eventually(
          "the job ends",
          async () => {
            const [row, kept] = await Promise.all([Effect.runPromise(store.job("from-the-future")), refusals()])
            if (kept.length < refusalLimit) assert.notStrictEqual(row.state, "failed", `failed at ${kept.length}`)
            return row.state === "failed"
          },
          120_000,
          logs
        )

        const ended = yield* run(["wait", "from-the-future"])
        assert.strictEqual(ended.code, 2, `${ended.stderr}\n${logs()}`)
        const [status] = lastJson((yield* run(["status", "from-the-future", "--json"])).stdout).jobs as Array<
          { state: string; error: string | null }
        >
        assert.strictEqual(status?.state, "failed")
        assert.include(status?.error ?? "", "no worker can run it (refused by 3)")
        const kept = (yield* Effect.promise(refusals)).map((f) => f.name.slice("refusals/".length))
        assert.strictEqual(kept.length, 3, `three refusals kept: ${kept.join(", ")}`)
        const unasked = ids.filter((id) => !kept.includes(id))
        assert.strictEqual(unasked.length, 1)
        assert.notInclude(status?.error ?? "", `worker ${unasked[0]}:`, "the fourth worker was not waited for")
        // Every worker is still live: the job did not end because every live worker refused it.
        assert.deepStrictEqual(workers.map((w) => w.child.exitCode), [null, null, null, null], logs())
      }),
    { timeout: 180_000 }
  )
})
