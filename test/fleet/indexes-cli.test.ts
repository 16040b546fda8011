/**
 * A fleet made by an older version and never given `fleet init` again lacks the indexes added since (the rows-done
 * count's, the takeover claim's): everything works, only slower, and nothing said so. `worker` and `status` say it
 * once, naming each missing index and `fsm-bulk fleet init`, and go on (exit 0, the worker ready); after `fleet init`
 * they say nothing. On Redis there is nothing to say. Real CLI processes on PostgreSQL and Redis.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { acmeFleet, availableBackends, eventually, query, startFleetBackend, startWorker } from "./support.js"

const each = it.scopedLive.each(availableBackends)

const warning = /warning: the fleet's database lacks/g

describe("indexes a fleet lacks", () => {
  each(
    "worker and status name each missing index and fleet init, once, and go on ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const { env, run } = yield* acmeFleet(server.url)
        if (b.backend === "postgres") {
          // The tables as a version before these indexes made them.
          yield* Effect.promise(() =>
            query(server.url, "DROP INDEX fsm_bulk.journal_job_root; DROP INDEX bullmq.job_returned")
          )
        }
        const status = yield* run(["status"])
        assert.strictEqual(status.code, 0, status.stderr)
        const worker = yield* startWorker(["--egress-id", "wa"], env)
        yield* eventually("the worker is ready", () => worker.stderr().includes("ready"), 60_000, worker.stderr)

        if (b.backend === "redis") {
          assert.notMatch(status.stderr, warning)
          assert.notMatch(worker.stderr(), warning)
          return
        }
        for (const said of [status.stderr, worker.stderr()]) {
          assert.strictEqual(said.match(warning)?.length, 1, said)
          assert.include(said, "2 indexes")
          assert.include(said, "fsm_bulk.journal_job_root")
          assert.include(said, "bullmq.job_returned")
          assert.notInclude(said, "fsm_bulk.jobs_parent", "an index that is there is not named")
          assert.include(said, "run `fsm-bulk fleet init`")
        }

        const init = yield* run(["fleet", "init"])
        assert.strictEqual(init.code, 0, init.stderr)
        const after = yield* run(["status"])
        assert.strictEqual(after.code, 0, after.stderr)
        assert.notMatch(after.stderr, warning)
      }),
    { timeout: 180_000 }
  )
})
