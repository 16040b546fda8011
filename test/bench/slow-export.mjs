/**
 * Export of a slow service (issue 23): the real CLI exports every task of an account holding `records` of them,
 * spread over one year, from an in-process sandbox that answers a list page in `perRecordMs` per record (1 s per
 * page of 100 tasks, the live service's cap) under the real budget. Judged against the ideal wall time: pages ×
 * page latency ÷ the in-flight limit, or the budget's time for the requests when that is slower. The account is
 * seeded once (parallel POSTs, saved under test/bench/data/) and each run serves a copy.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { dataDir } from "./data.mjs"
import { jsonSummary, runCli } from "./measure.mjs"
import { cliEnv, openSandbox } from "./sandbox.mjs"
import { servedMs } from "./served.mjs"

/** Tasks a page holds on the live service (and the sandbox by default). */
const taskPage = 100
const year = 2026

const day = (i) => new Date(Date.UTC(year, 0, 1 + (i % 365))).toISOString().slice(0, 10)

const seed = async (file, records) => {
  const tmp = `${file}.seeding`
  mkdirSync(dataDir, { recursive: true })
  rmSync(tmp, { force: true })
  const sandbox = await openSandbox({ rate: { limit: 1_000_000, windowMs: 1000 }, dataFile: tmp })
  try {
    const login = await fetch(`${sandbox.url}/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiKey: sandbox.account.apiKey, apiToken: sandbox.account.apiToken })
    })
    const token = (await login.json()).result.accessToken
    const send = async (path, body) => {
      const response = await fetch(`${sandbox.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(body)
      })
      const answer = await response.json()
      if (response.status !== 201) throw new Error(`seeding ${path}: HTTP ${response.status}`)
      return answer.result
    }
    const user = await send("/users", { login: "bench", name: "Bench", password: "secret-1" })
    const userId = user.userID ?? user.id
    let next = 0
    const worker = async () => {
      while (next < records) {
        const i = next++
        await send("/tasks", { externalId: `OS-${i}`, idUserFrom: userId, taskDate: `${day(i)}T09:00:00` })
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
    const stored = (await sandbox.records("tasks")).length
    if (stored !== records) throw new Error(`seeding left ${stored} tasks, not ${records}`)
  } finally {
    await sandbox.stop()
  }
  renameSync(tmp, file)
}

export const slowExportScenario = async ({ records, perRecordMs, rate, concurrency }) => {
  const rateText = `${rate.limit}/${rate.windowMs / 1000}s`
  const seeded = join(dataDir, `sandbox-tasks-${records}.json`)
  let generated = false
  if (!existsSync(seeded)) {
    await seed(seeded, records)
    generated = true
  }
  const work = mkdtempSync(join(tmpdir(), "fsm-bench-slow-export-"))
  const dataFile = join(work, "sandbox.json")
  copyFileSync(seeded, dataFile)
  const sandbox = await openSandbox({ rate, faults: { pageLatencyPerRecordMs: perRecordMs }, dataFile })
  try {
    const out = join(work, "export")
    const run = await runCli(
      [
        "export",
        "tasks",
        "--out",
        out,
        "--since",
        `${year}-01-01`,
        "--until",
        `${year}-12-31`,
        "--rate",
        rateText,
        "--concurrency",
        String(concurrency),
        "--json"
      ],
      { env: cliEnv(sandbox) }
    )
    jsonSummary(run.stdout)
    const log = await sandbox.requests()
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"))
    const rows = manifest.resources.find((r) => r.name === "tasks")?.rows
    if (rows !== records) throw new Error(`the export wrote ${rows} tasks, not ${records}`)
    const pages = Math.ceil(records / taskPage)
    const pageMs = taskPage * perRecordMs
    const byLatency = (pages * pageMs) / concurrency
    const byBudget = Math.max(0, Math.ceil((pages + 1) / rate.limit) - 1) * rate.windowMs
    const idealMs = Math.max(byLatency, byBudget)
    const lists = log.filter((e) => e.method === "GET" && /\/tasks$/i.test(e.path))
    return {
      records,
      rate: rateText,
      concurrency,
      pageMs,
      seeded: generated,
      ms: run.ms,
      idealMs,
      ratio: run.ms / idealMs,
      requests: log.length,
      taskPages: lists.length,
      /**
       * From the first request's arrival to the last answer sent, both as the sandbox logged them: the CLI's start
       * and exit excluded. (It was the last arrival plus a whole page, up to 0.09 s over with pages of 91.)
       */
      servedMs: servedMs(log),
      /** Each request: ms after the first one, method, path, status, requests in flight on its token. */
      timeline: log.map((e) => `${e.at - log[0].at} ${e.method} ${e.path} ${e.status} ${e.inFlight}`),
      mostInFlight: Math.max(...log.map((e) => e.inFlight ?? 0)),
      errors: log.filter((e) => e.status !== undefined && e.status >= 400).length
    }
  } finally {
    await sandbox.stop()
    rmSync(work, { recursive: true, force: true })
  }
}
