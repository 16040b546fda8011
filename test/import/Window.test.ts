/**
 * The source-order window (`src/import/Window.ts`): items handled concurrently come back in source order, and no
 * item starts more than `window` positions past the oldest one not yet given back.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as Supervisor from "effect/Supervisor"
import { inSourceOrder } from "../../src/import/Window.js"
import { until } from "./support.js"

describe("the source-order window", () => {
  it.live(
    "gives results back in source order, holding no more than the window behind a slow item",
    () =>
      Effect.gen(function*() {
        const gates = yield* Effect.forEach(Array.from({ length: 8 }, (_, i) => i), () => Deferred.make<void>())
        const started: Array<number> = []
        const handle = (i: number) =>
          Effect.gen(function*() {
            started.push(i)
            yield* Deferred.await(gates[i]!)
            // Odd items give nothing back: they are left out, in order.
            return i % 2 === 1 ? undefined : `row ${i}`
          })
        const run = yield* Effect.fork(
          Stream.runCollect(inSourceOrder(Stream.range(0, 7), handle, { concurrency: 8, window: 3 }))
        )
        yield* until(() => started.length === 3)
        // Items 1 and 2 finish; item 0 holds the window, so item 3 does not start.
        yield* Deferred.succeed(gates[2]!, undefined)
        yield* Deferred.succeed(gates[1]!, undefined)
        yield* Effect.yieldNow()
        assert.deepStrictEqual([...started].sort(), [0, 1, 2])
        // Item 0 done: the three are given back and the window moves on by three.
        yield* Deferred.succeed(gates[0]!, undefined)
        yield* until(() => started.length === 6)
        assert.deepStrictEqual([...started].sort(), [0, 1, 2, 3, 4, 5])
        for (const i of [7, 6, 5, 4, 3]) yield* Deferred.succeed(gates[i]!, undefined)
        const results = Chunk.toReadonlyArray(yield* Fiber.join(run))
        assert.deepStrictEqual(results, ["row 0", "row 2", "row 4", "row 6"])
      }),
    60_000
  )

  it.live(
    "makes its fibers once a pass, not one an item",
    () =>
      Effect.gen(function*() {
        // Every fiber started under the pass is counted (an import's window made about three an item).
        class Started extends Supervisor.AbstractSupervisor<number> {
          count = 0
          value = Effect.sync(() => this.count)
          override onStart() {
            this.count += 1
          }
        }
        const started = new Started()
        const items = 2_000
        const results = yield* Effect.supervised(
          Stream.runCollect(
            inSourceOrder(Stream.range(0, items - 1), (i) => Effect.as(Effect.yieldNow(), i), {
              concurrency: 8,
              window: 64
            })
          ),
          started
        )
        assert.deepStrictEqual(Chunk.toReadonlyArray(results), Array.from({ length: items }, (_, i) => i))
        assert.isAtMost(yield* started.value, 40, `fibers started for ${items} items`)
      }),
    60_000
  )
})
