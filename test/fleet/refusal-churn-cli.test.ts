/**
 * A job a worker refused is not claimed by it again and again (issue 29): a worker of this build, idle, and a job of a
 * newer format that it refuses, while another live worker (a newer one, busy: here an egress id held by the test) has
 * not refused it. The refuser handed the job back to the queue, and its own free slots claimed it again after the
 * queue's 500 ms back-off, for as long as the other worker stayed busy: about 120 claims a minute, each a round of
 * store statements (and each spent one of the job's 1,000 queue attempts: by the queue's settings, about eight
 * minutes before it failed there for good while the fleet store still showed it queued). Now the refuser parks it:
 * the job is claimed by it once, and a worker that has not refused it claims it at once (two more workers of this
 * build: the third refusal ends it, the cap).
 * Counted from the queue's own event log (each claim makes the job active once) over a window timed on the store's
 * clock; the store's traffic in the window is printed. Real worker processes on PostgreSQL and Redis.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { Redis } from "ioredis"
import { parkMs } from "../../src/fleet/Queue.js"
import { openStore } from "../../src/fleet/Stores.js"
import {
  acmeFleet,
  availableBackends,
  eventually,
  query,
  queueNewerJob,
  startFleetBackend,
  startWorker,
  storeClock,
  timedEvents,
  withStore
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

const leaseMs = 4_000
/** How long the refuser is watched once it refused the job, on the store's clock: 16 of the old claims. */
const windowMs = 8_000

