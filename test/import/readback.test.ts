/**
 * Run files read back by a later command (`rerun` of a `validate` run reads its summary.json): a damaged one
 * stops the command with a message naming the file and what is wrong, before anything is sent.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { rerun } from "../../src/import/Rerun.js"
import { apiOf, put, startTestSandbox, tempDir } from "./support.js"

describe("import: summaries read back", () => {
  it.scopedLive("rerun of a run whose summary.json is damaged names the file and the bad property", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const cases: Array<[string, RegExp]> = [
        ["{ \"resource\": \"customers\", ", /summary\.json: not valid JSON/],
        [JSON.stringify({ resource: "customers" }), /summary\.json: mode: missing/],
        [JSON.stringify({ resource: "gizmos", mode: "upsert" }), /summary\.json: resource: not a resource of the API/],
        [JSON.stringify([]), /summary\.json: Expected \{/]
      ]
      for (const [i, [summary, expected]] of cases.entries()) {
        const runDir = Path.join(dir, `run-${i}`)
        mkdirSync(runDir)
        put(runDir, "report.csv", "_row,_status,_error,externalId\n2,invalid,bad,C-1\n")
        put(runDir, "summary.json", summary)
        const failure = yield* Effect.flip(
          rerun({
            target: runDir,
            only: ["invalid"],
            fixed: undefined,
            dryRun: false,
            out: () => Path.join(dir, "out")
          })
            .pipe(Effect.provide(apiOf(sandbox)))
        )
        assert.strictEqual(failure._tag, "RunError")
        assert.match(failure.message, expected, failure.message)
        assert.include(failure.message, Path.join(runDir, "summary.json"))
      }
      assert.strictEqual((yield* sandbox.control.requests).length, 0, "nothing is sent")
    }))
})
