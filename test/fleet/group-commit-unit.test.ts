/**
 * `groupCommit` (src/fleet/GroupCommit.ts), the one piece behind the fleet's journal lines written together and the
 * account look-ups shared by a job's requests: what arrives while a write is under way goes in the next write, in
 * the order it arrived, and each caller gets its own write's answer — a failed write fails its group only.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { groupCommit } from "../../src/fleet/GroupCommit.js"

const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("groupCommit", () => {
  it.scoped("items added while a write is under way go together in the next write, each with its write's answer", () =>
    Effect.gen(function*() {
      const writes: Array<ReadonlyArray<number>> = []
      const gates: Array<Deferred.Deferred<void>> = []
      const add = groupCommit((items: ReadonlyArray<number>) =>
        Effect.gen(function*() {
          const gate = yield* Deferred.make<void>()
          gates.push(gate)
          writes.push(items)
          yield* Deferred.await(gate)
          if (items.includes(13)) return yield* Effect.fail(`refused ${items.join(",")}`)
          return `wrote ${items.join(",")}`
        })
      )
      const first = yield* Effect.fork(add(1))
      yield* settle
      // The first write is under way: these wait for the next one, together.
      const rest = yield* Effect.forEach([2, 3, 13], (n) => Effect.fork(add(n)))
      yield* settle
      assert.deepStrictEqual(writes, [[1]], "nothing else is written while the first write is under way")
      yield* Deferred.succeed(gates[0]!, undefined)
      assert.strictEqual(yield* Fiber.join(first), "wrote 1")
      yield* settle
      assert.deepStrictEqual(writes, [[1], [2, 3, 13]], "one write for the three, in the order they came")
      const late = yield* Effect.fork(add(4))
      yield* settle
      yield* Deferred.succeed(gates[1]!, undefined)
      for (const fiber of rest) {
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit), "each of the group gets its write's answer")
        if (Exit.isFailure(exit)) assert.strictEqual(Cause.squash(exit.cause), "refused 2,3,13")
      }
      yield* settle
      yield* Deferred.succeed(gates[2]!, undefined)
      assert.strictEqual(yield* Fiber.join(late), "wrote 4", "a failed write fails its own group only")
      assert.deepStrictEqual(writes, [[1], [2, 3, 13], [4]])
    }))

  it.scoped("a caller interrupted while it waits does not cancel its group's write", () =>
    Effect.gen(function*() {
      const written: Array<ReadonlyArray<string>> = []
      const gate = yield* Deferred.make<void>()
      const add = groupCommit((items: ReadonlyArray<string>) =>
        Effect.zipRight(Deferred.await(gate), Effect.sync(() => written.push(items)))
      )
      const a = yield* Effect.fork(add("a"))
      const b = yield* Effect.fork(add("b"))
      yield* settle
      yield* Fiber.interrupt(a)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(b)
      yield* settle
      assert.deepStrictEqual(written.flat(), ["a", "b"], "a's item is still written, once, with b's")
    }))
})
