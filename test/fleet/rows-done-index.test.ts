/**
 * `status`/`wait`'s rows-done count on PostgreSQL (`FleetStore.rowsDone`, `rowsDoneStatement` in
 * src/fleet/PgStore.ts) is served by indexes: it reads the asked jobs' journal lines, not every line of the
 * database (issue 29: it joined on `split_part`, which no index served, 684 ms a call at the end of a 3,000-row
 * run). The plan is read from PostgreSQL's own EXPLAIN on a fleet of 1,000 parts and 100,000 journal lines; an
 * existing fleet made without the indexes gets them from `fleet init` (the store's `init`), run again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type pg from "pg"
import { rowsDoneStatement } from "../../src/fleet/PgStore.js"
import { initialisedPostgres, type PlanNode, planNodes as nodes } from "./support.js"

/**
 * 50 chunked jobs of 20 parts each (1,000 parts), each part's journal 100 lines (a header, then a `sending` and a
 * `done` line for rows 2…50, and one row done twice), and a step's stream `p0/step-1` of the first parent: the
 * database's statistics taken, as a fleet's would be.
 */
const fill = (c: pg.Client) =>
  Effect.promise(async () => {
    await c.query(`
      INSERT INTO fsm_bulk.jobs (id, kind, account, spec, state, rows, parent)
      SELECT 'p' || p, 'import', 'acme', '{}', 'running', 980, NULL FROM generate_series(0, 49) p;
      INSERT INTO fsm_bulk.jobs (id, kind, account, spec, state, rows, parent)
      SELECT 'p' || p || '-part' || lpad(k::text, 4, '0'), 'import', 'acme', '{}', 'running', 49, 'p' || p
      FROM generate_series(0, 49) p, generate_series(1, 20) k;
      INSERT INTO fsm_bulk.journal (job, epoch, line)
      SELECT j.id, 1, CASE
        WHEN i = 0 THEN '{"state":"header"}'
        WHEN i = 99 THEN '{"state":"done","row":2}'
        WHEN i % 2 = 1 THEN '{"state":"sending","row":' || ((i + 1) / 2 + 1) || '}'
        ELSE '{"state":"done","row":' || (i / 2 + 1) || '}' END
      FROM fsm_bulk.jobs j, generate_series(0, 99) i WHERE j.parent IS NOT NULL;
      INSERT INTO fsm_bulk.journal (job, epoch, line) VALUES
        ('p0/step-1', 1, '{"state":"done","row":2}'), ('p0/step-1', 1, '{"state":"done","row":3}');
      ANALYZE fsm_bulk.jobs;
      ANALYZE fsm_bulk.journal;
    `)
  })

/** The plan of the rows-done count of `ids`, as PostgreSQL would run it. */
const plan = (c: pg.Client, ids: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const r = await c.query<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
      `EXPLAIN (FORMAT JSON) ${rowsDoneStatement}`,
      [ids]
    )
    return nodes(r.rows[0]!["QUERY PLAN"][0]!.Plan)
  })

const readsWholeJournal = (plan: ReadonlyArray<PlanNode>) =>
  plan.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "journal")
const usesJournalIndex = (plan: ReadonlyArray<PlanNode>) => plan.some((n) => n["Index Name"] === "journal_job_root")

describe("rows done on PostgreSQL", () => {
  it.scopedLive(
    "a job's count reads its own parts' lines through the index, not the whole journal",
    () =>
      Effect.gen(function*() {
        const { db: c, store } = yield* initialisedPostgres
        yield* fill(c)

        for (const ids of [["p7"], ["p0", "p31"], ["p3-part0005"]]) {
          const steps = yield* plan(c, ids)
          assert.isTrue(
            usesJournalIndex(steps),
            `${ids.join(", ")}: ${JSON.stringify(steps.map((n) => n["Node Type"]))}`
          )
          assert.isFalse(readsWholeJournal(steps), `${ids.join(", ")}: no sequential scan of the journal`)
        }
        // The figures are the same as before: each part's 49 distinct rows (a row done twice counts once), a step's
        // stream counted apart, a part asked for alone counted with nothing (it is not a job of its own).
        const done = yield* store.rowsDone(["p7", "p0", "p31", "p3-part0005", "nope"])
        assert.deepStrictEqual(
          [...done].sort(([a], [b]) => a.localeCompare(b)),
          [["p0", 20 * 49 + 2], ["p31", 20 * 49], ["p7", 20 * 49]]
        )
      }),
    { timeout: 120_000 }
  )

  it.scopedLive("a fleet made before the indexes gets them from fleet init, run again", () =>
    Effect.gen(function*() {
      const { db: c, store } = yield* initialisedPostgres
      // The tables as an older version made them: no index but the primary keys.
      yield* Effect.promise(() => c.query(`DROP INDEX fsm_bulk.journal_job_root; DROP INDEX fsm_bulk.jobs_parent`))
      yield* fill(c)
      // Not counted before `init` as well: without the indexes the count took 6 s of PostgreSQL's CPU (a nested loop
      // over every line for each part), and the same statement over the same rows gives the same figures; `init` must
      // leave them as the first test counts them.
      assert.isTrue(readsWholeJournal(yield* plan(c, ["p7"])), "without the index the whole journal is read")

      yield* store.init
      yield* Effect.promise(() => c.query(`ANALYZE fsm_bulk.journal`))
      const steps = yield* plan(c, ["p7"])
      assert.isTrue(usesJournalIndex(steps))
      assert.isFalse(readsWholeJournal(steps))
      const done = yield* store.rowsDone(["p7", "p0"])
      assert.deepStrictEqual(
        [...done].sort(([a], [b]) => a.localeCompare(b)),
        [["p0", 20 * 49 + 2], ["p7", 20 * 49]],
        "the same figures"
      )
    }), { timeout: 120_000 })
})
