/**
 * `npm run bench`: builds, then runs the benchmark scenarios one after another (never two at once, so they do
 * not share the CPU), prints a table of figures against their goals and writes test/bench/results.json with
 * the figures, the goals, pass/fail per goal, the machine and the date.
 *
 *   node --expose-gc test/bench/run.mjs [budget] [csv] [xlsx] [export] [slow-export] [profile] [fleet] [--quick]
 *
 * `fleet` (fleet.mjs) needs PostgreSQL's server binaries and redis-server (scripts/ensure-postgres.sh,
 * scripts/ensure-redis.sh); `FSM_BENCH_FLEET_BACKENDS=postgres` (or `redis`) runs it on one backend only.
 *
 * With scenario names only those run. `--quick` runs every scenario on small inputs to check the benchmark
 * itself; its figures are printed but not written to results.json.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { cpus, loadavg, release, totalmem, type } from "node:os"
import { fileURLToPath } from "node:url"
import { defaultBudgetMargin } from "../../dist/client/Config.js"
import { budgetScenario } from "./budget.mjs"
import { exportScenario } from "./export.mjs"
import { fleetScenario } from "./fleet.mjs"
import { bin } from "./measure.mjs"
import { csvScenario, profileScenario, xlsxScenario } from "./offline.mjs"
import { slowExportScenario } from "./slow-export.mjs"

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const chosen = args.filter((a) => !a.startsWith("--"))
const known = ["budget", "csv", "xlsx", "export", "slow-export", "profile", "fleet"]
const unknown = chosen.filter((c) => !known.includes(c))
if (unknown.length > 0) {
  console.error(`unknown scenario ${unknown.join(", ")}: choose from ${known.join(", ")}`)
  process.exit(2)
}
if (!existsSync(bin)) {
  console.error(`${bin} is missing: build first (npm run build), or run \`npm run bench\``)
  process.exit(2)
}
const runs = (name) => chosen.length === 0 || chosen.includes(name)

const scaledRate = { limit: 400, windowMs: 6000 }
const realRate = { limit: 400, windowMs: 60_000 }

/**
 * The steady use the same import would reach under the real budget: the overhead measured per window is one
 * latency, the budget's margin (1 % of the window: src/client/Config.ts) and the client's own delays, so at
 * another window only the margin changes.
 */
const projectedUse = (overheadMs, measured, real) =>
  overheadMs === undefined
    ? undefined
    : real.windowMs /
      (real.windowMs + overheadMs - defaultBudgetMargin(measured.windowMs) + defaultBudgetMargin(real.windowMs))
const latencyMs = 150
const sizes = quick
  ? { importRows: 250, csvRows: 20_000, xlsxRows: 5_000, exportRecords: 2_000, slowTasks: 1_000 }
  : { importRows: 1_000, csvRows: 1_000_000, xlsxRows: 100_000, exportRecords: 20_000, slowTasks: 5_000 }
/** The budget of the import and export runs, on both sides (quick: a smaller one, so 250 rows still span windows). */
const budget = quick ? { limit: 100, windowMs: 2000 } : scaledRate
const budgetText = `${budget.limit}/${budget.windowMs / 1000}s`

const machine = {
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
  node: process.version,
  os: `${type()} ${release()}`,
  /** The load when the run started: other work on the machine skews every time below. */
  loadAverage1m: Math.round(loadavg()[0] * 100) / 100
}

/** One line of the table: a figure, its goal (a predicate and its text) and whether it is met. */
const figures = []
const figure = (scenario, name, value, unit, goal) =>
  figures.push({
    scenario,
    figure: name,
    value,
    unit,
    goal: goal?.text ?? null,
    pass: goal === undefined || value === undefined ? null : goal.test(value)
  })
const atMost = (limit, text = `≤ ${limit}`) => ({ text, test: (v) => v <= limit })
/** A goal in MB (10^6 bytes) for a figure in MiB (2^20 bytes): 200 MB is 190.7 MiB. */
const atMostMB = (mb) => ({ text: `≤ ${mb} MB`, test: (mib) => mib * 1024 * 1024 <= mb * 1e6 })
const atLeast = (limit, text = `≥ ${limit}`) => ({ text, test: (v) => v >= limit })

const say = (line) => process.stderr.write(`bench: ${line}\n`)
const results = {}
const started = new Date()
const clock = performance.now()

