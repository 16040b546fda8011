/**
 * A Redis connection of the fleet's reconnects within a second of its server's return, however long the server was
 * down (Store.ts, `redisReconnectDelay`). BullMQ's own default pause grows as `e^attempt` ms up to 20 s: a worker
 * whose server was down for ten attempts or so sat idle for up to 20 s with the server back (the Redis variants of
 * transient-cli took twice their PostgreSQL twins). Checked on the queue's client as the product opens it, on a real
 * redis-server: the pause it would take after each of 50 failed attempts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { RedisOptions } from "ioredis"
import { openQueue } from "../../src/fleet/Queue.js"
import { redisReconnectDelay } from "../../src/fleet/Store.js"
import { availableBackends, startRedis } from "./support.js"

/** BullMQ's connection of a queue (not in its types): the options it made its ioredis client with. */
type RedisConnection = { readonly opts: RedisOptions }

const attempts = Array.from({ length: 50 }, (_, i) => i + 1)

describe("Redis reconnection", () => {
  it("the fleet's pause before a reconnection is at most a second, and grows from 100 ms", () => {
    assert.strictEqual(redisReconnectDelay(1), 100)
    for (const n of attempts) assert.isAtMost(redisReconnectDelay(n), 1_000, `attempt ${n}`)
    assert.strictEqual(redisReconnectDelay(50), 1_000)
  })

  it.scopedLive.skipIf(!availableBackends.some((b) => b.backend === "redis"))(
    "the queue's connection (BullMQ's) reconnects as the fleet says, not after up to 20 s",
    () =>
      Effect.gen(function*() {
        const server = yield* startRedis
        const queue = yield* openQueue(server.url)
        yield* Effect.promise(() =>
          (queue as unknown as { readonly waitUntilReady: () => Promise<unknown> }).waitUntilReady()
        )
        // The options BullMQ gave the ioredis client it made (its default pause, unless the fleet set one).
        const backend = (queue as unknown as { readonly getBackend: () => { readonly connection: RedisConnection } })
          .getBackend()
        const retry = backend.connection.opts.retryStrategy
        assert.isFunction(retry)
        for (const n of attempts) {
          const pause = retry!(n)
          assert.isAtMost(typeof pause === "number" ? pause : Infinity, 1_000, `pause after attempt ${n}: ${pause}`)
        }
      }),
    { timeout: 60_000 }
  )
})
