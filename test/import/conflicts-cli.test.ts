/**
 * Stale edits through the built CLI: `export` → edit the file → edit the server → `import` exits 1 with the rows
 * in conflict and the way out printed; `rerun --only conflict --merge` merges; `--merge --overwrite` is a usage
 * error (exit 2).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { importInto, put, readReport, readSummary, runCli, startTestSandbox, tempDir } from "./support.js"

describe("stale edits (CLI)", () => {
  it.scopedLive("conflict exits 1 and says how to go on; rerun --only conflict --merge; both flags exit 2", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "seed.csv", "externalId,name,note\nK-1,Alfa,n1\nK-2,Beta,n2\n"),
        runDir: Path.join(dir, "seed")
      })
      const out = Path.join(dir, "export")
      const exported = yield* runCli(["export", "customers", "--out", out], sandbox, dir)
      assert.strictEqual(exported.code, 0, exported.stderr)
      const file = Path.join(out, "customers.csv")
      writeFileSync(file, readFileSync(file, "utf8").replace(",n1,", ",n1 in the file,"))
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "server.csv", "externalId,name\nK-1,Alfa on the server\n"),
        runDir: Path.join(dir, "server"),
        mode: "update"
      })

      const both = yield* runCli(["import", "customers", file, "--merge", "--overwrite"], sandbox, dir)
      assert.strictEqual(both.code, 2)
      assert.include(both.stderr, "--merge and --overwrite exclude each other")

      const runDir = Path.join(dir, "first")
      const first = yield* runCli(["import", "customers", file, "--out", runDir], sandbox, dir)
      assert.strictEqual(first.code, 1, first.stderr)
      assert.include(first.stderr, `fsm-bulk rerun ${runDir} --only conflict --merge`)
      assert.strictEqual(readSummary(runDir).counts.conflict, 1)
      assert.deepStrictEqual(readReport(runDir).map((r) => `${r.externalId}:${r._status}`), [
        "K-1:conflict",
        "K-2:unchanged"
      ])

      const merged = Path.join(dir, "merged")
      const again = yield* runCli(
        ["rerun", runDir, "--only", "conflict", "--merge", "--out", merged],
        sandbox,
        dir
      )
      assert.strictEqual(again.code, 0, again.stderr)
      assert.deepStrictEqual(readReport(merged).map((r) => `${r.externalId}:${r._status}`), ["K-1:updated"])
      const stored = (yield* sandbox.control.records("sandbox-key", "customers")).find((c) => c.externalId === "K-1")!
      assert.strictEqual(stored.description, "Alfa on the server")
      assert.strictEqual(stored.note, "n1 in the file")
    }))
})
