/**
 * exceljs is mended before any test file loads it, whatever file a worker runs first (test/setup/excel-first.ts).
 * A run of vitest with each tier's set-up files runs two files in one worker that keeps its modules: the first
 * imports exceljs itself, the second reads a workbook through src/. Before the set-up file, the second failed
 * ("exceljs was loaded before src/files/ExcelSax.ts"), as seven cli-tier files did in a clean-clone run whose file
 * order put test/cli/cli.test.ts first in their worker.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { spawned } from "../spawned.js"

const repo = Path.resolve(import.meta.dirname, "../..")

describe("exceljs mended before any test file (both tiers' set-up)", () => {
  for (const tier of ["fast", "cli"]) {
    it.effect(
      `${tier}: a file that imports exceljs first does not break the next file's workbooks`,
      () =>
        Effect.gen(function*() {
          const run = yield* spawned(
            process.execPath,
            [Path.join(repo, "node_modules/vitest/vitest.mjs"), "run", "--config", "test/setup/order/order.config.ts"],
            { cwd: repo, env: { ...process.env, ORDER_TIER: tier, CI: "true" }, timeout: 90_000 }
          )
          const out = `${run.stdout}\n${run.stderr}`
          assert.strictEqual(run.status, 0, out)
          assert.match(out, /2 passed/, out)
        }),
      { timeout: 120_000 }
    )
  }
})
