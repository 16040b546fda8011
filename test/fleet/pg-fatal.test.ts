/**
 * A PostgreSQL session of the store ended by the server between two statements (issue 29, the CI run of stop 44).
 * `pg_terminate_backend` (or a restart, an idle timeout) makes the server send a FATAL error and close; pg's client
 * emits it as an `error` event when no statement of it waits for an answer, and Node throws an `error` nobody
 * listens to. The pool listens only while a connection is idle: one checked out between two statements (a
 * transaction's, the egress hold's, a statement's just answered but not yet given back) ended the worker with a stack
 * trace instead of stopping as documented (egress-loss-cli.test.ts died so in the CI run of stop 44).
 *
 * Here the fleet tests' proxy (./freezing-proxy.ts, `endAfter`) puts the FATAL error and the close right behind the
 * answer to a chosen statement, in the same packet, as a terminated session's server does when the termination comes
 * in between: the client reads both in one go, before anything of it can go on. The process must not get an
 * uncaught error; the store answers the operation (or fails it with a store error) and the next one on a new
 * connection; an egress hold whose session ended is lost at once. BullMQ's own pool (the queue's, the worker's) is
 * held to the same at its start-up check of its tables, a statement on a connection it checked out.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Either } from "effect"
import { openQueue, startEngineWorker } from "../../src/fleet/Queue.js"
import { openStore } from "../../src/fleet/Stores.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { availableBackends, eventually, query, startPostgres } from "./support.js"

const noPostgres = !availableBackends.some((b) => b.backend === "postgres")

/** The uncaught errors of this process for the scope (vitest reports them too, after the test). */
const uncaught = Effect.acquireRelease(
  Effect.sync(() => {
    const seen: Array<string> = []
    const listener = (e: unknown) => void seen.push(e instanceof Error ? `${e.message}\n${e.stack}` : String(e))
    process.on("uncaughtException", listener)
    return { seen, listener }
  }),
  ({ listener }) => Effect.sync(() => process.off("uncaughtException", listener))
).pipe(Effect.map(({ seen }) => seen))

/** The store through the proxy, with what the process did not catch. */
const setUp = Effect.gen(function*() {
  const pg = yield* startPostgres
  yield* Effect.scoped(Effect.flatMap(Effect.orDie(openStore(pg.url)), (s) => Effect.orDie(s.init)))
  const proxy = yield* freezingProxy(Number(new URL(pg.url).port))
  const url = throughProxy(pg.url, proxy)
  const store = yield* Effect.orDie(openStore(url))
  const errors = yield* uncaught
  /**
   * `op`, with the session that sends a statement holding `statement` ended right after its answer: the proxy wrote
   * the server's FATAL once, and nothing went uncaught meanwhile.
   */
  const endedAfter = <A, E, R>(statement: string, op: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      proxy.endAfter(statement)
      const result = yield* op
      assert.strictEqual(proxy.ended(), 1, `the session was ended after "${statement}"`)
      assert.deepStrictEqual(errors, [], "no uncaught error")
      return result
    })
  return { proxy, store, errors, endedAfter, url, direct: pg.url }
})

/*
 * No wait before looking at `errors`: an `error` event nobody hears is thrown while the client reads the server's
 * packet, before the statement's answer (in that packet, or read before it) lets the operation go on, and before a
 * closing client's `end` resolves.
 */

