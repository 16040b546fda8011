/**
 * Budget use: an upsert import of customers by the real CLI against an in-process sandbox with latency and a
 * scaled budget on both sides, judged from the sandbox's own request log; then the same rows sent by a naive
 * client (log in, one PUT at a time, a fixed pause of window ÷ limit between requests) against a fresh sandbox
 * with the same settings, and the ratio of the two times.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { customerBody, customersCsv, importColumns } from "./data.mjs"
import { jsonSummary, runCli } from "./measure.mjs"
import { cliEnv, openSandbox } from "./sandbox.mjs"

/**
 * Figures of a request log against a budget of `limit` per `windowMs`:
 * - `maxInWindow`: the most requests that arrived in any interval shorter than the window (the server's
 *   sliding count; must stay ≤ limit);
 * - `steadyUse`: requests per window ÷ limit in the steady state, as the mean over every request i (with
 *   `limit` more after it) of window ÷ (arrival of request i + limit − arrival of request i): 1.0 when each
 *   request has the next `limit` ones arrive exactly one window later;
 * - `completeWindowsUse`: the mean over the complete windows counted from the first request (coarse: with a
 *   few windows it moves with where the bursts fall).
 */
export const budgetFigures = (times, { limit, windowMs }) => {
  const t = [...times].sort((a, b) => a - b)
  let maxInWindow = 0
  for (let i = 0, j = 0; j < t.length; j++) {
    while (t[j] - t[i] >= windowMs) i++
    maxInWindow = Math.max(maxInWindow, j - i + 1)
  }
  let sum = 0
  let gaps = 0
  let samples = 0
  for (let i = 0; i + limit < t.length; i++) {
    sum += windowMs / Math.max(1, t[i + limit] - t[i])
    gaps += t[i + limit] - t[i]
    samples++
  }
  const complete = Math.floor((t.at(-1) - t[0]) / windowMs)
  const counts = Array.from({ length: complete }, () => 0)
  for (const at of t) {
    const w = Math.floor((at - t[0]) / windowMs)
    if (w < complete) counts[w]++
  }
  const steadyUse = samples > 0 ? sum / samples : undefined
  return {
    maxInWindow,
    steadyUse,
    /** What each window costs beyond its length: one latency, the budget's margin and the client's own delays. */
    overheadMsPerWindow: samples > 0 ? gaps / samples - windowMs : undefined,
    steadySamples: samples,
    completeWindowsUse: complete > 0 ? counts.reduce((a, b) => a + b, 0) / complete / limit : undefined,
    completeWindows: complete,
    spanMs: t.at(-1) - t[0]
  }
}

const isLogin = (entry) => /\/login$/i.test(entry.path)

/** The naive client: one request at a time, `pauseMs` before each. */
const naiveImport = async (sandbox, rows, pauseMs) => {
  const started = performance.now()
  const login = await fetch(`${sandbox.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey: sandbox.account.apiKey, apiToken: sandbox.account.apiToken })
  })
  const token = (await login.json()).result.accessToken
  let failed = 0
  for (let i = 0; i < rows; i++) {
    await sleep(pauseMs)
    const response = await fetch(`${sandbox.url}/customers`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(customerBody(i))
    })
    await response.arrayBuffer()
    if (!response.ok) failed++
  }
  return { ms: performance.now() - started, failed }
}

export const budgetScenario = async ({ rows, rate, latencyMs, naive = true }) => {
  const rateText = `${rate.limit}/${rate.windowMs / 1000}s`
  const file = (await customersCsv(rows, importColumns, `customers-import-${rows}.csv`)).path
  const sandboxOptions = { rate, faults: { latencyMs } }

  const sandbox = await openSandbox(sandboxOptions)
  const runDir = mkdtempSync(join(tmpdir(), "fsm-bench-import-"))
  let tool
  try {
    const run = await runCli([
      "import",
      "customers",
      file,
      "--mode",
      "upsert",
      "--rate",
      rateText,
      "--out",
      join(runDir, "run"),
      "--json"
    ], {
      env: cliEnv(sandbox)
    })
    const summary = jsonSummary(run.stdout)
    const log = await sandbox.requests()
    const stored = await sandbox.records("customers")
    const figures = budgetFigures(log.map((e) => e.at), rate)
    tool = {
      ms: run.ms,
      rssMiB: run.rssMiB,
      requests: log.length,
      logins: log.filter(isLogin).length,
      status403: log.filter((e) => e.status === 403).length,
      requestsPerRow: log.length / rows,
      counts: summary.counts,
      stored: stored.length,
      ...figures
    }
  } finally {
    rmSync(runDir, { recursive: true, force: true })
    await sandbox.stop()
  }
  if (tool.stored !== rows || tool.counts.created + tool.counts.updated !== rows) {
    throw new Error(
      `the import left ${tool.stored} customers on the server and reported ${
        JSON.stringify(tool.counts)
      }, for ${rows} rows`
    )
  }

  let baseline
  if (naive) {
    const fresh = await openSandbox(sandboxOptions)
    try {
      const run = await naiveImport(fresh, rows, rate.windowMs / rate.limit)
      const log = await fresh.requests()
      baseline = {
        ms: run.ms,
        failed: run.failed,
        requests: log.length,
        status403: log.filter((e) => e.status === 403).length,
        stored: (await fresh.records("customers")).length
      }
    } finally {
      await fresh.stop()
    }
    if (baseline.failed > 0 || baseline.stored !== rows) {
      throw new Error(
        `the naive baseline had ${baseline.failed} failed requests and left ${baseline.stored} customers, for ${rows} rows`
      )
    }
  }
  return {
    rows,
    rate: rateText,
    latencyMs,
    tool,
    baseline,
    speedup: baseline !== undefined ? baseline.ms / tool.ms : undefined
  }
}
