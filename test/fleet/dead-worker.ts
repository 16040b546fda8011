/**
 * A job left by a worker that died holding it, on either backend (BullMQ's own worker, in process): what the takeover
 * claims are for (./idle-claim.test.ts, ./late-claim-cli.test.ts).
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { loadBullmq } from "../../src/fleet/Packages.js"
import type { JobData } from "../../src/fleet/Queue.js"
import { query } from "./support.js"

const queueName = "fsm-bulk"

/**
 * Job `id` taken by a worker that then died: fetched by BullMQ's own worker under a lock of `lockMs` that nobody renews
 * (no processor, no stall check of its own), its connection closed with the job still active.
 */
export const takenByDeadWorker = (url: string, id: string, lockMs: number) =>
  Effect.gen(function*() {
    const bullmq = yield* loadBullmq
    const Worker = url.startsWith("redis")
      ? bullmq.withBackend(bullmq.createRedisBackend).Worker
      : bullmq.withBackend(bullmq.createPostgresBackend).Worker
    const worker = new Worker<JobData>(queueName, undefined, {
      connection: url.startsWith("redis") ? { url } : { connectionString: url, max: 1 },
      autorun: false,
      lockDuration: lockMs
    })
    worker.on("error", () => undefined)
    const job = yield* Effect.promise(() => worker.getNextJob("dead-worker-token", { block: false }))
    assert.strictEqual(job?.id, id)
    yield* Effect.promise(() => worker.close(true))
  })

/** Whether the dead worker's lock on job `id` has lapsed, as the store sees it. */
export const lapsed = async (url: string, id: string): Promise<boolean> => {
  if (url.startsWith("redis")) {
    const client = new Redis(url)
    try {
      return (await client.exists(`bull:${queueName}:${id}:lock`)) === 0
    } finally {
      await client.quit()
    }
  }
  const rows = await query(
    url,
    "SELECT locked_until_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS lapsed FROM bullmq.job " +
      "WHERE queue = $1 AND id = $2",
    [queueName, id]
  )
  return (rows as Array<{ lapsed: boolean }>)[0]?.lapsed === true
}
