/**
 * Progress on stderr: the ETA from the budget and the pace, plain lines off a terminal, the requests per minute
 * never above the budget, what the client waits for (the real client against the sandbox), the closing table.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { statSync } from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import {
  eta,
  FileReadProgress,
  formatDuration,
  makeProgress,
  makeReadProgress,
  summaryTable
} from "../../src/console/Progress.js"
import { runValidate } from "../../src/import/ValidateRun.js"
import { apiOf, cp1252, importInto, put, readSummary, startTestSandbox, tempDir } from "./support.js"

/** Plain progress lines (every 25 ms) of an import of `total` rows that watches the real client `api`. */
const plainLines = (api: Api["Type"], total: number, rate = { limit: 10_000, windowMs: 1_000 }) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const progress = yield* makeProgress({
      label: "import customers",
      tty: false,
      plainEveryMs: 25,
      stats: api.stats,
      activity: api.activity,
      rate,
      write: (t) => void lines.push(t)
    })
    yield* progress.begin(total, 0)
    return { lines, progress }
  })

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
        activity: Effect.sync(() => ({ state: "sending" as const, inWindow: requests })),
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
      assert.match(lines.at(-1)!, /^import customers: 5\/10 rows, 50%, 180 of 6000 req\/min, ETA \d+s\n$/)
      yield* Effect.sleep(100)
      assert.strictEqual(lines.length, count, "no line after the end")
    }))

  it.scopedLive("on a terminal the line is redrawn in place and never reaches the terminal's width (no wrapping)", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      const progress = yield* makeProgress({
        label: "[13/20] questionnaire-answers",
        tty: true,
        columns: 60,
        stats: Effect.succeed({ requests: 40, rateLimited: 0, retries: 0, logins: 1 }),
        activity: Effect.succeed({ state: "waiting-budget" as const, inWindow: 400 }),
        rate: { limit: 400, windowMs: 60_000 },
        write: (t) => void writes.push(t)
      })
      yield* progress.begin(1000, 0)
      yield* Effect.sleep(600)
      yield* progress.end
      const drawn = writes.filter((w) => w !== "\r\x1b[2K")
      assert.isAbove(drawn.length, 0)
      for (const w of drawn) {
        assert.isTrue(w.startsWith("\r\x1b[2K"), w)
        assert.notInclude(w, "\n")
        assert.isAtMost([...w.slice(5)].length, 59, w)
      }
      // Too narrow for the bar: the figures come first, and what does not fit is cut.
      assert.match(drawn[0]!, /^\r\x1b\[2K\[13\/20\] questionnaire-answers: 0\/1000 rows · 0% · waiting.*…$/)
      assert.strictEqual(writes.at(-1), "\r\x1b[2K", "the line is cleared at the end")
    }))

  it.scopedLive("the requests per minute shown never exceed the budget's own figure, and a full window says so", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      // 600 requests a minute, in windows of 1 s (not 2 s: the same figure, half the wait).
      const rate = { limit: 10, windowMs: 1_000 }
      const api = yield* Effect.provide(Api, apiOf(sandbox, undefined, { rate, concurrency: 8 }))
      const { lines, progress } = yield* plainLines(api, 25, rate)
      // 25 reads against a budget of 10 per second: the first 10 leave at once, the rest wait for the window.
      yield* Effect.forEach(
        Array.from({ length: 25 }, (_, i) => i),
        () => Effect.zipRight(api.request({ method: "GET", path: "/customers" }), progress.row),
        { concurrency: 8, discard: true }
      )
      yield* progress.end
      const rates = lines.map((l) => /, (\d+) of (\d+) req\/min, ETA /.exec(l))
      assert.isAbove(lines.length, 10)
      for (const [i, m] of rates.entries()) {
        assert.isNotNull(m, lines[i])
        assert.strictEqual(m![2], "600", lines[i])
        assert.isAtMost(Number(m![1]), 600, lines[i])
      }
      assert.isTrue(
        lines.some((l) => /^import customers: \d+\/25 rows, \d+%, waiting for the request budget, /.test(l)),
        lines.join("")
      )
      assert.isTrue(rates.some((m) => m![1] === "600"), "a full window shows the budget's figure")
    }))

  it.scopedLive("a rate-limit answer pauses the run and the line says until when", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const api = yield* Effect.provide(Api, apiOf(sandbox, undefined, { rateLimitPauseMs: 1_500 }))
      yield* api.request({ method: "GET", path: "/customers" })
      const { lines, progress } = yield* plainLines(api, 1)
      // Every request is answered "rate limit exceeded" for a moment: the client pauses every call for 1.5 s.
      yield* sandbox.control.setFaults({ rateLimitStormUntil: Date.now() + 300 })
      const before = Date.now()
      yield* api.request({ method: "GET", path: "/customers" })
      yield* progress.row
      yield* progress.end
      const paused = lines.map((l) => /, paused after a rate limit, resumes at (\d\d):(\d\d):(\d\d), /.exec(l))
        .filter((m) => m !== null)
      assert.isAbove(paused.length, 0, lines.join(""))
      // The time said is the end of the pause, on this machine's clock (to the second).
      const [, h, m, s] = paused[0]!
      const said = new Date(before)
      said.setHours(Number(h), Number(m), Number(s), 0)
      assert.isAtLeast(said.getTime(), Math.floor((before + 1_500) / 1000) * 1000 - 1000)
      assert.isAtMost(said.getTime(), Date.now() + 1_000)
    }))

  it.scopedLive("while the client logs in, the line says so", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({
        faults: { latencyMs: 600, failRate: 0, resetRate: 0, dropAfterWriteRate: 0, rateLimitStormUntil: 0 }
      })
      const api = yield* Effect.provide(Api, apiOf(sandbox))
      const { lines, progress } = yield* plainLines(api, 1)
      // The first request logs in first (600 ms), then is sent (600 ms).
      yield* api.request({ method: "GET", path: "/customers" })
      yield* progress.row
      yield* progress.end
      const said = lines.map((l) => l.includes(", logging in, ") ? "login" : "other")
      assert.include(said, "login", lines.join(""))
      // Once logged in, the line no longer says it.
      assert.strictEqual(said.at(-1), "other", lines.join(""))
    }))

  it("the closing table lists the statuses that occurred and the totals", () => {
    const table = summaryTable("import customers: 3 rows in 1s", { created: 2, failed: 1, skipped: 0 }, [[
      "requests",
      4
    ]])
    assert.deepStrictEqual(table, ["import customers: 3 rows in 1s", "  created   2", "  failed    1", "  requests  4"])
  })
})

