/**
 * `onboard --dry-run`: the whole plan, step by step, and not one write. Rows naming parents that earlier steps
 * would create are planned as `would-create` (not failed); rows whose parent would not make it are skipped, naming it;
 * after a real onboarding the plan is "unchanged".
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import {
  errors,
  exampleCsvDir,
  onboardInto,
  readJson,
  readReport,
  recordSteps,
  runCli,
  startTestSandbox,
  statuses,
  tempDir,
  writeFamily,
  writes
} from "./support.js"

describe("onboard --dry-run", () => {
  it.scopedLive("shows the whole plan step by step and writes nothing", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const cli = yield* runCli(["onboard", exampleCsvDir, "--dry-run", "--json", "--out", "plan"], dir, sandbox)
      assert.strictEqual(cli.code, 0, cli.stderr)
      assert.deepStrictEqual(writes(yield* sandbox.control.requests), [])

      // The plan on stderr: every step in dependency order, with what its rows would get.
      assert.match(cli.stderr, /20 steps in dependency order \(dry run: nothing will be written\)/)
      assert.match(cli.stderr, /\[ 9\/20\] customers\s+10 rows {2}would create 10/)
      assert.match(cli.stderr, /\[13\/20\] tasks\s+10 rows {2}would create 10/)
      assert.match(cli.stderr, /\[18\/20\] questionnaire-answers\s+12 rows {2}would send 12 \(not compared\)/)
      const summary = JSON.parse(cli.stdout.trim().split("\n").at(-1)!)
      assert.strictEqual(summary.dryRun, true)
      assert.strictEqual(summary.exitCode, 0)
      assert.strictEqual(summary.counts.created, 72)
      assert.strictEqual(summary.counts.skipped, 39)
      assert.strictEqual(summary.counts.failed + summary.counts.invalid, 0)

      // Tasks name customers, users, teams, equipments and keywords that do not exist yet: planned as created.
      const runDir = Path.join(dir, "plan")
      for (const step of recordSteps) {
        const rows = readReport(Path.join(runDir, step))
        assert.isTrue(
          rows.every((r) => r._status === "would-create" && r._error === ""),
          `${step}: ${JSON.stringify(rows.filter((r) => r._status !== "would-create"))}`
        )
      }
      const answers = readReport(Path.join(runDir, "questionnaire-answers"))
      assert.isTrue(answers.every((r) => r._status === "skipped" && /not compared/.test(r._changes!)))
      assert.strictEqual(readJson(Path.join(runDir, "summary.json")).dryRun, true)
    }), 60_000)

  it.scopedLive(
    "plans rows whose parent would not make it as skipped, naming the parent row",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const input = writeFamily(dir)
        const runDir = Path.join(dir, "plan")
        const result = yield* onboardInto(sandbox, { input, runDir, dryRun: true })
        assert.strictEqual(result.exitCode, 1)
        assert.deepStrictEqual(writes(yield* sandbox.control.requests), [])
        const equipments = readReport(Path.join(runDir, "equipments"))
        // E-5 names E-6, a later row of the same sheet: it would be created.
        assert.deepStrictEqual(statuses(equipments).slice(0, 6), [
          "2:would-create",
          "3:skipped",
          "4:skipped",
          "5:would-create",
          "6:would-create",
          "7:would-create"
        ])
        assert.deepStrictEqual(errors(equipments.slice(0, 6)), {
          "3": "associatedCustomerExternalId \"C-2\": row 3 of customers is invalid",
          "4": "associatedCustomerExternalId \"C-3\": row 4 of customers would fail"
        })
        const tasks = readReport(Path.join(runDir, "tasks"))
        assert.deepStrictEqual(statuses(tasks), ["2:would-create", "3:skipped", "4:skipped", "5:would-create"])
        assert.strictEqual(tasks[1]!._error, "customerExternalId \"C-2\": row 3 of customers is invalid")
        assert.strictEqual(tasks[2]!._error, "equipmentsExternalId \"E-2\": row 3 of equipments would be skipped")
      }),
    60_000
  )

  it.scopedLive("after the onboarding, plans every record as unchanged", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const done = yield* onboardInto(sandbox, { input: exampleCsvDir, runDir: Path.join(dir, "run") })
      assert.strictEqual(done.exitCode, 0)
      const before = writes(yield* sandbox.control.requests).length
      const plan = yield* onboardInto(sandbox, { input: exampleCsvDir, runDir: Path.join(dir, "plan"), dryRun: true })
      assert.strictEqual(plan.exitCode, 0)
      assert.strictEqual(writes(yield* sandbox.control.requests).length, before)
      for (const step of recordSteps) {
        const rows = readReport(Path.join(dir, "plan", step))
        assert.isTrue(
          rows.every((r) => r._status === "unchanged"),
          `${step}: ${JSON.stringify(rows.filter((r) => r._status !== "unchanged"))}`
        )
      }
    }), 60_000)
})
