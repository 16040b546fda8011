/**
 * The store's rules, on each backend (a throwaway PostgreSQL, a throwaway redis-server): a journal line is written
 * only under the job's current lease (a takeover refuses every later line of the old owner, also when they race),
 * `fleet init` is idempotent, the operations the commands and workers use behave alike on both (accounts, jobs,
 * files as bytes, settling a chunked job, cancel, rows done, the egress-id lock), and credentials are sealed so
 * that only the key they were sealed with opens them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { Redis } from "ioredis"
import { open, seal } from "../../src/fleet/Secrets.js"
import { openStore } from "../../src/fleet/Stores.js"
import { takenLease } from "./store-fixtures.js"
import { backends, initialisedStore, startFleetBackend } from "./support.js"

for (const { available, backend } of backends) {
  describe.skipIf(!available)(`fleet store on ${backend}`, () => {
    it.scopedLive(
      "a journal line is written only while its writer holds the job's lease",
      () =>
        Effect.gen(function*() {
          const store = yield* initialisedStore(backend)
          yield* store.init // idempotent
          const first = yield* takenLease(store, "job-1", "w1/1")
          assert.strictEqual(first, 1)
          assert.isTrue(yield* store.appendLine("job-1", first, "{\"state\":\"header\"}"))
          assert.isTrue(yield* store.appendLine("job-1", first, "{\"state\":\"sending\",\"row\":2}"))

          const second = yield* takenLease(store, "job-1", "w2/1")
          assert.strictEqual(second, 2)
          assert.isFalse(yield* store.appendLine("job-1", first, "{\"state\":\"done\",\"row\":2}"), "old owner refused")
          assert.isTrue(yield* store.appendLine("job-1", second, "{\"state\":\"resumed\"}"))
          assert.isFalse(yield* store.appendLine("job-2", 1, "{}"), "no lease, no line")
          assert.deepStrictEqual(yield* store.journalLines("job-1"), [
            "{\"state\":\"header\"}",
            "{\"state\":\"sending\",\"row\":2}",
            "{\"state\":\"resumed\"}"
          ])
          assert.deepStrictEqual(yield* store.lease("job-1"), { epoch: 2, owner: "w2/1" })
          assert.isTrue(yield* store.holdsLease("job-1", 2))
          assert.isFalse(yield* store.holdsLease("job-1", 1))
        }),
      { timeout: 60_000 }
    )

    it.scopedLive(
      "appends racing a takeover: every line accepted is kept, none after the takeover",
      () =>
        Effect.gen(function*() {
          const store = yield* initialisedStore(backend)
          const epoch = yield* takenLease(store, "race", "w1/1")
          let takenOver = false
          const late: Array<boolean> = []
          const results = yield* Effect.all(
            Array.from({ length: 120 }, (_, i) =>
              i === 60
                ? Effect.as(
                  Effect.tap(takenLease(store, "race", "w2/1"), () => Effect.sync(() => (takenOver = true))),
                  null
                )
                : Effect.map(store.appendLine("race", epoch, `{"state":"done","row":${i}}`), (ok) => {
                  if (takenOver) late.push(ok)
                  return ok
                })),
            { concurrency: 8 }
          )
          const accepted = results.filter((r) => r === true).length
          assert.strictEqual((yield* store.journalLines("race")).length, accepted, "every line accepted is kept")
          assert.isAbove(accepted, 0)
          assert.isBelow(accepted, 119, "lines after the takeover are refused")
          const again = yield* store.appendLine("race", epoch, "{\"state\":\"done\",\"row\":999}")
          assert.isFalse(again)
          // At most the appends already in flight when the takeover was acknowledged (7 at this concurrency) got in.
          assert.isAtMost(late.filter((ok) => ok).length, 7, "lines asked for after the takeover are refused")
        }),
      { timeout: 60_000 }
    )

    it.scopedLive("accounts, jobs, files, parts, cancel and the egress lock", () =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(backend)
        const store = yield* openStore(server.url)
        const before = yield* Effect.exit(store.requireInit)
        assert.isTrue(Exit.isFailure(before), "not initialised yet")
        yield* store.init
        yield* store.requireInit

        yield* store.putAccount({ name: "zeta", baseUrl: "http://z/v2", rate: null, secret: "v1:s1" })
        yield* store.putAccount({ name: "acme", baseUrl: "http://a/v2", rate: "10/1s", secret: "v1:s2" })
        yield* store.putAccount({ name: "acme", baseUrl: "http://a2/v2", rate: "20/1s", secret: "v1:s3" })
        assert.deepStrictEqual(yield* store.accounts, [
          { name: "acme", baseUrl: "http://a2/v2", rate: "20/1s" },
          { name: "zeta", baseUrl: "http://z/v2", rate: null }
        ])
        assert.deepStrictEqual(yield* store.account("acme"), {
          name: "acme",
          baseUrl: "http://a2/v2",
          rate: "20/1s",
          secret: "v1:s3"
        })
        assert.isTrue(yield* store.removeAccount("zeta"))
        assert.isFalse(yield* store.removeAccount("zeta"))
        assert.isUndefined(yield* store.account("zeta"))

        // Files are bytes, every one of them.
        const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
        yield* store.putFile("p", "source/big.csv", bytes)
        yield* store.putFile("p", "out/report.csv", Buffer.from("r"))
        yield* store.putFile("p", "out/summary.json", Buffer.from("{}"))
        yield* store.putFile("p", "out/report.csv", Buffer.from("r2"))
        const sources = yield* store.files("p", "source/")
        assert.deepStrictEqual(sources.map((f) => f.name), ["source/big.csv"])
        assert.isTrue(Buffer.compare(sources[0]!.content, bytes) === 0)
        assert.deepStrictEqual(
          (yield* store.files("p", "out/")).map((f) => [f.name, f.content.toString()]),
          [["out/report.csv", "r2"], ["out/summary.json", "{}"]]
        )

        // A chunked job: the parent settles when its last part ends.
        const spec = { resource: "customers", read: { encoding: "utf-8" } }
        yield* store.addJob({
          id: "p",
          kind: "import",
          account: "acme",
          resource: "customers",
          spec,
          rows: 3,
          parent: null
        })
        for (const part of ["p-part0002", "p-part0001"]) {
          yield* store.addJob({
            id: part,
            kind: "chunk",
            account: "acme",
            resource: "customers",
            spec,
            rows: 1,
            parent: "p"
          })
        }
        yield* store.addJob({
          id: "single",
          kind: "import",
          account: "acme",
          resource: null,
          spec,
          rows: 5,
          parent: null
        })
        assert.deepStrictEqual((yield* store.recentJobs(10)).map((j) => j.id).sort(), ["p", "single"])
        assert.deepStrictEqual((yield* store.parts("p")).map((j) => j.id), ["p-part0001", "p-part0002"])
        const p = yield* store.job("p")
        assert.deepStrictEqual(
          [p.kind, p.account, p.resource, p.spec, p.state, p.rows, p.exit_code, p.parent, p.finished],
          ["import", "acme", "customers", spec, "queued", 3, null, null, null]
        )
        assert.instanceOf(p.created, Date)
        assert.isNull((yield* store.job("single")).resource)
        const missing = yield* Effect.exit(store.job("nope"))
        assert.isTrue(Exit.isFailure(missing) && String(missing.cause).includes("no job nope"))

        const e1 = (yield* store.takeOpenLease("p-part0001", "w1/1"))!
        yield* store.markRunning("p-part0001", "w1")
        assert.strictEqual((yield* store.job("p-part0001")).state, "running")
        assert.strictEqual((yield* store.job("p-part0001")).owner, "w1")
        yield* store.appendLine("p-part0001", e1, "{\"state\":\"sending\",\"row\":2}")
        yield* store.appendLine("p-part0001", e1, "{\"state\":\"done\",\"row\":2}")
        yield* store.appendLine("p-part0001", e1, "{\"state\":\"done\",\"row\":2}")
        const e2 = (yield* store.takeOpenLease("p-part0002", "w1/1"))!
        yield* store.appendLine("p-part0002", e2, "{\"state\":\"done\",\"row\":3}")
        assert.strictEqual((yield* store.rowsDone(["p", "single"])).get("p"), 2)

        // An old epoch records nothing; the current one does.
        yield* store.finishJob("p-part0001", e1 - 1, { exitCode: 0, summary: { rows: 1 }, rows: 1 })
        assert.strictEqual((yield* store.job("p-part0001")).state, "running")
        yield* store.finishJob("p-part0001", e1, { exitCode: 1, summary: { rows: 1 }, rows: 1 })
        const done1 = yield* store.job("p-part0001")
        assert.deepStrictEqual([done1.state, done1.exit_code, done1.summary], ["done", 1, { rows: 1 }])
        assert.isNotNull(done1.finished)
        assert.isUndefined(yield* store.takeOpenLease("p-part0001", "w2/1"), "no lease on a job that ended")
        yield* store.settleParent("p")
        assert.strictEqual((yield* store.job("p")).state, "queued", "a part has not ended")
        yield* store.failJob("p-part0002", e2, { exitCode: 3, error: "stopped" })
        assert.deepStrictEqual(
          [(yield* store.job("p-part0002")).state, (yield* store.job("p-part0002")).error],
          ["failed", "stopped"]
        )
        yield* store.settleParent("p")
        const settled = yield* store.job("p")
        // Mixed: done, exit 3, the failed part's reason said.
        assert.deepStrictEqual([settled.state, settled.exit_code, settled.error], [
          "done",
          3,
          "1 of 2 parts failed: stopped"
        ])

        // Cancel: the state, and the epoch raised whoever held it.
        const e3 = (yield* store.takeOpenLease("single", "w1/1"))!
        yield* store.cancelJob("single")
        const cancelled = yield* store.job("single")
        assert.strictEqual(cancelled.state, "cancelled")
        assert.isNotNull(cancelled.finished)
        assert.isFalse(yield* store.holdsLease("single", e3))
        assert.isFalse(yield* store.appendLine("single", e3, "{}"))

        // The egress lock: a second hold is refused while the first lives, and free once it is released.
        const scope = yield* Scope.make()
        yield* Scope.extend(store.holdEgress("e1"), scope)
        const twin = yield* Effect.exit(store.holdEgress("e1"))
        assert.isTrue(Exit.isFailure(twin) && String(twin.cause).includes("another worker already runs"))
        yield* Scope.close(scope, Exit.void)
        yield* store.holdEgress("e1")
      }), { timeout: 60_000 })
  })
}

describe.skipIf(!backends.find((b) => b.backend === "redis")!.available)("fleet store on redis, its own keys", () => {
  it.scopedLive("a crashed worker's egress lock lapses with its expiry", () =>
    Effect.gen(function*() {
      const server = yield* startFleetBackend("redis")
      const store = yield* openStore(server.url)
      yield* store.init
      // Another process took the id and died without releasing it: its key stays until it expires.
      const other = new Redis(server.url)
      yield* Effect.addFinalizer(() => Effect.promise(() => other.quit()))
      yield* Effect.promise(() => other.set("fsm-bulk:egress:e9", "crashed-host/1/x", "PX", 1_500))
      const refused = yield* Effect.exit(store.holdEgress("e9"))
      assert.isTrue(Exit.isFailure(refused))
      // Its expiry comes now rather than in 1.5 s (redis-server's clock, not ours): wait until redis has dropped it.
      yield* Effect.promise(() => other.pexpire("fsm-bulk:egress:e9", 1))
      while ((yield* Effect.promise(() => other.pttl("fsm-bulk:egress:e9"))) !== -2) yield* Effect.yieldNow()
      yield* store.holdEgress("e9")
      const ttl = yield* Effect.promise(() => other.pttl("fsm-bulk:egress:e9"))
      assert.isAbove(ttl, 0, "the live worker's lock has an expiry too")
    }), { timeout: 60_000 })
})

describe("fleet credentials", () => {
  it.live("credentials are sealed with the fleet key and open only with it", () =>
    Effect.gen(function*() {
      const key = Buffer.alloc(32, 1)
      const sealed = seal(key, { apiKey: Redacted.make("the-key"), apiToken: Redacted.make("the-token") })
      assert.notInclude(sealed, "the-token")
      assert.notInclude(Buffer.from(sealed.split(":").at(-1)!, "base64").toString("utf8"), "the-token")
      const opened = yield* open(key, sealed, "acme")
      assert.strictEqual(Redacted.value(opened.apiToken), "the-token")
      const wrong = yield* Effect.exit(open(Buffer.alloc(32, 2), sealed, "acme"))
      assert.isTrue(Exit.isFailure(wrong))
      assert.notStrictEqual(seal(key, opened), sealed, "a fresh nonce per value")
    }))
})
