/**
 * A job's end (`finishJob`, `failJob`) is recorded only under the writer's lease, and the store says whether it was:
 * true when the end is written, false when the epoch no longer holds (another worker took the job, or it was
 * cancelled) and nothing is. Before, both answered nothing, and a worker that had lost its job said it done (issue
 * 29). Against a throwaway PostgreSQL and a throwaway redis-server.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import type { FleetStore } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import { leasedOnPostgres, openTransaction, storeJob as job, takenLease, waitsForLock } from "./store-fixtures.js"
import { availableBackends, query, startFleetBackend } from "./support.js"

const each = it.scopedLive.each(availableBackends)

const done = { exitCode: 0, summary: { rows: 2, created: 2 }, rows: 2 }
const failed = { exitCode: 3, error: "interrupted" }

/** The job's state, exit code and error as the store keeps them. */
const outcome = (store: FleetStore, id: string) =>
  Effect.map(store.job(id), (row) => [row.state, row.exit_code, row.error ?? null] as const)

describe("fleet store: a job's end is said recorded only when it was", () => {
  each(
    "true under the lease; false, nothing written, once another worker took it ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(b.backend)
        const store = yield* openStore(url)
        yield* store.init
        yield* store.addJob(job("held"))
        const epoch = yield* takenLease(store, "held", "w1/1")
        assert.isTrue(yield* store.finishJob("held", epoch, done))
        assert.deepStrictEqual(yield* outcome(store, "held"), ["done", 0, null])
        // Asked again (its answer lost on the way), it records the same end again.
        assert.isTrue(yield* store.finishJob("held", epoch, done), "the same end, asked again")

        yield* store.addJob(job("taken"))
        const first = yield* takenLease(store, "taken", "w1/1")
        const second = yield* takenLease(store, "taken", "w2/1")
        assert.isFalse(yield* store.finishJob("taken", first, done), "the old owner's end is refused")
        assert.isFalse(yield* store.failJob("taken", first, failed), "the old owner's failure is refused")
        assert.deepStrictEqual(yield* outcome(store, "taken"), ["queued", null, null], "nothing written")
        assert.isTrue(yield* store.failJob("taken", second, failed))
        assert.deepStrictEqual(yield* outcome(store, "taken"), ["failed", 3, "interrupted"])

        yield* store.addJob(job("never-leased"))
        assert.isFalse(yield* store.finishJob("never-leased", 1, done), "no lease, no end")
        assert.isFalse(yield* store.finishJob("no-such-job", 1, done))
      }),
    { timeout: 60_000 }
  )

  each("false once the job was cancelled under its holder ($backend)", (b) =>
    Effect.gen(function*() {
      const { url } = yield* startFleetBackend(b.backend)
      const store = yield* openStore(url)
      yield* store.init
      yield* store.addJob(job("c"))
      const epoch = yield* takenLease(store, "c", "w1/1")
      yield* store.cancelJob("c")
      assert.isFalse(yield* store.finishJob("c", epoch, done))
      assert.isFalse(yield* store.failJob("c", epoch, failed))
      assert.deepStrictEqual(yield* outcome(store, "c"), ["cancelled", null, null])
    }), { timeout: 60_000 })

  each(
    "a part refused its end leaves its parent for nobody to settle; a part recorded lists it ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(b.backend)
        const store = yield* openStore(url)
        yield* store.init
        yield* store.addJob(job("p"))
        yield* store.addJob(job("p-part0001", "p"))
        const first = yield* takenLease(store, "p-part0001", "w1/1")
        const second = yield* takenLease(store, "p-part0001", "w2/1")
        assert.isFalse(yield* store.finishJob("p-part0001", first, done))
        assert.isFalse(yield* store.settleParent("p"), "its only part has not ended: the parent does not end")
        assert.isTrue(yield* store.finishJob("p-part0001", second, done))
        assert.include(yield* store.unsettledParents, "p")
        assert.isTrue(yield* store.settleParent("p"))
        assert.deepStrictEqual(yield* outcome(store, "p"), ["done", 0, null])
      }),
    { timeout: 60_000 }
  )
})

/** A fleet store on the run's PostgreSQL with job `id` added and its lease taken by a worker. */
describe.skipIf(!availableBackends.some((b) => b.backend === "postgres"))(
  "fleet store on postgres: a job's end",
  () => {
    it.scopedLive(
      "never overwrites a cancel made between marking the job and raising its epoch",
      () =>
        Effect.gen(function*() {
          const { epoch, store, url } = yield* leasedOnPostgres("between")
          // `cancel`'s first statement (its second raises the epoch): the holder's end comes in between.
          yield* Effect.promise(() =>
            query(url, "UPDATE fsm_bulk.jobs SET state = 'cancelled', finished = now() WHERE id = $1", ["between"])
          )
          const finished = yield* store.finishJob("between", epoch, done)
          assert.deepStrictEqual(yield* outcome(store, "between"), ["cancelled", null, null], "the cancel stands")
          assert.isFalse(finished)
          assert.isFalse(yield* store.failJob("between", epoch, failed))
          assert.deepStrictEqual(yield* outcome(store, "between"), ["cancelled", null, null], "the cancel stands")
        }),
      { timeout: 60_000 }
    )

    it.scopedLive(
      "a cancel is one step: while it waits for the lease, the job neither shows cancelled nor its lease raised",
      () =>
        Effect.gen(function*() {
          const { epoch, store, url } = yield* leasedOnPostgres("held")
          // The holder writing a journal line or its end: the lease row locked for share, in a transaction left open.
          const holder = yield* openTransaction(url)
          yield* Effect.promise(() =>
            holder.query("SELECT epoch FROM fsm_bulk.leases WHERE job = $1 FOR SHARE", ["held"])
          )
          const cancel = yield* Effect.fork(store.cancelJob("held"))
          yield* waitsForLock(url, "the cancel")
          // Before: the job was already cancelled here (its own statement, committed), its holder's lease still held.
          const [during] = yield* Effect.promise(() =>
            query(url, "SELECT state FROM fsm_bulk.jobs WHERE id = $1", ["held"])
          )
          assert.notStrictEqual(during.state, "cancelled", "not cancelled while the cancel waits for the lease")
          assert.isTrue(yield* store.holdsLease("held", epoch), "the holder's lease holds until the cancel is done")
          yield* Effect.promise(() => holder.query("COMMIT"))
          yield* Fiber.join(cancel)
          assert.deepStrictEqual(yield* outcome(store, "held"), ["cancelled", null, null])
          assert.isFalse(yield* store.holdsLease("held", epoch), "the lease raised with it")
        }),
      { timeout: 60_000 }
    )
  }
)
