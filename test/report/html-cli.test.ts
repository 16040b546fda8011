/**
 * report.html in a real browser: an import with invalid rows, rejected rows and retried requests writes a page
 * that headless Chromium renders, whose figures match summary.json, and that `fsm-bulk report` writes again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync, rmSync, statSync } from "node:fs"
import * as Path from "node:path"
import { errorKind } from "../../src/console/ErrorKinds.js"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { put, readReport, readSummary, runCli, startTestSandbox, tempDir } from "../import/support.js"
import { browse, figures } from "./support.js"

describe("report.html", () => {
  it.scopedLive(
    "is written with the run, renders in Chromium, and its figures are summary.json's",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, failRate: 0.15 } })
        const dir = yield* tempDir
        const lines = ["externalId,name,email"]
        for (let i = 1; i <= 40; i++) lines.push(`HTML-${i},Cliente ${i},c${i}@example.com`)
        lines.push("HTML-41,Cliente 41,not-an-address", "HTML-42,,c42@example.com", "HTML-43,Cliente 43,also wrong")
        const file = put(dir, "clientes.csv", `${lines.join("\n")}\n`)
        const runDir = Path.join(dir, "run")

        const run = yield* runCli(["import", "customers", file, "--out", runDir, "--max-attempts", "10"], sandbox, dir)
        assert.strictEqual(run.code, 1, run.stderr)
        const summary = readSummary(runDir)
        // The run ends by saying what went wrong (kinds, most rows first, an example each) and what to run next.
        assert.deepStrictEqual(
          summary.errors.map((e: { kind: string; count: number }) => [e.kind, e.count]),
          [["email: … is not an e-mail address", 2], ["name: required", 1]]
        )
        assert.include(run.stderr, "what went wrong, most rows first:")
        assert.include(run.stderr, `  2  row 42: email: "not-an-address" is not an e-mail address`)
        assert.include(run.stderr, `fsm-bulk rerun ${runDir} --fixed CORRECTED.csv`)
        const validated = yield* runCli(
          ["validate", "customers", file, "--out", Path.join(dir, "validated")],
          undefined,
          dir
        )
        assert.strictEqual(validated.code, 1)
        assert.include(validated.stderr, "  1  row 43: name: required")
        assert.include(validated.stderr, `next: correct the rows named above in ${file} and validate it again`)
        const page = Path.join(runDir, "report.html")
        assert.isTrue(existsSync(page), "the run wrote report.html")
        assert.notInclude(readFileSync(page, "utf8"), "<script", "the page runs no script")
        assert.notMatch(readFileSync(page, "utf8"), /(src|href)="https?:/, "the page loads nothing from the network")

        const dom = browse(dir, `file://${page}`, ["--dump-dom"])
        const seen = figures(dom)
        assert.strictEqual(seen.get("rows"), String(summary.rows))
        assert.strictEqual(seen.get("requests"), String(summary.requests))
        assert.strictEqual(seen.get("retries"), String(summary.retries))
        assert.strictEqual(seen.get("exitCode"), "1")
        for (const [status, n] of Object.entries(summary.counts as Record<string, number>)) {
          if (n > 0) assert.strictEqual(seen.get(`count:${status}`), String(n), `count of ${status}`)
        }
        // Errors by kind: the three invalid rows fall into two kinds, counted as the report counts them.
        const errors = readReport(runDir).filter((r) => r._error !== "").map((r) => errorKind(r._error!))
        const byKind = [...new Set(errors)].map((k) => errors.filter((e) => e === k).length).sort((a, b) => b - a)
        assert.deepStrictEqual(
          [...seen.entries()].filter(([k]) => k.startsWith("error:")).map(([, v]) => Number(v)),
          byKind
        )
        assert.isAbove(summary.retries, 0, "the sandbox's 5xx made the client retry")
        assert.include(dom, "Sends against the budget")
        assert.include(dom, "X-Request-Id")

        const png = Path.join(dir, "page.png")
        browse(dir, `file://${page}`, [`--screenshot=${png}`, "--window-size=1000,1600"])
        assert.isAbove(statSync(png).size, 10_000, "Chromium drew the page")

        rmSync(page)
        const again = yield* runCli(["report", runDir], undefined, dir)
        assert.strictEqual(again.code, 0, again.stderr)
        assert.strictEqual(
          figures(browse(dir, `file://${page}`, ["--dump-dom"])).get("rows"),
          String(summary.rows),
          "fsm-bulk report writes the same page again"
        )
      }),
    120_000
  )
})
