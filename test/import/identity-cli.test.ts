/**
 * Record identity through the built CLI: upserting a key again in another case finds the record (exit 0), where
 * it used to try a second create and end with a 409 (exit 1). In-process cases: `identity.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { put, readReport, runCli, startTestSandbox, tempDir, writes } from "./support.js"

describe("keys in another case name the same record (CLI)", () => {
  it.scopedLive(
    "upserting equipment-categories again with the key in another case updates the record: exit 0, no 409, no duplicate",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const first = yield* runCli(
          [
            "import",
            "equipment-categories",
            put(dir, "a.csv", "externalId,description\nEQC-A,Split\nEQC-B,Janela\n"),
            "--out",
            "a"
          ],
          sandbox,
          dir
        )
        assert.strictEqual(first.code, 0, first.stderr)
        const before = (yield* sandbox.control.requests).length

        const second = yield* runCli(
          [
            "import",
            "equipment-categories",
            put(dir, "b.csv", "externalId,description\neqc-a,Split\n eqc-b ,Janela nova\n"),
            "--mode",
            "upsert",
            "--out",
            "b"
          ],
          sandbox,
          dir
        )
        assert.strictEqual(second.code, 0, second.stderr)
        const report = readReport(Path.join(dir, "b"))
        assert.deepStrictEqual(report.map((r) => r._status), ["unchanged", "updated"], JSON.stringify(report))
        assert.strictEqual(report[0]!._error, "")
        // The key is identity, not a value: only the description changed, and only it was sent.
        const sent = writes((yield* sandbox.control.requests).slice(before))
        assert.deepStrictEqual(sent.map((w) => w.method), ["PATCH"])
        const stored = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "equipment-categories")
        assert.deepStrictEqual(stored.map((r) => [r.externalId, r.description]), [["EQC-A", "Split"], [
          "EQC-B",
          "Janela nova"
        ]])
      }),
    60_000
  )
})
