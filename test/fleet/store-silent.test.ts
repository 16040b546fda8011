/**
 * The store's own Redis connections come back when their path goes silent (issue 29, seed 896's last follow-up).
 * A command's answer timeout (`commandTimeout`) fails the command but keeps its connection: on a path gone silent
 * without a reset (a NAT or firewall in between that lost the connection's state; here the freezing proxy), every later
 * command of the store failed after its 10 s, for as long as the kernel kept the connection (about 15 minutes with data
 * unacknowledged; for ever behind something that acknowledges), and the lease's confirmations on theirs: a worker
 * then lost its egress renewals and its jobs' leases although the server was there. Now the store's connection and the
 * confirmations' are kept answering as the queue side's are (`keptAnswering`, Queue.ts): one silent for the answer
 * timeout is closed and ioredis opens it again.
 *
 * In process, the store opened through the proxy with a 3 s lease (a PING every 1.5 s, the answer timeout 10 s, the
 * least there is): both connections answer, are frozen, and must answer again within 40 s (before: never).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { openStore } from "../../src/fleet/Stores.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { availableBackends, startRedisWith } from "./support.js"

const noRedis = !availableBackends.some((b) => b.backend === "redis")

/** Asks `ask` until it answers (each try fails by itself after the answer timeout) or `withinMs` passed: the ms taken. */
const answersAgain = <A, E>(ask: Effect.Effect<A, E>, withinMs: number) =>
  Effect.gen(function*() {
    const since = Date.now()
    const failures: Array<string> = []
    while (Date.now() - since < withinMs) {
      const tried = yield* Effect.either(ask)
      if (Either.isRight(tried)) return Date.now() - since
      failures.push(String(tried.left))
      yield* Effect.sleep(250)
    }
    return assert.fail(`no answer within ${withinMs} ms; ${failures.length} tries failed, the last: ${failures.at(-1)}`)
  })

describe("the store's own connections to Redis going silent", () => {
  it.scopedLive.skipIf(noRedis)(
    "are closed and opened again: the store's commands and the lease's confirmations answer again",
    () =>
      Effect.gen(function*() {
        const redis = yield* startRedisWith()
        const proxy = yield* freezingProxy(Number(new URL(redis.url).port))
        // The frozen connections are reset before the store closes (finalizers run last first): its close sends QUIT.
        yield* Effect.addFinalizer(() => Effect.sync(() => proxy.reset()))
        const store = yield* Effect.orDie(openStore(throughProxy(redis.url, proxy)))
        assert.deepStrictEqual(yield* Effect.orDie(store.lease("silent")), undefined)
        assert.isFalse(yield* Effect.orDie(store.holdsLease("silent", 1)), "the confirmations' connection is open")
        assert.strictEqual(proxy.freeze(), 2, "the store's connection and the confirmations' are frozen")

        const commands = yield* answersAgain(store.lease("silent"), 40_000)
        const confirmations = yield* answersAgain(store.holdsLease("silent", 1), 40_000)
        console.log(
          `store-silent: commands answered again after ${commands} ms, confirmations ${confirmations} ms later`
        )
        assert.isAtLeast(proxy.open(), 2, "both connections were opened again")
      }).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["FSM_FLEET_LEASE_MS", "3000"]])))),
    120_000
  )
})
