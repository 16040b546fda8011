/**
 * Progress as a user sees it with stderr not a terminal (a pipe, a CI log, a tmux pane logged to a file): plain
 * lines that say what the run waits for and a request rate never above the budget they show, and `validate --json`
 * whose stdout stays one JSON document while its progress goes to stderr.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { customersCsv, put, runCli, startTestSandbox, tempDir } from "../import/support.js"

describe("progress lines off a terminal", () => {
  it.scopedLive("an import held by its budget says it waits for the request budget, at most at the budget's rate", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", customersCsv(24))
      // 5 requests per 2 s: about 10 s for the login and 24 creates, so two plain lines at least (one per 5 s).
      const run = yield* runCli(
        ["import", "customers", file, "--mode", "create", "--rate", "5/2s", "--out", Path.join(dir, "run")],
        sandbox,
        dir
      )
      assert.strictEqual(run.code, 0, run.stderr)
      const lines = run.stderr.split("\n").filter((l) => l.startsWith("import customers: ") && l.includes("rows,"))
      assert.isAtLeast(lines.length, 1, run.stderr)
      for (const l of lines) {
        const m =
          /^import customers: \d+\/24 rows, \d+%, (?:waiting for the request budget, )?(\d+) of 150 req\/min, ETA \S+$/
            .exec(l)
        assert.isNotNull(m, l)
        assert.isAtMost(Number(m![1]), 150, l)
      }
      assert.isTrue(lines.some((l) => l.includes(", waiting for the request budget, ")), run.stderr)
      assert.notInclude(run.stderr, "\x1b[", "no terminal control codes in a pipe")
    }))

  it.scopedLive("validate --json: progress on stderr, stdout one JSON document", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", customersCsv(200_000))
      const run = yield* runCli(
        ["validate", "customers", file, "--json", "--out", Path.join(dir, "run")],
        undefined,
        dir
      )
      assert.strictEqual(run.code, 0, run.stderr)
      const summary = JSON.parse(run.stdout)
      assert.strictEqual(summary.rows, 200_000)
      assert.deepStrictEqual(summary.formats, {
        encoding: "utf-8",
        delimiter: ",",
        decimal: ".",
        dateFormat: "yyyy-mm-dd"
      })
      for (const l of run.stderr.split("\n").filter((l) => l.includes("rows read"))) {
        assert.match(l, /^validate customers: \d+ rows read, ~\d+% of \d+\.\d MiB(, ETA \S+)?$/)
      }
    }))
})
