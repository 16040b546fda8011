/**
 * `undo` in process against the real sandbox: an import that created and updated records and a run that deleted
 * one are undone, and the account equals its state before them, record by record; a record edited on the server
 * since the run is reported `conflict` (and left alone) unless `--force`; a dry run sends nothing and says what
 * cannot be undone; an undo cannot itself be undone.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { Notices } from "../../src/console/Output.js"
import { planFile } from "../../src/undo/Steps.js"
import { runUndo } from "../../src/undo/Undo.js"
import {
  apiOf,
  importInto,
  put,
  readJournalLines,
  readReport,
  readSummary,
  recordsByKey,
  startTestSandbox,
  tempDir,
  undoIn,
  writes
} from "./support.js"

/** K-A, K-B and K-C exist before the runs under test. */
const baseline = (sandbox: Parameters<typeof importInto>[0], dir: string) =>
  importInto(sandbox, {
    resource: "customers",
    file: put(
      dir,
      "base.csv",
      "externalId,name,phoneNumber,note\nK-A,Alfa,1111,nota A\nK-B,Beta,2222,\nK-C,Gama,3333,nota C\n"
    ),
    runDir: Path.join(dir, "base"),
    mode: "create"
  })

/** The run under test: K-A's phone and note changed, K-1 and K-2 created, K-C as it was (unchanged). */
const upsertRun = (sandbox: Parameters<typeof importInto>[0], dir: string) =>
  importInto(sandbox, {
    resource: "customers",
    file: put(
      dir,
      "run.csv",
      "externalId,name,phoneNumber,note\nK-A,Alfa,9999,outra nota\nK-1,Um,5555,\nK-2,Dois,,\nK-C,Gama,3333,nota C\n"
    ),
    runDir: Path.join(dir, "run"),
    mode: "upsert"
  })

const statuses = (runDir: string) => readReport(runDir).map((r) => `${r.run_row}:${r.undo}:${r._status}`)

