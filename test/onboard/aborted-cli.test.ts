/**
 * An onboarding whose credentials are rejected stops at once with exit 3: no write, no row turned `failed` by a
 * lookup the login refused, the step's journal kept, and the summaries saying it was aborted and where.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { put, readJson, readReport, runCli, startTestSandbox, tempDir, writes } from "./support.js"

describe("onboard: credentials rejected", () => {
  it.scopedLive(
    "exits 3 before any write; the summaries and the first step's journal say aborted; the next step is not run",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        // Segments have no upsert in the API: the first step looks its rows' keys up before writing anything.
        put(dir, "segments.csv", "description\nVarejo\nAtacado\n")
        put(dir, "customers.csv", "externalId,name,segmentDescription\nC-1,Padaria Boa,Varejo\nC-2,Mercado,Atacado\n")
        const cli = yield* runCli(["onboard", dir, "--out", "run", "--json"], dir, sandbox, { FSM_API_TOKEN: "wrong" })
        assert.strictEqual(cli.code, 3, cli.stderr)
        assert.match(cli.stderr, /the onboarding was aborted/)
        assert.match(cli.stderr, /rejected the credentials/)
        assert.notInclude(cli.stderr + cli.stdout, "wrong")
        assert.deepStrictEqual(writes(yield* sandbox.control.requests), [])

        const runDir = Path.join(dir, "run")
        const summary = readJson(Path.join(runDir, "summary.json"))
        assert.strictEqual(summary.exitCode, 3)
        assert.isTrue(summary.interrupted)
        assert.match(summary.aborted, /rejected the credentials/)
        assert.deepStrictEqual(summary.notRun, ["customers"])
        assert.strictEqual(summary.counts.failed, 0)
        assert.deepStrictEqual(
          summary.steps.map((
            s: { resource: string; aborted: boolean; exitCode: number }
          ) => [s.resource, s.aborted, s.exitCode]),
          [["segments", true, 3]]
        )

        const step = Path.join(runDir, "segments")
        assert.match(readJson(Path.join(step, "summary.json")).aborted, /rejected the credentials/)
        assert.deepStrictEqual(readReport(step).map((r) => r._status), ["skipped", "skipped"])
        const journal = readFileSync(Path.join(step, "journal.ndjson"), "utf8").trim().split("\n").map((l) =>
          JSON.parse(l)
        )
        assert.deepStrictEqual(journal.map((l) => l.state), ["header", "end"])
        assert.isTrue(journal[1].interrupted)
        assert.match(journal[1].aborted, /rejected the credentials/)
      }),
    30_000
  )
})
