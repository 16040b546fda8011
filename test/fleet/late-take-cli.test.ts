/**
 * A take of a job's lease that its worker gave up on never lands over a take made after it (issue 29, seed 896).
 * Worker A's path to the store goes silent as A asks for the lease (the freezing proxy); A's store gives up on its own,
 * at its answer timeout, as a worker's does. Worker B then takes the lease. When A's path is back:
 *
 * - on Redis, ioredis sends A's take again at its reconnection (it sends every command it had sent and not heard of,
 *   also one whose caller had its "Command timed out"): before, it landed and the lease was A's, which runs nothing
 *   (epoch 2, owner w-gone/1); B lost its lease and the job was handed back and restarted from its journal. The take
 *   now carries a deadline on the server's clock (Store.ts, `serverDeadline`) and lands only before it;
 * - on PostgreSQL a take is a transaction, committed by the client once it has the raise's answer: A's raise was run
 *   (the proxy freezes at its answer) and holds the lease row, B's take waits for it, and the server ends A's session
 *   at its `idle_in_transaction_session_timeout` (the store's answer timeout, as A's own), rolling it back. Nothing
 *   of A's lands, and nothing can land after B's take: the row was A's until then.
 *
 * In the cli tier: each backend waits for the store's answer timeout (10 s, the least there is; a 3 s lease here).
 *
 * A take whose caller stopped waiting sooner than that (second describe, Redis) lands when its connection is back while
 * the store is open (./lost-end.test.ts); once the store is closed, as a worker closes it when it stops, it never does:
 * the store's close ends its connections without reconnecting (QUIT, then `disconnect()`), and ioredis rejects what
 * was waiting instead of sending it again.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Scope } from "effect"
import { FleetError } from "../../src/fleet/Errors.js"
import { openStore } from "../../src/fleet/Stores.js"
import { outlastingStore } from "../../src/fleet/Transient.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { storeJob } from "./store-fixtures.js"
import { availableBackends, startFleetBackend } from "./support.js"

const leaseMs = 3_000

/** The store at `url` as a worker with a lease of `leaseMs` opens it (its answer timeout follows from the lease). */
const storeAt = (url: string) =>
  Effect.orDie(openStore(url)).pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["FSM_FLEET_LEASE_MS", String(leaseMs)]])))
  )

describe("a lease take whose worker gave up on it", () => {
  for (const { backend } of availableBackends) {
    it.scopedLive(
      `never lands over the lease another worker took after it (${backend})`,
      () =>
        Effect.gen(function*() {
          const { url } = yield* startFleetBackend(backend)
          const store = yield* storeAt(url)
          yield* Effect.orDie(store.init)
          yield* Effect.orDie(store.addJob(storeJob("late")))
          // A's path freezes at its take: on Redis as the command leaves A (the server never gets it); on PostgreSQL at
          // the server's answer to the epoch's raise, inside the take's transaction (the row locked, uncommitted).
          const owner = "w-gone/1"
          const proxy = yield* freezingProxy(
            Number(new URL(url).port),
            backend === "postgres" ? owner : undefined,
            backend === "redis" ? owner : undefined
          )
          const gone = yield* storeAt(throughProxy(url, proxy))
          const asked = yield* gone.takeOpenLease("late", owner).pipe(Effect.timeout(60_000), Effect.either)
          assert.isAtLeast(proxy.frozen.connections, 1, "A's path froze at its take")
          assert.strictEqual(asked._tag, "Left", "A has no answer")
          const why = asked._tag === "Left" ? asked.left : undefined
          assert.instanceOf(why, FleetError, `A's store gave up on its own, at its answer timeout: ${String(why)}`)
          assert.strictEqual((why as FleetError).reason, "Unavailable")

          // B, the worker the queue gave the job to next, takes the lease and holds it.
          const taken = yield* outlastingStore(store, leaseMs, () => Effect.void).takeOpenLease("late", "w-run/1")
          assert.strictEqual(taken, 1, "B takes the lease: nothing of A's was taken")
          // A's path back: on Redis, what A asks now is answered after what ioredis sends again (A's take).
          assert.isAtLeast(proxy.reset(), 1)
          yield* Effect.orDie(outlastingStore(gone, leaseMs, () => Effect.void).lease("late"))
          assert.deepStrictEqual(
            { ...(yield* Effect.orDie(store.lease("late"))) },
            { epoch: 1, owner: "w-run/1" },
            "B still holds the lease"
          )
        }),
      120_000
    )
  }
})

describe("a lease take whose caller stopped waiting, its store then closed (redis)", () => {
  it.scopedLive.skipIf(!availableBackends.some((b) => b.backend === "redis"))(
    "never lands when the path comes back",
    () =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend("redis")
        const store = yield* storeAt(url)
        yield* Effect.orDie(store.init)
        yield* Effect.orDie(store.addJob(storeJob("late")))
        const owner = "w-gone/1"
        const proxy = yield* freezingProxy(Number(new URL(url).port), undefined, owner)
        // A's store, in a scope of its own: A stops waiting for its take after 1 s, then closes its store (stopping).
        const scope = yield* Scope.make()
        const gone = yield* storeAt(throughProxy(url, proxy)).pipe(Scope.extend(scope))
        const asked = yield* gone.takeOpenLease("late", owner).pipe(Effect.timeout(1_000), Effect.either)
        assert.strictEqual(asked._tag, "Left", "A stopped waiting for its take")
        assert.isAtLeast(proxy.frozen.connections, 1, "A's path froze at its take")
        yield* Scope.close(scope, Exit.void)

        // The path back: nothing of A's is sent again. B takes the lease, and keeps it.
        assert.isAtLeast(proxy.reset(), 1)
        yield* Effect.sleep(2_000)
        assert.deepStrictEqual(yield* Effect.orDie(store.lease("late")), undefined, "nothing was taken")
        assert.strictEqual(yield* Effect.orDie(store.takeOpenLease("late", "w-run/1")), 1, "B takes the lease")
        yield* Effect.sleep(1_000)
        assert.deepStrictEqual({ ...(yield* Effect.orDie(store.lease("late"))) }, { epoch: 1, owner: "w-run/1" })
      }),
    60_000
  )
})
