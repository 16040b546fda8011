/**
 * The lease's confirmations have connections of their own, so that a job's other store operations cannot hold them up
 * (issue 29; test/fleet/transient-cli.test.ts had to accept either reason for a hand-back):
 *
 * - PostgreSQL (PgStore.ts, `leaseConnections`): while a job's data statements hold every place of the store's pool
 *   (`dataConnections`), each waiting on a lock, the lease is still confirmed, at once and for longer than a lease.
 *   Before, the confirmation waited for a place behind them and failed, and the job was handed back as "could not
 *   confirm lease N for a whole lease" instead of for the journal line that could not be written. The journal table
 *   is locked by the test's own session, and that every place of the pool waits is read from `pg_stat_activity`,
 *   never assumed from a duration.
 * - Redis (RedisStore.ts, `leaseConnectionName`): while a job's read of its files ends the store's connection again and
 *   again (its answer past `client-output-buffer-limit`, as in test/fleet/claimed-read-cli.test.ts), the lease is
 *   still confirmed. Before, the confirmations went on the same connection behind the read, were lost with it at each
 *   reconnection, and the lease was given up as unconfirmed within the lease.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { Redis } from "ioredis"
import type pg from "pg"
import { freshMs, leaseGuard } from "../../src/fleet/Lease.js"
import { dataConnections, leaseSession } from "../../src/fleet/PgStore.js"
import { leaseConnectionName } from "../../src/fleet/RedisStore.js"
import type { FleetStore } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import { jobStoreDeadline, outlastingStore } from "../../src/fleet/Transient.js"
import { takenLease } from "./store-fixtures.js"
import { eventually, initialisedPostgres, query, redisServer, startRedis } from "./support.js"

const job = "lease-connection"

/**
 * The journal locked by `db` and more appends than the pool has places, until every place waits on the lock: the
 * appends (still running) and what ends the lock.
 */
const jammedPool = (store: FleetStore, db: pg.Client, url: string, epoch: number) =>
  Effect.gen(function*() {
    yield* Effect.promise(async () => {
      await db.query("BEGIN")
      await db.query("LOCK TABLE fsm_bulk.journal IN ACCESS EXCLUSIVE MODE")
    })
    const appends = yield* Effect.forkScoped(Effect.all(
      Array.from(
        { length: dataConnections + 2 },
        (_, i) => store.appendLines(job, epoch, [`{"state":"done","row":${i + 2}}`])
      ),
      { concurrency: "unbounded" }
    ))
    // Read on a session of its own: inside the lock's transaction the view would stay as first read.
    const waiting = async () =>
      Number(
        (await query(
          url,
          `SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
              AND query LIKE '%INSERT INTO fsm_bulk.journal%'`
        ) as Array<{ n: string }>)[0]?.n
      )
    yield* eventually(`all ${dataConnections} places of the pool wait on the journal`, async () =>
      (await waiting()) === dataConnections)
    return {
      appends,
      release: Effect.promise(() =>
        db.query("COMMIT")
      )
    }
  })

/**
 * The lease guard of `epoch` as a worker's job runs it (JobRunner.ts): the store outlasting faults, every operation of
 * the job bounded by its lease; its heartbeat running (and `beside`, another operation of the job, again and again),
 * each confirmation answered counted, until four of them (more than a lease) or the lease is given up.
 */
const beatFourTimes = (
  store: FleetStore,
  epoch: number,
  leaseMs: number,
  beside: (job: FleetStore) => Effect.Effect<unknown, unknown> = () => Effect.void
) =>
  Effect.gen(function*() {
    let confirmations = 0
    const outlasting = outlastingStore(store, leaseMs, () => Effect.void)
    const counted = {
      holdsLease: (id: string, e: number) =>
        Effect.tap(outlasting.holdsLease(id, e), () => Effect.sync(() => confirmations++))
    }
    const guard = yield* leaseGuard(counted, job, epoch, leaseMs)
    const deadline = Option.some({ at: guard.deadline, firstTryMs: freshMs(leaseMs) })
    const others = yield* Effect.forkScoped(
      Effect.locally(Effect.forever(Effect.either(beside(outlasting))), jobStoreDeadline, deadline)
    )
    const beating = yield* Effect.forkScoped(Effect.locally(guard.heartbeat, jobStoreDeadline, deadline))
    yield* eventually(
      "four confirmations, or the lease given up",
      () => confirmations >= 4 || Effect.runSync(Deferred.isDone(guard.lost)) || beating.unsafePoll() !== null
    )
    yield* Fiber.interrupt(others)
    return guard
  })

