/**
 * The journal's group commit to the fleet store (src/fleet/GroupCommit.ts, `FleetStore.appendLines`), on each
 * backend: lines appended at once reach the store in a few writes, not one each (issue 29: one statement a line
 * queued behind the worker's few connections on a loaded host), every line is kept in the order added, each append
 * learns its own write's answer, and a group written after a takeover is refused whole.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { groupCommit } from "../../src/fleet/GroupCommit.js"
import { takenLease } from "./store-fixtures.js"
import { backends, initialisedStore } from "./support.js"

for (const { available, backend } of backends) {
  describe.skipIf(!available)(`journal group commit on ${backend}`, () => {
    it.scopedLive("40 lines appended at once: every one kept, in a few writes, in order", () =>
      Effect.gen(function*() {
        const store = yield* initialisedStore(backend)
        const epoch = yield* takenLease(store, "group", "w1/1")
        const writes: Array<number> = []
        const record = groupCommit((lines: ReadonlyArray<string>) => {
          writes.push(lines.length)
          return store.appendLines("group", epoch, lines)
        })
        const lines = Array.from({ length: 40 }, (_, i) => `{"state":"done","row":${i + 2}}`)
        const answers = yield* Effect.all(lines.map(record), { concurrency: "unbounded" })
        assert.deepStrictEqual(answers, lines.map(() => true))
        assert.deepStrictEqual(yield* store.journalLines("group"), lines, "every line, in the order added")
        assert.strictEqual(writes.reduce((a, b) => a + b, 0), 40)
        // The first line goes alone; the others, added while it was on its way, together.
        assert.isAtMost(writes.length, 3, `writes of ${writes.join(", ")} lines`)
        // One caller's lines, one after the other, keep their order with the others'.
        yield* record(`{"state":"sending","row":50}`)
        yield* record(`{"state":"done","row":50}`)
        assert.deepStrictEqual((yield* store.journalLines("group")).slice(-2), [
          `{"state":"sending","row":50}`,
          `{"state":"done","row":50}`
        ])
      }), { timeout: 60_000 })

    it.scopedLive(
      "a group written after a takeover is refused whole, and nothing of it is kept",
      () =>
        Effect.gen(function*() {
          const store = yield* initialisedStore(backend)
          const epoch = yield* takenLease(store, "taken", "w1/1")
          assert.isTrue(yield* store.appendLines("taken", epoch, [`{"state":"header"}`]))
          yield* takenLease(store, "taken", "w2/1")
          const record = groupCommit((lines: ReadonlyArray<string>) => store.appendLines("taken", epoch, lines))
          const answers = yield* Effect.all(
            Array.from({ length: 10 }, (_, i) => record(`{"state":"sending","row":${i + 2}}`)),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(answers, answers.map(() => false))
          assert.deepStrictEqual(yield* store.journalLines("taken"), [`{"state":"header"}`])
          assert.isFalse(yield* store.appendLines("taken", epoch, []), "no lines: nothing recorded")
        }),
      { timeout: 60_000 }
    )
  })
}
