/**
 * The takeover claim on PostgreSQL (`claimExpiredSql` in src/fleet/Queue.ts, tried by every free slot of every worker
 * before the queue's own fetch) is served by indexes: on a queue of 100,000 jobs, most of them new and waiting, it
 * reads the few jobs that came back after a stall or a hand-back and the active jobs whose lock lapsed, not every
 * waiting job. The plan is read from PostgreSQL's own EXPLAIN, as test/fleet/rows-done-index.test.ts does for the
 * rows-done count; a fleet made before the index gets it from `fleet init` (the store's `init`), run again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type pg from "pg"
import { claimExpiredSql } from "../../src/fleet/Queue.js"
import { initialisedPostgres, type PlanNode, planNodes as nodes } from "./support.js"

const now = 1_800_000_000_000

/**
 * BullMQ's job table as a busy fleet's: 100,000 jobs of the queue, 95,000 new and waiting, 4,900 finished, 60 active
 * under a live lock, 20 active whose lock lapsed and 20 waiting after a stall or a hand-back; statistics taken.
 */
const fill = (c: pg.Client) =>
  Effect.promise(async () => {
    await c.query(`
      INSERT INTO bullmq.job (queue, id, seq, name, state, added_at_ms, stalled_count, attempts_made, locked_until_ms)
      SELECT 'fsm-bulk', 'j' || i, nextval('bullmq.job_seq'), 'run',
        (CASE WHEN i < 95000 THEN 'waiting' WHEN i < 99900 THEN 'completed' WHEN i < 99980 THEN 'active'
              ELSE 'waiting' END)::bullmq.job_state,
        ${now} - 100000 + i,
        CASE WHEN i >= 99980 THEN 1 ELSE 0 END, 0,
        CASE WHEN i BETWEEN 99900 AND 99959 THEN ${now} + 30000
             WHEN i BETWEEN 99960 AND 99979 THEN ${now} - 1000 END
      FROM generate_series(0, 99999) i;
      ANALYZE bullmq.job;
    `)
  })

/** The claim's plan as PostgreSQL would run it (EXPLAIN alone does not run the update). */
const plan = (c: pg.Client) =>
  Effect.promise(async () => {
    const r = await c.query<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
      `EXPLAIN (FORMAT JSON) ${claimExpiredSql}`,
      ["fsm-bulk", now, "token", 6_000, "worker", []]
    )
    return nodes(r.rows[0]!["QUERY PLAN"][0]!.Plan)
  })

/** Whether the plan reads every waiting job: a scan of the table, or of BullMQ's index of every waiting job. */
const readsEveryWaitingJob = (steps: ReadonlyArray<PlanNode>) =>
  steps.some((n) =>
    (n["Node Type"] === "Seq Scan" && n["Relation Name"] === "job") || n["Index Name"] === "job_ready_idx"
  )
const indexes = (steps: ReadonlyArray<PlanNode>) => steps.flatMap((n) => n["Index Name"] ?? [])
const shape = (steps: ReadonlyArray<PlanNode>) =>
  JSON.stringify(steps.map((n) => [n["Node Type"], n["Index Name"] ?? n["Relation Name"] ?? ""]))

describe("the takeover claim on PostgreSQL", () => {
  it.scopedLive(
    "reads the returned, the parked and the lapsed jobs through indexes, not every waiting job",
    () =>
      Effect.gen(function*() {
        const { db: c } = yield* initialisedPostgres
        yield* fill(c)
        const steps = yield* plan(c)
        assert.isFalse(readsEveryWaitingJob(steps), shape(steps))
        assert.includeMembers(indexes(steps), ["job_returned", "job_delayed_idx", "job_active_idx"], shape(steps))
      }),
    { timeout: 120_000 }
  )

  it.scopedLive("a fleet made before the index gets it from fleet init, run again", () =>
    Effect.gen(function*() {
      const { db: c, store } = yield* initialisedPostgres
      // BullMQ's table as an older version left it: without the claim's index.
      yield* Effect.promise(() => c.query(`DROP INDEX bullmq.job_returned`))
      yield* fill(c)
      assert.isTrue(readsEveryWaitingJob(yield* plan(c)), "without the index every waiting job is read")

      yield* store.init
      yield* Effect.promise(() => c.query(`ANALYZE bullmq.job`))
      const steps = yield* plan(c)
      assert.isFalse(readsEveryWaitingJob(steps), shape(steps))
      assert.include(indexes(steps), "job_returned", shape(steps))
    }), { timeout: 120_000 })
})