/** The store's work so far: PostgreSQL's committed transactions in the database, Redis's commands processed. */
const storeWork = async (url: string): Promise<number> => {
  if (url.startsWith("redis")) {
    const client = new Redis(url)
    try {
      const info = await client.info("stats")
      return Number(/total_commands_processed:(\d+)/.exec(info)![1])
    } finally {
      await client.quit()
    }
  }
  const rows = await query(url, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
  return Number((rows as Array<{ xact_commit: string }>)[0]!.xact_commit)
}

describe("a refused job", () => {
  each(
    "is claimed once by the worker that refused it, and at once by workers that have not ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const { env } = yield* acmeFleet(server.url, { env: { FSM_FLEET_LEASE_MS: String(leaseMs) } })
        // A live worker that has not refused the job and never takes one: a newer worker, busy.
        const scope = yield* Effect.scope
        const store = yield* Scope.extend(openStore(server.url), scope)
        yield* Scope.extend(store.holdEgress("w-newer"), scope)

        const refuser = yield* startWorker(["--egress-id", "w-old", "--jobs", "2"], env)
        yield* eventually("the refuser is ready", () => refuser.stderr().includes("ready"), 60_000, refuser.stderr)
        const job = "from-the-future"
        yield* queueNewerJob(server.url, job)
        // Polled every 100 ms through the store opened above and one clock connection, not a connection a read.
        const refusals = () =>
          Effect.runPromise(store.files(job, "refusals/")).then((files) =>
            files.map((f) => f.name.slice("refusals/".length)).sort()
          )
        yield* eventually(
          "the refuser refuses the job",
          async () => (await refusals()).includes("w-old"),
          60_000,
          refuser.stderr
        )
        const claims = async () => (await timedEvents(server.url)).filter((e) => e.event === "active" && e.job === job)

        // The window, from the refusal's claim, on the store's clock.
        const [first] = yield* Effect.promise(claims)
        const workBefore = yield* Effect.promise(() => storeWork(server.url))
        const clock = yield* storeClock(server.url)
        const watchedFrom = yield* Effect.promise(clock.now)
        yield* eventually("the window passes", async () => (await clock.now()) >= first!.at + windowMs, 60_000)
        const work = (yield* Effect.promise(() => storeWork(server.url))) - workBefore
        const watched = (yield* Effect.promise(clock.now)) - watchedFrom
        const byRefuser = yield* Effect.promise(claims)
        console.info(
          `${b.backend}: the refuser claimed the job ${byRefuser.length} time(s) in ${windowMs} ms; the store did ` +
            `${Math.round(work * 60_000 / watched)} ${
              b.backend === "redis" ? "commands" : "transactions"
            } a minute in the window (one idle worker, one refused job)`
        )
        assert.strictEqual(byRefuser.length, 1, `claims of the refused job: ${JSON.stringify(byRefuser)}`)
        assert.strictEqual(refuser.child.exitCode, null, refuser.stderr())

        // Workers that have not refused it claim it at once: the third refusal ends it (the cap), not the refuser's.
        const others = [
          yield* startWorker(["--egress-id", "w-old2", "--jobs", "1"], env),
          yield* startWorker(["--egress-id", "w-old3", "--jobs", "1"], env)
        ]
        const logs = () => [refuser, ...others].map((w) => w.stderr()).join("\n")
        yield* eventually(
          "the job ends",
          async () => (await Effect.runPromise(store.job(job))).state === "failed",
          120_000,
          logs
        )
        const row = yield* withStore(server.url, (s) => s.job(job))
        assert.include(row.error ?? "", "no worker can run it (refused by 3)", logs())
        assert.deepStrictEqual(yield* Effect.promise(refusals), ["w-old", "w-old2", "w-old3"])
        // Each worker claimed it once, the other two while it was parked (their claims), not once the park was over.
        const all = yield* Effect.promise(claims)
        assert.strictEqual(all.length, 3, JSON.stringify(all))
        assert.isBelow(all[2]!.at - all[0]!.at, parkMs(leaseMs), JSON.stringify(all))
      }),
    { timeout: 240_000 }
  )

  each(
    "ends as soon as every live worker has refused it, not at its park's end, when the others stop ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const { env } = yield* acmeFleet(server.url, { env: { FSM_FLEET_LEASE_MS: String(leaseMs) } })
        // The live worker that has not refused the job, busy: its egress id held by the test, until it stops.
        const newer = yield* Scope.make()
        const store = yield* Scope.extend(openStore(server.url), newer)
        yield* Scope.extend(store.holdEgress("w-newer"), newer)
        const refuser = yield* startWorker(["--egress-id", "w-old", "--jobs", "2"], env)
        yield* eventually("the refuser is ready", () => refuser.stderr().includes("ready"), 60_000, refuser.stderr)
        const job = "from-the-future"
        yield* queueNewerJob(server.url, job)
        yield* eventually(
          "the refuser refuses and parks the job",
          () => refuser.stderr().includes(`job ${job} handed back: refused`),
          60_000,
          refuser.stderr
        )
        // The newer worker stops: the refuser is now the only live worker, and it has refused the job.
        yield* Scope.close(newer, Exit.void)
        // Polled every 100 ms through one store opened for the test, not a connection a read.
        const reader = yield* openStore(server.url)
        yield* eventually(
          "the job ends",
          async () => (await Effect.runPromise(reader.job(job))).state === "failed",
          120_000,
          refuser.stderr
        )
        const row = yield* withStore(server.url, (s) => s.job(job))
        assert.include(row.error ?? "", "no worker can run it (refused by 1): worker w-old:", refuser.stderr())
        assert.strictEqual(row.exit_code, 2)
        // The worker says so once the store has the end: the line may reach this process after the state is read.
        yield* eventually(
          "the refuser says why the job ended",
          () => refuser.stderr().includes(`job ${job}: every live worker has refused it: it ends now`),
          30_000,
          refuser.stderr
        )
        // Claimed twice by the refuser: to refuse it, then to end it, within its park (ten leases, at least a
        // minute), on the store's clock. Before, the park held it: the second claim came only at the park's end.
        const claims = (yield* Effect.promise(() => timedEvents(server.url))).filter((e) =>
          e.event === "active" && e.job === job
        )
        assert.strictEqual(claims.length, 2, JSON.stringify(claims))
        assert.isBelow(claims[1]!.at - claims[0]!.at, parkMs(leaseMs), JSON.stringify(claims))
      }),
    { timeout: 240_000 }
  )
})
