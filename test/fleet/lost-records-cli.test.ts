/**
 * A Redis store's check for lost data looks at every job listed, not only the newest (issue 29): a job record
 * evicted (or deleted) among more than a page of jobs, however old, is found and named. (Before: only the 50
 * newest were looked at, so an eviction of older records — the least used, the first an LRU policy takes — went
 * unnoticed.) In process against a throwaway redis-server (cli tier by name: it waits on a server it starts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { openStore } from "../../src/fleet/Stores.js"
import { availableBackends, startRedis } from "./support.js"

describe.skipIf(!availableBackends.some((b) => b.backend === "redis"))("lost job records on Redis (issue 29)", () => {
  it.scopedLive(
    "an old job's record gone among 1,100 listed is found; none gone, nothing said",
    () =>
      Effect.gen(function*() {
        const server = yield* startRedis
        const store = yield* openStore(server.url)
        yield* store.init
        const ids = Array.from({ length: 1_100 }, (_, i) => `job-${String(i).padStart(4, "0")}`)
        for (const id of ids) {
          yield* store.addJob({
            id,
            kind: "import",
            account: "acme",
            resource: "customers",
            spec: { resource: "customers" },
            rows: 1,
            parent: null
          })
        }
        assert.isUndefined(yield* store.lostData, "nothing is lost yet")
        const redis = new Redis(server.url)
        yield* Effect.addFinalizer(() => Effect.promise(() => redis.quit()))
        // The oldest jobs' records, past the first page of the newest: what an LRU eviction takes first.
        yield* Effect.promise(() => redis.del("fsm-bulk:job:job-0000", "fsm-bulk:job:job-0001"))
        const finding = yield* store.lostData
        assert.strictEqual(finding, "the records of 2 listed job(s) are gone (job-0001, job-0000)")
      }),
    { timeout: 120_000 }
  )
})
