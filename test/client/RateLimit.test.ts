import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { resource } from "../../src/Resources.js"
import { busiestWindow, makeClient, startTestSandbox } from "./support.js"

describe("the request budget against the sandbox", () => {
  for (const rateMode of ["sliding", "fixed"] as const) {
    it.scopedLive(
      `at concurrency 32 a ${rateMode}-window server never sees more than N requests in any window`,
      () =>
        Effect.gen(function*() {
          const rate = { limit: 20, windowMs: 1_000 }
          const sandbox = yield* startTestSandbox({ rate, rateMode })
          const api = yield* makeClient(sandbox, { rate, concurrency: 32 })
          const replies = yield* Effect.forEach(
            Array.from({ length: 55 }, (_, i) => i),
            (i) => api.request({ method: "GET", path: `/tasktypes/${(i % 6) + 1}` }),
            { concurrency: "unbounded" }
          )
          assert.isTrue(replies.every((r) => r.ok))
          const log = yield* sandbox.control.requests
          assert.strictEqual(log.length, 56) // the login counts too
          assert.strictEqual(log.filter((e) => e.status === 403).length, 0)
          assert.isAtMost(busiestWindow(log.map((e) => e.at), rate.windowMs), rate.limit)
          const stats = yield* api.stats
          assert.deepStrictEqual(stats, { requests: 56, rateLimited: 0, retries: 0, logins: 1 })
        }),
      30_000
    )
  }

  it.scopedLive(
    "a 403 storm pauses every call, then the run resumes by itself with nothing lost or doubled",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        // The storm lasts 1.5 s from here: the first calls must reach the server within it (at load 19 on 2 cores a
        // storm of 0.5 s had ended before any did: nothing refused). The client's pause is longer than the storm, so
        // every call refused is answered at its second attempt, however late the storm met it.
        const stormMs = 1_500
        const pauseMs = 2_000
        const concurrency = 8
        const api = yield* makeClient(sandbox, { rateLimitPauseMs: pauseMs, concurrency })
        yield* api.request({ method: "GET", path: "/tasktypes/1" })
        yield* sandbox.control.setFaults({ rateLimitStormUntil: Date.now() + stormMs })
        const customers = resource("customers")
        const replies = yield* Effect.forEach(
          Array.from({ length: 30 }, (_, i) => `CLI-${i}`),
          (externalId) =>
            api.request({
              method: "POST",
              path: "/customers",
              body: { externalId, name: `Cliente ${externalId}` },
              correlation: { resource: customers, key: "externalId", value: externalId }
            }),
          { concurrency: "unbounded" }
        )
        assert.isTrue(replies.every((r) => r.ok && r.status === 201 && !r.reconciled))
        const limited = replies.filter((r) => r.evidence.retryOutcomes.includes("rate-limited"))
        assert.isAbove(limited.length, 0)
        assert.isTrue(limited.every((r) => r.evidence.attempts === 2))

        const stored = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(stored.length, 30)
        assert.strictEqual(new Set(stored.map((c) => c.externalId)).size, 30)

        const log = (yield* sandbox.control.requests).slice(2)
        const refused = log.filter((e) => e.status === 403)
        // Only the calls already in flight met the storm; everything else waited for the pause.
        assert.isAtLeast(refused.length, 1)
        assert.isAtMost(refused.length, concurrency)
        const firstRefusal = refused[0]!.at
        const after = log.filter((e) => e.status !== 403)
        assert.isTrue(after.every((e) => e.at >= firstRefusal + pauseMs - 50))
        assert.strictEqual((yield* api.stats).rateLimited, refused.length)
      }),
    30_000
  )
})
