/**
 * A job that runs whole (an export, an onboarding) keeps the files of one run only: its end, with its files, is
 * recorded in one transaction that holds only under the job's current lease. A worker that lost the lease (it was
 * paused past it, and another took the job over) ends nothing and stores nothing; the holder's files replace
 * whatever an earlier attempt left, as a whole. Against a throwaway PostgreSQL, and a throwaway Redis.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { stepStream } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import { takenLease } from "./store-fixtures.js"
import { availableBackends, startFleetBackend } from "./support.js"

/** Each test once per backend (`$backend` in its name). */
const each = it.scopedLive.each(availableBackends)

const text = (s: string) => new TextEncoder().encode(s)

describe("fleet store: jobs that run whole", () => {
  each(
    "only the lease holder ends a job and leaves its files, all of them and only them ($backend)",
    (b) =>
      Effect.gen(function*() {
        const pg = yield* startFleetBackend(b.backend)
        const store = yield* openStore(pg.url)
        yield* store.init
        yield* store.addJob({
          id: "job-1",
          kind: "export",
          account: "acme",
          resource: null,
          spec: {},
          rows: 0,
          parent: null
        })
        const first = yield* takenLease(store, "job-1", "w1/1")
        // The first owner got as far as a partial copy before it stalled.
        assert.isTrue(yield* store.putFileUnderLease("job-1", first, "out/customers.csv", text("old")))
        assert.isTrue(yield* store.putFileUnderLease("job-1", first, "out/stale.csv", text("old")))
        const second = yield* takenLease(store, "job-1", "w2/1")

        // The stalled owner wakes up and tries to end the job: refused, nothing written.
        const late = yield* store.endWhole("job-1", first, [{ name: "manifest.json", content: text("A") }], {
          state: "done",
          exitCode: 0,
          summary: { by: "first" },
          rows: 1,
          error: undefined
        })
        assert.isFalse(late)
        assert.isFalse(yield* store.putFileUnderLease("job-1", first, "out/customers.csv", text("late")))
        assert.strictEqual((yield* store.job("job-1")).state, "queued")

        // The holder ends it: its files replace the earlier attempt's as a whole.
        const ended = yield* store.endWhole("job-1", second, [
          { name: "manifest.json", content: text("B") },
          { name: "customers.csv", content: text("new") }
        ], { state: "done", exitCode: 0, summary: { by: "second" }, rows: 30, error: undefined })
        assert.isTrue(ended)
        const kept = yield* store.files("job-1", "out/")
        assert.deepStrictEqual(kept.map((f) => [f.name, f.content.toString("utf8")]), [
          ["out/customers.csv", "new"],
          ["out/manifest.json", "B"]
        ])
        const row = yield* store.job("job-1")
        assert.deepStrictEqual([row.state, row.exit_code, row.rows, row.summary], ["done", 0, 30, { by: "second" }])
      }),
    { timeout: 60_000 }
  )

  each(
    "an onboarding step's journal lines are kept apart per step, each written only under the lease ($backend)",
    (b) =>
      Effect.gen(function*() {
        const pg = yield* startFleetBackend(b.backend)
        const store = yield* openStore(pg.url)
        yield* store.init
        yield* store.addJob({
          id: "job-2",
          kind: "onboard",
          account: "acme",
          resource: null,
          spec: {},
          rows: 3,
          parent: null
        })
        const first = yield* takenLease(store, "job-2", "w1/1")
        const customers = stepStream("job-2", "customers")
        assert.isTrue(yield* store.appendStreamLine("job-2", first, stepStream("job-2", "segments"), "{\"s\":1}"))
        assert.isTrue(yield* store.appendStreamLine("job-2", first, customers, "{\"c\":1}"))
        const second = yield* takenLease(store, "job-2", "w2/1")
        assert.isFalse(yield* store.appendStreamLine("job-2", first, customers, "{\"c\":2}"), "old owner refused")
        assert.isTrue(yield* store.appendStreamLine("job-2", second, customers, "{\"c\":3}"))
        assert.deepStrictEqual(yield* store.journalLines(customers), ["{\"c\":1}", "{\"c\":3}"])
        assert.deepStrictEqual(yield* store.journalLines(stepStream("job-2", "segments")), ["{\"s\":1}"])
        assert.deepStrictEqual(yield* store.journalLines("job-2"), [], "the job's own journal holds none of them")
        // Rows done count per step (each step numbers its rows from 2): row 2 of two steps is two rows done.
        const done = (row: number) => JSON.stringify({ state: "done", row })
        assert.isTrue(yield* store.appendStreamLine("job-2", second, customers, done(2)))
        assert.isTrue(yield* store.appendStreamLine("job-2", second, customers, done(2)))
        assert.isTrue(yield* store.appendStreamLine("job-2", second, stepStream("job-2", "segments"), done(2)))
        assert.deepStrictEqual([...(yield* store.rowsDone(["job-2"]))], [["job-2", 2]])
      }),
    { timeout: 60_000 }
  )
})
