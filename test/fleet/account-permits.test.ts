/**
 * A worker's client for an account whose own budget (`accounts add --rate`) is below the worker's has the permits of
 * the account's budget, not of the worker's (issue 29). A request takes its permit before the budget: with permits
 * sized for the worker's 60/1s (36), one job's rows held them all while they waited for the account's 3/1s, and a
 * request of another job asked again alone (a 404 answered while others were in flight: an empty filtered list is a
 * 404 on this API), which needs every permit, waited until all of them were sent. In the clean-clone run at e34798d
 * a part's look-up so waited 23 s, until another part had sent its 30 rows (test/fleet/takeover-slots-cli.test.ts).
 *
 * Through the worker's own account clients (`makeAccountClients`) against the sandbox over loopback, judged from the
 * order the requests arrived in the sandbox's log: between the two attempts of the request asked again alone, only
 * the requests that held a permit and one turn of the other job's lane arrive.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeBudget } from "../../src/client/Budget.js"
import { defaultBudgetMargin, safeInFlight } from "../../src/client/Config.js"
import { requestLane } from "../../src/client/Lanes.js"
import { makeAccountClients } from "../../src/fleet/AccountClients.js"
import { currentFence } from "../../src/fleet/Lease.js"
import { openStore } from "../../src/fleet/Stores.js"
import { aloneBehindQueue, oneCustomerThenLogFrom } from "../client/support.js"
import { startDrillSandbox } from "../drills/support.js"
import { fleetKey, initFleet, startFleetBackend } from "./support.js"

/** The worker's account clients on a fleet of its own whose account `acme` has the budget `rate` (none: the worker's). */
const acmeClients = (rate: string | undefined, latencyMs: number, workerRate: { limit: number; windowMs: number }) =>
  Effect.gen(function*() {
    const { url } = yield* startFleetBackend("postgres")
    const sandbox = yield* startDrillSandbox({
      rate: { limit: 10_000, windowMs: 1_000 },
      accounts: [{ apiKey: "acme-key", apiToken: "acme-token" }],
      faults: { latencyMs }
    })
    yield* initFleet(url, [{
      name: "acme",
      baseUrl: sandbox.url,
      apiKey: "acme-key",
      apiToken: "acme-token",
      ...(rate !== undefined ? { rate } : {})
    }])
    const store = yield* Effect.orDie(openStore(url))
    const { watchAccount } = yield* makeAccountClients({
      store,
      key: Buffer.from(fleetKey, "base64"),
      rate: workerRate,
      budget: yield* makeBudget(workerRate, defaultBudgetMargin(workerRate.windowMs)),
      sourceAddress: undefined,
      fenceOf: () => ({ refusal: () => currentFence()?.refusal() }),
      scope: yield* Effect.scope
    })
    const { api } = yield* Effect.orDie(watchAccount("acme"))
    return { api, sandbox }
  })

describe("a worker's client for an account with a budget of its own", () => {
  it.scopedLive(
    "has the permits of the account's budget: a request asked again alone waits for few",
    () =>
      Effect.gen(function*() {
        // Answers slow enough that the requests of a window's burst overlap (a 404 among them is asked again alone).
        const { api, sandbox } = yield* acmeClients("3/1s", 1_500, { limit: 60, windowMs: 1_000 })
        // The first job queues 10 requests (its rows), the second one request that is answered 404.
        const { asked, order, reply } = yield* aloneBehindQueue(api, sandbox, 10)
        assert.strictEqual(reply.status, 404, order.join(" "))
        assert.strictEqual(asked.length, 2, order.join(" "))
        // The account's 3/1s gives 2 permits: the other one's holder and one turn of the first job (3). With the
        // worker's 36 permits, every request of the first job still queued went first (6 of the 10, seen on the old code).
        assert.isAtMost(asked[1]! - asked[0]! - 1, 3, order.join(" "))
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "without one: at most 8 requests in flight on its token, whatever the worker's budget (live limits)",
    () =>
      Effect.gen(function*() {
        // The worker's 60/1s kept busy at 300 ms answers would be 36 in flight; the live service answers bursts of
        // 404 and 500 above 8 on one token (api-notes). 30 requests of one job at once, each answered after 400 ms.
        const { api, sandbox } = yield* acmeClients(undefined, 400, { limit: 60, windowMs: 1_000 })
        const from = yield* oneCustomerThenLogFrom(api, sandbox)
        yield* Effect.forEach(
          Array.from({ length: 30 }),
          () => Effect.locally(api.request({ method: "GET", path: "/customers" }), requestLane, "job-1"),
          { concurrency: "unbounded", discard: true }
        )
        const log = (yield* sandbox.control.requests).slice(from)
        assert.deepStrictEqual(log.map((e) => e.status).filter((s) => s !== 200), [], "every request answered 200")
        assert.strictEqual(log.length, 30)
        const most = Math.max(...log.map((e) => e.inFlight))
        assert.isAtMost(most, safeInFlight, `at most ${safeInFlight} in flight on the token, not ${most}`)
        assert.isAtLeast(most, 2, "the requests did overlap")
      }),
    { timeout: 60_000 }
  )
})
