/**
 * Onboarding through the built CLI: rows of one sheet naming each other in a cycle through keys written in
 * another case are refused before anything is sent, naming the file, row and column (exit 2).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { put, runCli, startTestSandbox, tempDir, writes } from "./support.js"

describe("onboarding: references in another case (CLI)", () => {
  it.scopedLive(
    "rows naming each other in a cycle through keys in another case are refused before anything is sent (exit 2)",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const input = Path.join(dir, "input")
        mkdirSync(input)
        put(input, "equipments.csv", "externalId,name,parentEquipmentExternalId\nEQ-1,Um,eq-2\nEQ-2,Dois, Eq-1 \n")
        const cli = yield* runCli(["onboard", "input", "--out", "run"], dir, sandbox)
        assert.strictEqual(cli.code, 2, cli.stderr)
        assert.match(
          cli.stderr,
          /equipments\.csv \(row 2, column "parentEquipmentExternalId"\): rows 2 → 3 → 2 through parentEquipmentExternalId/
        )
        assert.deepStrictEqual(writes(yield* sandbox.control.requests), [])
      }),
    60_000
  )
})
