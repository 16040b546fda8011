/**
 * Export: the real CLI exports every customer of an account that holds `records` of them, against an
 * in-process sandbox with latency and the scaled budget. The account is seeded once (parallel PUTs to a
 * sandbox without a budget, saved to a data file under test/bench/data/) and reused from that file; each run
 * serves a copy, so the saved state never changes. Judged by the requests the sandbox received against the
 * minimum (one login + one page per page-size records), and the export process's peak RSS.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { dataDir, seedCustomers } from "./data.mjs"
import { jsonSummary, runCli } from "./measure.mjs"
import { cliEnv, openSandbox } from "./sandbox.mjs"

/** The page size `export` asks for (src/export/Export.ts, `defaultPageSize`). */
export const exportPageSize = 1000

const seed = async (file, records) => {
  const tmp = `${file}.seeding`
  rmSync(tmp, { force: true })
  const sandbox = await openSandbox({ rate: { limit: 1_000_000, windowMs: 1000 }, dataFile: tmp })
  try {
    await seedCustomers(sandbox, records)
    const stored = (await sandbox.records("customers")).length
    if (stored !== records) throw new Error(`seeding left ${stored} customers, not ${records}`)
  } finally {
    await sandbox.stop()
  }
  renameSync(tmp, file)
}

const countBy = (items, key) => {
  const counts = {}
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1
  return counts
}

export const exportScenario = async ({ records, rate, latencyMs }) => {
  const rateText = `${rate.limit}/${rate.windowMs / 1000}s`
  const seeded = join(dataDir, `sandbox-customers-${records}.json`)
  let generated = false
  if (!existsSync(seeded)) {
    await seed(seeded, records)
    generated = true
  }
  const work = mkdtempSync(join(tmpdir(), "fsm-bench-export-"))
  const dataFile = join(work, "sandbox.json")
  copyFileSync(seeded, dataFile)
  const sandbox = await openSandbox({ rate, faults: { latencyMs }, dataFile })
  try {
    const held = (await sandbox.records("customers")).length
    if (held !== records) throw new Error(`${seeded} holds ${held} customers, not ${records}: delete it to seed again`)
    const out = join(work, "export")
    const run = await runCli(["export", "customers", "--out", out, "--rate", rateText, "--json"], {
      env: cliEnv(sandbox)
    })
    const summary = jsonSummary(run.stdout)
    const log = await sandbox.requests()
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"))
    const rows = manifest.resources.find((r) => r.name === "customers")?.rows
    if (rows !== records) throw new Error(`the export wrote ${rows} customers, not ${records}`)
    const minimum = Math.ceil(records / exportPageSize) + 1
    return {
      records,
      rate: rateText,
      latencyMs,
      seeded: generated,
      ms: run.ms,
      rssMiB: run.rssMiB,
      rows,
      requests: log.length,
      requestsByKind: countBy(log, (e) => `${e.method} ${e.path} ${e.status}`),
      toolRequests: summary.requests,
      minimum,
      ratio: log.length / minimum
    }
  } finally {
    await sandbox.stop()
    rmSync(work, { recursive: true, force: true })
  }
}
