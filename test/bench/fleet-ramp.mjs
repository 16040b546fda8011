/**
 * The ramp of a fleet worker's first windows (issue 29): one worker (`--rate 40/2s`, `--jobs 4`), one account, one
 * `submit import customers` of `--rows` rows (default 500) in parts of `--chunk-rows` (default 100), `wait` for its
 * end. From the sandbox's request log alone: the requests of each 2 s window counted from the first request, the
 * first window in 250 ms steps, and the time from the submit's return (its parts queued) to the first request.
 * A worker with its budget's room and work queued should fill the first window to the limit.
 *
 *   npm run build && node test/bench/fleet-ramp.mjs [--backend postgres|redis] [--rows 500] [--chunk-rows 100]
 *     [--jobs 4] [--rate 40/2s] [--lease-ms 6000] [--repeat 1] [--json] [--worker-node-options=--require=FILE]
 *
 * Also printed: the worker's CPU seconds from its `ready` to the job's end (/proc). `--worker-node-options` is the
 * worker's NODE_OPTIONS (a preload that profiles it, say; `--cpu-prof` itself is not allowed there).
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { customersCsv, importColumns } from "./data.mjs"
import { fleetKey, initFleet, startStore, startWorkers, stopWorkers } from "./fleet.mjs"
import { bin, jsonSummary, runCli, runNode } from "./measure.mjs"
import { openSandbox } from "./sandbox.mjs"

const { values: flags } = parseArgs({
  options: {
    backend: { type: "string", default: "postgres" },
    rows: { type: "string", default: "500" },
    "chunk-rows": { type: "string", default: "100" },
    jobs: { type: "string", default: "4" },
    rate: { type: "string", default: "40/2s" },
    "lease-ms": { type: "string", default: "6000" },
    repeat: { type: "string", default: "1" },
    json: { type: "boolean", default: false },
    "worker-node-options": { type: "string" }
  }
})
const rateMatch = /^(\d+)\/(\d+)s$/.exec(flags.rate)
if (rateMatch === null) throw new Error(`--rate: N/SECONDSs (40/2s), not "${flags.rate}"`)
const rate = { limit: Number(rateMatch[1]), windowMs: Number(rateMatch[2]) * 1000 }

/** User and system CPU seconds of a live process (Linux /proc). */
const cpuSeconds = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const runOnce = async (store) => {
  const url = await store.database()
  const sandbox = await openSandbox({
    rate,
    faults: { latencyMs: 150 * rate.windowMs / 60_000 },
    accounts: [{ apiKey: "conta-1-key", apiToken: "conta-1-token" }]
  })
  const env = {
    PATH: process.env.PATH ?? "",
    FSM_FLEET_URL: url,
    FSM_FLEET_KEY: fleetKey,
    FSM_FLEET_LEASE_MS: flags["lease-ms"]
  }
  let workers = []
  try {
    await initFleet(env, [{ name: "conta-1", url: sandbox.url, ...sandbox.accounts[0] }])
    const workerEnv = flags["worker-node-options"] === undefined
      ? env
      : { ...env, NODE_OPTIONS: flags["worker-node-options"] }
    workers = await startWorkers(1, flags.rate, workerEnv, ["--jobs", flags.jobs])
    const cpuAtReady = cpuSeconds(workers[0].child.pid)
    const rows = Number(flags.rows)
    const file = (await customersCsv(rows, importColumns, `customers-fleet-ramp-${rows}.csv`)).path
    const submitted = await runCli(
      ["submit", "import", "customers", file, "--account", "conta-1", "--chunk-rows", flags["chunk-rows"], "--json"],
      { env }
    )
    const queuedAt = Date.now()
    const job = jsonSummary(submitted.stdout).job
    const waited = await runNode([bin, "wait", job, "--json"], { env })
    const workerCpuS = cpuSeconds(workers[0].child.pid) - cpuAtReady
    const log = [...(await sandbox.requests())].sort((a, b) => a.at - b.at)
    const first = log[0].at
    const windows = []
    for (const e of log) {
      const i = Math.floor((e.at - first) / rate.windowMs)
      windows[i] = (windows[i] ?? 0) + 1
    }
    const steps = new Array(Math.ceil(rate.windowMs / 250)).fill(0)
    for (const e of log) if (e.at - first < rate.windowMs) steps[Math.floor((e.at - first) / 250)] += 1
    return {
      backend: store.backend,
      state: `${jsonSummary(waited.stdout).state}/${waited.code}`,
      requests: log.length,
      rateLimited: log.filter((e) => e.status === 429).length,
      queuedToFirstRequestMs: first - queuedAt,
      firstRequests: log.slice(0, 3).map((e) => `${e.method} ${e.path} +${e.at - first}`),
      windows: Array.from(windows, (n) => n ?? 0),
      firstWindowBy250ms: steps,
      workerCpuS,
      spanS: (log.at(-1).at - first) / 1000,
      load: execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim()
    }
  } finally {
    await stopWorkers(workers)
    await sandbox.stop()
  }
}

const results = []
const store = await startStore(flags.backend)
store.backend = flags.backend
try {
  for (let i = 0; i < Number(flags.repeat); i++) {
    const r = await runOnce(store)
    results.push(r)
    if (!flags.json) console.log(JSON.stringify(r))
  }
} finally {
  await store.stop()
}
if (flags.json) console.log(JSON.stringify(results))
