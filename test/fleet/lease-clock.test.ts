/**
 * The lease guard of a worker's job (src/fleet/Lease.ts) on Effect's clock, driven by `TestClock`: the heartbeat
 * confirms the lease every third of it, the fence at the socket refuses a request once the last confirmation is
 * half the lease old, the gate before a request confirms an old lease again, and a lease found lost stops the
 * heartbeat and refuses at once. The store here answers `holdsLease` only (what the guard asks); the guard against
 * real PostgreSQL and Redis is pinned by the fleet's cli tests (fence-cli, faults-cli).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { FleetError } from "../../src/fleet/Errors.js"
import { boundMs, freshMs, leaseGuard } from "../../src/fleet/Lease.js"

const leaseMs = 6_000

/** A store whose lease holds while `held`, counting the questions. */
const fakeLeases = () => {
  const state = { held: true, asked: 0 }
  return {
    state,
    store: {
      holdsLease: (_job: string, _epoch: number) =>
        Effect.sync(() => {
          state.asked++
          return state.held
        })
    }
  }
}

/** Lets forked fibers run up to their next wait. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("fleet lease guard on the clock", () => {
  it.scoped("requests that find the confirmation old at once share one question to the store (issue 29)", () =>
    Effect.gen(function*() {
      const answer = yield* Deferred.make<boolean>()
      let asked = 0
      const store = {
        holdsLease: (_job: string, _epoch: number) =>
          Effect.zipRight(Effect.sync(() => asked++), Deferred.await(answer))
      }
      const guard = yield* leaseGuard(store, "job-9", 2, leaseMs)
      yield* TestClock.adjust(freshMs(leaseMs))
      const gates = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.fork(guard.gate))
      yield* settle
      // Before: each of the 20 asked the store, and on a loaded host the questions queued behind each other.
      assert.strictEqual(asked, 1, "one question for the 20 requests waiting at the gate")
      yield* Deferred.succeed(answer, true)
      for (const gate of gates) assert.isTrue(Exit.isSuccess(yield* Fiber.await(gate)), "each passes on its answer")
      assert.isUndefined(guard.fence.refusal())
      assert.strictEqual(asked, 1)
      // A lost lease, found by the one question, stops every request that waited for it.
      const lost = yield* Deferred.make<boolean>()
      const store2 = {
        holdsLease: (_job: string, _epoch: number) => Effect.zipRight(Effect.sync(() => asked++), Deferred.await(lost))
      }
      const guard2 = yield* leaseGuard(store2, "job-10", 2, leaseMs)
      yield* TestClock.adjust(freshMs(leaseMs))
      const stopped = yield* Effect.forEach(Array.from({ length: 5 }), () => Effect.fork(guard2.gate))
      yield* settle
      yield* Deferred.succeed(lost, false)
      for (const gate of stopped) assert.isTrue(Exit.isInterrupted(yield* Fiber.await(gate)), "interrupted")
      assert.strictEqual(asked, 2)
      assert.include(guard2.fence.refusal() ?? "", "was lost")
    }))

  it.scoped("the fence refuses once the last confirmation is half the lease old; the gate confirms again", () =>
    Effect.gen(function*() {
      const { state, store } = fakeLeases()
      const guard = yield* leaseGuard(store, "job-1", 3, leaseMs)
      assert.strictEqual(freshMs(leaseMs), 2_000)
      assert.strictEqual(boundMs(leaseMs), 3_000)
      assert.isUndefined(guard.fence.refusal())
      yield* TestClock.adjust(boundMs(leaseMs) - 1)
      assert.isUndefined(guard.fence.refusal(), "a confirmation younger than the bound lets a request leave")
      yield* TestClock.adjust(1)
      assert.include(guard.fence.refusal() ?? "", "the lease of job job-1 was last confirmed 3000 ms ago")
      // The gate finds the confirmation old and asks the store: confirmed, the fence lets requests leave again.
      yield* guard.gate
      assert.strictEqual(state.asked, 1)
      assert.isUndefined(guard.fence.refusal())
      // A fresh confirmation is not asked again.
      yield* TestClock.adjust(freshMs(leaseMs) - 1)
      yield* guard.gate
      assert.strictEqual(state.asked, 1)
    }))

  it.scoped("the heartbeat confirms every third of the lease and ends when the lease is lost", () =>
    Effect.gen(function*() {
      const { state, store } = fakeLeases()
      const guard = yield* leaseGuard(store, "job-2", 4, leaseMs)
      const heartbeat = yield* Effect.fork(guard.heartbeat)
      yield* settle
      for (let beat = 1; beat <= 5; beat++) {
        yield* TestClock.adjust(freshMs(leaseMs))
        yield* settle
        assert.strictEqual(state.asked, beat)
        assert.isUndefined(guard.fence.refusal(), `confirmed at beat ${beat}`)
      }
      // Taken over: the next beat finds it lost; the heartbeat ends, the fence and the gate refuse at once.
      state.held = false
      yield* TestClock.adjust(freshMs(leaseMs))
      yield* settle
      yield* Fiber.join(heartbeat)
      assert.include(guard.fence.refusal() ?? "", "lease 4 of job job-2 was lost")
      const gated = yield* Effect.exit(guard.gate)
      assert.isTrue(gated._tag === "Failure", "a request after the loss is interrupted at the gate")
    }))

  it.scoped("a confirmation left unanswered is asked once more: taken if the store then says so (issue 29)", () =>
    Effect.gen(function*() {
      // What the store answers, question by question: a failure (no answer within the lease, as a worker stopped
      // while its question was out finds on waking) then what the store says once asked again.
      const unanswered = new FleetError({ reason: "Unavailable", message: "the fleet store gave no answer" })
      const guardAnswering = (answers: ReadonlyArray<boolean | FleetError>) => {
        const asked = { n: 0 }
        const store = {
          holdsLease: (_job: string, _epoch: number) =>
            Effect.suspend(() => {
              const answer = answers[Math.min(asked.n++, answers.length - 1)]
              return answer instanceof FleetError ? Effect.fail(answer) : Effect.succeed(answer!)
            })
        }
        return Effect.map(leaseGuard(store, "job-11", 3, leaseMs), (guard) => ({ guard, asked }))
      }
      const taken = yield* guardAnswering([unanswered, false])
      assert.isFalse(yield* taken.guard.check, "the unanswered confirmation loses the lease")
      assert.strictEqual(yield* taken.guard.whyLost, "taken", "asked again, the store says another holds it")
      assert.strictEqual(taken.asked.n, 2)
      const silent = yield* guardAnswering([unanswered])
      assert.isFalse(yield* silent.guard.check)
      assert.strictEqual(yield* silent.guard.whyLost, "unconfirmed", "still no answer: handed back")
      const held = yield* guardAnswering([unanswered, true])
      assert.isFalse(yield* held.guard.check)
      assert.strictEqual(yield* held.guard.whyLost, "unconfirmed", "nobody took it: handed back")
      const refused = yield* guardAnswering([false])
      assert.isFalse(yield* refused.guard.check)
      assert.strictEqual(yield* refused.guard.whyLost, "taken", "found taken: not asked again")
      assert.strictEqual(refused.asked.n, 1)
    }))
})