describe("summary.json", () => {
  it.scopedLive("says what `auto` settled: encoding, delimiter, decimal mark and date order (import and validate)", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const customers = put(
        dir,
        "clientes.csv",
        cp1252("externalId;name;latitude;longitude\r\nC-1;Padaria São João;-23,5614;-46,6559\r\n")
      )
      const runDir = Path.join(dir, "import")
      yield* importInto(sandbox, { resource: "customers", file: customers, runDir })
      assert.deepStrictEqual(readSummary(runDir).formats, {
        encoding: "windows-1252",
        delimiter: ";",
        decimal: ",",
        dateFormat: "yyyy-mm-dd"
      })

      const equipments = put(dir, "equip.csv", "externalId,name,warrantyStartDate\nE-1,Split,25/12/2025\n")
      const validated = Path.join(dir, "validate")
      yield* runValidate({
        resource: "equipments",
        file: equipments,
        read: { encoding: "auto", delimiter: "auto" },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert",
        runDir: validated
      })
      assert.deepStrictEqual(readSummary(validated).formats, {
        encoding: "utf-8",
        delimiter: ",",
        decimal: ".",
        dateFormat: "dd/mm/yyyy"
      })
    }))
})

describe("validate on a large file", () => {
  it.scopedLive("tells how many rows were read and how far into the file, on its own lines", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // About 1.3 MiB: past the 1 MiB read in the calling thread, so the rows come from the parser thread.
      const lines = ["externalId,name,note"]
      for (let i = 1; i <= 20_000; i++) lines.push(`C-${i},Cliente número ${i},uma nota qualquer para ocupar espaço`)
      const file = put(dir, "big.csv", lines.join("\n") + "\n")
      const written: Array<string> = []
      const progress = yield* makeReadProgress({
        label: "validate customers",
        totalBytes: statSync(file).size,
        tty: false,
        plainEveryMs: 20,
        write: (t) => void written.push(t)
      })
      const result = yield* runValidate({
        resource: "customers",
        file,
        read: { encoding: "auto", delimiter: "auto" },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert",
        runDir: Path.join(dir, "run")
      }).pipe(Effect.provide(FileReadProgress.to(progress)), Effect.ensuring(progress.end))
      assert.strictEqual(result.summary.rows, 20_000)
      assert.isAbove(written.length, 0)
      let rows = 0
      for (const line of written) {
        const m = /^validate customers: (\d+) rows read, ~(\d+)% of 1\.\d MiB(, ETA \S+)?\n$/.exec(line)
        assert.isNotNull(m, line)
        assert.isAtLeast(Number(m![1]), rows, "rows read never go back")
        assert.isAtMost(Number(m![2]), 100)
        rows = Number(m![1])
      }
      const count = written.length
      yield* Effect.sleep(60)
      assert.strictEqual(written.length, count, "no line after the end")
    }))
})
