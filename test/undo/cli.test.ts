/**
 * `fsm-bulk undo` as users run it (the built CLI): killed with SIGKILL midway, `resume` finishes it with nothing
 * done twice; exit codes (0 all undone, 1 a conflict, 2 nothing to undo here); `rerun` of an undo's conflicts once
 * the record is put back, or with `--overwrite`; `--dry-run` sends nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { clientFlags, customersFile, journalRows, lastJson, untilInFlight } from "../drills/support.js"
import {
  apiOf,
  customersCsv,
  importInto,
  put,
  readJournalLines,
  readReport,
  recordsByKey,
  runCli,
  spawnCli,
  startTestSandbox,
  tempDir,
  until,
  writes
} from "./support.js"

const rows = 120

describe("fsm-bulk undo (CLI)", () => {
  it.scopedLive("an undo killed with SIGKILL midway is finished by resume, and no record is deleted twice", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 40 } })
      const dir = yield* tempDir
      const input = customersFile(dir, "clientes.csv", rows)
      const run = yield* importInto(sandbox, {
        resource: "customers",
        file: input.file,
        runDir: Path.join(dir, "run"),
        mode: "create"
      })
      assert.strictEqual(run.summary.counts.created, rows)
      const undoDir = Path.join(dir, "undo")
      const mark = (yield* sandbox.control.requests).length

      const cli = spawnCli(["undo", Path.join(dir, "run"), "--out", undoDir, ...clientFlags], sandbox, dir)
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => cli.child.exitCode === null && cli.child.signalCode === null && cli.child.kill("SIGKILL"))
      )
      yield* untilInFlight(undoDir, 40)
      cli.child.kill("SIGKILL")
      const killed = yield* Effect.promise(() => cli.exit)
      assert.strictEqual(killed.signal, "SIGKILL", "the undo was still running when it was killed")
      const atKill = journalRows(undoDir)
      assert.isBelow(atKill.done.size, rows, "the kill came before the last row")
      assert.isAbove(atKill.inFlight.size, 0, "the kill caught rows between their send and their answer")

      const resumed = yield* runCli(["resume", undoDir, "--json", ...clientFlags], sandbox, dir)
      assert.strictEqual(resumed.code, 0, resumed.stderr)
      const summary = lastJson(resumed.stdout)
      assert.strictEqual(summary.command, "undo")
      assert.strictEqual(summary.rows, rows)
      assert.strictEqual(summary.counts.deleted, rows)
      const report = readReport(undoDir)
      assert.deepStrictEqual(report.map((r) => Number(r._row)), Array.from({ length: rows }, (_, i) => i + 2))
      for (const r of report) assert.strictEqual(r._status, "deleted", `row ${r._row}: ${r._error}`)

      assert.deepStrictEqual(yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers"), [])
      // Each record was deleted once: one applied DELETE per record, over both sessions.
      const deletes = writes((yield* sandbox.control.requests).slice(mark)).filter((w) => w.applied)
      assert.strictEqual(deletes.length, rows)
      assert.strictEqual(new Set(deletes.map((w) => w.path)).size, rows)
      assert.isTrue(deletes.every((w) => w.method === "DELETE"))
    }))

  it.scopedLive("exit codes: conflict 1, rerun of the conflicts (--overwrite forces them) 0, nothing to undo 2", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\nK-3,Três\n"),
        runDir: Path.join(dir, "run"),
        mode: "create"
      })
      const ids = Object.fromEntries(
        (yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")).map((r) => [r.externalId, r.id])
      )
      const rename = (key: string, name: string) =>
        Effect.gen(function*() {
          const api = yield* Api
          const reply = yield* api.request({
            method: "PATCH",
            path: `/customers/${String(ids[key])}`,
            body: [{ op: "replace", path: "name", value: name }]
          })
          assert.isTrue(reply.ok)
        }).pipe(Effect.provide(apiOf(sandbox)))
      yield* rename("K-1", "Um, renomeado")
      yield* rename("K-3", "Três, renomeado")

      const mark = (yield* sandbox.control.requests).length
      const dry = yield* runCli(["undo", "run", "--dry-run", "--out", "dry", "--json"], sandbox, dir)
      assert.strictEqual(dry.code, 1, dry.stderr)
      assert.deepStrictEqual(writes((yield* sandbox.control.requests).slice(mark)), [])
      assert.deepStrictEqual(readReport(Path.join(dir, "dry")).map((r) => r._status), [
        "conflict",
        "would-delete",
        "conflict"
      ])

      const undo = yield* runCli(["undo", "run", "--out", "undo", "--json"], sandbox, dir)
      assert.strictEqual(undo.code, 1, undo.stderr)
      assert.strictEqual(lastJson(undo.stdout).counts.conflict, 2)
      assert.match(undo.stderr, /changed on the server since the run/)
      assert.match(undo.stderr, /fsm-bulk rerun \S+undo --only conflict --overwrite/)

      const merge = yield* runCli(["rerun", "undo", "--only", "conflict", "--merge", "--out", "m"], sandbox, dir)
      assert.strictEqual(merge.code, 2)
      assert.match(merge.stderr, /is an undo: it has nothing to merge/)
      // K-1 is put back as the run wrote it: the conflicts' rerun undoes it, K-3 stays a conflict.
      yield* rename("K-1", "Um")
      const rerun = yield* runCli(["rerun", "undo", "--only", "conflict", "--out", "again", "--json"], sandbox, dir)
      assert.strictEqual(rerun.code, 1, rerun.stderr)
      assert.deepStrictEqual(readReport(Path.join(dir, "again")).map((r) => `${r._row}:${r._status}`), [
        "2:deleted",
        "4:conflict"
      ])
      // --overwrite undoes K-3 anyway.
      const forced = yield* runCli(
        ["rerun", "again", "--only", "conflict", "--overwrite", "--out", "forced", "--json"],
        sandbox,
        dir
      )
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.deepStrictEqual(readReport(Path.join(dir, "forced")).map((r) => `${r._row}:${r._status}`), ["4:deleted"])
      assert.deepStrictEqual(yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers"), [])

      const undoOfUndo = yield* runCli(["undo", "undo", "--out", "x"], sandbox, dir)
      assert.strictEqual(undoOfUndo.code, 2)
      assert.match(undoOfUndo.stderr, /is an undo: it cannot itself be undone/)
      const missing = yield* runCli(["undo", "nowhere"], sandbox, dir)
      assert.strictEqual(missing.code, 2)
      assert.match(missing.stderr, /nowhere does not exist/)
    }))

  it.scopedLive(
    "a create of keys that exist, killed with SIGKILL and resumed, then undone: no record of the earlier run is deleted",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 40 } })
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", customersCsv(40))
        yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "first"), mode: "upsert" })
        const before = yield* recordsByKey(sandbox, "customers")
        assert.strictEqual(Object.keys(before).length, 40)

        const second = Path.join(dir, "second")
        const cli = spawnCli(
          ["import", "customers", file, "--mode", "create", "--concurrency", "4", "--rate", "20/2s", "--out", second],
          sandbox,
          dir
        )
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => cli.child.exitCode === null && cli.child.signalCode === null && cli.child.kill("SIGKILL"))
        )
        const answered = () => {
          try {
            return readJournalLines(second).filter((l) => l.state === "done").length
          } catch {
            return 0
          }
        }
        // Killed after about eight answers (or once it ended, when it needed no request per row).
        yield* until(() => answered() >= 8 || cli.child.exitCode !== null, 60_000)
        cli.child.kill("SIGKILL")
        yield* Effect.promise(() => cli.exit)

        const resumed = yield* runCli(["resume", second, ...clientFlags], sandbox, dir)
        assert.strictEqual(resumed.code, 1, resumed.stderr)
        assert.isTrue(readReport(second).every((r) => r._status === "failed"), JSON.stringify(readReport(second)))
        const undo = yield* runCli(["undo", second, "--out", Path.join(dir, "undo"), ...clientFlags], sandbox, dir)
        assert.include([0, 2], undo.code, undo.stderr)
        assert.deepStrictEqual(yield* recordsByKey(sandbox, "customers"), before)
      })
  )

  it.scopedLive("resume keeps the run's --rate and --concurrency unless they are given again", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 40 } })
      const dir = yield* tempDir
      const runDir = Path.join(dir, "run")
      const cli = spawnCli(
        [
          "import",
          "customers",
          put(dir, "c.csv", customersCsv(12)),
          "--rate",
          "4/3s",
          "--concurrency",
          "2",
          "--out",
          runDir
        ],
        sandbox,
        dir
      )
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => cli.child.exitCode === null && cli.child.signalCode === null && cli.child.kill("SIGKILL"))
      )
      yield* until(() => {
        try {
          return readJournalLines(runDir).some((l) => l.state === "done")
        } catch {
          return false
        }
      }, 60_000)
      cli.child.kill("SIGINT")
      assert.strictEqual((yield* Effect.promise(() => cli.exit)).code, 3)
      assert.strictEqual(readJournalLines(runDir)[0]!.rate, "4/3s")

      const resumed = yield* runCli(["resume", runDir, "--json"], sandbox, dir)
      assert.strictEqual(resumed.code, 0, resumed.stderr)
      assert.include(resumed.stderr, "keeps its own --rate 4/3s and --concurrency 2")
      assert.deepStrictEqual(lastJson(resumed.stdout).budget, { limit: 4, windowMs: 3_000 })
    }))
})
