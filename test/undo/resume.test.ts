/**
 * `resume` of an undo in process, on journals cut the way a crash cuts them: a row whose write was sent but whose
 * answer was never journaled is looked at before anything is sent again — a record already restored, already
 * deleted or already created again is reconciled without a write; one whose write never arrived is written once.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { resumeUndo } from "../../src/undo/Undo.js"
import {
  apiOf,
  importInto,
  put,
  readReport,
  recordsByKey,
  startTestSandbox,
  tempDir,
  undoIn,
  writes
} from "./support.js"

/** Drops the journal lines `drop` matches, as if the process had died before writing them. */
const crashJournal = (runDir: string, drop: (line: Record<string, any>) => boolean) => {
  const path = Path.join(runDir, "journal.ndjson")
  const kept = readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "" && !drop(JSON.parse(l)))
  writeFileSync(path, kept.map((l) => `${l}\n`).join(""))
}

describe("resume of an undo", () => {
  it.scopedLive("rows in flight are reconciled from the server: nothing restored, deleted or created twice", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "base.csv", "externalId,name,note\nK-A,Alfa,a\nK-B,Beta,b\nK-C,Gama,c\n"),
        runDir: Path.join(dir, "base"),
        mode: "create"
      })
      const before = yield* recordsByKey(sandbox, "customers")
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "run.csv", "externalId,name,note\nK-A,Alfa,mudou\nK-C,Gama,outra\nK-1,Um,\nK-2,Dois,\n"),
        runDir: Path.join(dir, "run"),
        mode: "upsert"
      })
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "del.csv", "externalId\nK-B\n"),
        runDir: Path.join(dir, "del"),
        mode: "delete"
      })

      // Both undos ran, but the answers of some rows were never journaled, nor the end of the run.
      const undoDel = Path.join(dir, "undo-del")
      const undoRun = Path.join(dir, "undo-run")
      yield* undoIn(sandbox, { target: Path.join(dir, "del"), runDir: undoDel })
      yield* undoIn(sandbox, { target: Path.join(dir, "run"), runDir: undoRun })
      crashJournal(undoDel, (l) => l.state === "done" || l.state === "end")
      crashJournal(undoRun, (l) => (l.state === "done" && l.row !== 5) || l.state === "end")
      // K-A's restore (row 2) never arrived: K-A still holds what the run wrote.
      const kA = (yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")).find((r) =>
        r.externalId === "K-A"
      )!
      yield* Effect.gen(function*() {
        const api = yield* Api
        const reply = yield* api.request({
          method: "PATCH",
          path: `/customers/${String(kA.id)}`,
          body: [{ op: "replace", path: "note", value: "mudou" }]
        })
        assert.isTrue(reply.ok)
      }).pipe(Effect.provide(apiOf(sandbox)))

      const mark = (yield* sandbox.control.requests).length
      const resumedDel = yield* resumeUndo(undoDel).pipe(Effect.provide(apiOf(sandbox)))
      const resumedRun = yield* resumeUndo(undoRun).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(resumedDel.exitCode, 0)
      assert.strictEqual(resumedRun.exitCode, 0, JSON.stringify(readReport(undoRun)))
      assert.deepStrictEqual(readReport(undoDel).map((r) => `${r._row}:${r._status}`), ["2:created"])
      assert.match(readReport(undoDel)[0]!._error!, /reconciled after an interruption: the record was created again/)
      const report = readReport(undoRun)
      assert.deepStrictEqual(report.map((r) => `${r._row}:${r._status}`), [
        "2:updated",
        "3:updated",
        "4:deleted",
        "5:deleted"
      ])
      assert.match(report[1]!._error!, /reconciled after an interruption: the record is as before the run/)
      assert.match(report[2]!._error!, /reconciled after an interruption: the record is gone/)
      // Only K-A's restore, which never arrived, was sent again.
      assert.deepStrictEqual(
        writes((yield* sandbox.control.requests).slice(mark)).map((w) => `${w.method} ${w.path}`),
        [`PATCH /v2/customers/${String(kA.id)}`]
      )
      assert.deepStrictEqual(yield* recordsByKey(sandbox, "customers"), before)
    }))
})
