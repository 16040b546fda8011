/**
 * A takeover claim its slot gave up on strands no job (issue 29). Worker A's path to the store goes silent as A's claim
 * leaves it (the freezing proxy holds it) while a dead worker's job waits to be taken over; A's claim connection gives
 * up on its own, at the store's answer timeout, as a worker's does. Then the claim reaches the server after all:
 *
 * - on Redis, ioredis sends it again when A's connection is back (the test resets it; ioredis sends every command it had
 *   sent and not heard of, also one whose caller had its "Command timed out"). Before, the claim landed then: the job
 *   was made active under A's token, which no slot held any more, with a lock of a lease from then (`SET … PX`), and no
 *   other slot could claim it until that lock lapsed. The claim now carries a deadline on the server's clock
 *   (src/fleet/Queue.ts, `claimExpiredLua`; `serverDeadline` in src/fleet/Store.ts, as the lease take's) and claims
 *   nothing past it;
 * - on PostgreSQL the claim is one statement, which the server runs and commits whenever it gets it: the proxy delivers
 *   what A sent (as A's kernel sends it again once the path is back, A's connection closed meanwhile; or a frozen server
 *   wakes). It lands, but its lock is counted from A's clock when A sent it (`locked_until_ms`, BullMQ's times), so it
 *   has lapsed already (the answer timeout is at least a lease): nothing is stranded.
 *
 * Either way another slot, B, claims the job at once. In the cli tier: it waits for the store's answer timeout (10 s,
 * the least there is; a 3 s lease here).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { enqueue, openClaim, openQueue } from "../../src/fleet/Queue.js"
import { lapsed, takenByDeadWorker } from "./dead-worker.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { availableBackends, eventually, initFleet, query, startFleetBackend } from "./support.js"

const leaseMs = 3_000
const job = "dead-workers-job"

/** The token of job `id`'s lock in the queue's store (the one its last claim set), or none; and whether it lapsed. */
const lockOf = (url: string, id: string): Promise<{ token: string | null; lapsed: boolean }> =>
  url.startsWith("redis")
    ? (async () => {
      const c = new Redis(url)
      try {
        const token = await c.get(`bull:fsm-bulk:${id}:lock`)
        return { token, lapsed: token === null }
      } finally {
        await c.quit()
      }
    })()
    : query(
      url,
      "SELECT lock_token AS token, locked_until_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS lapsed " +
        "FROM bullmq.job WHERE queue = 'fsm-bulk' AND id = $1",
      [id]
    ).then((rows) => rows[0] as { token: string | null; lapsed: boolean })

describe("a takeover claim whose slot gave up on it", () => {
  for (const { backend } of availableBackends) {
    it.scopedLive(
      `strands no job: another slot claims it at once, not a lease later (${backend})`,
      () =>
        Effect.gen(function*() {
          const { url } = yield* startFleetBackend(backend)
          yield* initFleet(url)
          // B: another worker's slot, straight to the store. On Redis its first claim has the server learn the script
          // (a fleet's server knows it: every idle worker claims every poll), so what ioredis sends again runs by its
          // digest.
          const other = yield* openClaim(url, leaseMs, "slot-b", () => [])
          assert.isUndefined(yield* Effect.promise(() => other("b-first")), "nothing to take over yet")
          // A: its path freezes as the claim under token `a-late-token` leaves it.
          const proxy = yield* freezingProxy(Number(new URL(url).port), undefined, "a-late-token")
          const refusedByA: Array<string> = []
          const gone = yield* openClaim(throughProxy(url, proxy), leaseMs, "slot-a", () => refusedByA)
          assert.isUndefined(yield* Effect.promise(() => gone("a-first")), "A's connection answers")

          // A dead worker's job, its lock lapsed: what both slots look for.
          const queue = yield* openQueue(url)
          yield* enqueue(queue, job)
          yield* takenByDeadWorker(url, job, 500)
          yield* eventually("the dead worker's lock lapses", () => lapsed(url, job))

          const asked = yield* Effect.either(Effect.tryPromise(() => gone("a-late-token")))
          assert.isAtLeast(proxy.frozen.connections, 1, "A's path froze at its claim")
          assert.strictEqual(asked._tag, "Left", "A has no answer")
          assert.match(
            String(asked._tag === "Left" ? asked.left.cause : ""),
            /Command timed out|Query read timeout/,
            "A gave up at its answer timeout"
          )

          if (backend === "redis") {
            // A's path back: ioredis sends A's claim again, and what A asks now is answered after it (a claim that
            // takes nothing: A skips the job from now on).
            assert.isAtLeast(proxy.reset(), 1)
            refusedByA.push(job)
            assert.isUndefined(yield* Effect.promise(() => gone("a-after")))
            const lock = yield* Effect.promise(() => lockOf(url, job))
            assert.notStrictEqual(lock.token, "a-late-token", "A's claim given up on landed later")
          } else {
            // A's claim reaches the server after all, and runs: the job is A's, under a lock lapsed already.
            assert.isAtLeast(proxy.deliver(), 1)
            yield* eventually(
              "A's claim runs on the server",
              async () => (await lockOf(url, job)).token === "a-late-token"
            )
            assert.isTrue((yield* Effect.promise(() => lockOf(url, job))).lapsed, "its lock has lapsed already")
          }

          // B claims the job at once: before, on Redis, it waited for A's lock to lapse (the lease).
          assert.strictEqual(yield* Effect.promise(() => other("b-now")), job, "B claims the job at once")
          assert.deepStrictEqual(yield* Effect.promise(() => lockOf(url, job)), { token: "b-now", lapsed: false })
        }),
      60_000
    )
  }
})
