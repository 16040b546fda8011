/**
 * Callers sharing one client take its turns fairly (src/client/Lanes.ts; issue 29, "the unexplained 18 s"): a fleet
 * worker running two jobs of one account sends both through the account's one client, and the job that started second
 * had its first request queued behind every request the first job's window had already queued (32 rows) at the
 * client's two permits, and then at the budget's one. Each caller is a lane (`requestLane`); a free permit goes to the
 * waiting lanes in turn. Shown on the permits alone (the order they are handed over), on the budget, and through the
 * real client against the sandbox over loopback (the order its requests arrived in its own log). And a request asked
 * again alone (every permit) waits for the requests in flight, not for every request another lane queued.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { makeBudget } from "../../src/client/Budget.js"
import { makeLanePermits, requestLane } from "../../src/client/Lanes.js"
import { aloneBehindQueue, eventually, makeClient, startTestSandbox } from "./support.js"

/** `count` callers of `lane`, forked in order, each taking `use` once and noting its name when it gets through. */
const callers = (
  lane: string,
  count: number,
  use: (self: Effect.Effect<void>) => Effect.Effect<void>,
  order: Array<string>,
  hold: Effect.Effect<void> = Effect.void
) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => `${lane}${i + 1}`),
    (name) =>
      Effect.fork(use(Effect.zipRight(Effect.sync(() => order.push(name)), hold))).pipe(
        Effect.locally(requestLane, lane),
        // Each caller is waiting before the next is forked: the order they queued in is the order they were forked.
        Effect.zipLeft(Effect.yieldNow())
      )
  )

/** The longest run of consecutive entries from one lane (its first letter) before the other lane's last. */
const longestRun = (order: ReadonlyArray<string>, lanes: ReadonlyArray<string>): number => {
  const lastOf = Math.min(
    ...lanes.map((l) => order.length - 1 - [...order].reverse().findIndex((n) => n.startsWith(l)))
  )
  let best = 0
  let run = 0
  for (let i = 0; i <= lastOf; i++) {
    run = i > 0 && order[i]![0] === order[i - 1]![0] ? run + 1 : 1
    best = Math.max(best, run)
  }
  return best
}