const step = async (name, label, run) => {
  say(`${label} …`)
  const t = performance.now()
  globalThis.gc?.()
  const result = await run()
  results[name] = result
  say(`${label}: done in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  return result
}

if (runs("budget")) {
  const r = await step(
    "budget",
    `budget use: upsert of ${sizes.importRows} customers, ${latencyMs} ms latency, ${budgetText} both sides, then the naive baseline`,
    () => budgetScenario({ rows: sizes.importRows, rate: budget, latencyMs })
  )
  const s = "budget use"
  figure(s, "requests per window ÷ limit, steady state", r.tool.steadyUse, "", atLeast(0.97))
  figure(
    s,
    `requests per window ÷ limit, mean of ${r.tool.completeWindows} complete windows`,
    r.tool.completeWindowsUse,
    ""
  )
  figure(
    s,
    `time each window costs beyond its ${budget.windowMs / 1000} s (latency, margin, client)`,
    r.tool.overheadMsPerWindow,
    "ms"
  )
  figure(
    s,
    "requests per window ÷ limit projected at 400/60s (same overhead)",
    projectedUse(r.tool.overheadMsPerWindow, budget, realRate),
    ""
  )
  figure(s, `most requests in any ${budget.windowMs / 1000} s window`, r.tool.maxInWindow, "", atMost(budget.limit))
  figure(s, "403 received", r.tool.status403, "", atMost(0, "0"))
  figure(s, "requests per row", r.tool.requestsPerRow, "", atMost(1.01))
  figure(s, "wall time (import command)", r.tool.ms / 1000, "s")
  figure(s, "naive baseline wall time", r.baseline.ms / 1000, "s")
  figure(s, "speed-up: baseline time ÷ import time", r.speedup, "×")
}

if (runs("csv")) {
  const r = await step(
    "csv",
    `offline validation of a ${sizes.csvRows}-row customers CSV`,
    () => csvScenario({ rows: sizes.csvRows })
  )
  const s = "offline validation (CSV)"
  figure(s, "bare csv-parse pass", r.csvParse.ms / 1000, "s")
  const each = (values, scale) => values.map((v) => Math.round(v * scale * 10) / 10).join(", ")
  figure(s, `validate command (with reports), median of ${r.command.msEach.length} runs`, r.command.ms / 1000, "s")
  figure(s, "validate command: each run", each(r.command.msEach, 1 / 1000), "s")
  figure(s, "rows per second (validate command)", r.command.rowsPerSecond, "rows/s")
  figure(s, "validate command time ÷ csv-parse time", r.commandVsParse, "×", atMost(2))
  figure(s, "peak RSS (validate command), highest run", r.command.rssMiB, "MiB", atMostMB(200))
  figure(s, "peak RSS (validate command): each run", each(r.command.rssMiBEach, 1), "MiB")
  figure(s, "validation alone (no report) ÷ csv-parse time", r.aloneVsParse, "×")
  figure(s, "validation alone: opening (encoding pass, header)", r.alone.msOpen / 1000, "s")
  figure(s, "validation alone: settling the formats (first rows)", r.alone.msFormats / 1000, "s")
  figure(s, "validation alone: validation (the same read)", r.alone.msValidate / 1000, "s")
  figure(s, "peak RSS (validation alone)", r.alone.rssMiB, "MiB")
  figure(s, "rows reported invalid (every row is valid)", r.command.invalid, "", atMost(0, "0"))
}

if (runs("profile")) {
  const r = await step(
    "profile",
    `offline validation of the ${sizes.csvRows}-row customers CSV with a mapping profile (docs/mapping.md)`,
    () => profileScenario({ rows: sizes.csvRows })
  )
  const s = "mapping profile (validate --map)"
  figure(s, "validate without a profile, median", r.without.ms / 1000, "s")
  figure(
    s,
    "validate with the profile (renames, two value maps, a composed field), median",
    r.withProfile.ms / 1000,
    "s"
  )
  figure(s, "with ÷ without", r.ratio, "×", atMost(1.15))
  figure(s, "peak RSS with the profile, highest run", r.withProfile.rssMiB, "MiB", atMostMB(200))
  figure(s, "rows reported invalid (every row is valid)", r.withProfile.invalid, "", atMost(0, "0"))
}

if (runs("xlsx")) {
  const r = await step(
    "xlsx",
    `XLSX: a ${sizes.xlsxRows}-row customers workbook read and validated`,
    () => xlsxScenario({ rows: sizes.xlsxRows })
  )
  const s = "XLSX"
  figure(s, "validate command (with reports)", r.command.ms / 1000, "s")
  figure(s, "rows per second (validate command)", r.command.rowsPerSecond, "rows/s")
  figure(s, "peak RSS (validate command)", r.command.rssMiB, "MiB", atMostMB(300))
  figure(s, "peak RSS (validation alone)", r.alone.rssMiB, "MiB")
  figure(s, "rows reported invalid (every row is valid)", r.command.invalid, "", atMost(0, "0"))
}

if (runs("export")) {
  const r = await step(
    "export",
    `export of ${sizes.exportRecords} customers, ${latencyMs} ms latency, ${budgetText} both sides`,
    () => exportScenario({ records: sizes.exportRecords, rate: budget, latencyMs })
  )
  const s = "export"
  figure(s, `requests (minimum ${r.minimum}: login + one page per 1000 records)`, r.requests, "")
  figure(s, "requests ÷ minimum", r.ratio, "×")
  figure(s, "wall time (export command)", r.ms / 1000, "s")
  figure(s, "peak RSS (export command)", r.rssMiB, "MiB")
}

if (runs("slow-export")) {
  const perRecordMs = 10
  const r = await step(
    "slow-export",
    `export of ${sizes.slowTasks} tasks from a service answering ${
      perRecordMs * 100
    } ms a page of 100, 400/60s, 8 in flight`,
    () => slowExportScenario({ records: sizes.slowTasks, perRecordMs, rate: realRate, concurrency: 8 })
  )
  const s = "export of a slow service"
  figure(s, "wall time (export command)", r.ms / 1000, "s")
  figure(s, `ideal: ${sizes.slowTasks / 100} pages × ${r.pageMs / 1000} s ÷ 8 in flight`, r.idealMs / 1000, "s")
  figure(s, "wall time ÷ ideal", r.ratio, "×", atMost(1.3))
  figure(s, "first request to last answer (the CLI's start-up excluded)", r.servedMs / 1000, "s")
  figure(s, "first request to last answer ÷ ideal", r.servedMs / r.idealMs, "×")
  figure(s, "task list requests (pages, window probes)", r.taskPages, "")
  figure(s, "most requests in flight at once", r.mostInFlight, "", atMost(8))
  figure(s, "error answers", r.errors, "", atMost(0, "0"))
}

if (runs("fleet")) {
  // Per address: 40 requests per 2 s (the real 400/60s scaled so that a run takes seconds); the same time per run.
  const fleetRate = { limit: 40, windowMs: 2000 }
  const rowsPerWorker = quick ? 80 : 400
  for (const backend of (process.env.FSM_BENCH_FLEET_BACKENDS ?? "postgres,redis").split(",")) {
    const r = await step(
      `fleet-${backend}`,
      `fleet on ${backend}: ${rowsPerWorker} customers per worker, 1, 2 and 3 workers on 127.0.0.1–3, 40/2s each, ${latencyMs} ms latency`,
      () => fleetScenario({ backend, rowsPerWorker, chunkRows: quick ? 20 : 50, rate: fleetRate, latencyMs })
    )
    const s = `fleet throughput (${backend})`
    for (const run of r.runs) {
      figure(s, `${run.workers} worker(s): rows per minute, first to last request`, run.rowsPerMinute, "rows/min")
      figure(s, `${run.workers} worker(s): requests per row`, run.requests / run.rows, "")
      figure(s, `${run.workers} worker(s): rate-limit answers`, run.rateLimited, "", atMost(0, "0"))
    }
    for (const scaled of r.scaling.slice(1)) {
      figure(s, `${scaled.workers} workers ÷ (${scaled.workers} × one worker)`, scaled.ratio, "", atLeast(0.95))
    }
    figure(
      s,
      "one worker ÷ its budget (rows per minute at one request a row)",
      r.runs[0].rowsPerMinute /
        r.idealRowsPerMinutePerWorker,
      ""
    )
  }
}

// --- the table ---------------------------------------------------------------------------------------------------

const shown = (v, unit) => {
  if (v === undefined || v === null) return "n/a"
  if (typeof v === "string") return `${v} ${unit}`
  const size = Math.abs(v)
  const text = Number.isInteger(v)
    ? String(v)
    : size >= 100
    ? v.toFixed(0)
    : size >= 10
    ? v.toFixed(1)
    : size >= 2
    ? v.toFixed(2)
    : v.toFixed(3)
  return unit === "" ? text : unit === "×" ? `${text}×` : `${text} ${unit}`
}
const verdict = (pass) => (pass === null ? "" : pass ? "pass" : "FAIL")
const table = [
  "| scenario | figure | value | goal | result |",
  "|---|---|---|---|---|",
  ...figures.map((f) =>
    `| ${f.scenario} | ${f.figure} | ${shown(f.value, f.unit)} | ${f.goal ?? ""} | ${verdict(f.pass)} |`
  )
].join("\n")

const machineLine =
  `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.os} (load ${machine.loadAverage1m} at start)`
console.log(
  `\nfsm-bulk benchmark, ${started.toISOString()}${
    quick ? " (quick: small inputs, not recorded)" : ""
  }\n${machineLine}\n`
)
console.log(table)
const failed = figures.filter((f) => f.pass === false)
console.log(
  `\n${figures.filter((f) => f.pass === true).length} goals met, ${failed.length} missed; ${
    ((performance.now() - clock) / 1000).toFixed(0)
  } s in all`
)

if (!quick) {
  const file = fileURLToPath(new URL("./results.json", import.meta.url))
  // A run of some scenarios replaces only theirs: the others keep their figures, each line dated by its run.
  const ran = new Set(figures.map((f) => f.scenario))
  const previous = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined
  const kept = (previous?.figures ?? [])
    .filter((f) => !ran.has(f.scenario))
    .map((f) => ({ ...f, date: f.date ?? previous.date }))
  const document = {
    tool: "fsm-bulk",
    command: `node --expose-gc test/bench/run.mjs${chosen.length > 0 ? ` ${chosen.join(" ")}` : ""}`,
    date: started.toISOString(),
    durationS: Math.round((performance.now() - clock) / 1000),
    machine,
    settings: { rate: budgetText, latencyMs, ...sizes },
    figures: [...kept, ...figures.map((f) => ({ ...f, date: started.toISOString() }))],
    scenarios: { ...(previous?.scenarios ?? {}), ...results }
  }
  writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`)
  say(`figures written to ${file}`)
}
