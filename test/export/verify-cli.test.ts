/**
 * `fsm-bulk export` and `fsm-bulk verify` as a user runs them (`node dist/bin.js`, real exit codes): verify
 * matches a fresh export, and catches a single changed byte, a missing file and a missing manifest.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { prepareExport } from "../../src/export/Export.js"
import { runVerify } from "../../src/export/Verify.js"
import { lastJson } from "../support.js"
import { accountA, cliEnv, runCli, seededSandbox, tempDir } from "./support.js"

describe("verify", () => {
  it.scopedLive(
    "matches a fresh export; catches a changed byte, a missing file and a missing manifest",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seededSandbox
        const dir = Path.join(yield* tempDir, "export")

        const exported = yield* Effect.promise(() =>
          runCli(["export", "--out", dir, "--json"], cliEnv(sandbox, accountA))
        )
        assert.strictEqual(exported.code, 0, exported.stderr)
        const summary = lastJson(exported.stdout)
        assert.strictEqual(summary.command, "export")
        assert.strictEqual(summary.outDir, dir)
        assert.isAbove(summary.requests, 0)
        assert.isFalse(
          existsSync(Path.join(dir, ".export-progress.json")),
          "the checkpoint is gone once the manifest is written"
        )
        assert.match(exported.stderr, /customers: 3 rows → customers\.csv/)
        assert.notInclude(exported.stderr + exported.stdout, accountA.apiToken, "the token never shows")

        const verify = () => Effect.promise(() => runCli(["verify", dir, "--json"], {}))
        const clean = yield* verify()
        assert.strictEqual(clean.code, 0, clean.stderr)
        assert.isTrue(lastJson(clean.stdout).ok)
        assert.strictEqual(lastJson(clean.stdout).files.length, summary.files.length)

        // One byte: a letter of a customer's name, same length, same row count.
        const customers = Path.join(dir, "customers.csv")
        const original = readFileSync(customers)
        const at = original.indexOf(Buffer.from("Padaria"))
        const changed = Buffer.from(original)
        changed[at] = "B".charCodeAt(0)
        writeFileSync(customers, changed)
        const byte = yield* verify()
        assert.strictEqual(byte.code, 1)
        const byteSummary = lastJson(byte.stdout)
        assert.isFalse(byteSummary.ok)
        assert.deepStrictEqual(
          byteSummary.files.filter((f: any) => f.status !== "ok").map((
            f: any
          ) => [f.file, f.status, f.rows, f.expectedRows]),
          [["customers.csv", "changed", 3, 3]]
        )
        assert.match(
          byteSummary.problems[0],
          /customers\.csv differs from the manifest: its sha256 is [0-9a-f]{64}, the manifest says [0-9a-f]{64}/
        )
        writeFileSync(customers, original)

        rmSync(Path.join(dir, "tasks.csv"))
        const missing = yield* Effect.promise(() => runCli(["verify", dir], {}))
        assert.strictEqual(missing.code, 1)
        assert.match(missing.stderr, /missing +tasks\.csv is missing \(the manifest lists 2 rows of tasks\)/)
        assert.match(missing.stderr, /ok +customers\.csv: 3 rows, sha256 matches/)

        // The same verification in-process for the rest (exit codes 1 and 2 are the edge's mapping of these).
        rmSync(Path.join(dir, "manifest.json"))
        const noManifest = yield* runVerify(dir)
        assert.isFalse(noManifest.ok)
        assert.match(noManifest.problems[0]!, /manifest\.json is missing: .* is not a finished export/)
        const nowhere = yield* Effect.flip(runVerify(Path.join(dir, "nowhere")))
        assert.strictEqual(nowhere._tag, "RunError")
        assert.match(nowhere.message, /is not a directory/)
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )

  it.scopedLive(
    "export refuses bad usage with exit code 2 before anything is sent",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const unknown = yield* Effect.promise(() => runCli(["export", "customer", "--out", dir], {}))
        assert.strictEqual(unknown.code, 2)
        assert.match(
          unknown.stderr,
          /unknown resource "customer" \(did you mean "customers"\?\)\. Export knows: .*customers/
        )
        assert.notMatch(unknown.stderr, /embedded sandbox/, "no sandbox was started for nothing")

        const request = { resources: ["tasks"], out: dir, format: "csv" as const, say: () => Effect.void }
        const dates = yield* Effect.flip(prepareExport({ ...request, since: "2026-02-30", until: undefined }))
        assert.strictEqual(dates.message, "--since: \"2026-02-30\" is not a date as yyyy-mm-dd (example: 2025-01-31)")
        const order = yield* Effect.flip(prepareExport({ ...request, since: "2026-02-01", until: "2026-01-31" }))
        assert.strictEqual(order.message, "--since 2026-02-01 is after --until 2026-01-31")

        writeFileSync(Path.join(dir, "manifest.json"), "{}")
        const finished = yield* Effect.promise(() => runCli(["export", "--out", dir], {}))
        assert.strictEqual(finished.code, 2)
        assert.match(finished.stderr, /already holds a finished export/)
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )
})
