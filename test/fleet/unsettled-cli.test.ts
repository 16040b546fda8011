/**
 * A job in parts ends when its last part does: the worker that ends a part then settles its parent, in two store
 * steps (`finishJob`/`failJob`, then `settleParent`). A worker killed between the two, or whose `settleParent` failed
 * past its retries (a store fault longer than a lease), left every part ended and the job not: nobody takes an ended
 * part again, so the job never ended and `wait` never returned (a way the fleet's generated histories' "(lost) job …
 * never ended" can come about: seed 896 on Redis, 2026-11-29). A worker's sweep now ends such a job. Here the store is
 * left exactly so (the parts ended under their lease, the job not settled, as a worker killed at that instant leaves
 * it), on each backend with the real servers; then one worker is started (spawned: its sweep is the point) and the
 * job must end, its exit code the parts', and the worker say so.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { finalStates } from "../../src/fleet/Store.js"
import { ended } from "./in-process.js"
import { takenLease } from "./store-fixtures.js"
import { availableBackends, fleetEnv, initFleet, startFleetBackend, startWorker, withStore } from "./support.js"

const spec = { resource: "customers", read: { encoding: "utf-8" } }

describe("a job whose parts all ended", () => {
  it.scopedLive.each(availableBackends)(
    "ends, by a worker's sweep, when the last part's worker did not end it ($backend)",
    ({ backend }) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(backend)
        yield* initFleet(url)
        const parts = ["j-part0001", "j-part0002", "j-part0003"]
        yield* withStore(url, (store) =>
          Effect.gen(function*() {
            yield* store.addJob({
              id: "j",
              kind: "import",
              account: "acme",
              resource: "customers",
              spec,
              rows: 3,
              parent: null
            })
            for (const id of parts) {
              yield* store.addJob({
                id,
                kind: "chunk",
                account: "acme",
                resource: "customers",
                spec,
                rows: 1,
                parent: "j"
              })
            }
            // What the worker of each part recorded before it was killed: the part's end, under its lease; the job's
            // settlement never came. One part exited 1 (rows refused): the job's exit code is the largest.
            for (const [i, id] of parts.entries()) {
              const epoch = yield* takenLease(store, id, "w-killed")
              yield* store.finishJob(id, epoch, { exitCode: i === 1 ? 1 : 0, summary: {}, rows: 1 })
            }
            const job = yield* store.job("j")
            assert.notInclude(finalStates, job.state, "the job has not ended: nothing settled it")
          }))

        const worker = yield* startWorker(["--egress-id", "sweeper", "--source-address", "127.0.0.41"], fleetEnv(url))
        const row = yield* ended(url, "j", 60_000, () => worker.stderr())
        assert.deepStrictEqual([row.state, row.exit_code], ["done", 1])
        assert.include(worker.stderr(), "job j: its parts had all ended but it had not: it ends now")
        // Settled once: nothing left for the next sweep.
        assert.deepStrictEqual(yield* withStore(url, (store) => store.unsettledParents), [])
      }),
    120_000
  )
})
