/**
 * A worker whose queue side goes silent takes jobs again (issue 29, seed 896's follow-up, Redis). BullMQ gives its
 * Redis commands no answer timeout: on a path that goes silent without a reset (a NAT or firewall in between that lost
 * the connection's state; here the freezing proxy, in front of the worker's queue side only), its blocking read has a
 * watchdog of its own that replaces that connection, but the fetch that follows (`moveToActive`) waited on the silent
 * connection for ever, and the worker's claims failed, each after its answer timeout, on theirs: the worker took no job
 * again while it lived (and, in a fleet, held its egress id and counted as live). Now each connection of the queue's
 * side that does not answer a PING within the store's answer timeout is closed and opened again by ioredis
 * (Queue.ts, `keptAnswering`).
 *
 * In process: BullMQ's worker as `fsm-bulk worker` starts it (`startEngineWorker`, its claims and takeover slots)
 * through the proxy, jobs queued by a queue of the test's own past it. The worker takes a job; its every connection is
 * frozen; a second job is queued, and must be taken within 45 s (before: not at all). In the cli tier: it waits for
 * the answer timeout (10 s, the least there is).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { enqueue, openQueue, startEngineWorker } from "../../src/fleet/Queue.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { availableBackends, eventually, startRedisWith } from "./support.js"

const noRedis = !availableBackends.some((b) => b.backend === "redis")

describe("a worker whose connections to the queue go silent (redis)", () => {
  it.scopedLive.skipIf(noRedis)(
    "takes the next job once they are open again, without waiting for the kernel to drop them",
    () =>
      Effect.gen(function*() {
        const redis = yield* startRedisWith()
        const proxy = yield* freezingProxy(Number(new URL(redis.url).port))
        const taken: Array<string> = []
        yield* startEngineWorker(
          throughProxy(redis.url, proxy),
          { jobs: 1, leaseMs: 3_000, refused: () => [] },
          (data) => Promise.resolve(void taken.push(data.job))
        )
        // The frozen connections are reset before the worker closes (finalizers run last first): BullMQ's close waits
        // for the commands it has under way.
        yield* Effect.addFinalizer(() => Effect.sync(() => proxy.reset()))
        const queue = yield* openQueue(redis.url)
        yield* Effect.orDie(enqueue(queue, "before"))
        yield* eventually("the worker takes the first job", () => taken.includes("before"), 30_000)
        const frozen = proxy.freeze()
        assert.isAtLeast(frozen, 3, "the worker's connections to the queue are frozen (its own, its claims')")
        yield* Effect.orDie(enqueue(queue, "after"))
        const since = Date.now()
        yield* eventually(
          "the worker takes the job queued after its connections went silent",
          () => taken.includes("after"),
          45_000,
          () => `taken: ${taken.join(", ")}; connections frozen: ${frozen}`
        )
        console.log(`queue-silent: the job was taken ${Date.now() - since} ms after it was queued`)
      }),
    120_000
  )
})
