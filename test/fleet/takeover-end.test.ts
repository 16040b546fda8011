/**
 * A takeover never takes a job that has ended (issue 29, "stale snapshot"). On PostgreSQL a takeover
 * (`takeOpenLease`) waits for the lease row while a holder has it locked (a journal line, a job's end being written).
 * It took the lease in one statement that read the job's state with that statement's snapshot, taken before it
 * waited: an end committed during the wait was not seen, and the takeover raised the epoch of an ended job (its
 * worker then ran the job again). Against a throwaway PostgreSQL, the end committed while the takeover waits.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import type { FleetStore } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import {
  leasedOnPostgres as leased,
  openTransaction,
  storeJob as job,
  takenLease,
  waitsForLock
} from "./store-fixtures.js"
import { query, startFleetBackend } from "./support.js"

const row = (url: string, id: string) =>
  Effect.promise(async () => {
    const [j] = await query(url, "SELECT state, exit_code FROM fsm_bulk.jobs WHERE id = $1", [id])
    const [l] = await query(url, "SELECT epoch, owner FROM fsm_bulk.leases WHERE job = $1", [id])
    return {
      state: j?.state as string,
      exit: j?.exit_code as number | null,
      epoch: l?.epoch as number,
      owner: l?.owner
    }
  })

/** What the takeover must find once the end committed during its wait: nothing taken, the end standing. */
const nothingTaken = (
  taken: number | undefined,
  after: { state: string; epoch: number; owner: unknown },
  epoch: number,
  state: string
) => {
  assert.isUndefined(taken, "the takeover takes no lease of an ended job")
  assert.strictEqual(after.epoch, epoch, "the epoch is unchanged")
  assert.strictEqual(after.owner, "w1/1", "the lease is still the ender's")
  assert.strictEqual(after.state, state, "the job's end stands")
}

/** The ends a worker records, each run by the store as a worker runs it. */
const ends: ReadonlyArray<
  {
    readonly name: string
    readonly state: string
    readonly end: (s: FleetStore, id: string, epoch: number) => Effect.Effect<boolean, unknown>
  }
> = [
  {
    name: "finishJob",
    state: "done",
    end: (s, id, epoch) => s.finishJob(id, epoch, { exitCode: 0, summary: { rows: 2, created: 2 }, rows: 2 })
  },
  {
    name: "failJob",
    state: "failed",
    end: (s, id, epoch) => s.failJob(id, epoch, { exitCode: 3, error: "interrupted" })
  },
  {
    name: "endWhole",
    state: "done",
    end: (s, id, epoch) =>
      s.endWhole(id, epoch, [{ name: "report.csv", content: Buffer.from("id;nome\r\n1;Jo\xe3o\r\n", "latin1") }], {
        state: "done",
        exitCode: 0,
        summary: { rows: 1 },
        rows: 1,
        error: undefined
      })
  }
]

