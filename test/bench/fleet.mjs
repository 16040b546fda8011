/**
 * Fleet throughput: the same work (`rowsPerWorker` × N customers, upsert, one write a row) submitted in parts and
 * run by N = 1, 2, 3 workers of the built CLI, each bound to a loopback address of its own (127.0.0.1, .2, .3:
 * `--source-address`) with the address's whole budget (`--rate`), against one sandbox that counts its budget per
 * client address, as the API does. A throwaway PostgreSQL (Debian's binaries, scripts/ensure-postgres.sh) or
 * redis-server holds the fleet; a fresh database (or server) per N. Throughput is rows over the time from the first
 * request to the last request as the sandbox logged their arrivals (the workers' start-up excluded); the goal is N workers ≥
 * 0.95 × N × one worker.
 */
import { execFileSync, spawn } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { customersCsv, importColumns } from "./data.mjs"
import { bin, jsonSummary, runCli } from "./measure.mjs"
import { openSandbox } from "./sandbox.mjs"

export const fleetKey = Buffer.alloc(32, 7).toString("base64")

export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Spawns `command`, resolving once its output says `ready`; the child. */
const startServer = (command, args, ready, options = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], detached: true, ...options })
    let log = ""
    const seen = (d) => {
      log += d.toString()
      if (log.includes(ready)) resolve(child)
    }
    child.stdout.on("data", seen)
    child.stderr.on("data", seen)
    child.once("exit", (code) => reject(new Error(`${command} exited ${code}: ${log.slice(-2000)}`)))
  })

/** Stops a server started detached (its own process group: `runuser` and the server under it). */
const stopServer = (child) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    process.kill(-child.pid, "SIGINT")
  })

/**
 * A throwaway PostgreSQL cluster (as `nobody` when root: postgres refuses root), trust on 127.0.0.1, no fsync.
 * `statements`: with pg_stat_statements loaded, and `statements(url)` reading what each statement cost.
 */
export const startPostgres = async ({ statements = false } = {}) => {
  const root = "/usr/lib/postgresql"
  const version = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined
  const binDir = version !== undefined
    ? join(root, version, "bin")
    : dirname(execFileSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).trim())
  const asRoot = process.getuid?.() === 0
  const as = (command, args) => asRoot ? ["runuser", ["-u", "nobody", "--", command, ...args]] : [command, args]
  const dir = mkdtempSync(join(tmpdir(), "fsm-bench-pg-"))
  chmodSync(dir, 0o700)
  if (asRoot) chownSync(dir, 65534, 65534)
  const data = join(dir, "data")
  execFileSync(...as(join(binDir, "initdb"), ["-D", data, "-U", "fsm", "--auth=trust", "--no-sync", "-E", "UTF8"]), {
    stdio: "ignore",
    cwd: dir
  })
  const port = await freePort()
  const child = await startServer(
    ...as(join(binDir, "postgres"), [
      "-D",
      data,
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "fsync=off",
      "-c",
      "max_connections=200",
      ...(statements ? ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all"] : [])
    ]),
    "ready to accept connections",
    { cwd: dir }
  )
  const pg = (await import("pg")).default
  const query = async (url, text) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return await client.query(text)
    } finally {
      await client.end()
    }
  }
  let databases = 0
  return {
    /** A fresh database's address. */
    database: async () => {
      const name = `bench_${++databases}`
      const admin = new pg.Client({ connectionString: `postgres://fsm@127.0.0.1:${port}/postgres` })
      await admin.connect()
      await admin.query(`CREATE DATABASE ${name}`)
      await admin.end()
      const url = `postgres://fsm@127.0.0.1:${port}/${name}`
      if (statements) await query(url, "CREATE EXTENSION pg_stat_statements")
      return url
    },
    /** The statements run in the database at `url`, the costliest first: calls, total and mean time (ms). */
    statements: async (url) =>
      (await query(
        url,
        `SELECT calls, total_exec_time AS total, mean_exec_time AS mean, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
         WHERE d.datname = current_database() ORDER BY total_exec_time DESC LIMIT 15`
      )).rows,
    stop: async () => {
      await stopServer(child)
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** A throwaway redis-server without persistence per database asked for. */
export const startRedis = async () => {
  const servers = []
  return {
    database: async () => {
      const port = await freePort()
      const dir = mkdtempSync(join(tmpdir(), "fsm-bench-redis-"))
      const child = await startServer(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"],
        "Ready to accept connections",
        { cwd: dir }
      )
      servers.push({ child, dir })
      return `redis://127.0.0.1:${port}`
    },
    stop: async () => {
      for (const s of servers) {
        await stopServer(s.child)
        rmSync(s.dir, { recursive: true, force: true })
      }
    }
  }
}

/** Starts `fsm-bulk worker ARGS`; its child, and a promise of its end. */
export const startWorker = (args, env) => {
  const child = spawn(process.execPath, [bin, "worker", ...args], { env, stdio: ["ignore", "ignore", "pipe"] })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += d.toString()))
  const ready = new Promise((resolve, reject) => {
    child.stderr.on("data", () => stderr.includes(" ready") && resolve())
    child.once("exit", (code) => reject(new Error(`worker exited ${code}: ${stderr.slice(-2000)}`)))
  })
  return { child, ready, stderr: () => stderr }
}

