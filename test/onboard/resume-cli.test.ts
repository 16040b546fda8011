/**
 * An onboarding killed in the middle of a step continues with one command, `resume` on its run directory: the
 * steps that ended are kept, the step under way continues from its journal, the rest run; every row is written
 * once, and the onboarding's summary ends as if it had never stopped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { spawnCli, until } from "../import/support.js"
import { put, readJson, readReport, runCli, startTestSandbox, tempDir, writes } from "./support.js"

const doneLines = (journal: string): number =>
  existsSync(journal) ? readFileSync(journal, "utf8").split("\n").filter((l) => l.includes("\"done\"")).length : 0

describe("onboard: resume after a kill", () => {
  it.scopedLive(
    "`resume RUN_DIR` on the onboarding's directory finishes it: each record written once, the summary complete",
    () =>
      Effect.gen(function*() {
        // Latency keeps the second step running long enough to be killed in its middle.
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 100 } })
        const dir = yield* tempDir
        const input = Path.join(dir, "input")
        mkdirSync(input)
        put(input, "segments.csv", "description\nVarejo\nAtacado\n")
        put(
          input,
          "customers.csv",
          ["externalId,name,segmentDescription", ...Array.from({ length: 30 }, (_, i) => `C-${i},Cliente ${i},Varejo`)]
            .join("\n") + "\n"
        )
        const runDir = Path.join(dir, "run")
        const first = spawnCli(["onboard", input, "--out", runDir, "--concurrency", "2"], sandbox, dir)
        yield* until(() => doneLines(Path.join(runDir, "customers", "journal.ndjson")) >= 5, 30_000)
        first.child.kill("SIGKILL")
        yield* Effect.promise(() => first.exit)
        assert.isFalse(existsSync(Path.join(runDir, "customers", "summary.json")), "killed inside the second step")

        const resumed = yield* runCli(["resume", runDir, "--json"], dir, sandbox)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.match(resumed.stderr, /\[1\/2\] segments +2 rows/)
        assert.match(resumed.stderr, /\[2\/2\] customers +30 rows/)

        const summary = readJson(Path.join(runDir, "summary.json"))
        assert.strictEqual(summary.exitCode, 0)
        assert.isFalse(summary.interrupted)
        assert.deepStrictEqual(summary.notRun, [])
        assert.deepStrictEqual(summary.steps.map((s: { resource: string }) => s.resource), ["segments", "customers"])
        assert.strictEqual(summary.rows, 32)
        assert.strictEqual(JSON.parse(resumed.stdout.trim().split("\n").at(-1)!).exitCode, 0)

        // Every row was written once: the segments once in all, each customer once.
        const log = writes(yield* sandbox.control.requests)
        assert.strictEqual(log.filter((e) => /\/segments/i.test(e.path)).length, 2)
        const customers = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(customers.length, 30)
        assert.strictEqual(new Set(customers.map((c) => c.externalId)).size, 30)
        assert.deepStrictEqual(
          readReport(Path.join(runDir, "customers")).filter((r) =>
            !["created", "updated", "unchanged"].includes(r._status!)
          ),
          []
        )
      }),
    90_000
  )
})
