/**
 * report.html's "Sends against the budget" chart as Chromium lays it out (issue 27): a run that sent little is drawn
 * to the scale of its sends, not as a flat line under a far budget; a run continued by `resume --rate` draws each
 * session against its own budget, in order; no label (the last time on the axis included) runs off the chart.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import {
  customersCsv,
  journalCount,
  put,
  runCli,
  spawnCli,
  startTestSandbox,
  tempDir,
  until
} from "../import/support.js"
import { browse } from "./support.js"

interface Box {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}
interface Measured {
  readonly width: number
  readonly height: number
  readonly texts: ReadonlyArray<Box & { readonly text: string; readonly figure: string | null }>
  readonly sends: ReadonlyArray<Box>
  readonly budgets: ReadonlyArray<Box>
  readonly grid: ReadonlyArray<Box>
}

/**
 * The budget chart of `page` measured by Chromium: a copy of the page with a script that writes the boxes of the
 * chart's texts, bars and lines (the report itself runs no script).
 */
const measureChart = (dir: string, page: string): Measured => {
  const probe = Path.join(dir, `measured-${Path.basename(Path.dirname(page))}.html`)
  const script = `<script>
    const svg = document.querySelector('svg[aria-label="sends per window"]');
    const box = (e) => { const b = e.getBBox(); return { x: b.x, y: b.y, width: b.width, height: b.height } };
    const out = {
      width: svg.viewBox.baseVal.width,
      height: svg.viewBox.baseVal.height,
      texts: [...svg.querySelectorAll("text")].map((t) => ({ ...box(t), text: t.textContent, figure: t.getAttribute("data-figure") })),
      sends: [...svg.querySelectorAll("rect.send")].map(box),
      budgets: [...svg.querySelectorAll("line.budget")].map(box),
      grid: [...svg.querySelectorAll("line:not(.budget)")].map(box)
    };
    const pre = document.createElement("pre"); pre.id = "measured"; pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  </script>`
  writeFileSync(probe, readFileSync(page, "utf8").replace("</body>", `${script}</body>`))
  const dom = browse(dir, `file://${probe}`, ["--dump-dom"])
  const json = /<pre id="measured">([^<]*)<\/pre>/.exec(dom)
  assert.isNotNull(json, "the probe ran")
  return JSON.parse(
    json![1]!.replace(/&quot;/g, "\"").replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
  )
}

/** Every text of the chart lies inside it (nothing cut at an edge). */
const assertInside = (m: Measured) => {
  for (const t of m.texts) {
    assert.isAtLeast(t.x, 0, `"${t.text}" starts inside the chart`)
    assert.isAtMost(t.x + t.width, m.width + 0.5, `"${t.text}" ends inside the chart (${t.x} + ${t.width})`)
    assert.isAtLeast(t.y, 0, `"${t.text}" is below the top`)
    assert.isAtMost(t.y + t.height, m.height + 0.5, `"${t.text}" is above the bottom`)
  }
}

describe("report.html's budget chart", () => {
  it.scopedLive(
    "a run that sent little fills the chart, names its far budget, and cuts no label",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", customersCsv(4))
        const runDir = Path.join(dir, "small")
        const run = yield* runCli(["import", "customers", file, "--out", runDir], sandbox, dir)
        assert.strictEqual(run.code, 0, run.stderr)

        const m = measureChart(dir, Path.join(runDir, "report.html"))
        // The plot's height: from the top grid line to the bottom one.
        const plotTop = Math.min(...m.grid.map((g) => g.y))
        const plotBottom = Math.max(...m.grid.map((g) => g.y))
        const tallest = Math.max(...m.sends.map((b) => b.height))
        assert.isAbove(tallest, (plotBottom - plotTop) * 0.6, "the sends are drawn to their own scale, not flat at 0")
        // The budget (400 per minute) is far above 4 sends: named at the top, not drawn as a line.
        assert.deepStrictEqual(m.budgets, [])
        assert.include(m.texts.map((t) => t.text), "↑ budget 400 per 1 min")
        assertInside(m)
      }),
    120_000
  )

  it.scopedLive(
    "a run resumed with another --rate draws each session against its own budget, in order",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", customersCsv(30))
        const runDir = Path.join(dir, "sessions")
        const cli = spawnCli(["import", "customers", file, "--out", runDir, "--rate", "6/2s"], sandbox, dir)
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => cli.child.exitCode === null && cli.child.signalCode === null && cli.child.kill("SIGKILL"))
        )
        // Past the budget's first window (6 at once, the 7th 2 s later), so the first session spans more than one of the
        // chart's 1 s buckets: a bucket in which the resume began is the resume's, and with the bundled CLI's quick
        // start a first session of 4 instant sends and its resume fell into one bucket (half the runs).
        yield* until(() => journalCount(runDir, "done") >= 7, 60_000)
        cli.child.kill("SIGINT")
        const stopped = yield* Effect.promise(() => cli.exit)
        assert.strictEqual(stopped.code, 3, cli.stderr())

        const resumed = yield* runCli(["resume", runDir, "--rate", "50/2s"], sandbox, dir)
        assert.strictEqual(resumed.code, 0, resumed.stderr)

        const m = measureChart(dir, Path.join(runDir, "report.html"))
        const budgets = m.texts.filter((t) => t.figure?.startsWith("budget:") === true)
        assert.strictEqual(budgets.length, 2, JSON.stringify(budgets))
        // The first session against 6 per 2 s, the resume against 50 per 2 s (drawn, or named above the scale).
        assert.match(budgets[0]!.text, /budget:? 6 per 2 s$/)
        assert.match(budgets[1]!.text, /budget:? 50 per 2 s$/)
        assert.isBelow(budgets[0]!.x, budgets[1]!.x, "the sessions in the order they ran")
        // The first session's limit is a line over its own part of the time only.
        const first = m.budgets[0]!
        assert.isBelow(first.x + first.width, m.width - 16 - 1, "the first budget line ends where its session ended")
        assertInside(m)
        const page = readFileSync(Path.join(runDir, "report.html"), "utf8")
        assert.include(page, "each is drawn against its own budget")
      }),
    120_000
  )
})