/** `fleet init` and `accounts add NAME --base-url URL` for each of `accounts` ({ name, url, apiKey, apiToken }). */
export const initFleet = async (env, accounts) => {
  await runCli(["fleet", "init"], { env })
  for (const a of accounts) {
    await runCli(["accounts", "add", a.name, "--base-url", a.url], {
      env: { ...env, FSM_API_KEY: a.apiKey, FSM_API_TOKEN: a.apiToken }
    })
  }
}

/**
 * N workers, the i-th with `--egress-id bench-i --source-address 127.0.0.i --rate RATE` (plus `args`), resolved once
 * every one said it is ready.
 */
export const startWorkers = async (workers, rateText, env, args = []) => {
  const running = []
  for (let i = 1; i <= workers; i++) {
    running.push(
      startWorker(["--egress-id", `bench-${i}`, "--source-address", `127.0.0.${i}`, "--rate", rateText, ...args], env)
    )
  }
  try {
    await Promise.all(running.map((w) => w.ready))
  } catch (e) {
    await stopWorkers(running)
    throw e
  }
  return running
}

/** Stops the workers still running (SIGTERM) and waits for their ends. */
export const stopWorkers = async (running) => {
  for (const w of running) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGTERM")
  await Promise.all(
    running.map((w) =>
      new Promise((r) => w.child.exitCode !== null || w.child.signalCode !== null ? r() : w.child.once("exit", r))
    )
  )
}

/** What the sandbox's request log says: requests, rate-limit answers, per client address, first to last arrival. */
export const requestFigures = (log) => {
  const times = log.map((e) => e.at)
  const byAddress = {}
  for (const e of log) byAddress[e.client ?? "?"] = (byAddress[e.client ?? "?"] ?? 0) + 1
  return {
    requests: log.length,
    rateLimited: log.filter((e) => e.status === 429 || e.status === 403).length,
    byAddress,
    spanMs: Math.max(...times) - Math.min(...times)
  }
}

/** One run: N workers on 127.0.0.1 … 127.0.0.N, `rows` rows in parts of `chunkRows`. */
const runFleet = async ({ url, workers, rows, chunkRows, rate, latencyMs }) => {
  const trace = (m) => process.env.FSM_BENCH_TRACE && process.stderr.write(`fleet bench: ${m}\n`)
  const rateText = `${rate.limit}/${rate.windowMs / 1000}s`
  const sandbox = await openSandbox({ rate, faults: { latencyMs } })
  const env = { PATH: process.env.PATH ?? "", FSM_FLEET_URL: url, FSM_FLEET_KEY: fleetKey }
  let running = []
  try {
    await initFleet(env, [{ name: "bench", url: sandbox.url, ...sandbox.account }])
    trace("workers starting")
    running = await startWorkers(workers, rateText, env)
    trace("workers ready")
    const file = (await customersCsv(rows, importColumns, `customers-fleet-${rows}.csv`)).path
    const submitted = await runCli([
      "submit",
      "import",
      "customers",
      file,
      "--account",
      "bench",
      "--chunk-rows",
      String(chunkRows),
      "--json"
    ], { env })
    const job = jsonSummary(submitted.stdout).job
    trace(`job ${job} submitted`)
    const waited = await runCli(["wait", job, "--json"], { env })
    const end = jsonSummary(waited.stdout)
    const figures = requestFigures(await sandbox.requests())
    return {
      workers,
      rows,
      state: end.state,
      exitCode: end.exitCode,
      ...figures,
      rowsPerMinute: rows / (figures.spanMs / 60_000)
    }
  } finally {
    await stopWorkers(running)
    await sandbox.stop()
  }
}

/** A throwaway store of `backend` ("postgres" or "redis"): `database()` gives a fresh one's address. */
export const startStore = (backend, options) => backend === "redis" ? startRedis() : startPostgres(options)

/**
 * The scenario on `backend` ("postgres" or "redis"): runs with 1, 2 and 3 workers, each given `rowsPerWorker` rows
 * (the same time each at the ideal), and the ratio of N workers' throughput to N × one worker's.
 */
export const fleetScenario = async ({ backend, rowsPerWorker, chunkRows, rate, latencyMs }) => {
  const store = await startStore(backend)
  try {
    const runs = []
    for (const workers of [1, 2, 3]) {
      runs.push(
        await runFleet({
          url: await store.database(),
          workers,
          rows: rowsPerWorker * workers,
          chunkRows,
          rate,
          latencyMs
        })
      )
    }
    const one = runs[0].rowsPerMinute
    return {
      backend,
      runs,
      scaling: runs.map((r) => ({ workers: r.workers, ratio: r.rowsPerMinute / (r.workers * one) })),
      idealRowsPerMinutePerWorker: (rate.limit / rate.windowMs) * 60_000
    }
  } finally {
    await store.stop()
  }
}