describe("the lease's confirmations on PostgreSQL", () => {
  it.scopedLive("answer while every data connection waits on a lock", () =>
    Effect.gen(function*() {
      const { db, server, store } = yield* initialisedPostgres
      const epoch = yield* takenLease(store, job, "w1/1")
      const { appends, release } = yield* jammedPool(store, db, server.url, epoch)
      const held = yield* Effect.either(store.holdsLease(job, epoch))
      assert.deepStrictEqual(
        held._tag === "Right" ? held.right : held.left.message,
        true,
        "the lease confirmed while the pool is full"
      )
      // Before, it was answered only once the appends had failed (their 10 s answer timeout) and given places back.
      assert.isTrue(appends.unsafePoll() === null, "the journal's appends were still waiting when it was confirmed")
      const sessions = yield* Effect.promise(() =>
        query(
          server.url,
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
          [leaseSession]
        ) as Promise<Array<{ n: string }>>
      )
      assert.strictEqual(Number(sessions[0]?.n), 1, `one session named "${leaseSession}" answered it`)
      yield* release
      assert.deepStrictEqual(yield* Fiber.join(appends), Array.from({ length: dataConnections + 2 }, () => true))
      // A lease taken over is not confirmed.
      yield* takenLease(store, job, "w2/1")
      assert.isFalse(yield* store.holdsLease(job, epoch))
    }), { timeout: 60_000 })

  it.scopedLive(
    "keep a running job's lease for longer than a lease while its journal's statements hold the pool",
    () =>
      Effect.gen(function*() {
        const { db, server, store } = yield* initialisedPostgres
        // 3 s: at 1.2 s a loaded machine (load 9-10, other tests beside it) starved a confirmation past the lease
        // in 3 of 7 runs, on this commit and the one before alike.
        const leaseMs = 3_000
        const epoch = yield* takenLease(store, job, "w1/1")
        const { appends, release } = yield* jammedPool(store, db, server.url, epoch)
        // Four confirmations a third of a lease apart: the lease kept for more than a lease. Before, the first one
        // waited for a place until the job's store deadline and the lease was given up as unconfirmed.
        const guard = yield* beatFourTimes(store, epoch, leaseMs)
        assert.isFalse(Effect.runSync(Deferred.isDone(guard.lost)), "the lease is held, not given up as unconfirmed")
        assert.isUndefined(guard.fence.refusal(), "requests of the job may leave")
        assert.isTrue(appends.unsafePoll() === null, "the journal's appends were waiting all along")
        yield* release
        assert.strictEqual((yield* Fiber.join(appends)).length, dataConnections + 2)
      }),
    { timeout: 60_000 }
  )
})

describe.skipIf(redisServer() === undefined)("the lease's confirmations on Redis", () => {
  it.scopedLive("answer while a job's read ends the store's connection again and again", () =>
    Effect.gen(function*() {
      const redis = yield* startRedis
      const store = yield* openStore(redis.url)
      yield* store.init
      const epoch = yield* takenLease(store, job, "w1/1")
      yield* store.putFile(
        job,
        "source/clientes.csv",
        // A source as the implementers' (Windows-1252, `;`), past the limit.
        Buffer.alloc(200_000, "C-1;Padaria São João;12.345.678/0001-90;15/03/2024\r\n", "latin1")
      )
      const admin = new Redis(redis.url)
      yield* Effect.addFinalizer(() => Effect.promise(() => admin.quit()))
      const limit = (value: string) => Effect.promise(() => admin.config("SET", "client-output-buffer-limit", value))
      yield* limit("normal 32kb 32kb 0")
      yield* Effect.addFinalizer(() => limit("normal 0 0 0"))
      const leaseMs = 3_000
      // The job's read of its files (its answer past the limit), tried again within its lease, again and again.
      let reads = 0
      const guard = yield* beatFourTimes(
        store,
        epoch,
        leaseMs,
        (outlasting) => Effect.tap(outlasting.files(job, "source/"), () => Effect.sync(() => reads++))
      )
      assert.strictEqual(reads, 0, "no read of the files came through")
      assert.isFalse(Effect.runSync(Deferred.isDone(guard.lost)), "the lease is held, not given up as unconfirmed")
      const names = yield* Effect.promise(() => admin.client("LIST") as Promise<string>)
      assert.include(names, `name=${leaseConnectionName} `, "the confirmations' own connection")
      // The reads given up on are still with the client (sent again at each reconnection): answered once the limit is
      // lifted, before a read sent after them.
      yield* limit("normal 0 0 0")
      assert.strictEqual((yield* store.files(job, "source/")).length, 1)
    }), { timeout: 60_000 })
})
