/**
 * What report.html is made of, read from a large run's journal: every row sent, one of them twice (resumed). The
 * journal is streamed and tallied, not held: the rows' lines were all kept to the end, and the span of the sends
 * was taken with `Math.min(...)` of all of them, which overflowed the stack past about 120,000 rows sent, so that
 * a large import ended with "unexpected failure" once its reports were written.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { openSync, writeFileSync, writeSync } from "node:fs"
import * as Path from "node:path"
import { readRunData } from "../../src/report/RunData.js"
import { tempDir } from "../import/support.js"

describe("report data of a large run", () => {
  it.scoped(
    "150,000 rows sent: each counted once, with its last outcome, and the slowest ten",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const rows = 150_000
        const t0 = Date.parse("2026-11-24T12:00:00.000Z")
        const iso = (ms: number) => new Date(ms).toISOString()
        writeFileSync(
          Path.join(dir, "summary.json"),
          JSON.stringify({ command: "import", rows, counts: { created: rows }, exitCode: 0 })
        )
        const out = openSync(Path.join(dir, "journal.ndjson"), "w")
        let chunk = `${JSON.stringify({ state: "header" })}\n`
        for (let i = 0; i < rows; i++) {
          const row = i + 2
          // Row 2 first failed, then was sent again by a resume; rows 1,002 … 1,011 took 5 s, the others 100 ms.
          const ms = row >= 1002 && row <= 1011 ? 5000 + row : 100
          const at = t0 + i * 10
          chunk += `${JSON.stringify({ state: "sending", row, intent: "upsert", at: iso(at) })}\n`
          chunk += `${
            JSON.stringify({
              state: "done",
              row,
              status: row === 2 ? "failed" : "created",
              attempts: 1,
              ...(row === 2 ? { error: "HTTP 500" } : {}),
              at: iso(at + ms)
            })
          }\n`
          if (chunk.length > 1 << 20) {
            writeSync(out, chunk)
            chunk = ""
          }
        }
        const later = t0 + rows * 10 + 60_000
        chunk += `${JSON.stringify({ state: "resumed", command: "resume", at: iso(later) })}\n`
        chunk += `${JSON.stringify({ state: "sending", row: 2, intent: "upsert", at: iso(later) })}\n`
        chunk += `${JSON.stringify({ state: "done", row: 2, status: "created", attempts: 2, at: iso(later + 200) })}\n`
        writeSync(out, chunk)

        const data = yield* readRunData(dir)
        // Every row's last outcome: row 2 with its resumed send (2 attempts), the others with one.
        assert.strictEqual(data.latency.rows, rows)
        assert.deepStrictEqual([...data.attempts].sort(), [[1, rows - 1], [2, 1]])
        assert.deepStrictEqual(data.latency.counts, [rows - 11, 1, 0, 0, 0, 0, 10, 0, 0, 0])
        // Row 2's error was its first outcome, not its last.
        assert.deepStrictEqual(data.errors, [])
        // Buckets count every send, the first one of row 2 too.
        assert.strictEqual(data.buckets.reduce((n, b) => n + b.rows, 0), rows + 1)
        assert.strictEqual(data.buckets.reduce((n, b) => n + b.sends, 0), rows + 2)
        assert.deepStrictEqual(data.slowest.map((s) => s.row), [
          1011,
          1010,
          1009,
          1008,
          1007,
          1006,
          1005,
          1004,
          1003,
          1002
        ])
        assert.deepStrictEqual(data.slowest[0], {
          row: 1011,
          ms: 6011,
          status: "created",
          http: undefined,
          requestId: undefined,
          attempts: 1
        })
      }),
    60_000
  )
})
