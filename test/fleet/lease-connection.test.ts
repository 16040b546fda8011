/**
 * The lease's confirmations on PostgreSQL have connections of their own (PgStore.ts, `leaseConnections`): while a
 * job's data statements hold every place of the store's pool (`dataConnections`), each waiting on a lock, the lease is
 * still confirmed, at once and for longer than a lease. Before, the confirmation waited for a place behind them and
 * failed, and the job was handed back as "could not confirm lease N for a whole lease" instead of for the journal line
 * that could not be written (issue 29; test/fleet/transient-cli.test.ts had to accept either reason).
 *
 * Real PostgreSQL: the journal table is locked by the test's own session, the store's appends wait on it, and that
 * every place of the pool waits is read from `pg_stat_activity`, never assumed from a duration.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import type pg from "pg"
import { freshMs, leaseGuard } from "../../src/fleet/Lease.js"
import { dataConnections, leaseSession } from "../../src/fleet/PgStore.js"
import type { FleetStore } from "../../src/fleet/Store.js"
import { jobStoreDeadline, outlastingStore } from "../../src/fleet/Transient.js"
import { eventually, initialisedPostgres, query } from "./support.js"

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

describe("the lease's confirmations on PostgreSQL", () => {
  it.scopedLive("answer while every data connection waits on a lock", () =>
    Effect.gen(function*() {
      const { db, server, store } = yield* initialisedPostgres
      const epoch = yield* store.takeLease(job, "w1/1")
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
      yield* store.takeLease(job, "w2/1")
      assert.isFalse(yield* store.holdsLease(job, epoch))
    }), { timeout: 60_000 })

  it.scopedLive(
    "keep a running job's lease for longer than a lease while its journal's statements hold the pool",
    () =>
      Effect.gen(function*() {
        const { db, server, store } = yield* initialisedPostgres
        const leaseMs = 1_200
        const epoch = yield* store.takeLease(job, "w1/1")
        const { appends, release } = yield* jammedPool(store, db, server.url, epoch)
        // The guard as a worker's job runs it (JobRunner.ts): the store outlasting faults, every operation of the job
        // bounded by its lease; each confirmation answered is counted.
        let confirmations = 0
        const outlasting = outlastingStore(store, leaseMs, () => Effect.void)
        const counted = {
          holdsLease: (id: string, e: number) =>
            Effect.tap(outlasting.holdsLease(id, e), () => Effect.sync(() => confirmations++))
        }
        const guard = yield* leaseGuard(counted, job, epoch, leaseMs)
        const deadline = Option.some({ at: guard.deadline, firstTryMs: freshMs(leaseMs) })
        const beating = yield* Effect.forkScoped(Effect.locally(guard.heartbeat, jobStoreDeadline, deadline))
        // Four confirmations a third of a lease apart: the lease kept for more than a lease. Before, the first one
        // waited for a place until the job's store deadline and the lease was given up as unconfirmed.
        yield* eventually(
          "four confirmations, or the lease given up",
          () => confirmations >= 4 || Effect.runSync(Deferred.isDone(guard.lost)) || beating.unsafePoll() !== null
        )
        assert.isFalse(guard.unconfirmed(), "the lease was not given up as unconfirmed")
        assert.isFalse(Effect.runSync(Deferred.isDone(guard.lost)), "the lease is held")
        assert.isUndefined(guard.fence.refusal(), "requests of the job may leave")
        assert.isTrue(appends.unsafePoll() === null, "the journal's appends were waiting all along")
        yield* release
        assert.strictEqual((yield* Fiber.join(appends)).length, dataConnections + 2)
      }),
    { timeout: 60_000 }
  )
})
