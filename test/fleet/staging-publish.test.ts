/**
 * The publishing step of a staged submission (`publishJobs`) against a reclaim removing it at that moment, on
 * PostgreSQL (issue 29, "stale snapshot"). Publishing counted the submission's jobs, then marked them submitted in a
 * second statement: a reclaim not yet committed when the count read them left the count whole, the marking waited for
 * the reclaim and then found the rows gone, and the step said the submission published: its `submit` then queued jobs
 * that no longer exist and said them submitted. Real PostgreSQL, the real reclaim; the waits read from
 * `pg_stat_activity`, never from a duration.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Fiber } from "effect"
import { eventually, initialisedPostgres, pgClient } from "./support.js"

const job = (id: string, parent: string | null) => ({
  id,
  kind: "import",
  account: "acme",
  resource: "customers",
  spec: { read: { encoding: "windows-1252", delimiter: ";" } },
  rows: 1,
  parent
})

/** A piece of a customer's file as users send them: Windows-1252, `;`, dd/mm/yyyy, decimal commas. */
const piece = Buffer.from(
  "Nome;Cidade;Data de cadastro;Limite\r\nJoão Araújo;São Paulo;03/11/2026;1.250,50\r\n",
  "latin1"
)

describe("staged submissions on PostgreSQL: publishing", () => {
  it.scopedLive(
    "a submission reclaimed while it is being published is refused, nothing of it left",
    () =>
      Effect.gen(function*() {
        const { db: c, server, store } = yield* initialisedPostgres
        const lockWaits = async () =>
          (await c.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
          )).rowCount ?? 0
        // A staged submission whose submit went quiet (no batch nor heartbeat for an hour): the reclaim's to remove.
        yield* store.stageJob(job("s1", null))
        yield* store.stageFile({ job: "s1", name: "source/clientes.csv", content: piece }, 0)
        yield* store.stageParts("s1", [job("s1-part0001", "s1")], [{
          job: "s1-part0001",
          name: "part.csv",
          content: piece
        }])
        yield* Effect.promise(() => c.query(`UPDATE fsm_bulk.jobs SET created = now() - interval '1 hour'`))

        // Another session holds the part's row for a moment: the reclaim, the parent already taken and deleted, waits
        // on it before it can delete the part and commit.
        const other = yield* pgClient(server.url)
        yield* Effect.promise(async () => {
          await other.query("BEGIN")
          await other.query(`SELECT 1 FROM fsm_bulk.jobs WHERE id = 's1-part0001' FOR SHARE`)
        })
        const reclaim = yield* Effect.fork(store.reclaimStaging(60_000))
        yield* eventually("the reclaim waits on the part's row", async () => (await lockWaits()) >= 1, 20_000)
        // The submit comes back and publishes: it must wait for the reclaim, and then see the submission gone.
        const publish = yield* Effect.fork(Effect.either(store.publishJobs("s1", 2)))
        yield* eventually("the publishing waits for the reclaim", async () => (await lockWaits()) >= 2, 20_000)
        yield* Effect.promise(() => other.query("COMMIT"))
        assert.strictEqual(yield* Fiber.join(reclaim), 1, "the quiet submission reclaimed")
        const published = yield* Fiber.join(publish)
        assert.isTrue(Either.isLeft(published), "publishing a reclaimed submission is refused")
        if (Either.isLeft(published)) assert.include(published.left.message, "were removed meanwhile")

        const left = yield* Effect.promise(async () => ({
          jobs: (await c.query(`SELECT id FROM fsm_bulk.jobs`)).rows,
          files: (await c.query(`SELECT job, name FROM fsm_bulk.files`)).rows,
          pieces: (await c.query(`SELECT job, name FROM fsm_bulk.file_pieces`)).rows
        }))
        assert.deepStrictEqual(left, { jobs: [], files: [], pieces: [] }, "nothing of the submission is left")
      }),
    { timeout: 120_000 }
  )

  it.scopedLive(
    "a submission published first is kept whole by a reclaim after it, and published again changes nothing",
    () =>
      Effect.gen(function*() {
        const { db: c, store } = yield* initialisedPostgres
        yield* store.stageJob(job("s2", null))
        yield* store.stageFile({ job: "s2", name: "source/clientes.csv", content: piece }, 0)
        yield* store.stageParts("s2", [job("s2-part0001", "s2")], [])
        yield* store.publishJobs("s2", 2)
        yield* Effect.promise(() => c.query(`UPDATE fsm_bulk.jobs SET created = now() - interval '1 hour'`))
        assert.strictEqual(yield* store.reclaimStaging(60_000), 0, "a published submission is no reclaim's")
        // Its answer lost, the step is asked again: it finds its jobs there, already published.
        yield* store.publishJobs("s2", 2)
        const rows = yield* Effect.promise(() => c.query(`SELECT id, state FROM fsm_bulk.jobs ORDER BY id`))
        assert.deepStrictEqual(rows.rows, [{ id: "s2", state: "submitting" }, {
          id: "s2-part0001",
          state: "submitting"
        }])
        const [file] = yield* store.files("s2", "source/")
        assert.deepStrictEqual(file?.content, piece, "its file joined once")
      }),
    { timeout: 120_000 }
  )
})
