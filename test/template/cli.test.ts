/**
 * `fsm-bulk template` as a user runs it (`node dist/bin.js`, built first): the chosen resources and formats, and
 * the exit-2 refusals of a resource that does not exist or cannot be imported.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readdirSync } from "node:fs"
import * as Path from "node:path"
import { bin, tempDir } from "../files/support.js"
import { spawned } from "../spawned.js"

describe("the template command", () => {
  it("fsm-bulk template writes the chosen resources and formats, and refuses unknown ones with exit 2", () => {
    assert.isTrue(existsSync(bin), "build first: npx tsc -p tsconfig.json")
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const dir = yield* tempDir
          const out = Path.join(dir, "out")
          const ok = yield* spawned(process.execPath, [
            bin,
            "template",
            "customers",
            "keywords",
            "--format",
            "csv",
            "--out",
            out,
            "--json"
          ])
          assert.strictEqual(ok.status, 0, ok.stderr)
          const summary = JSON.parse(ok.stdout.trim().split("\n").pop()!)
          assert.deepStrictEqual(summary.resources, ["customers", "keywords"])
          assert.deepStrictEqual(readdirSync(out).sort(), ["README.md", "customers.csv", "keywords.csv"])
          // `clientes` is customers' Portuguese name (src/Aliases.ts); a misspelling of it is suggested.
          const unknown = yield* spawned(process.execPath, [bin, "template", "clientez", "--out", out])
          assert.strictEqual(unknown.status, 2)
          assert.include(unknown.stderr, "unknown resource \"clientez\" (did you mean \"clientes\"?)")
          const exportOnly = yield* spawned(process.execPath, [bin, "template", "deleted-tasks", "--out", out])
          assert.strictEqual(exportOnly.status, 2)
          assert.include(exportOnly.stderr, "export-only")
        })
      )
    )
  }, 60_000)
})
