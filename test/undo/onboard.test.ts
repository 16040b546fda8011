/**
 * `undo` of an onboarding directory (one run directory per step): the steps are undone in reverse dependency
 * order, so records are deleted before the records they name; what the API cannot take back (questionnaire
 * answers, attachments, task items, employee stock) is listed as such, with why, and the run says it did not end
 * well (exit 1) because the account is not wholly back.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import type { ResourceName } from "../../src/Resources.js"
import { exampleCsvDir, onboardInto, recordSteps } from "../onboard/support.js"
import { readReport, readSummary, startTestSandbox, tempDir, undoIn } from "./support.js"

describe("undo of an onboarding", () => {
  it.scopedLive("undoes the steps in reverse dependency order and lists what cannot be undone", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const account = sandbox.accounts[0]!.apiKey
      const count = (r: ResourceName) => Effect.map(sandbox.control.records(account, r), (x) => x.length)
      const before = yield* Effect.forEach(recordSteps, count)
      const onboarding = Path.join(dir, "onboarding")
      yield* onboardInto(sandbox, { input: exampleCsvDir, runDir: onboarding })
      assert.isTrue((yield* Effect.forEach(recordSteps, count)).some((n, i) => n > before[i]!))

      const undo = yield* undoIn(sandbox, { target: onboarding, runDir: Path.join(dir, "undo") })
      const summary = readSummary(undo.runDir)
      assert.strictEqual(summary.undoes, onboarding)
      // Tasks (which name customers) are undone before customers, customers before segments.
      const steps = (summary.runs as Array<string>).map((r) => Path.basename(r))
      assert.isBelow(steps.indexOf("tasks"), steps.indexOf("customers"))
      assert.isBelow(steps.indexOf("customers"), steps.indexOf("segments"))

      const report = readReport(undo.runDir)
      const bad = report.filter((r) => r._status !== "deleted" && r._status !== "skipped")
      assert.deepStrictEqual(bad.map((r) => `${r.resource} ${r.run_row}: ${r._status} ${r._error}`), [])
      // What cannot be undone is there, said so, and why.
      const cannot = report.filter((r) => r._status === "skipped")
      assert.isAbove(cannot.length, 0)
      for (const r of cannot) assert.match(r._error!, /^cannot be undone: /)
      assert.isTrue(cannot.some((r) => r.resource === "questionnaire-answers"))
      assert.isTrue(cannot.some((r) => r.resource === "task-products" && /go with their task when/.test(r._error!)))
      assert.strictEqual(summary.cannotUndo, cannot.length)
      assert.strictEqual(undo.exitCode, 1)

      // Every record created is gone, but those the API has no delete for (teams, additional costs): said so.
      const kept = new Set<ResourceName>(["teams", "additional-costs"])
      for (const r of kept) {
        assert.isTrue(cannot.some((x) => x.resource === r && /the API cannot delete/.test(x._error!)), r)
      }
      const after = yield* Effect.forEach(recordSteps, count)
      recordSteps.forEach((r, i) => {
        if (!kept.has(r)) assert.strictEqual(after[i], before[i], r)
      })
    }))
})
