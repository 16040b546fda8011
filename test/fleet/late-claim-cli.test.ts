/**
 * A takeover claim its slot gave up on never lands later (issue 29). Worker A's path to the store goes silent as A's
 * claim leaves it (the freezing proxy; the server never gets it) while a dead worker's job waits to be taken over; A's
 * claim connection gives up on its own, at the store's answer timeout ("Command timed out"), as a worker's does. When
 * A's path is back, ioredis sends the claim again at its reconnection (it sends every command it had sent and not
 * heard of, also one whose caller had given up on it). Before, the claim landed then: the job was made active under
 * A's token, which no slot held any more, and no other slot could claim it until that lock lapsed, a lease later. The
 * claim now carries a deadline on the server's clock (src/fleet/Queue.ts, `claimExpiredLua`; `serverDeadline` in
 * src/fleet/Store.ts, as the lease take's) and claims nothing past it: another slot claims the job at once.
 *
 * In the cli tier: it waits for the store's answer timeout (10 s, the least there is; a 3 s lease here).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { enqueue, openClaim, openQueue } from "../../src/fleet/Queue.js"
import { lapsed, takenByDeadWorker } from "./dead-worker.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { availableBackends, eventually, initFleet, startFleetBackend } from "./support.js"

const leaseMs = 3_000

/** The holder of job `id`'s lock in BullMQ's keys (the token its claim set), or none. */
const lockOf = (url: string, id: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() => new Redis(url)),
    (c) => Effect.promise(() => c.get(`bull:fsm-bulk:${id}:lock`)),
    (c) => Effect.promise(() => c.quit())
  )

describe("a takeover claim whose slot gave up on it (redis)", () => {
  it.scopedLive.skipIf(!availableBackends.some((b) => b.backend === "redis"))(
    "never lands later: another slot claims the job at once, not a lease later",
    () =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend("redis")
        yield* initFleet(url)
        // B: another worker's slot, straight to the store. Its first claim has the server learn the script (a fleet's
        // server knows it: every idle worker claims every poll), so what ioredis sends again runs by its digest.
        const other = yield* openClaim(url, leaseMs, "slot-b", () => [])
        assert.isUndefined(yield* Effect.promise(() => other("b-first")), "nothing to take over yet")
        // A: its path freezes as the claim under token `a-late-token` leaves it.
        const proxy = yield* freezingProxy(Number(new URL(url).port), undefined, "a-late-token")
        const refusedByA: Array<string> = []
        const gone = yield* openClaim(throughProxy(url, proxy), leaseMs, "slot-a", () => refusedByA)
        assert.isUndefined(yield* Effect.promise(() => gone("a-first")), "A's connection answers")

        // A dead worker's job, its lock lapsed: what both slots look for.
        const queue = yield* openQueue(url)
        yield* enqueue(queue, "dead-workers-job")
        yield* takenByDeadWorker(url, "dead-workers-job", 500)
        yield* eventually("the dead worker's lock lapses", () => lapsed(url, "dead-workers-job"))

        const asked = yield* Effect.either(Effect.tryPromise(() => gone("a-late-token")))
        assert.isAtLeast(proxy.frozen.connections, 1, "A's path froze at its claim")
        assert.strictEqual(asked._tag, "Left", "A has no answer")
        assert.include(String(asked._tag === "Left" ? asked.left.cause : ""), "Command timed out", "A gave up")

        // A's path back: ioredis sends A's claim again, and what A asks now is answered after it (a claim that takes
        // nothing: A skips the job from now on).
        assert.isAtLeast(proxy.reset(), 1)
        refusedByA.push("dead-workers-job")
        assert.isUndefined(yield* Effect.promise(() => gone("a-after")))
        assert.notStrictEqual(
          yield* lockOf(url, "dead-workers-job"),
          "a-late-token",
          "A's claim given up on landed later"
        )

        // B claims the job at once: before, it waited for A's lock to lapse (the lease).
        assert.strictEqual(yield* Effect.promise(() => other("b-now")), "dead-workers-job", "B claims the job at once")
        assert.strictEqual(yield* lockOf(url, "dead-workers-job"), "b-now")
      }),
    60_000
  )
})
