/** Progress on stderr: the ETA from the budget and the pace, plain lines off a terminal, the closing table. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { eta, formatDuration, makeProgress, summaryTable } from "../../src/cli/Progress.js"

describe("progress", () => {
  it("the ETA is the slower of the budget's estimate and the pace so far", () => {
    // 90 rows left, 2 requests per row so far, a budget of 10 requests per second: 18 s, though the pace says 9 s.
    assert.strictEqual(
      eta({
        total: 100,
        done: 10,
        doneThisSession: 10,
        elapsedMs: 1_000,
        requests: 20,
        rate: { limit: 10, windowMs: 1_000 }
      }),
      18_000
    )
    // A slow server: the pace (1 s per row) is slower than the budget.
    assert.strictEqual(
      eta({
        total: 100,
        done: 10,
        doneThisSession: 10,
        elapsedMs: 10_000,
        requests: 10,
        rate: { limit: 400, windowMs: 60_000 }
      }),
      90_000
    )
    // Resumed runs count only this session's pace.
    assert.strictEqual(
      eta({ total: 100, done: 60, doneThisSession: 10, elapsedMs: 1_000, requests: 10, rate: undefined }),
      4_000
    )
    assert.strictEqual(eta({ total: 5, done: 5, doneThisSession: 5, elapsedMs: 1, requests: 5, rate: undefined }), 0)
    assert.strictEqual(formatDuration(125_000), "2m05s")
    assert.strictEqual(formatDuration(3_720_000), "1h02m")
  })

  it.scopedLive("off a terminal: a plain line every few seconds with done/total, requests per minute and the ETA", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      let requests = 0
      const progress = yield* makeProgress({
        label: "import customers",
        tty: false,
        plainEveryMs: 40,
        stats: Effect.sync(() => ({ requests, rateLimited: 0, retries: 0, logins: 0 })),
        rate: { limit: 100, windowMs: 1_000 },
        write: (t) => void lines.push(t)
      })
      yield* progress.begin(10, 2)
      requests = 3
      yield* progress.row
      yield* progress.row
      yield* progress.row
      yield* Effect.sleep(120)
      yield* progress.end
      const count = lines.length
      assert.isAbove(count, 0)
      assert.match(lines.at(-1)!, /^import customers: 5\/10 rows, 50%, \d+ req\/min, ETA \d+s\n$/)
      yield* Effect.sleep(100)
      assert.strictEqual(lines.length, count, "no line after the end")
    }))

  it("the closing table lists the statuses that occurred and the totals", () => {
    const table = summaryTable("import customers: 3 rows in 1s", { created: 2, failed: 1, skipped: 0 }, [[
      "requests",
      4
    ]])
    assert.deepStrictEqual(table, ["import customers: 3 rows in 1s", "  created   2", "  failed    1", "  requests  4"])
  })
})
