/**
 * The fleet's scale smoke (issue 29, "Measured"): N workers (default 3) on 127.0.0.1 … 127.0.0.N, each with the
 * address's whole budget (`--rate`, default 40/2s: the real 400/60s scaled down), serve M accounts (default 6) of
 * one sandbox that counts its budget per client address, as the API does; one `submit import customers` of
 * rows ÷ M rows per account (default 3,000 rows in all, parts of 100), all submitted at once, and `wait` for each.
 * Prints the wall time against the ideal (rows ÷ the workers' total budget, at one request a row), the requests per
 * row, the rate-limit answers and the requests per address. With `--kill`, one worker is killed with SIGKILL once a
 * third of the rows were sent, and the delay from the kill to the new owner of each part it held is printed.
 *
 *   npm run build && npm run bench:fleet-scale -- [--backend postgres|redis|both] [--kill] [--rows 3000]
 *     [--accounts 6] [--workers 3] [--chunk-rows 100] [--rate 40/2s] [--lease-ms 6000] [--latency-ms 5]
 *     [--jobs 4] [--repeat 1] [--json] [--log PREFIX: the sandbox's request log to PREFIX.BACKEND.TIME.json]
 *
 * `both` (the default) runs PostgreSQL, then Redis when `redis-server` is on the PATH. Needs PostgreSQL's server
 * binaries (scripts/ensure-postgres.sh) and loopback addresses 127.0.0.1 … .N (Linux has them all). Not part of
 * `npm test` nor of `npm run bench`: a run takes about a minute per backend and keeps the machine busy.
 */
import { Effect, Exit, Scope } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { defaultBudgetMargin } from "../../dist/client/Config.js"
import { openStore } from "../../dist/fleet/Stores.js"
import { customersCsv, importColumns } from "./data.mjs"
import { fleetKey, initFleet, requestFigures, startStore, startWorkers, stopWorkers } from "./fleet.mjs"
import { bin, jsonSummary, runCli, runNode } from "./measure.mjs"
import { openSandbox } from "./sandbox.mjs"

const { values: flags } = parseArgs({
  options: {
    backend: { type: "string", default: "both" },
    kill: { type: "boolean", default: false },
    rows: { type: "string", default: "3000" },
    accounts: { type: "string", default: "6" },
    workers: { type: "string", default: "3" },
    "chunk-rows": { type: "string", default: "100" },
    rate: { type: "string", default: "40/2s" },
    "lease-ms": { type: "string", default: "6000" },
    "latency-ms": { type: "string" },
    jobs: { type: "string", default: "4" },
    repeat: { type: "string", default: "1" },
    json: { type: "boolean", default: false },
    timeline: { type: "boolean", default: false },
    statements: { type: "boolean", default: false },
    log: { type: "string" }
  }
})

