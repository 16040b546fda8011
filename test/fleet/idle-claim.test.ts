/**
 * What an idle worker's takeover rests on, and what its polls cost (src/fleet/Queue.ts). A killed worker's job is
 * taken over by the slots' claim, which takes an active job whose lock lapsed directly; BullMQ's own stall check (which
 * moves such a job back to the waiting list, marking on one pass and moving on the next) runs only every half lease,
 * so a takeover within the lease and a poll rests on the claim alone: checked here through the queue's own event log,
 * in which the job must be made active again by the claim with no `stalled` event of the stall check before it. And on
 * Redis the claim, which every idle worker runs every poll, goes by its digest (EVALSHA), not by its 2 KB of text
 * for the server to hash each time. Both on real stores; the engine runs in process (`startEngineWorker`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { Redis } from "ioredis"
import { enqueue, openQueue, startEngineWorker } from "../../src/fleet/Queue.js"
import { lapsed, takenByDeadWorker } from "./dead-worker.js"
import { availableBackends, eventually, initFleet, queueEvents, startFleetBackend } from "./support.js"

/** The server's count of calls of `command` (INFO commandstats). */
const calls = async (client: Redis, command: string): Promise<number> => {
  const info = await client.info("commandstats")
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0)
}

describe("an idle worker's takeover claim", () => {
  for (const b of availableBackends) {
    it.scopedLive(
      `${b.backend}: takes a dead worker's job whose lock lapsed itself, before the queue's stall check moves it`,
      () =>
        Effect.gen(function*() {
          const server = yield* startFleetBackend(b.backend)
          yield* initFleet(server.url)
          const queue = yield* openQueue(server.url)
          yield* enqueue(queue, "job-of-a-dead-worker")
          yield* takenByDeadWorker(server.url, "job-of-a-dead-worker", 500)
          yield* eventually("the dead worker's lock lapses", () => lapsed(server.url, "job-of-a-dead-worker"))
          const ran = yield* Deferred.make<string>()
          // A lease of 6 s: the stall check's first pass (at the start) only marks the active jobs, its second comes
          // a half lease later; the claim polls every second.
          yield* startEngineWorker(
            server.url,
            { jobs: 1, leaseMs: 6_000, refused: () => [] },
            (data) => Effect.runPromise(Deferred.succeed(ran, data.job)).then(() => undefined)
          )
          assert.strictEqual(yield* Deferred.await(ran), "job-of-a-dead-worker")
          const events = (yield* Effect.promise(() => queueEvents(server.url)))
            .filter((e) => e.job === "job-of-a-dead-worker")
            .map((e) => e.event)
          // Made active by the dead worker, then again by the claim; never moved back by the stall check.
          assert.deepStrictEqual(
            events.filter((e) => e === "active" || e === "stalled"),
            ["active", "active"],
            events.join(" ")
          )
        })
    )
  }

  it.scopedLive.skipIf(!availableBackends.some((b) => b.backend === "redis"))(
    "redis: the claim an idle worker runs every poll is sent by its digest, its text only once",
    () =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend("redis")
        yield* initFleet(server.url)
        const client = yield* Effect.acquireRelease(
          Effect.sync(() => new Redis(server.url)),
          (c) => Effect.promise(() => c.quit())
        )
        yield* Effect.promise(() => client.config("RESETSTAT"))
        // A lease of 1.5 s: the takeover slot claims every 250 ms, the job slot's fetch claims too.
        yield* startEngineWorker(server.url, { jobs: 1, leaseMs: 1_500, refused: () => [] }, () => Promise.resolve())
        // Scripts run by digest: BullMQ's own, the fleet's, and (now) the claim's. 20 are enough: with the claim sent as
        // text, 54 EVALs had come by then (2026-11-29); 40 cost 3 s more and proved no more.
        yield* eventually("the worker has run 20 scripts by digest", async () => (await calls(client, "evalsha")) >= 20)
        // Each script's text is sent at most once a connection (the first run, when the server does not know it):
        // before, every poll of the claim was an EVAL of its whole text.
        const texts = yield* Effect.promise(() => calls(client, "eval"))
        assert.isAtMost(texts, 6, `EVAL calls while the worker ran 20 scripts by digest: ${texts}`)
      })
  )
})
