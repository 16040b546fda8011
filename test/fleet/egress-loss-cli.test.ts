/**
 * A worker that stops on its own hands back the parts it holds (issue 29, found by the fleet's generated histories):
 * when its egress-id hold is lost (PostgreSQL: its advisory-lock session ended with `pg_terminate_backend`; Redis:
 * the egress key taken by another token), the worker stops as documented, and the parts it was running go back to
 * the queue, never `failed`: another worker takes them over from their journals and the job ends done, one record
 * per valid row. With the real servers and the built CLI.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { customersFile } from "../drills/support.js"
import {
  acmeFleet,
  availableBackends,
  type Backend,
  eventually,
  lastJson,
  query,
  runCliWithin,
  startFleetBackend,
  startWorker,
  withStore
} from "./support.js"

/**
 * Ends the egress hold of worker `egressId` from outside, as the store's faults do (PostgreSQL: every session of the
 * fleet's database, the advisory lock's among them, so requests wait at the egress gate when the hold is lost).
 */
const loseEgress = (backend: Backend, url: string, egressId: string) =>
  backend === "postgres"
    ? Effect.promise(() =>
      query(
        url,
        `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()`
      )
    ).pipe(Effect.map((rows) => Number(rows[0]?.n)))
    : Effect.promise(async () => {
      const redis = new Redis(url, { lazyConnect: true })
      redis.on("error", () => undefined)
      try {
        return (await redis.set(`fsm-bulk:egress:${egressId}`, "another-worker", "PX", 60_000)) === "OK" ? 1 : 0
      } finally {
        redis.disconnect()
      }
    })

/** Whether a part of `job` has recorded a row's `sending` line (its request is on its way). */
const sending = (url: string, job: string) =>
  withStore(url, (store) =>
    Effect.flatMap(store.parts(job), (parts) =>
      Effect.map(
        Effect.forEach(parts, (part) => store.journalLines(part.id)),
        (journals) => journals.some((lines) => lines.some((line) => line.includes(`"state":"sending"`)))
      )))

describe("a worker that loses its egress hold hands its parts back (issue 29)", () => {
  it.scopedLive.each(availableBackends)(
    "its running parts go back to the queue and another worker ends the job done ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(b.backend)
        const { account, dir, env, run, sandbox } = yield* acmeFleet(url)
        const input = customersFile(dir, "clientes.csv", 60)
        const submitted = yield* run([
          "submit",
          "import",
          "customers",
          input.file,
          "--account",
          "acme",
          "--chunk-rows",
          "20",
          "--json"
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string
        // The hold is lost once the parts are sending (a row's `sending` line recorded: its request is on its way
        // through the gates), not when a lease is said: a part taken may not have reached its first request yet, and
        // at the sandbox's speed a part that did may end before the hold is lost. A budget of 2 rows a second keeps
        // the parts' other rows waiting at the worker's gates while the hold is ended.
        const first = yield* startWorker(["--egress-id", "w-lose", "--jobs", "2", "--rate", "4/2s"], env)
        yield* eventually("a part is sending", () => Effect.runPromise(sending(url, job)), 60_000, first.stderr)
        assert.isAbove(yield* loseEgress(b.backend, url, "w-lose"), 0, "the egress hold was ended")
        const code = yield* Effect.promise(() => first.exit)
        assert.notStrictEqual(code, 0, first.stderr())
        assert.include(first.stderr(), "its hold on --egress-id w-lose was lost", first.stderr())
        assert.include(first.stderr(), "handed back", first.stderr())
        assert.notMatch(first.stderr(), /job \S+ failed/, first.stderr())
        // The status of the job: nothing of it failed.
        const status = yield* run(["status", job, "--json"])
        assert.notInclude(status.stdout, "failed", status.stdout)
        const second = yield* startWorker(["--egress-id", "w-take"], env)
        const waited = yield* Effect.promise(() => runCliWithin(["wait", job, "--json"], env, 120_000))
        assert.strictEqual(waited.code, 0, `${waited.stdout}\n${waited.stderr}\n${second.stderr()}`)
        assert.strictEqual(lastJson(waited.stdout).state, "done")
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
      }),
    { timeout: 240_000 }
  )
})