describe("undo", () => {
  it.scopedLive("creates, updates and a delete run are undone: the account equals its state before, record by record", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* baseline(sandbox, dir)
      const before = yield* recordsByKey(sandbox, "customers")

      const run = yield* upsertRun(sandbox, dir)
      assert.deepStrictEqual(run.summary.counts.created, 2)
      assert.deepStrictEqual(run.summary.counts.updated, 1)
      const del = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "del.csv", "externalId\nK-B\n"),
        runDir: Path.join(dir, "del"),
        mode: "delete"
      })
      assert.strictEqual(del.summary.counts.deleted, 1)
      const oldB = before["K-B"]

      // The delete run last, then the import: the reverse of the order they ran in.
      const undoDel = yield* undoIn(sandbox, { target: Path.join(dir, "del"), runDir: Path.join(dir, "undo-del") })
      assert.strictEqual(undoDel.exitCode, 0)
      assert.deepStrictEqual(statuses(undoDel.runDir), ["2:recreate:created"])
      const undoRun = yield* undoIn(sandbox, { target: Path.join(dir, "run"), runDir: Path.join(dir, "undo-run") })
      assert.strictEqual(undoRun.exitCode, 0)
      assert.deepStrictEqual(statuses(undoRun.runDir), ["2:restore:updated", "3:delete:deleted", "4:delete:deleted"])

      const after = yield* recordsByKey(sandbox, "customers")
      assert.deepStrictEqual(Object.keys(after).sort(), ["K-A", "K-B", "K-C"])
      for (const key of ["K-A", "K-B", "K-C"]) assert.deepStrictEqual(after[key], before[key], key)
      assert.isDefined(oldB)

      // The record created again has a new id, and the undo says so.
      const summary = readSummary(undoDel.runDir)
      assert.strictEqual(summary.command, "undo")
      assert.strictEqual(summary.undoes, Path.join(dir, "del"))
      assert.strictEqual(summary.recreated.length, 1)
      assert.notStrictEqual(summary.recreated[0].to, summary.recreated[0].from)
      assert.match(readReport(undoDel.runDir)[0]!._error!, /created again with a new id \d+ \(was \d+\)/)
    }))

  it.scopedLive("a record edited on the server since the run is exactly the one reported conflict; --force undoes it", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* baseline(sandbox, dir)
      yield* upsertRun(sandbox, dir)
      // Someone edits K-1 (created by the run) and K-A (updated by it) on the server afterwards.
      const ids = Object.fromEntries(
        (yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")).map((r) => [r.externalId, r.id])
      )
      yield* Effect.gen(function*() {
        const api = yield* Api
        for (const [key, value] of [["K-1", "5556"], ["K-A", "1234"]] as const) {
          const reply = yield* api.request({
            method: "PATCH",
            path: `/customers/${String(ids[key])}`,
            body: [{ op: "replace", path: "phoneNumber", value: [value] }]
          })
          assert.isTrue(reply.ok, `edit of ${key}`)
        }
      }).pipe(Effect.provide(apiOf(sandbox)))
      const edited = yield* recordsByKey(sandbox, "customers")

      const mark = (yield* sandbox.control.requests).length
      const undo = yield* undoIn(sandbox, { target: Path.join(dir, "run"), runDir: Path.join(dir, "undo") })
      assert.strictEqual(undo.exitCode, 1)
      assert.deepStrictEqual(statuses(undo.runDir), ["2:restore:conflict", "3:delete:conflict", "4:delete:deleted"])
      const report = readReport(undo.runDir)
      assert.match(report[0]!._error!, /phoneNumber: the run wrote \["9999"\], the server has \["1234"\]/)
      assert.match(report[1]!._error!, /phoneNumber: the run left \["5555"\], the server has \["5556"\]/)
      // Only K-2 was touched: one DELETE.
      assert.deepStrictEqual(
        writes((yield* sandbox.control.requests).slice(mark)).map((w) => w.method),
        ["DELETE"]
      )
      const now = yield* recordsByKey(sandbox, "customers")
      assert.deepStrictEqual(now["K-A"], edited["K-A"])
      assert.deepStrictEqual(now["K-1"], edited["K-1"])
      assert.isUndefined(now["K-2"])

      const forced = yield* undoIn(sandbox, {
        target: Path.join(dir, "run"),
        runDir: Path.join(dir, "forced"),
        force: true
      })
      assert.strictEqual(forced.exitCode, 0)
      assert.deepStrictEqual(statuses(forced.runDir), [
        "2:restore:updated",
        "3:delete:deleted",
        "4:delete:unchanged"
      ])
      const last = yield* recordsByKey(sandbox, "customers")
      assert.deepStrictEqual(last["K-A"]!.phoneNumber, ["1111"])
      assert.strictEqual(last["K-A"]!.note, "nota A")
      assert.isUndefined(last["K-1"])
    }))

  it.scopedLive("--dry-run sends nothing, lists each row's undo and what cannot be undone", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* baseline(sandbox, dir)
      yield* upsertRun(sandbox, dir)
      const mark = (yield* sandbox.control.requests).length
      const dry = yield* undoIn(sandbox, { target: Path.join(dir, "run"), runDir: Path.join(dir, "dry"), dryRun: true })
      assert.deepStrictEqual(writes((yield* sandbox.control.requests).slice(mark)), [])
      assert.strictEqual(dry.exitCode, 0)
      const report = readReport(dry.runDir)
      assert.deepStrictEqual(report.map((r) => `${r.run_row}:${r.undo}:${r._status}`), [
        "2:restore:would-update",
        "3:delete:would-delete",
        "4:delete:would-delete"
      ])
      assert.match(report[0]!._changes!, /phoneNumber: \["9999"\] → \["1111"\]; note: "outra nota" → "nota A"/)
      assert.isTrue(readSummary(dry.runDir).dryRun)

      // Teams cannot be deleted through the API: the dry run says so, before anything, and the row is not undoable.
      yield* importInto(sandbox, {
        resource: "teams",
        file: put(dir, "teams.csv", "description\nEquipe Norte\n"),
        runDir: Path.join(dir, "teams"),
        mode: "create"
      })
      const said: Array<string> = []
      const mark2 = (yield* sandbox.control.requests).length
      const teams = yield* runUndo({
        target: Path.join(dir, "teams"),
        runDir: Path.join(dir, "dry-teams"),
        dryRun: true,
        force: false
      }).pipe(
        Effect.provide(Notices.to((line) => Effect.sync(() => void said.push(line)))),
        Effect.provide(apiOf(sandbox))
      )
      assert.deepStrictEqual(writes((yield* sandbox.control.requests).slice(mark2)), [])
      assert.strictEqual(teams.exitCode, 1)
      assert.deepStrictEqual(readReport(teams.runDir).map((r) => `${r.undo}:${r._status}:${r._error}`), [
        "cannot:skipped:cannot be undone: the API cannot delete teams"
      ])
      assert.strictEqual(said[0], "1 row cannot be undone:")
      assert.match(said[1]!, /teams row 2 \(id \d+\): the API cannot delete teams/)
      assert.strictEqual(readSummary(teams.runDir).cannotUndo, 1)
    }))

  it.scopedLive("a record created again gets a new id, and the undo names the records that pointed at the old one", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* baseline(sandbox, dir)
      const before = yield* recordsByKey(sandbox, "customers")
      // Two runs under one directory, as an onboarding keeps its steps: equipment installed at K-B, then K-B deleted.
      const combo = Path.join(dir, "combo")
      yield* importInto(sandbox, {
        resource: "equipments",
        file: put(dir, "eq.csv", "externalId,name,associatedCustomerExternalId\nEQ-1,Split,K-B\n"),
        runDir: Path.join(combo, "equipments"),
        mode: "create"
      })
      const equipment = (yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "equipments"))[0]!
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "del.csv", "externalId\nK-B\n"),
        runDir: Path.join(combo, "customers"),
        mode: "delete"
      })

      const undo = yield* undoIn(sandbox, { target: combo, runDir: Path.join(dir, "undo") })
      assert.strictEqual(undo.exitCode, 0)
      // The equipment (which names the customer) is undone first.
      assert.deepStrictEqual(readReport(undo.runDir).map((r) => `${r.resource}:${r.undo}:${r._status}`), [
        "equipments:delete:deleted",
        "customers:recreate:created"
      ])
      const recreated = readSummary(undo.runDir).recreated
      assert.strictEqual(recreated.length, 1)
      assert.isNumber(recreated[0].from)
      assert.notStrictEqual(recreated[0].to, recreated[0].from)
      assert.deepStrictEqual(recreated[0].pointing, [`equipments id ${String(equipment.id)} (associatedCustomerId)`])
      assert.match(
        readReport(undo.runDir)[1]!._error!,
        new RegExp(`created again with a new id ${recreated[0].to} \\(was ${recreated[0].from}\\); these named`)
      )
      const after = yield* recordsByKey(sandbox, "customers")
      assert.deepStrictEqual(after, before)
      assert.deepStrictEqual(yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "equipments"), [])
    }))

  it.scopedLive("an undo of an undo is refused, and so is a second undo into the same directory", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* baseline(sandbox, dir)
      const undo = yield* undoIn(sandbox, { target: Path.join(dir, "base"), runDir: Path.join(dir, "undo") })
      assert.strictEqual(undo.exitCode, 0)
      assert.isTrue(fs.existsSync(Path.join(undo.runDir, planFile)))
      const again = yield* Effect.flip(undoIn(sandbox, { target: undo.runDir, runDir: Path.join(dir, "undo2") }))
      assert.match(again.message, /is an undo: it cannot itself be undone/)
      const same = yield* Effect.flip(undoIn(sandbox, { target: Path.join(dir, "base"), runDir: undo.runDir }))
      assert.match(same.message, /already holds a run/)
      assert.isAbove(readJournalLines(undo.runDir).length, 0)
    }))
})
