/**
 * The closing lines of an onboarding whose rows did not all end well: what went wrong across the steps (most rows
 * first, each kind with its count and one example row) and the exact `rerun` command of each step to take on.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { closingLines } from "../../src/onboard/CommandRun.js"
import { onboardInto, startTestSandbox, tempDir, writeFamily } from "./support.js"

describe("onboard: closing lines", () => {
  it.scopedLive("group the errors of every step and give each troubled step its rerun command", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const runDir = Path.join(dir, "run")
      const result = yield* onboardInto(sandbox, { input: writeFamily(dir), runDir })
      const { where } = closingLines(result.summary)
      const customers = Path.join(runDir, "customers")
      const equipments = Path.join(runDir, "equipments")
      const at = where.indexOf("what went wrong, most rows first:")
      assert.isAtLeast(at, 0, where.join("\n"))
      const kinds = where.slice(at + 1).filter((l) => /^ {2}\d+ {2}/.test(l))
      assert.isAtLeast(kinds.length, 3)
      assert.isAtMost(kinds.length, 5)
      assert.isTrue(kinds.some((l) => /^ {2}\d+ {2}customers row 3: cpfCnpj/.test(l)), kinds.join("\n"))
      assert.isTrue(kinds.some((l) => /^ {2}\d+ {2}equipments row \d+: /.test(l)), kinds.join("\n"))
      const counts = kinds.map((l) => Number(/^ +(\d+)/.exec(l)![1]))
      assert.deepStrictEqual(counts, [...counts].sort((a, b) => b - a), "most rows first")
      assert.include(where, `      fsm-bulk rerun ${customers} --fixed CORRECTED.csv`)
      // C-3 names a segment that does not exist: a plain rerun would fail the same way (issue 27).
      assert.include(
        where,
        `next (customers): 1 row names a record that does not exist (see _error): import those records first, then`
      )
      assert.include(where, `      fsm-bulk rerun ${customers} --only failed --fixed CORRECTED.csv`)
      assert.notInclude(where, `next (customers): send the failed and in-doubt rows again: fsm-bulk rerun ${customers}`)
      assert.isTrue(where.some((l) => l.endsWith(`fsm-bulk rerun ${equipments} --only skipped`)), where.join("\n"))
      assert.include(where, `summary: ${runDir}/summary.json`)
      // The onboarding's summary keeps the kinds per step.
      assert.isAbove(result.summary.steps.find((s) => s.resource === "customers")!.errors!.length, 0)
    }))
})
