/**
 * Read before write: an update, upsert or delete reads the records it touches in batches first (never a GET per
 * row), so rows equal to the server are `unchanged` and send nothing, and every write to an existing record
 * carries its before-image in the journal.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { chooseLookup } from "../../src/import/Lookup.js"
import {
  customersCsv,
  importInto,
  put,
  readJournalLines,
  readReport,
  startTestSandbox,
  tempDir,
  writes
} from "./support.js"

const customers = "externalId,name,email\nK-1,Um,um@x.com\nK-2,Dois,dois@x.com\nK-3,Três,tres@x.com\n"

describe("read before write", () => {
  it.scopedLive("an upsert of a file equal to the server sends no write and reports every row unchanged", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", customers)
      yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "first") })

      const mark = (yield* sandbox.control.requests).length
      const again = yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "again") })
      const log = (yield* sandbox.control.requests).slice(mark)
      assert.strictEqual(again.exitCode, 0)
      assert.deepStrictEqual(writes(log).map((w) => `${w.method} ${w.path}`), [])
      assert.deepStrictEqual(readReport(again.runDir).map((r) => `${r._row}:${r._status}`), [
        "2:unchanged",
        "3:unchanged",
        "4:unchanged"
      ])
      assert.strictEqual(again.summary.counts["unchanged"], 3)
      // The current records were read with list calls, not one GET per row.
      assert.isBelow(log.filter((e) => e.method === "GET").length, 3)
    }))

  it.scopedLive("writes to existing records journal their before-image and what was sent; creates carry none", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", customers),
        runDir: Path.join(dir, "first")
      })

      // Upsert: K-1 changes, K-2 is unchanged, K-9 is new.
      const upsert = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "u.csv", "externalId,name,email\nK-1,Um Novo,um@x.com\nK-2,Dois,dois@x.com\nK-9,Nove,\n"),
        runDir: Path.join(dir, "upsert")
      })
      assert.deepStrictEqual(readReport(upsert.runDir).map((r) => `${r._row}:${r._status}`), [
        "2:updated",
        "3:unchanged",
        "4:created"
      ])
      const lines = readJournalLines(upsert.runDir)
      const sending = (row: number) => lines.find((l) => l.state === "sending" && l.row === row)
      const done = (row: number) => lines.find((l) => l.state === "done" && l.row === row)
      assert.strictEqual(sending(2)!.before.description, "Um")
      assert.strictEqual(sending(2)!.before.externalId, "K-1")
      assert.isDefined(sending(2)!.before.id)
      assert.strictEqual(done(2)!.sent.name, "Um Novo")
      assert.strictEqual(done(2)!.recordId, sending(2)!.before.id)
      assert.isUndefined(sending(3))
      assert.isUndefined(done(3)!.sent)
      assert.isDefined(sending(4))
      assert.isUndefined(sending(4)!.before)
      assert.strictEqual(done(4)!.sent.name, "Nove")

      // Update and delete by key.
      const update = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "up.csv", "externalId,name\nK-2,Dois Novo\n"),
        runDir: Path.join(dir, "update"),
        mode: "update"
      })
      const updated = readJournalLines(update.runDir).find((l) => l.state === "sending")!
      assert.strictEqual(updated.before.description, "Dois")
      const removed = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "d.csv", "externalId\nK-3\n"),
        runDir: Path.join(dir, "delete"),
        mode: "delete"
      })
      const deleting = readJournalLines(removed.runDir).find((l) => l.state === "sending")!
      assert.strictEqual(deleting.intent, "delete")
      assert.strictEqual(deleting.before.description, "Três")
      assert.deepStrictEqual(deleting.before.email, ["tres@x.com"])
    }))

  it.scopedLive("120 keys of an account of 120 records are read with one page, not three filtered calls", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", customersCsv(120))
      yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "first"), mode: "create" })
      const mark = (yield* sandbox.control.requests).length
      const again = yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "again") })
      assert.strictEqual(again.summary.counts["unchanged"], 120)
      const log = (yield* sandbox.control.requests).slice(mark).filter((e) => !/\/login$/i.test(e.path))
      // The first page (500 a page) holds the whole account: a walk of one page beats ⌈120 / 50⌉ = 3 filters.
      assert.deepStrictEqual(log.map((e) => e.method), ["GET"])
    }))

  it.scopedLive("an update by id alone reads the record first too", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const first = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", customers),
        runDir: Path.join(dir, "first")
      })
      const id = readReport(first.runDir)[0]!._record_id
      const update = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "u.csv", `id,name\n${id},Um Outro\n`),
        runDir: Path.join(dir, "update"),
        mode: "update"
      })
      assert.strictEqual(update.exitCode, 0)
      const sending = readJournalLines(update.runDir).find((l) => l.state === "sending")!
      assert.strictEqual(sending.before.description, "Um")
    }))
})

describe("chooseLookup", () => {
  it("weighs filtered calls against the pages of a walk", () => {
    // 1,000 keys through a list filter: 20 calls; an account of 1,000 in pages of 500 is 2 pages.
    assert.deepStrictEqual(chooseLookup({ values: 1000, filter: "list", total: 1000, pageSize: 500 }), {
      _tag: "Walk",
      requests: 2
    })
    // …of 50,000: 100 pages against 20 calls.
    assert.deepStrictEqual(chooseLookup({ values: 1000, filter: "list", total: 50_000, pageSize: 500 }), {
      _tag: "Filter",
      requests: 20,
      perRequest: 50
    })
    // One value per call: 30 calls against 3 pages.
    assert.strictEqual(chooseLookup({ values: 30, filter: "each", total: 1200, pageSize: 500 })._tag, "Walk")
    assert.strictEqual(chooseLookup({ values: 3, filter: "each", total: 1200, pageSize: 500 })._tag, "Filter")
    // Size unknown: a list filter never reads more than wanted; single-value calls only for a few values.
    assert.strictEqual(chooseLookup({ values: 400, filter: "list", total: undefined, pageSize: 1 })._tag, "Filter")
    assert.strictEqual(chooseLookup({ values: 8, filter: "each", total: undefined, pageSize: 1 })._tag, "Filter")
    assert.strictEqual(chooseLookup({ values: 11, filter: "each", total: undefined, pageSize: 1 })._tag, "Walk")
    // No filter: a walk.
    assert.deepStrictEqual(chooseLookup({ values: 2, filter: undefined, total: 10, pageSize: 500 }), {
      _tag: "Walk",
      requests: 1
    })
  })
})
