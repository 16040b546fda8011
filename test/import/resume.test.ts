/**
 * `resume` in process, on journals cut the way a crash cuts them: rows whose answer was never journaled are looked
 * up by key before any resend, rows without a key are left in doubt, a truncated last line is skipped, and rows
 * already done are never sent again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { readJournal } from "../../src/import/Journal.js"
import { runImport } from "../../src/import/Pipeline.js"
import { resumeRun } from "../../src/import/Resume.js"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { RunStop } from "../../src/Signals.js"
import {
  apiOf,
  importInto,
  importWith,
  job,
  put,
  readJournalLines,
  readReport,
  startTestSandbox,
  tempDir,
  writes
} from "./support.js"

/** Keeps the journal up to (not including) the first line `drop` matches, and every later line `drop` does not. */
const crashJournal = (runDir: string, drop: (line: Record<string, any>) => boolean) => {
  const path = Path.join(runDir, "journal.ndjson")
  const kept = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .filter((l) => !drop(JSON.parse(l)))
  writeFileSync(path, kept.map((l) => `${l}\n`).join(""))
}

describe("resume", () => {
  it.scopedLive("rows in flight are looked up by key: found → created without a resend, absent → sent; done rows are not sent again", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\nK-3,Três\nK-4,Quatro\n")
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, { resource: "customers", file, runDir, mode: "create" })
      // K-4 disappears from the server, as if its create had never arrived.
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "d.csv", "externalId\nK-4\n"),
        runDir: Path.join(dir, "d"),
        mode: "delete"
      })
      // The crash: the answers of rows 4 and 5 were never journaled, nor the end of the run.
      crashJournal(runDir, (l) => (l.state === "done" && (l.row === 4 || l.row === 5)) || l.state === "end")
      // …and the last line was cut in the middle.
      appendFileSync(Path.join(runDir, "journal.ndjson"), "{\"state\":\"done\",\"row\":4,\"sta")

      const mark = (yield* sandbox.control.requests).length
      const result = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(result.exitCode, 0)
      const report = readReport(runDir)
      assert.deepStrictEqual(report.map((r) => `${r._row}:${r._status}`), [
        "2:created",
        "3:created",
        "4:created",
        "5:created"
      ])
      assert.match(report[2]!._error!, /reconciled after an interruption/)
      // Only K-4 was sent again; rows 2 and 3 were done and row 4 was found.
      assert.deepStrictEqual(
        writes((yield* sandbox.control.requests).slice(mark)).map((w) => `${w.method} ${w.path}`),
        ["POST /v2/customers"]
      )
      const stored = yield* sandbox.control.records("sandbox-key", "customers")
      assert.deepStrictEqual(stored.map((c) => c.externalId).sort(), ["K-1", "K-2", "K-3", "K-4"])

      // The journal stays readable: the cut line is followed by the resumed session's lines.
      const journal = yield* readJournal(Path.join(runDir, "journal.ndjson"))
      assert.isTrue(journal.complete)
      assert.strictEqual(journal.rows.get(4)!.outcome!.status, "created")
      assert.deepStrictEqual(readJournalLines(runDir).filter((l) => l.state === "resumed").length, 1)

      // A complete run resumed again sends nothing.
      const mark2 = (yield* sandbox.control.requests).length
      const again = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(again.exitCode, 0)
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark2)).length, 0)
    }))

  it.scopedLive("a stop waits a bounded time for the rows in flight, then leaves them in doubt for resume", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 1_500 } })
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\nK-3,Três\n")
      const runDir = Path.join(dir, "run")
      // The stop comes once the server holds both creates (their answers take 1.5 s), not after a fixed time: on a
      // loaded machine the run may not have sent anything yet after any fixed time, and then no row is in flight.
      const bothSent = Effect.gen(function*() {
        while (writes(yield* sandbox.control.requests).length < 2) yield* Effect.sleep(10)
      })
      const result = yield* importWith(sandbox, {
        resource: "customers",
        file,
        runDir,
        // Create: no records are read before the writes, so the stop comes while the rows are in flight.
        mode: "create",
        graceMs: 100,
        concurrency: 2
      }, RunStop.when(bothSent))
      assert.strictEqual(result.exitCode, 3)
      assert.isTrue(result.interrupted)
      const report = readReport(runDir)
      // The answers would have taken 1.5 s: the rows were left in flight after the 100 ms grace.
      assert.deepStrictEqual(report.map((r) => r._status), ["in-doubt", "in-doubt", "skipped"])
      assert.match(report[0]!._error!, /resume/)

      yield* sandbox.control.setFaults({ latencyMs: 0 })
      const resumed = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(resumed.exitCode, 0)
      assert.isTrue(readReport(runDir).every((r) => r._status === "created" || r._status === "updated"))
      assert.strictEqual((yield* sandbox.control.records("sandbox-key", "customers")).length, 3)
    }))

  it.scopedLive("after a stop, rows whose request never left are skipped (not sent), not in doubt; resume sends them", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 1_500 } })
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\nK-3,Três\nK-4,Quatro\nK-5,Cinco\nK-6,Seis\n")
      const runDir = Path.join(dir, "run")
      const twoSent = Effect.gen(function*() {
        while (writes(yield* sandbox.control.requests).length < 2) yield* Effect.sleep(10)
      })
      // Every row is under way at once, but the client lets two requests out at a time: four rows wait for it.
      const result = yield* runImport(job({ resource: "customers", file, runDir, graceMs: 100 })).pipe(
        Effect.provide(RunStop.when(twoSent)),
        Effect.provide(apiOf(sandbox, undefined, { concurrency: 2 }))
      )
      assert.strictEqual(result.exitCode, 3)
      const sent = writes(yield* sandbox.control.requests).length
      assert.strictEqual(sent, 2)
      const report = readReport(runDir)
      const inDoubt = report.filter((r) => r._status === "in-doubt")
      const notSent = report.filter((r) => r._status === "skipped")
      assert.strictEqual(inDoubt.length, 2)
      assert.strictEqual(notSent.length, 4)
      for (const r of notSent) assert.match(r._error!, /^not sent: the run stopped while this row waited to be sent/)
      assert.strictEqual(readJournalLines(runDir).filter((l) => l.state === "unsent").length, 4)
      assert.strictEqual(result.summary.counts["in-doubt"], 2)

      yield* sandbox.control.setFaults({ latencyMs: 0 })
      const landed = (yield* sandbox.control.records("sandbox-key", "customers")).length
      const mark = (yield* sandbox.control.requests).length
      const resumed = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(resumed.exitCode, 0)
      assert.deepStrictEqual(readReport(runDir).map((r) => r._status), Array(6).fill("created"))
      // The rows in doubt were looked up by key (those that landed are not sent again); the four never sent were.
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark)).length, 6 - landed)
      assert.strictEqual((yield* sandbox.control.records("sandbox-key", "customers")).length, 6)
    }))

  it.scopedLive("a create in flight for a resource without a key is left in doubt, not sent twice", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "users",
        file: put(dir, "u.csv", "externalId,name,login,password\nU-1,Ana,ana,Senha@123\n"),
        runDir: Path.join(dir, "u")
      })
      yield* importInto(sandbox, {
        resource: "expense-types",
        file: put(dir, "t.csv", "description\nAlmoço\n"),
        runDir: Path.join(dir, "t")
      })
      const file = put(
        dir,
        "e.csv",
        "userToLogin,typeDescription,date,amount\nana,Almoço,2026-11-20,42.5\nana,Almoço,2026-11-21,30\n"
      )
      const runDir = Path.join(dir, "run")
      // Expenses have no key: creating them is asked for explicitly.
      yield* importInto(sandbox, { resource: "expenses", file, runDir, mode: "create" })
      crashJournal(runDir, (l) => (l.state === "done" && l.row === 3) || l.state === "end")
      const mark = (yield* sandbox.control.requests).length
      const result = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
      const report = readReport(runDir)
      assert.deepStrictEqual(report.map((r) => r._status), ["created", "in-doubt"])
      assert.match(report[1]!._error!, /cannot be looked up by a key/)
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark)).length, 0)
      assert.strictEqual(result.exitCode, 1)
      assert.strictEqual((yield* sandbox.control.records("sandbox-key", "expenses")).length, 2)
    }))

  it.scopedLive("a source that changed since the run started is refused; a journal with a broken line in the middle is refused", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name\nK-1,Um\n")
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, { resource: "customers", file, runDir })
      put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\n")
      const changed = yield* Effect.flip(resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox))))
      assert.match(changed.message, /changed since the run started/)

      const path = Path.join(runDir, "journal.ndjson")
      const lines = readFileSync(path, "utf8").split("\n")
      writeFileSync(path, [lines[0], "{not json", ...lines.slice(1)].join("\n"))
      const broken = yield* Effect.flip(readJournal(path))
      assert.match(broken.message, /line 2 is not a journal line/)
    }))
})