const int = (name) => {
  const n = Number(flags[name])
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: a whole number above 0, not "${flags[name]}"`)
  return n
}
const rateMatch = /^(\d+)\/(\d+)s$/.exec(flags.rate)
if (rateMatch === null) throw new Error(`--rate: N/SECONDSs (40/2s), not "${flags.rate}"`)
const rate = { limit: Number(rateMatch[1]), windowMs: Number(rateMatch[2]) * 1000 }
/**
 * The sandbox's latency by default: 150 ms in the live API's 60 s window (0.25 % of it), scaled to this run's window
 * as the budget is (5 ms at 2 s). The budget counts a request from its answer (src/client/Budget.ts), so each window
 * of an address costs it one latency plus the margin: 150 ms in a 2 s window (`--latency-ms 150`, this smoke's
 * default until budget15) capped the fleet at 0.926 of its rate, a ceiling the live API's 0.25 % never shows.
 */
const liveLatencyMs = 150 * rate.windowMs / 60_000
const settings = {
  rows: int("rows"),
  accounts: int("accounts"),
  workers: int("workers"),
  chunkRows: int("chunk-rows"),
  leaseMs: int("lease-ms"),
  latencyMs: flags["latency-ms"] === undefined ? liveLatencyMs : Number(flags["latency-ms"]),
  jobs: int("jobs"),
  kill: flags.kill
}

const hasRedis = () => {
  try {
    execFileSync("sh", ["-c", "command -v redis-server"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const backends = flags.backend === "both"
  ? ["postgres", ...(hasRedis() ? ["redis"] : [])]
  : flags.backend.split(",")
if (flags.backend === "both" && !hasRedis()) console.error("fleet-scale: no redis-server on the PATH: PostgreSQL only")

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const until = async (what, test, timeoutMs) => {
  const deadline = Date.now() + timeoutMs
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`fleet-scale: timed out waiting for ${what}`)
    await sleep(100)
  }
}

/** The fleet's store in this process (the built code), for reading jobs' owners: `read(effect)`, `close()`. */
const storeReader = async (url) => {
  const scope = Effect.runSync(Scope.make())
  const store = await Effect.runPromise(Scope.extend(openStore(url), scope))
  return {
    /** Every job the jobs submitted consist of: their parts, or the job itself when it has none. */
    leaves: async (jobs) => {
      const rows = []
      for (const job of jobs) {
        const parts = await Effect.runPromise(store.parts(job))
        rows.push(...(parts.length > 0 ? parts : [await Effect.runPromise(store.job(job))]))
      }
      return rows
    },
    job: (id) => Effect.runPromise(store.job(id)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/**
 * Kills worker `victim` with SIGKILL once `killAt` requests reached the sandbox, then follows each part it held
 * (state `running`, owner its egress id) until another worker owns it or it ended; the delays from the kill.
 */
const killAndFollow = async ({ sandbox, reader, jobs, victim, killAt, timeoutMs }) => {
  await until("a third of the rows sent", async () => (await sandbox.requests()).length >= killAt, timeoutMs)
  const egressId = victim.egressId
  const held = (await reader.leaves(jobs)).filter((r) => r.state === "running" && r.owner === egressId)
  victim.worker.child.kill("SIGKILL")
  const killedAt = Date.now()
  const takeovers = await Promise.all(held.map(async (part) => {
    let row
    await until(`part ${part.id} taken over`, async () => {
      row = await reader.job(part.id)
      return row.owner !== egressId || ["done", "failed", "cancelled"].includes(row.state)
    }, timeoutMs)
    return { part: part.id, by: row.owner, afterMs: Date.now() - killedAt }
  }))
  return { victim: egressId, killedAt, held: held.length, takeovers }
}

/** One run on `backend`: the workers, the accounts, the jobs submitted at once, waited for, the figures. */
const runScale = async (backend, store) => {
  const url = await store.database()
  const names = Array.from({ length: settings.accounts }, (_, i) => `conta-${i + 1}`)
  const sandbox = await openSandbox({
    rate,
    faults: { latencyMs: settings.latencyMs },
    accounts: names.map((name) => ({ apiKey: `${name}-key`, apiToken: `${name}-token` }))
  })
  const env = {
    PATH: process.env.PATH ?? "",
    FSM_FLEET_URL: url,
    FSM_FLEET_KEY: fleetKey,
    FSM_FLEET_LEASE_MS: String(settings.leaseMs)
  }
  const rateText = `${rate.limit}/${rate.windowMs / 1000}s`
  let workers = []
  let reader
  try {
    await initFleet(env, names.map((name, i) => ({ name, url: sandbox.url, ...sandbox.accounts[i] })))
    workers = await startWorkers(settings.workers, rateText, env, ["--jobs", String(settings.jobs)])
    reader = await storeReader(url)
    const perAccount = Math.floor(settings.rows / settings.accounts)
    const file = (await customersCsv(perAccount, importColumns, `customers-fleet-scale-${perAccount}.csv`)).path
    const started = Date.now()
    const submittedAt = []
    const jobs = await Promise.all(names.map(async (name) => {
      const submitted = await runCli([
        "submit",
        "import",
        "customers",
        file,
        "--account",
        name,
        "--chunk-rows",
        String(settings.chunkRows),
        "--json"
      ], { env })
      submittedAt.push(Date.now())
      return jsonSummary(submitted.stdout).job
    }))
    const rows = perAccount * settings.accounts
    const ideal = rows / (settings.workers * rate.limit / rate.windowMs)
    // What the budget allows at this latency: a window's requests each counted from its answer, plus the margin.
    const ceiling = rate.windowMs / (rate.windowMs + settings.latencyMs + defaultBudgetMargin(rate.windowMs))
    const killing = settings.kill
      ? killAndFollow({
        sandbox,
        reader,
        jobs,
        victim: { egressId: "bench-1", worker: workers[0] },
        killAt: Math.floor(rows / 3),
        timeoutMs: 20 * ideal + 120_000
      })
      : Promise.resolve(undefined)
    const ends = await Promise.all(jobs.map(async (job) => {
      const waited = await runNode([bin, "wait", job, "--json"], { env })
      return { job, ...jsonSummary(waited.stdout), endedAt: Date.now() }
    }))
    const kill = await killing
    const workerCpu = workers.map((w) => cpuSeconds(w.child.pid))
    const statements = flags.statements && store.statements !== undefined ? await store.statements(url) : undefined
    const log = await sandbox.requests()
    if (flags.log !== undefined) {
      writeFileSync(`${flags.log}.${backend}.${Date.now()}.json`, JSON.stringify({ started, log }))
    }
    const figures = requestFigures(log)
    const wallMs = Math.max(...ends.map((e) => e.endedAt)) - started
    const finished = await Promise.all(jobs.map(async (job) => (await reader.job(job)).finished?.getTime() ?? NaN))
    const times = log.map((e) => e.at)
    // Where the wall time went, from the first submit's start: submits, the sending, the ends.
    const phases = {
      submitted: Math.max(...submittedAt) - started,
      firstRequest: Math.min(...times) - started,
      lastRequest: Math.max(...times) - started,
      lastFinished: Math.max(...finished) - started,
      lastWaitReturned: wallMs
    }
    return {
      backend,
      ...settings,
      rate: rateText,
      rows,
      idealMs: ideal,
      ceiling,
      budgetUse: budgetUse(log, rate),
      wallMs,
      wallRatio: wallMs / ideal,
      firstToLastRequestRatio: figures.spanMs / ideal,
      requestsPerRow: figures.requests / rows,
      ...figures,
      states: ends.map((e) => `${e.state}/${e.exitCode}`),
      kill,
      phases,
      workerCpuSeconds: workerCpu,
      statements,
      timeline: timeline(log),
      load: execFileSync("uptime", { encoding: "utf8" }).trim()
    }
  } finally {
    await stopWorkers(workers)
    await reader?.close()
    await sandbox.stop()
  }
}

/** User and system CPU seconds of a live process (Linux /proc), or undefined. */
const cpuSeconds = (pid) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

/**
 * Each address's use of its budget, from the sandbox's request log alone (arrival times per client address, so
 * the machine's load moves it far less than wall time): the run from the first to the last request cut into
 * windows of the budget's length; in each, the address's requests against `limit`. What an address left unused is
 * counted in address-seconds (unused requests ÷ the rate), split into the windows up to its own last request
 * (`whileWorking`: its budget's pace, the ceiling below, gaps between parts) and after it while other addresses
 * still sent (`idleTail`: no work left for it while rows remained elsewhere). A last window shorter than the
 * budget's counts only its share of the limit.
 */
const budgetUse = (log, rate) => {
  const times = log.map((e) => e.at)
  const first = Math.min(...times)
  const last = Math.max(...times)
  const windows = Math.max(1, Math.ceil((last - first + 1) / rate.windowMs))
  const perSecond = rate.limit / (rate.windowMs / 1000)
  const byAddress = {}
  for (const e of log) {
    const a = (byAddress[e.client ?? "?"] ??= { counts: new Array(windows).fill(0), last: 0 })
    a.counts[Math.floor((e.at - first) / rate.windowMs)] += 1
    a.last = Math.max(a.last, e.at)
  }
  const allowed = (i) => rate.limit * Math.min(1, (last - first + 1 - i * rate.windowMs) / rate.windowMs)
  const result = {}
  for (const [address, a] of Object.entries(byAddress).sort(([x], [y]) => x.localeCompare(y))) {
    const own = Math.floor((a.last - first) / rate.windowMs)
    let whileWorking = 0
    let tail = 0
    let fullWindows = 0
    for (let i = 0; i < windows; i++) {
      const unused = Math.max(0, allowed(i) - a.counts[i])
      if (i <= own) {
        whileWorking += unused
        if (i < own) fullWindows += a.counts[i] / rate.limit
      } else tail += unused
    }
    result[address] = {
      requests: a.counts.reduce((x, y) => x + y, 0),
      /** Mean share of the limit used in the windows before its own last one. */
      fill: own > 0 ? fullWindows / own : NaN,
      counts: a.counts,
      unusedWhileWorkingS: whileWorking / perSecond,
      idleTailS: (last - a.last) / 1000,
      unusedAfterS: tail / perSecond,
      lastRequestS: (a.last - first) / 1000
    }
  }
  return result
}

/** Requests per address in each 5 s from the first request: where a run lost its pace. */
const timeline = (log) => {
  const first = Math.min(...log.map((e) => e.at))
  const slots = []
  for (const e of log) {
    const i = Math.floor((e.at - first) / 5_000)
    slots[i] ??= {}
    slots[i][e.client ?? "?"] = (slots[i][e.client ?? "?"] ?? 0) + 1
  }
  return Array.from(slots, (slot) => slot ?? {})
}

const fixed = (n, d = 1) => n.toFixed(d)

const print = (r) => {
  const s = (ms) => `${fixed(ms / 1000)} s`
  console.log(
    `\n${r.backend}: ${r.workers} workers × ${r.rate}, ${r.accounts} accounts, ${r.rows} rows in parts of ` +
      `${r.chunkRows}, lease ${r.leaseMs} ms, ${r.latencyMs} ms latency${
        r.kill !== undefined ? ", one worker killed -9" : ""
      }`
  )
  console.log(
    `  wall time (submit to the last job's end) ${s(r.wallMs)}, ideal ${s(r.idealMs)}: ${fixed(r.wallRatio, 3)}×`
  )
  console.log(`  first to last request ${s(r.spanMs)}: ${fixed(r.firstToLastRequestRatio, 3)}× the ideal`)
  console.log(
    `  the budget's ceiling at ${r.latencyMs} ms latency: ${fixed(r.ceiling, 3)} of the rate (ideal at it ` +
      `${s(r.idealMs / r.ceiling)}); wall ${fixed(r.wallRatio * r.ceiling, 3)}×, first to last request ` +
      `${fixed(r.firstToLastRequestRatio * r.ceiling, 3)}× that`
  )
  console.log(`  each address's budget, per ${rate.windowMs / 1000} s window from the first request:`)
  for (const [address, u] of Object.entries(r.budgetUse)) {
    console.log(
      `    ${address}: ${u.requests} requests, last at ${fixed(u.lastRequestS)} s; ${fixed(100 * u.fill)} % of the ` +
        `limit used in its windows before its last; unused while it had work ${fixed(u.unusedWhileWorkingS)} s, ` +
        `idle after its last request while others sent ${fixed(u.idleTailS)} s`
    )
  }
  const tail = Object.values(r.budgetUse).reduce((x, u) => x + u.idleTailS, 0)
  const working = Object.values(r.budgetUse).reduce((x, u) => x + u.unusedWhileWorkingS, 0)
  console.log(
    `    in all: ${fixed(working)} address-s unused while working, ${fixed(tail)} address-s idle while rows ` +
      `remained elsewhere (the ideal is ${fixed(r.workers * r.idealMs / 1000)} address-s)`
  )
  console.log(`  from the first submit: ${Object.entries(r.phases).map(([k, v]) => `${k} ${s(v)}`).join(", ")}`)
  console.log(`  requests ${r.requests}, ${fixed(r.requestsPerRow, 3)} per row; rate-limit answers ${r.rateLimited}`)
  console.log(`  by address ${JSON.stringify(r.byAddress)}; jobs ${r.states.join(" ")}`)
  if (r.kill !== undefined) {
    const delays = r.kill.takeovers.map((t) => t.afterMs)
    console.log(
      `  killed ${r.kill.victim} holding ${r.kill.held} part(s); taken over after ` +
        (delays.length > 0 ? `${delays.map((d) => s(d)).join(", ")} (lease ${s(r.leaseMs)})` : "— (it held none)")
    )
  }
  console.log(`  CPU seconds of the workers still running: ${r.workerCpuSeconds.map((c) => c ?? "—").join(" / ")}`)
  if (r.statements !== undefined) {
    console.log("  PostgreSQL statements, costliest first (calls, total ms, mean ms):")
    for (const st of r.statements) {
      console.log(`    ${st.calls}  ${fixed(st.total, 0)}  ${fixed(st.mean, 2)}  ${st.query}`)
    }
  }
  if (flags.timeline) {
    const addresses = Object.keys(r.byAddress).sort()
    console.log(`  requests per 5 s (${addresses.join(" / ")}):`)
    console.log(`    ${r.timeline.map((slot) => addresses.map((a) => slot[a] ?? 0).join("/")).join("  ")}`)
  }
  console.log(`  ${r.load}`)
}

const results = []
for (const backend of backends) {
  const store = await startStore(backend, { statements: flags.statements })
  try {
    for (let i = 0; i < Number(flags.repeat); i++) {
      const r = await runScale(backend, store)
      results.push(r)
      if (!flags.json) print(r)
    }
  } finally {
    await store.stop()
  }
}
if (flags.json) console.log(JSON.stringify(results))
