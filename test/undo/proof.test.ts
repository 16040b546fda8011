/**
 * Undo takes back only what the run is proven to have done, and only while the record is as the run left it:
 * - a record is "created by this run" only with proof: the create's own answer, or a read before the request that
 *   found no record with its key (the journal's `absent`). A record found after a lost answer without that proof
 *   (it existed before; a gateway turned the 409 into a 502; a journal of an older version) is `in-doubt`, and
 *   undo leaves it;
 * - a record someone edited since the run, in any field (not only those the run sent), is `conflict`, in the dry
 *   run too, and is neither deleted nor restored.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { resumeRun } from "../../src/import/Resume.js"
import {
  apiOf,
  crashJournal,
  customersCsv,
  gateway,
  importInto,
  put,
  readJournalLines,
  readReport,
  recordsByKey,
  startTestSandbox,
  tempDir,
  undoIn,
  writes
} from "./support.js"

const statuses = (runDir: string) => readReport(runDir).map((r) => r._status)

describe("undo deletes only records the run is proven to have created", () => {
  it.scopedLive("a create whose 409 a gateway turned into a 502 does not take the existing record for its own", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", customersCsv(6))
      yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "first"), mode: "upsert" })
      const before = yield* recordsByKey(sandbox, "customers")
      assert.strictEqual(Object.keys(before).length, 6)

      // The same file again as creates, through a gateway that answers 502 where the server said 409.
      const via = yield* gateway(sandbox)
      const second = yield* importInto(via, {
        resource: "customers",
        file,
        runDir: Path.join(dir, "second"),
        mode: "create"
      })
      assert.deepStrictEqual(statuses(second.runDir), Array(6).fill("failed"))
      for (const row of readReport(second.runDir)) assert.match(row._error!, /already exists .*use --mode upsert/)

      const undo = yield* undoIn(sandbox, { target: second.runDir, runDir: Path.join(dir, "undo") })
      assert.strictEqual(undo.summary.rows, 0)
      assert.deepStrictEqual(yield* recordsByKey(sandbox, "customers"), before)
    }))

  it.scopedLive("a resumed create finds its key on the server: created only with the read-before's proof", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      // K-0 and K-1 are someone else's, made before the run; the run creates K-2 and K-3.
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "theirs.csv", "externalId,name\nK-0,Cliente 0\nK-1,Outro nome\n"),
        runDir: Path.join(dir, "theirs")
      })
      const runDir = Path.join(dir, "run")
      const run = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "run.csv", customersCsv(4)),
        runDir,
        mode: "create"
      })
      assert.deepStrictEqual(statuses(run.runDir), ["failed", "failed", "created", "created"])
      const sending = readJournalLines(runDir).filter((l) => l.state === "sending")
      assert.deepStrictEqual(sending.map((l) => [l.row, l.absent]), [[4, true], [5, true]])

      // The process died with every row in flight: the journal of an older version (no proof) for rows 2 and 3,
      // the proof for rows 4 and 5.
      crashJournal(runDir, (l) => l.state === "done" || l.state === "end")
      const lines = readJournalLines(runDir)
      const head = lines.filter((l) => l.state === "header")
      const older = [2, 3].map((row) => ({
        state: "sending",
        row,
        key: `K-${row - 2}`,
        intent: "create",
        at: head[0]!.started
      }))
      put(
        runDir,
        "journal.ndjson",
        [...head, ...older, ...lines.filter((l) => l.state !== "header")].map((l) => `${JSON.stringify(l)}\n`).join("")
      )

      const mark = (yield* sandbox.control.requests).length
      const resumed = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      assert.deepStrictEqual(writes((yield* sandbox.control.requests).slice(mark)), [])
      const report = readReport(resumed.runDir)
      assert.deepStrictEqual(report.map((r) => r._status), ["in-doubt", "in-doubt", "created", "created"])
      assert.match(report[0]!._error!, /nothing shows this run created it/)
      assert.match(report[1]!._error!, /nothing shows this run created it/)

      const kept = yield* recordsByKey(sandbox, "customers")
      const undo = yield* undoIn(sandbox, { target: runDir, runDir: Path.join(dir, "undo") })
      assert.deepStrictEqual(readReport(undo.runDir).map((r) => `${r.run_row}:${r.undo}:${r._status}`), [
        "2:cannot:skipped",
        "3:cannot:skipped",
        "4:delete:deleted",
        "5:delete:deleted"
      ])
      const after = yield* recordsByKey(sandbox, "customers")
      assert.deepStrictEqual(Object.keys(after).sort(), ["K-0", "K-1"])
      assert.deepStrictEqual(after["K-0"], kept["K-0"])
      assert.deepStrictEqual(after["K-1"], kept["K-1"])
    }))

  it.scopedLive("a create whose lost answer finds someone else's record with its key is in doubt, not created", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", customersCsv(1)),
        runDir,
        mode: "create"
      })
      // Killed in flight; meanwhile someone replaced K-0 with a record of their own under the same key.
      crashJournal(runDir, (l) => l.state === "done" || l.state === "end")
      const [mine] = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
      yield* Effect.gen(function*() {
        const api = yield* Api
        assert.isTrue((yield* api.request({ method: "DELETE", path: `/customers/${String(mine!.id)}` })).ok)
        assert.isTrue(
          (yield* api.request({ method: "POST", path: "/customers", body: { externalId: "K-0", name: "Loja da Ana" } }))
            .ok
        )
      }).pipe(Effect.provide(apiOf(sandbox)))
      const resumed = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      const [row] = readReport(resumed.runDir)
      assert.strictEqual(row!._status, "in-doubt")
      assert.match(row!._error!, /does not hold what this row sends \(name\)/)
      const undo = yield* undoIn(sandbox, { target: runDir, runDir: Path.join(dir, "undo") })
      assert.deepStrictEqual(statuses(undo.runDir), ["skipped"])
      assert.strictEqual((yield* recordsByKey(sandbox, "customers"))["K-0"]!.description, "Loja da Ana")
    }))
})

describe("undo leaves a record edited since the run, in any field", () => {
  it.scopedLive("a created record whose note and address were set since is conflict, in the dry run too", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nK-1,Loja Um\nK-2,Loja Dois\n"),
        runDir
      })
      const [one] = (yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")).filter((r) =>
        r.externalId === "K-1"
      )
      // Someone fills in fields the run never sent, in the web app.
      yield* Effect.gen(function*() {
        const api = yield* Api
        const reply = yield* api.request({
          method: "PATCH",
          path: `/customers/${String(one!.id)}`,
          body: [
            { op: "replace", path: "note", value: "ligar antes das 10h" },
            { op: "replace", path: "address", value: "Rua Augusta, 100" }
          ]
        })
        assert.isTrue(reply.ok)
      }).pipe(Effect.provide(apiOf(sandbox)))
      const edited = yield* recordsByKey(sandbox, "customers")

      const dry = yield* undoIn(sandbox, { target: runDir, runDir: Path.join(dir, "dry"), dryRun: true })
      assert.deepStrictEqual(statuses(dry.runDir), ["conflict", "would-delete"])
      const undo = yield* undoIn(sandbox, { target: runDir, runDir: Path.join(dir, "undo") })
      assert.strictEqual(undo.exitCode, 1)
      const report = readReport(undo.runDir)
      assert.deepStrictEqual(report.map((r) => r._status), ["conflict", "deleted"])
      assert.match(report[0]!._error!, /note: the run left \(empty\), the server has "ligar antes das 10h"/)
      assert.match(report[0]!._error!, /address: the run left \(empty\), the server has "Rua Augusta, 100"/)
      const now = yield* recordsByKey(sandbox, "customers")
      assert.deepStrictEqual(Object.keys(now), ["K-1"])
      assert.deepStrictEqual(now["K-1"], edited["K-1"])
    }))

  it.scopedLive("an updated record edited since in another field is not restored", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "a.csv", "externalId,name,note\nK-1,Loja Um,antes\n"),
        runDir: Path.join(dir, "base")
      })
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "b.csv", "externalId,name,note\nK-1,Loja Um,depois\n"),
        runDir
      })
      const [one] = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
      yield* Effect.gen(function*() {
        const api = yield* Api
        const reply = yield* api.request({
          method: "PATCH",
          path: `/customers/${String(one!.id)}`,
          body: [{ op: "replace", path: "address", value: "Av. Paulista, 1" }]
        })
        assert.isTrue(reply.ok)
      }).pipe(Effect.provide(apiOf(sandbox)))
      const edited = yield* recordsByKey(sandbox, "customers")
      const undo = yield* undoIn(sandbox, { target: runDir, runDir: Path.join(dir, "undo") })
      const [row] = readReport(undo.runDir)
      assert.strictEqual(row!._status, "conflict")
      assert.match(row!._error!, /address: the run left \(empty\), the server has "Av. Paulista, 1"/)
      assert.deepStrictEqual(yield* recordsByKey(sandbox, "customers"), edited)
    }))
})

describe("resume keeps a record the run created as created", () => {
  it.scopedLive("an upsert in flight that created its record is created after resume, not updated, and undo deletes it", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, { resource: "customers", file: put(dir, "c.csv", customersCsv(3)), runDir })
      // Killed after the writes landed, before their answers were journaled.
      crashJournal(runDir, (l) => l.state === "done" || l.state === "end")
      const resumed = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      assert.deepStrictEqual(statuses(resumed.runDir), ["created", "created", "created"])
      const undo = yield* undoIn(sandbox, { target: runDir, runDir: Path.join(dir, "undo") })
      assert.deepStrictEqual(statuses(undo.runDir), ["deleted", "deleted", "deleted"])
      assert.deepStrictEqual(yield* recordsByKey(sandbox, "customers"), {})
    }))
})
