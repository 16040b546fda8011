import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber, TestClock } from "effect"
import { afterEach, vi } from "vitest"
import { makeBudget } from "../../src/client/Budget.js"
import { busiestWindow } from "./support.js"

describe("Budget", () => {
  it.effect("a request starts only while fewer than N are in flight or ended within the window", () =>
    Effect.gen(function*() {
      const budget = yield* makeBudget({ limit: 5, windowMs: 1_000 }, 50)
      const starts: Array<number> = []
      // Each request takes 200 ms; the window is counted from its end.
      const request = Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => starts.push(t))).pipe(
        Effect.zipRight(Effect.sleep(200))
      )
      const fiber = yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), () => budget.spend(request), {
        concurrency: 12,
        discard: true
      }).pipe(Effect.fork)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      assert.strictEqual(starts.length, 12)
      assert.deepStrictEqual(starts.slice(0, 5), [0, 0, 0, 0, 0])
      // The first five ended at 200: room again at 200 + 1000 + 50.
      assert.deepStrictEqual(starts.slice(5, 10), [1_250, 1_250, 1_250, 1_250, 1_250])
      assert.deepStrictEqual(starts.slice(10), [2_500, 2_500])
      assert.strictEqual(busiestWindow(starts, 1_000), 5)
    }))

  it.effect("a request that fails still counts, from the moment it ended", () =>
    Effect.gen(function*() {
      const budget = yield* makeBudget({ limit: 1, windowMs: 1_000 }, 0)
      const first = yield* budget.spend(Effect.zipRight(Effect.sleep(100), Effect.fail("boom"))).pipe(
        Effect.either,
        Effect.fork
      )
      yield* TestClock.adjust(100)
      assert.isTrue((yield* Fiber.join(first))._tag === "Left")
      const second = yield* budget.spend(Clock.currentTimeMillis).pipe(Effect.fork)
      yield* TestClock.adjust(999)
      assert.isTrue((yield* Fiber.poll(second))._tag === "None")
      yield* TestClock.adjust(1)
      assert.strictEqual(yield* Fiber.join(second), 1_100)
    }))

  it.effect("a request that turns out not to be sent gives its room back: it leaves nothing in the window", () =>
    Effect.gen(function*() {
      const budget = yield* makeBudget({ limit: 1, windowMs: 1_000 }, 0)
      const unsent = yield* budget.spend(Effect.fail("token gone" as const), (e) => e === "token gone").pipe(
        Effect.either
      )
      assert.strictEqual(unsent._tag, "Left")
      // With a limit of 1, a request counted in the window would hold the next one for a whole second.
      assert.strictEqual(yield* budget.spend(Clock.currentTimeMillis), 0)
    }))

  it.effect("a pause holds every caller until it ends", () =>
    Effect.gen(function*() {
      const budget = yield* makeBudget({ limit: 100, windowMs: 1_000 }, 0)
      yield* budget.pause(3_000)
      assert.isTrue(yield* budget.paused)
      const starts: Array<number> = []
      const fiber = yield* Effect.forEach(
        [1, 2, 3],
        () => budget.spend(Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => starts.push(t)))),
        { concurrency: 3, discard: true }
      ).pipe(Effect.fork)
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(starts, [])
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(starts, [3_000, 3_000, 3_000])
      assert.isFalse(yield* budget.paused)
    }))

  describe("a step of the wall clock", () => {
    afterEach(() => {
      vi.restoreAllMocks()
    })

    const realNow = Date.now.bind(Date)
    /** `Date.now` from now on answers the real wall clock moved by `stepMs` (an NTP or operator step). */
    const stepWallClock = (stepMs: number) =>
      Effect.sync(() => {
        vi.spyOn(Date, "now").mockImplementation(() => realNow() + stepMs)
      })

    /** Spends `n` instant requests of `budget` at once; when each started, on the monotonic clock. */
    const burst = (budget: Effect.Effect.Success<ReturnType<typeof makeBudget>>, n: number) =>
      Effect.forEach(
        Array.from({ length: n }, (_, i) => i),
        () => budget.spend(Effect.sync(() => performance.now())),
        { concurrency: n }
      )

    it.live("forward lets no second burst leave within the window", () =>
      Effect.gen(function*() {
        const budget = yield* makeBudget({ limit: 5, windowMs: 600 }, 0)
        const first = yield* burst(budget, 5)
        // The step: 120 s forward. A window kept on the wall clock would now look empty.
        yield* stepWallClock(120_000)
        const second = yield* burst(budget, 5)
        // A lower bound only (a busy machine makes it longer): the sixth start waits for the first end to leave
        // the window, a whole window after it on the monotonic clock. The first request's start is before its end;
        // the last start of the first burst may be after it (the first request can end before the fifth starts),
        // so the bound is from the first start, not the last.
        assert.isAtLeast(Math.min(...second) - Math.min(...first), 600 - 1)
      }))

    it.live("back does not hold the callers until the wall clock catches up", () =>
      Effect.gen(function*() {
        const budget = yield* makeBudget({ limit: 5, windowMs: 300 }, 0)
        yield* burst(budget, 5)
        // 120 s back: a window kept on the wall clock would wait 120 s for these ends to leave it (the test's
        // timeout, 20 s, says so).
        yield* stepWallClock(-120_000)
        const second = yield* burst(budget, 5)
        assert.strictEqual(second.length, 5)
        // A pause after a rate-limit answer is counted the same way: 300 ms, not 120 s.
        yield* budget.pause(300)
        assert.isTrue(yield* budget.paused)
        yield* stepWallClock(120_000)
        assert.isTrue(yield* budget.paused, "a forward step does not end a pause")
        assert.strictEqual((yield* burst(budget, 1)).length, 1)
      }), 20_000)
  })
})
