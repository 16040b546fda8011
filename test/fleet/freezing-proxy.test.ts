/**
 * The freezing proxy (./freezing-proxy.ts) passes on what the path it stands for would: a server that goes away
 * closes the connections through it, also those a client opens while the server is down (refused), so the client
 * reconnects once the server is back. Before (issue 29, seed 896 on Redis), a connection the proxy accepted while
 * redis-server was down was left open with nothing behind it: the client's handshake got no answer and no close,
 * for ever. The fleet's store connections gave up on it after their answer timeout (`Command timed out`) and
 * reconnected; BullMQ's have no answer timeout and stayed on it: worker w0 of that history, restarted behind its
 * proxy (`store-fault`), held its egress id but took no job again, and the refused job of the history, waiting for
 * every live worker's refusal, was parked again and again and never ended (`(lost) … never ended`).
 *
 * Against a real redis-server restarted behind the proxy: the queue's connection (BullMQ's, as the product opens
 * it) answers again after the restart. Frozen connections stay silent whatever the server does (the point of
 * `store-freeze`), and are closed by `reset` only.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as net from "node:net"
import { openQueue } from "../../src/fleet/Queue.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { availableBackends, startRedisWith } from "./support.js"

const noRedis = !availableBackends.some((b) => b.backend === "redis")

/** `op`, or `undefined` once `ms` passed without its answer. */
const within = <A>(ms: number, op: () => Promise<A>) =>
  Effect.promise(() => op()).pipe(Effect.timeoutTo({ duration: ms, onSuccess: (a) => a, onTimeout: () => undefined }))

/** A redis-server of its own and the freezing proxy in front of it. */
const redisBehindProxy = Effect.gen(function*() {
  const redis = yield* startRedisWith()
  const proxy = yield* freezingProxy(Number(new URL(redis.url).port))
  return { redis, proxy }
})

describe("the freezing proxy in front of a store", () => {
  it.scopedLive.skipIf(noRedis)(
    "a server restarted behind it: the queue's connection through it answers again (redis)",
    () =>
      Effect.gen(function*() {
        const { proxy, redis } = yield* redisBehindProxy
        const queue = yield* openQueue(throughProxy(redis.url, proxy))
        assert.isDefined(yield* within(10_000, () => queue.getJob("none").then(() => "answered")))
        // Down for 800 ms: the client's reconnections (100 ms, then 200 ms more, …) reach the proxy meanwhile.
        yield* redis.restart(800)
        const answered = yield* within(10_000, () => queue.getJob("none").then(() => "answered"))
        assert.strictEqual(answered, "answered", "the queue's connection answers within 10 s of the server's return")
      }),
    60_000
  )

  it.scopedLive.skipIf(noRedis)(
    "a connection opened while the server is down is closed, not left silent (redis)",
    () =>
      Effect.gen(function*() {
        const { proxy, redis } = yield* redisBehindProxy
        const restart = yield* redis.down
        const closed = yield* Effect.promise(() =>
          new Promise<boolean>((resolve) => {
            const socket = net.connect(proxy.port, "127.0.0.1")
            const timer = setTimeout(() => {
              socket.destroy()
              resolve(false)
            }, 5_000)
            socket.on("error", () => undefined)
            socket.on("close", () => {
              clearTimeout(timer)
              resolve(true)
            })
          })
        )
        yield* restart
        assert.isTrue(closed, "the proxy closes a connection whose server side was refused")
      }),
    60_000
  )

  it.scopedLive.skipIf(noRedis)(
    "a frozen connection stays silent when the server goes away, until reset (redis)",
    () =>
      Effect.gen(function*() {
        const { proxy, redis } = yield* redisBehindProxy
        const socket = net.connect(proxy.port, "127.0.0.1")
        let closedAt = 0
        socket.on("error", () => undefined)
        socket.on("close", () => (closedAt = Date.now()))
        yield* Effect.promise(() => new Promise((resolve) => socket.once("connect", resolve)))
        while (proxy.open() === 0) yield* Effect.sleep(20)
        assert.strictEqual(proxy.freeze(), 1)
        const restart = yield* redis.down
        yield* Effect.sleep(1_000)
        assert.strictEqual(closedAt, 0, "the server's end is not passed through a frozen connection")
        yield* restart
        assert.strictEqual(proxy.reset(), 1)
        while (closedAt === 0) yield* Effect.sleep(20)
      }),
    60_000
  )
})
