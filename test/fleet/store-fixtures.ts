/**
 * Jobs and PostgreSQL sessions for the fast-tier tests of the store's ends and takeovers (job-end, takeover-end):
 * a job to add, a job leased by a worker, a transaction left open by a session of the test's own (a holder of the
 * lease row), and the wait until a statement waits for a lock.
 */
import { Effect } from "effect"
import pg from "pg"
import type { FleetStore, NewJob } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import { eventually, query, startFleetBackend } from "./support.js"

const spec = { resource: "customers", read: { encoding: "windows-1252", delimiter: ";" } }

/** An import of two customers (a part of `parent` when given). */
export const storeJob = (id: string, parent: string | null = null): NewJob => ({
  id,
  kind: parent === null ? "import" : "chunk",
  account: "acme",
  resource: "customers",
  spec,
  rows: 2,
  parent
})

/**
 * Job `id`'s lease taken by `owner` as a worker takes it (`takeOpenLease`): its epoch. A job the store does not have is
 * added first (a two-customer import); one that has ended cannot be taken (a defect of the test).
 */
export const takenLease = (store: FleetStore, id: string, owner: string) =>
  Effect.gen(function*() {
    const taken = yield* store.takeOpenLease(id, owner)
    if (taken !== undefined) return taken
    yield* store.addJob(storeJob(id))
    const epoch = yield* store.takeOpenLease(id, owner)
    return epoch ?? (yield* Effect.dieMessage(`the lease of job ${id} could not be taken`))
  })

/** A fleet store on the run's PostgreSQL with job `id` added and its lease taken by worker w1. */
export const leasedOnPostgres = (id: string) =>
  Effect.gen(function*() {
    const { url } = yield* startFleetBackend("postgres")
    const store = yield* openStore(url)
    yield* store.init
    yield* store.addJob(storeJob(id))
    const epoch = yield* takenLease(store, id, "w1/1")
    return { epoch, store, url }
  })

/** A connection of its own for the scope, in a transaction left open (committed by the test). */
export const openTransaction = (url: string) =>
  Effect.gen(function*() {
    const client = new pg.Client({ connectionString: url })
    yield* Effect.acquireRelease(Effect.promise(() => client.connect()), () => Effect.promise(() => client.end()))
    yield* Effect.promise(() => client.query("BEGIN"))
    return client
  })

/** Until a statement of the database waits for a lock (`what`, behind the lease row). */
export const waitsForLock = (url: string, what = "the takeover") =>
  eventually(
    `${what} waits for the lease row`,
    async () =>
      (await query(
        url,
        "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
      )).length > 0,
    20_000
  )
