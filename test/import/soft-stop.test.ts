/**
 * A stop (Ctrl-C) whose grace runs out while a finished row's `done` line is on its way to the disk: the line lands
 * in the journal, so the report and the summary must say what it says (found by the generated histories: such rows
 * were reported `skipped`, "not attempted", then `in-doubt`, while the journal and the server had them created).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import * as Path from "node:path"
import { openJournal } from "../../src/import/Journal.js"
import { Journals } from "../../src/import/Services.js"
import { RunStop } from "../../src/Signals.js"
import { importWith, put, readJournalLines, readReport, readSummary, startTestSandbox, tempDir } from "./support.js"

describe("a stop during a journal write", () => {
  it.scopedLive("a row whose done line was being written when the grace ran out is reported as journalled", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name\nK-1,Um\n")
      const runDir = Path.join(dir, "run")
      // A disk that takes longer than the grace: the `done` line is written, then its append does not return
      // until the run gives up on it (the stop comes once the line is on disk, so the grace always runs out here).
      const held = yield* Deferred.make<void>()
      const slowDisk = (path: string) =>
        Effect.map(openJournal(path), (journal) => ({
          path: journal.path,
          append: (line: Parameters<typeof journal.append>[0]) =>
            line.state === "done"
              ? Effect.zipRight(journal.append(line), Effect.zipRight(Deferred.succeed(held, undefined), Effect.never))
              : journal.append(line)
        }))
      const result = yield* importWith(
        sandbox,
        { resource: "customers", file, runDir, mode: "create", graceMs: 20 },
        Layer.merge(RunStop.when(Deferred.await(held)), Layer.succeed(Journals, { open: slowDisk }))
      )

      const done = readJournalLines(runDir).filter((l) => l.state === "done")
      assert.strictEqual(done.length, 1)
      assert.strictEqual(done[0]!.status, "created")
      const records = yield* sandbox.control.records("sandbox-key", "customers")
      assert.strictEqual(records.length, 1)
      const [row] = readReport(runDir)
      assert.strictEqual(row!._status, "created")
      assert.strictEqual(row!._record_id, String(done[0]!.recordId))
      assert.strictEqual(row!._record_id, String((records[0] as { id: unknown }).id))
      assert.strictEqual(row!._error, "")
      // Every row ended (created): the stop interrupted nothing.
      assert.strictEqual(result.exitCode, 0)
      assert.isFalse(result.interrupted)
      assert.strictEqual(readSummary(runDir).counts.created, 1)
      assert.strictEqual(readSummary(runDir).counts.skipped, 0)
      assert.strictEqual(readSummary(runDir).counts["in-doubt"], 0)
    }))
})
