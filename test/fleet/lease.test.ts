/**
 * The store's rules, against a throwaway PostgreSQL: a journal line is written only under the job's current
 * lease (a takeover refuses every later line of the old owner), `fleet init` is idempotent, and credentials are
 * sealed so that only the key they were sealed with opens them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import { open, seal } from "../../src/fleet/Secrets.js"
import { openStore } from "../../src/fleet/Store.js"
import { startPostgres } from "./support.js"

describe("fleet store", () => {
  it.scoped("a journal line is written only while its writer holds the job's lease", () =>
    Effect.gen(function*() {
      const pg = yield* startPostgres
      const store = yield* openStore(pg.url)
      yield* store.init
      yield* store.init // idempotent
      const first = yield* store.takeLease("job-1", "w1/1")
      assert.strictEqual(first, 1)
      assert.isTrue(yield* store.appendLine("job-1", first, "{\"state\":\"header\"}"))
      assert.isTrue(yield* store.appendLine("job-1", first, "{\"state\":\"sending\",\"row\":2}"))

      const second = yield* store.takeLease("job-1", "w2/1")
      assert.strictEqual(second, 2)
      assert.isFalse(yield* store.appendLine("job-1", first, "{\"state\":\"done\",\"row\":2}"), "old owner refused")
      assert.isTrue(yield* store.appendLine("job-1", second, "{\"state\":\"resumed\"}"))
      assert.isFalse(yield* store.appendLine("job-2", 1, "{}"), "no lease, no line")
      assert.deepStrictEqual(yield* store.journalLines("job-1"), [
        "{\"state\":\"header\"}",
        "{\"state\":\"sending\",\"row\":2}",
        "{\"state\":\"resumed\"}"
      ])
    }), { timeout: 60_000 })

  it.effect("credentials are sealed with the fleet key and open only with it", () =>
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