describe("a store session ended by the server between two statements (PostgreSQL)", () => {
  it.scopedLive.skipIf(noPostgres)(
    "a statement answered just before: its answer is used, nothing uncaught, the next statement answers",
    () =>
      Effect.gen(function*() {
        const { endedAfter, store } = yield* setUp
        assert.deepStrictEqual(yield* endedAfter("pg_stat_activity", Effect.orDie(store.liveWorkers)), [])
        assert.deepStrictEqual(yield* Effect.orDie(store.liveWorkers), [], "the next statement answers")
      }),
    60_000
  )

  it.scopedLive.skipIf(noPostgres)(
    "inside a transaction: the operation fails with a store error, nothing uncaught, the next one succeeds",
    () =>
      Effect.gen(function*() {
        const { endedAfter, store } = yield* setUp
        const first = yield* endedAfter("BEGIN", Effect.either(store.cancelJob("no-such-job")))
        if (Either.isLeft(first)) assert.strictEqual(first.left._tag, "FleetError")
        assert.isTrue(Either.isRight(yield* Effect.either(store.cancelJob("no-such-job"))), "the next one succeeds")
      }),
    60_000
  )

  it.scopedLive.skipIf(noPostgres)(
    "the egress hold's session, ended after its last statement: the hold is lost at once, nothing uncaught",
    () =>
      Effect.gen(function*() {
        const { endedAfter, errors, store } = yield* setUp
        const hold = yield* endedAfter("set_config", Effect.orDie(store.holdEgress("w-fatal")))
        const lost = yield* Deferred.make<void>()
        yield* Effect.forkScoped(Effect.zipRight(hold.lost, Deferred.succeed(lost, undefined)))
        yield* Deferred.await(lost).pipe(
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the hold was never lost") }),
          Effect.orDie
        )
        assert.isFalse(yield* hold.gate, "no request leaves under a lost hold")
        assert.include(hold.refusal() ?? "", "the hold on --egress-id w-fatal was lost")
        assert.deepStrictEqual(errors, [], "no uncaught error")
      }),
    60_000
  )

  it.scopedLive.skipIf(noPostgres)(
    "the egress hold's session, ended between its statements: the hold fails with a store error, nothing uncaught",
    () =>
      Effect.gen(function*() {
        const { endedAfter, store } = yield* setUp
        const held = yield* endedAfter(
          "pg_try_advisory_lock",
          Effect.either(Effect.scoped(store.holdEgress("w-fatal")))
        )
        assert.isTrue(Either.isLeft(held), "the hold is not given")
        if (Either.isLeft(held)) assert.strictEqual(held.left._tag, "FleetError")
        // Held again on a new connection: the ended session's lock went with it.
        assert.isUndefined((yield* Effect.orDie(store.holdEgress("w-fatal"))).refusal())
      }),
    60_000
  )

  it.scopedLive.skipIf(noPostgres)(
    "BullMQ's own pool at its start-up check: the queue answers, nothing uncaught",
    () =>
      Effect.gen(function*() {
        const { endedAfter, url } = yield* setUp
        const queue = yield* openQueue(url)
        // The queue's first call checks the engine's tables on a connection checked out of BullMQ's pool.
        const found = yield* endedAfter("COALESCE(MAX(version)", Effect.promise(() => queue.getJob("no-such-job")))
        assert.isUndefined(found)
        assert.isUndefined(yield* Effect.promise(() => queue.getJob("no-such-job")), "the next call answers")
      }),
    60_000
  )

  it.scopedLive.skipIf(noPostgres)(
    "BullMQ's worker closing its LISTEN connection as the server ends it: nothing uncaught",
    () =>
      Effect.gen(function*() {
        const { direct, errors, proxy, url } = yield* setUp
        yield* Effect.scoped(Effect.gen(function*() {
          yield* startEngineWorker(url, { jobs: 1, leaseMs: 3_000, refused: () => [] }, () => Promise.resolve())
          // Its LISTEN connection is named after the queue once it waits for jobs.
          yield* eventually("the worker listens for jobs", async () =>
            (await query(direct, "SELECT 1 FROM pg_stat_activity WHERE application_name = 'fsm-bulk'")).length > 0)
          // As the worker closes, each connection's Terminate is answered by the server's FATAL (a session ended
          // just then): BullMQ's own LISTEN client stopped listening for errors before sending it.
          proxy.fatalOn("X\u0000\u0000\u0000\u0004")
        }))
        assert.isAtLeast(proxy.ended(), 1, "a connection was ended as it closed")
        assert.deepStrictEqual(errors, [], "no uncaught error")
      }),
    60_000
  )
})