describe("fleet store on postgres: a takeover waiting for the lease row", () => {
  it.scopedLive(
    "takes nothing when the end it waited for committed (the end holding the lease row, as endWhole does)",
    () =>
      Effect.gen(function*() {
        const { epoch, store, url } = yield* leased("ending")
        // The holder's end, as the store writes one: the lease row locked for share, then the job's state, one
        // transaction (endWhole's order), left open until the takeover waits behind it.
        const ender = yield* openTransaction(url)
        const held = yield* Effect.promise(() =>
          ender.query("SELECT 1 FROM fsm_bulk.leases WHERE job = $1 AND epoch = $2 FOR SHARE", ["ending", epoch])
        )
        assert.strictEqual(held.rowCount, 1)
        yield* Effect.promise(() =>
          ender.query(
            "UPDATE fsm_bulk.jobs SET state = 'done', exit_code = 0, finished = now() WHERE id = $1",
            ["ending"]
          )
        )
        const takeover = yield* Effect.fork(store.takeOpenLease("ending", "w2/1"))
        yield* waitsForLock(url)
        yield* Effect.promise(() => ender.query("COMMIT"))
        const taken = yield* Fiber.join(takeover)
        nothingTaken(taken, yield* row(url, "ending"), epoch, "done")
      }),
    { timeout: 60_000 }
  )

  it.scopedLive.each(ends)(
    "takes nothing when $name committed during its wait (the row held by a journal line being written)",
    ({ end, name, state }) =>
      Effect.gen(function*() {
        const id = `ended-${name}`
        const { epoch, store, url } = yield* leased(id)
        // A journal line of the holder being written: the lease row locked for share, the transaction left open.
        const line = yield* openTransaction(url)
        yield* Effect.promise(() =>
          line.query("SELECT 1 FROM fsm_bulk.leases WHERE job = $1 AND epoch = $2 FOR SHARE", [id, epoch])
        )
        const takeover = yield* Effect.fork(store.takeOpenLease(id, "w2/1"))
        yield* waitsForLock(url)
        // The holder's end shares the lock with its line: it is recorded (committed) while the takeover waits.
        assert.isTrue(yield* end(store, id, epoch), `${name} recorded`)
        assert.strictEqual((yield* row(url, id)).state, state)
        yield* Effect.promise(() => line.query("COMMIT"))
        const taken = yield* Fiber.join(takeover)
        nothingTaken(taken, yield* row(url, id), epoch, state)
      }),
    { timeout: 60_000 }
  )

  it.scopedLive.each(ends)(
    "the other way round: $name waiting behind a takeover finds the new epoch and writes nothing",
    ({ end, name }) =>
      Effect.gen(function*() {
        const id = `behind-${name}`
        const { epoch, store, url } = yield* leased(id)
        // A takeover's transaction left open once it raised the epoch (the lease row its own until it commits).
        const takeover = yield* openTransaction(url)
        yield* Effect.promise(() =>
          takeover.query("UPDATE fsm_bulk.leases SET epoch = epoch + 1, owner = 'w2/1' WHERE job = $1", [id])
        )
        const ending = yield* Effect.fork(end(store, id, epoch))
        yield* waitsForLock(url, name)
        yield* Effect.promise(() => takeover.query("COMMIT"))
        assert.isFalse(yield* Fiber.join(ending), `${name} refused: its epoch no longer holds`)
        const after = yield* row(url, id)
        assert.deepStrictEqual([after.epoch, after.owner, after.state], [epoch + 1, "w2/1", "queued"])
        assert.deepStrictEqual(yield* store.files(id, "out/"), [], "no output of the old owner's")
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "takes nothing when a cancel committed during its wait (a job never leased: the cancel inserts its lease row)",
    () =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend("postgres")
        const store = yield* openStore(url)
        yield* store.init
        yield* store.addJob(job("never"))
        // `cancel`'s transaction (cancelIn) left open: its lease row inserted (epoch 1), the job marked cancelled.
        const cancel = yield* openTransaction(url)
        yield* Effect.promise(async () => {
          await cancel.query("INSERT INTO fsm_bulk.leases (job, epoch, owner) VALUES ($1, 1, 'cancel')", ["never"])
          await cancel.query("UPDATE fsm_bulk.jobs SET state = 'cancelled', finished = now() WHERE id = $1", ["never"])
        })
        const takeover = yield* Effect.fork(store.takeOpenLease("never", "w2/1"))
        yield* waitsForLock(url)
        yield* Effect.promise(() => cancel.query("COMMIT"))
        const taken = yield* Fiber.join(takeover)
        const after = yield* row(url, "never")
        assert.isUndefined(taken, "the takeover takes no lease of a cancelled job")
        assert.deepStrictEqual([after.epoch, after.owner, after.state], [1, "cancel", "cancelled"])
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "takes the lease when the job did not end during the wait (the line committed alone)",
    () =>
      Effect.gen(function*() {
        const { epoch, store, url } = yield* leased("open")
        const line = yield* openTransaction(url)
        yield* Effect.promise(() =>
          line.query("SELECT 1 FROM fsm_bulk.leases WHERE job = $1 AND epoch = $2 FOR SHARE", ["open", epoch])
        )
        const takeover = yield* Effect.fork(store.takeOpenLease("open", "w2/1"))
        yield* waitsForLock(url)
        yield* Effect.promise(() => line.query("COMMIT"))
        assert.strictEqual(yield* Fiber.join(takeover), epoch + 1)
        const after = yield* row(url, "open")
        assert.deepStrictEqual([after.epoch, after.owner, after.state], [epoch + 1, "w2/1", "queued"])
        // A job never leased is taken at epoch 1; one that ended is not taken at all.
        yield* store.addJob(job("fresh"))
        assert.strictEqual(yield* store.takeOpenLease("fresh", "w2/1"), 1)
        yield* store.addJob(job("over"))
        const e = yield* takenLease(store, "over", "w1/1")
        assert.isTrue(yield* store.failJob("over", e, { exitCode: 2, error: "refused" }))
        assert.isUndefined(yield* store.takeOpenLease("over", "w2/1"))
        assert.isUndefined(yield* store.takeOpenLease("no-such-job", "w2/1"))
      }),
    { timeout: 60_000 }
  )
})