describe("lanes: callers of one client take turns", () => {
  it.live("one permit goes to the waiting lanes in turn, a lane's own requests in the order they came", () =>
    Effect.gen(function*() {
      const permits = yield* makeLanePermits(1)
      const order: Array<string> = []
      const gate = yield* Effect.makeLatch(false)
      // A1 takes the permit and holds it until every other caller waits behind it.
      const a = yield* callers("A", 5, permits.withPermits(1), order, gate.await)
      const b = yield* callers("B", 3, permits.withPermits(1), order)
      yield* gate.open
      yield* Fiber.joinAll([...a, ...b])
      assert.deepStrictEqual(order, ["A1", "A2", "B1", "A3", "B2", "A4", "B3", "A5"])
    }))

  it.live("a caller interrupted while it waits gives its turn away, and one interrupted once served its permit", () =>
    Effect.gen(function*() {
      const permits = yield* makeLanePermits(1)
      const order: Array<string> = []
      const gate = yield* Effect.makeLatch(false)
      const [a1, a2] = yield* callers("A", 2, permits.withPermits(1), order, gate.await)
      const [b1] = yield* callers("B", 1, permits.withPermits(1), order)
      yield* Fiber.interrupt(a2!)
      yield* gate.open
      yield* Fiber.join(a1!)
      yield* Fiber.join(b1!)
      // Every permit came back: one caller takes it at once.
      yield* permits.withPermits(1)(Effect.sync(() => order.push("C")))
      assert.deepStrictEqual(order, ["A1", "B1", "C"])
    }))

  it.live("a caller that needs every permit keeps its turn: the permits that come free wait for it", () =>
    Effect.gen(function*() {
      const permits = yield* makeLanePermits(2)
      const order: Array<string> = []
      const gate = yield* Effect.makeLatch(false)
      const [a1] = yield* callers("A", 1, permits.withPermits(1), order, gate.await)
      const [all] = yield* callers("Z", 1, permits.withPermits(2), order)
      const b = yield* callers("B", 2, permits.withPermits(1), order)
      // A permit is free, but Z's turn comes first and needs both: B's callers wait behind it (they passed it before,
      // and a lane that kept queuing held Z back for as long as it did).
      yield* Effect.yieldNow()
      assert.deepStrictEqual(order, ["A1"])
      yield* gate.open
      yield* Fiber.join(all!)
      yield* Fiber.joinAll(b)
      yield* Fiber.join(a1!)
      assert.deepStrictEqual(order, ["A1", "Z1", "B1", "B2"])
    }))

  it.live("the budget gives its room to the lanes in turn", () =>
    Effect.gen(function*() {
      // Two requests a 60 ms window: the budget, not a permit, is what the callers wait for.
      const budget = yield* makeBudget({ limit: 2, windowMs: 60 }, 5)
      const order: Array<string> = []
      const a = yield* callers("A", 8, budget.spend, order)
      const b = yield* callers("B", 4, budget.spend, order)
      yield* Fiber.joinAll([...a, ...b])
      assert.strictEqual(order.length, 12)
      // A3 waits for room holding the turn while A4 and B1 queue: A1–A4, then B and A in turn. First come, first
      // served, B's four came after A's eight: a run of 8.
      assert.isAtMost(longestRun(order, ["A", "B"]), 4, order.join(" "))
    }), { timeout: 20_000 })

  it.scopedLive(
    "two callers of one client of two permits: the second's requests reach the server between the first's",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { latencyMs: 5 } })
        const api = yield* makeClient(sandbox, { concurrency: 2 })
        yield* api.request({ method: "GET", path: "/customers" })
        const from = (yield* sandbox.control.requests).length
        // The first caller queues 30 requests at the client (a job's window of rows), then the second its 10.
        const send = (lane: string, path: string, count: number) =>
          Effect.forEach(
            Array.from({ length: count }),
            () => Effect.fork(Effect.locally(api.request({ method: "GET", path }), requestLane, lane)),
            { discard: true }
          )
        yield* send("job-1", "/customers", 30)
        yield* send("job-2", "/products", 10)
        yield* eventually(Effect.map(sandbox.control.requests, (log) => log.length >= from + 40), 30_000)
        const order = (yield* sandbox.control.requests).slice(from).map((e) =>
          e.path.endsWith("/customers") ? "A" : "B"
        )
        // First come, first served: the second caller's first request arrived after about 28 of the first's.
        assert.isAtMost(order.indexOf("B"), 4, order.join(""))
        assert.isAtMost(longestRun(order, ["A", "B"]), 3, order.join(""))
      }),
    { timeout: 40_000 }
  )
  it.scopedLive(
    "a request asked again alone waits for the requests in flight, not for every request another caller queued",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { latencyMs: 5 } })
        const api = yield* makeClient(sandbox, { concurrency: 2 })
        // The first caller queues 30 requests at the client (a job's window of rows); the second's one request is
        // answered 404 while others are in flight and asked again alone. A fleet worker's second job of an account
        // looked up its rows so while the first sent (an empty filtered list is a 404 on this API), and waited 23 s,
        // until the first job's 30 rows had all gone at the account's 3 requests every 2 s
        // (test/fleet/takeover-slots-cli.test.ts).
        const { asked, order, reply } = yield* aloneBehindQueue(api, sandbox, 30)
        assert.strictEqual(reply.status, 404, order.join(" "))
        assert.strictEqual(asked.length, 2, order.join(" "))
        // Between its two attempts: the first caller's request that held the other permit, and the one whose turn came
        // before the second caller's again (3). Before, every request of the first caller that waited for a permit
        // went first: 30 of them (the lanes' turns let them pass a waiter that needed more permits than were free).
        assert.isAtMost(asked[1]! - asked[0]! - 1, 3, order.join(" "))
      }),
    { timeout: 40_000 }
  )
})
