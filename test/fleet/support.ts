/**
 * What the fleet tests share: a throwaway PostgreSQL cluster (Debian's server binaries, installed by
 * scripts/ensure-postgres.sh) initialised in a temporary directory and run as an unprivileged user on 127.0.0.1
 * and a free port, one per test run (test/fleet/postgres-run.ts), with an empty database of its own for each test; likewise a throwaway
 * redis-server (scripts/ensure-redis.sh) without persistence; the fleet key; the built CLI spawned with the fleet's environment.
 */
import { Effect, Redacted } from "effect"
import type { Scope } from "effect"
import { Redis } from "ioredis"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { afterAll, assert, inject } from "vitest"
import { enqueue, jobFormat, openQueue } from "../../src/fleet/Queue.js"
import { seal } from "../../src/fleet/Secrets.js"
import type { FleetStore } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import { startDrillSandbox, tempDir } from "../drills/support.js"
import { clusterFile } from "./postgres-run.js"

/** The built CLI; FSM_DRILL_BIN points the tests at another build (the code before a fix, to see a test fail). */
export const bin = process.env.FSM_DRILL_BIN ?? fileURLToPath(new URL("../../dist/bin.js", import.meta.url))

/** A fixed test key (32 bytes, base64): credentials are encrypted with it. */
export const fleetKey = Buffer.alloc(32, 7).toString("base64")

/** The directory holding initdb and postgres: Debian's newest, else PATH. */
export const postgresBin = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(Path.join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a))
    if (versions[0] !== undefined) return Path.join(root, versions[0], "bin")
  }
  try {
    return Path.dirname(execFileSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).trim())
  } catch {
    return undefined
  }
}

/** A TCP port free on 127.0.0.1 now (redis and postgres take no port 0). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const asUser = (user: string | undefined, command: string, args: ReadonlyArray<string>) =>
  user === undefined ? { command, args: [...args] } : { command: "runuser", args: ["-u", user, "--", command, ...args] }

const waitFor = async (check: () => boolean, what: string, ms: number) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (check()) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${what} did not come up within ${ms} ms`)
}

export interface RunningPostgres {
  /** The address of a database of its own (a fresh one per `startPostgres`). */
  readonly url: string
  /** Its name (for statements such as `ALTER DATABASE`). */
  readonly database: string
}

interface Cluster {
  readonly port: number
  readonly process: ChildProcess
  readonly dir: string
}

/**
 * A fresh PostgreSQL cluster. Postgres refuses to run as root, so as root the cluster belongs to `nobody` (its
 * directory is handed over); trust authentication on 127.0.0.1 only, no fsync (a test cluster). Its log goes to
 * a file of its directory; `detached`, it runs in a process group of its own and outlives the process that
 * started it (the run's cluster, stopped by test/fleet/postgres-run.ts).
 */
const startCluster = async (detached = false): Promise<Cluster> => {
  const binDir = postgresBin()
  if (binDir === undefined) throw new Error("PostgreSQL is not installed: run bash scripts/ensure-postgres.sh")
  const user = process.getuid?.() === 0 ? "nobody" : undefined
  const dir = mkdtempSync(Path.join(tmpdir(), "fsm-pg-"))
  chmodSync(dir, 0o700)
  if (user !== undefined) chownSync(dir, 65534, 65534)
  const data = Path.join(dir, "data")
  const init = asUser(user, Path.join(binDir, "initdb"), [
    "-D",
    data,
    "-U",
    "fsm",
    "--auth=trust",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C"
  ])
  execFileSync(init.command, init.args, { stdio: "ignore", cwd: dir })
  const port = await freePort()
  const run = asUser(user, Path.join(binDir, "postgres"), [
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
    "full_page_writes=off",
    "-c",
    // the files of a run at once share it (two to four), each test's workers holding pools of their own
    "max_connections=400"
  ])
  const logFile = Path.join(dir, "postgres.log")
  const logFd = openSync(logFile, "a")
  const child = spawn(run.command, run.args, { stdio: ["ignore", "ignore", logFd], cwd: dir, detached })
  closeSync(logFd)
  if (detached) child.unref()
  const log = () => readFileSync(logFile, "utf8")
  await waitFor(() => log().includes("ready to accept connections") || child.exitCode !== null, "postgres", 30_000)
  if (child.exitCode !== null) throw new Error(`postgres exited: ${log()}`)
  return { port, process: child, dir }
}

/**
 * Stops a server process: `signal`, then SIGKILL if it has not exited within 10 s. The grace period's timer is
 * cleared once it exits (a timer left running would outlive the file: test/setup/file-leaks.ts).
 */
const stopServer = async (child: ChildProcess, signal: NodeJS.Signals) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once("exit", r))
  child.kill(signal)
  let timer: NodeJS.Timeout | undefined
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10_000)))])
  clearTimeout(timer)
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
}

const stopCluster = async (cluster: Cluster) => {
  await stopServer(cluster.process, "SIGINT") // fast shutdown
  rmSync(cluster.dir, { recursive: true, force: true })
}

/**
 * The run's cluster (test/fleet/postgres-run.ts): started by the first file of the run that needs it (the others
 * wait for its description), used by all, stopped by the run's teardown.
 */
const sharedCluster = async (runDir: string): Promise<{ readonly port: number }> => {
  const file = clusterFile(runDir)
  const failed = Path.join(runDir, "failed")
  let mine = true
  try {
    closeSync(openSync(Path.join(runDir, "starting"), "wx"))
  } catch {
    mine = false // another file of the run is starting it
  }
  if (mine) {
    try {
      const started = await startCluster(true)
      writeFileSync(`${file}.tmp`, JSON.stringify({ port: started.port, pid: started.process.pid, dir: started.dir }))
      renameSync(`${file}.tmp`, file)
    } catch (e) {
      writeFileSync(failed, String(e))
      throw e
    }
  } else await waitFor(() => existsSync(file) || existsSync(failed), "the run's PostgreSQL cluster", 120_000)
  if (existsSync(failed)) throw new Error(readFileSync(failed, "utf8"))
  return JSON.parse(readFileSync(file, "utf8")) as { readonly port: number }
}

/** The directory of the run's cluster, under vitest (absent when a file runs outside vitest's global set-up). */
const runDir = (): string | undefined => {
  if (process.env["VITEST"] === undefined) return undefined
  try {
    return inject("fsmPostgresRun")
  } catch {
    return undefined
  }
}

/**
 * The run's cluster under vitest; otherwise one cluster per test file, started at its first `startPostgres` and
 * stopped after the file's last test. A cluster costs an initdb and a start (seconds on a loaded machine), a
 * database of its own a `CREATE DATABASE`. The tests of a file run one after another, and each test gets an empty
 * database, dropped after it (its connections ended), so no test sees another's data, nor another file's.
 */
let cluster: Promise<{ readonly port: number }> | undefined
let ownCluster: Promise<Cluster> | undefined
let databases = 0
if (process.env["VITEST"] !== undefined) {
  afterAll(async () => {
    const started = ownCluster
    cluster = undefined
    ownCluster = undefined
    if (started !== undefined) await stopCluster(await started)
  })
}

const clusterForThisFile = (): Promise<{ readonly port: number }> => {
  const shared = runDir()
  if (shared !== undefined) return sharedCluster(shared)
  ownCluster = startCluster()
  return ownCluster
}

/**
 * `f` on a connection to the cluster's `postgres` database. Bounded (it takes well under a second): a cluster that
 * does not answer fails the test that asked, saying so, instead of holding it to its timeout without a word.
 */
const admin = async <A>(port: number, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({
    connectionString: `postgres://fsm@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: 30_000,
    query_timeout: 60_000
  })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** An empty database of its own for the scope, on the run's PostgreSQL cluster (started when first needed). */
export const startPostgres: Effect.Effect<RunningPostgres, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(async (): Promise<RunningPostgres & { readonly port: number }> => {
    cluster ??= clusterForThisFile()
    const { port } = await cluster
    // Files of the run share the cluster: the process id keeps their names apart (the time, a reused id's).
    const database = `fleet_${process.pid}_${Date.now().toString(36)}_${++databases}`
    await admin(port, (client) => client.query(`CREATE DATABASE ${database}`))
    return { url: `postgres://fsm@127.0.0.1:${port}/${database}`, database, port }
  }),
  (db) =>
    Effect.promise(() =>
      admin(db.port, (client) => client.query(`DROP DATABASE IF EXISTS ${db.database} WITH (FORCE)`)).then(
        () => undefined,
        () => undefined // the cluster is gone already
      )
    )
)

/** The environment of a spawned fleet command. */
export const fleetEnv = (url: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, FSM_FLEET_URL: url, FSM_FLEET_KEY: fleetKey, ...extra }
  // Nothing of the caller's own API settings leaks into the fleet's commands.
  for (const name of ["FSM_API_KEY", "FSM_API_TOKEN", "FSM_BASE_URL", "FSM_RATE"]) {
    if (!(name in extra)) delete env[name]
  }
  return env
}

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the built CLI to its end, or kills it after `ms` (then `code` is null): for a command that, broken, would
 * never return (a `wait` on a job nobody runs, a worker that should have refused to start).
 */
export const runCliWithin = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, ms: number): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), ms)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Runs the built CLI to its end. */
export const runCli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

/** The last stdout line as JSON (`--json`). */
export const lastJson = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>

/** The path of redis-server, when installed. */
export const redisServer = (): string | undefined => {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" }).trim() || undefined
  } catch {
    return undefined
  }
}

export interface RunningRedis {
  readonly url: string
  readonly process: ChildProcess
  readonly dir: string
}

export interface RestartableRedis extends RunningRedis {
  /**
   * Stops the server (SIGTERM: it writes its append-only file), leaves it down for `downMs` (the fault's length),
   * and starts it again on the same port and files.
   */
  readonly restart: (downMs: number) => Effect.Effect<void>
  /** Stops the server now (as `restart` does); what it gives starts it again, on the same port and files. */
  readonly down: Effect.Effect<Effect.Effect<void>>
}

const spawnRedis = async (server: string, port: number, dir: string, persistent: boolean) => {
  const child = spawn(server, [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    persistent ? "yes" : "no",
    ...(persistent ? ["--appendfsync", "always"] : []),
    "--daemonize",
    "no",
    "--loglevel",
    "notice"
  ], { stdio: ["ignore", "pipe", "pipe"], cwd: dir })
  let log = ""
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()))
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()))
  await waitFor(() => log.includes("Ready to accept connections") || child.exitCode !== null, "redis-server", 30_000)
  if (child.exitCode !== null) throw new Error(`redis-server exited: ${log}`)
  return child
}

const stopRedis = (child: ChildProcess) => stopServer(child, "SIGTERM")

/**
 * A fresh redis-server for the scope, on 127.0.0.1 and a free port (Redis takes no port 0), in a temporary
 * directory; without persistence at all (`--save ''`, no AOF: the data dies with it), or with `persistent`, an
 * append-only file written at every command (`appendfsync always`), so that it can be restarted with its data.
 */
export const startRedisWith = (
  options: { readonly persistent?: boolean } = {}
): Effect.Effect<RestartableRedis, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = redisServer()
      if (server === undefined) throw new Error("redis-server is not installed: run bash scripts/ensure-redis.sh")
      const dir = mkdtempSync(Path.join(tmpdir(), "fsm-redis-"))
      const port = await freePort()
      const persistent = options.persistent === true
      const running = { child: await spawnRedis(server, port, dir, persistent) }
      return {
        url: `redis://127.0.0.1:${port}`,
        get process() {
          return running.child
        },
        dir,
        restart: (downMs) =>
          Effect.promise(async () => {
            await stopRedis(running.child)
            await new Promise((r) => setTimeout(r, downMs))
            running.child = await spawnRedis(server, port, dir, persistent)
          }),
        down: Effect.promise(async () => {
          await stopRedis(running.child)
          return Effect.promise(async () => {
            running.child = await spawnRedis(server, port, dir, persistent)
          })
        })
      }
    }),
    (redis) =>
      Effect.promise(async () => {
        await stopRedis(redis.process)
        rmSync(redis.dir, { recursive: true, force: true })
      })
  )

/** A throwaway redis-server without persistence, for the scope. */
export const startRedis: Effect.Effect<RunningRedis, never, Scope.Scope> = startRedisWith()

export type Backend = "postgres" | "redis"

/**
 * The backends the fleet tests run on: PostgreSQL always (its absence fails the test), Redis where redis-server
 * is installed (scripts/ensure-redis.sh installs it; the issue asks for the Redis variant where it is available).
 */
export const backends: ReadonlyArray<{ readonly backend: Backend; readonly available: boolean }> = [
  { backend: "postgres", available: true },
  { backend: "redis", available: redisServer() !== undefined }
]

/** A throwaway fleet store of the backend for the scope: its `--fleet` address. */
export const startFleetBackend = (backend: Backend): Effect.Effect<{ readonly url: string }, never, Scope.Scope> =>
  backend === "postgres" ? startPostgres : startRedis

/** The backends of `backends` that can run here (the Redis variants are left out, and said so, without redis-server). */
export const availableBackends: ReadonlyArray<{ readonly backend: Backend }> = backends.filter((b) => {
  if (!b.available) console.warn(`redis-server is not installed: the fleet tests' ${b.backend} variants are not run`)
  return b.available
})

/** Runs `f` on the fleet's store at `url` (a connection of its own, closed after). */
export const withStore = <A, E>(url: string, f: (store: FleetStore) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(openStore(url), f))

/** An account of the fleet: its name, API address and credentials. */
export interface FleetAccount {
  readonly name: string
  readonly baseUrl: string
  readonly apiKey: string
  readonly apiToken: string
  /** Its own budget (`accounts add --rate`), below the worker's; none by default. */
  readonly rate?: string | undefined
}

/**
 * What `fleet init` and `accounts add NAME --base-url URL` (credentials from FSM_API_KEY/FSM_API_TOKEN) leave in
 * the store, made in process through the store's own calls, as those commands make them: the set-up of a test whose
 * point is not those commands. A spawned CLI costs about 1 s of CPU before it does anything (docs/benchmarks.md);
 * test/fleet/cli.test.ts and faults-cli.test.ts spawn both commands where they are the point.
 */
export const initFleet = (url: string, accounts: ReadonlyArray<FleetAccount> = []) =>
  withStore(url, (store) =>
    Effect.gen(function*() {
      yield* store.init
      const key = Buffer.from(fleetKey, "base64")
      for (const a of accounts) {
        yield* store.putAccount({
          name: a.name,
          baseUrl: a.baseUrl,
          rate: a.rate ?? null,
          secret: seal(key, { apiKey: Redacted.make(a.apiKey), apiToken: Redacted.make(a.apiToken) })
        })
      }
    })).pipe(Effect.orDie)

/** Everything the queue engine holds, as text (to check what job data carries). */
export const queueContents = (url: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    if (url.startsWith("redis")) {
      const client = new Redis(url)
      try {
        const keys = (await client.keys("bull:*")).sort()
        const values = await Promise.all(keys.map(async (key) => {
          switch (await client.type(key)) {
            case "hash":
              return client.hgetall(key)
            case "list":
              return client.lrange(key, 0, -1)
            case "set":
              return client.smembers(key)
            case "zset":
              return client.zrange(key, 0, -1)
            case "stream":
              return client.xrange(key, "-", "+")
            default:
              return client.get(key)
          }
        }))
        return JSON.stringify(Object.fromEntries(keys.map((k, i) => [k, values[i]])))
      } finally {
        await client.quit()
      }
    }
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return JSON.stringify((await client.query("SELECT row_to_json(j) AS j FROM bullmq.job j")).rows)
    } finally {
      await client.end()
    }
  })

/** One query on a connection of its own (what a test reads from the store). */
export const query = async (url: string, text: string, values: Array<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, values)).rows
  } finally {
    await client.end()
  }
}

/**
 * One PostgreSQL session for the scope, for a test that reads the store again and again (a poll): `query` connects
 * anew for each read, and each connection costs a server process (about 0.05 s of its CPU, measured 2026-11-29) and
 * the test's connect. The store's own reads poll the same way through one store opened for the test (`openStore`).
 */
export const sqlSession = (url: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        // A session the server ends makes the next query fail; the event itself must not crash the worker.
        client.on("error", () => undefined)
        await client.connect()
        return client
      }),
      (client) => Effect.promise(() => client.end())
    ),
    (client) => ({
      query: async (text: string, values: Array<unknown> = []) => (await client.query(text, values)).rows
    })
  )

const stagedSql = `SELECT id FROM fsm_bulk.jobs WHERE parent IS NULL AND state = 'staging'`

/** The staged submissions (their parent ids) in the store: not yet published, seen by no one but their submit. */
export const stagedSubmissions = (url: string) =>
  Effect.promise(async (): Promise<ReadonlyArray<string>> => {
    if (url.startsWith("redis")) {
      const client = new Redis(url)
      try {
        return await client.zrange("fsm-bulk:staging", 0, -1)
      } finally {
        await client.quit()
      }
    }
    const rows = await query(url, stagedSql)
    return (rows as Array<{ id: string }>).map((r) => r.id)
  })

/**
 * The staged submissions read through one connection kept for the scope, for a poll (a PostgreSQL session costs a
 * server process each, about 0.05 s of its CPU): a read that fails — the connection ended by a store fault, the
 * server restarted — drops the connection and is made once more on a new one, as `stagedSubmissions` would.
 */
export const stagedSubmissionsPoll = (
  url: string
): Effect.Effect<Effect.Effect<ReadonlyArray<string>>, never, Scope.Scope> =>
  url.startsWith("redis")
    ? Effect.map(
      // ioredis reconnects on its own; a command sent meanwhile waits for the connection. Its failed attempts are
      // not reported as unhandled errors.
      Effect.acquireRelease(
        Effect.sync(() => new Redis(url).on("error", () => undefined)),
        (client) => Effect.promise(() => client.quit())
      ),
      (client) => Effect.promise(() => client.zrange("fsm-bulk:staging", 0, -1))
    )
    : Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => ({ client: undefined as pg.Client | undefined })),
        (held) => Effect.promise(async () => void (await held.client?.end().catch(() => undefined)))
      ),
      (held) => {
        const read = async () => {
          if (held.client === undefined) {
            const client = new pg.Client({ connectionString: url })
            // A session the server ends makes the next query fail; the event itself must not crash the test.
            client.on("error", () => undefined)
            held.client = client
            await client.connect()
          }
          const rows = await held.client.query(stagedSql)
          return (rows.rows as Array<{ id: string }>).map((r) => r.id)
        }
        return Effect.promise(() =>
          read().catch(async () => {
            await held.client?.end().catch(() => undefined)
            held.client = undefined
            return read()
          })
        )
      }
    )

/** The queue's event log in its order: each event's name and job. */
export const queueEvents = (url: string): Promise<ReadonlyArray<{ readonly event: string; readonly job: string }>> =>
  url.startsWith("redis")
    ? (async () => {
      const client = new Redis(url)
      try {
        const entries = await client.xrange("bull:fsm-bulk:events", "-", "+")
        return entries.map(([, fields]) => {
          const map = new Map<string, string>()
          for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!)
          return { event: map.get("event") ?? "", job: map.get("jobId") ?? "" }
        })
      } finally {
        await client.quit()
      }
    })()
    : query(
      url,
      "SELECT event, data->>'jobId' AS job FROM bullmq.event WHERE queue = 'fsm-bulk' ORDER BY id"
    ) as Promise<Array<{ event: string; job: string }>>

export interface RunningWorker {
  readonly child: ChildProcess
  readonly stderr: () => string
  readonly exit: Promise<number | null>
}

/** `fsm-bulk worker ARGS`, killed with the scope (continued first, in case a test stopped it). */
export const startWorker = (
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv
): Effect.Effect<RunningWorker, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [bin, "worker", ...args], { env, stdio: ["ignore", "ignore", "pipe"] })
      let stderr = ""
      child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
      const exit = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
      return { child, stderr: () => stderr, exit }
    }),
    (w) =>
      Effect.sync(() => {
        if (w.child.exitCode !== null || w.child.signalCode !== null) return
        w.child.kill("SIGCONT")
        w.child.kill("SIGKILL")
      })
  )

/**
 * `fsm-bulk ARGS` in the background, its output readable as it comes and its end awaited (`ended`); killed with the
 * scope (continued first, in case a test stopped it).
 */
export const startCli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child: ChildProcess = spawn(process.execPath, [bin, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()))
      child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
      const ended = new Promise<Ran>((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })))
      return { child, stderr: () => stderr, ended, running: () => child.exitCode === null && child.signalCode === null }
    }),
    (c) =>
      Effect.sync(() => {
        if (!c.running()) return
        c.child.kill("SIGCONT")
        c.child.kill("SIGKILL")
      })
  )

/** Whether process `pid` is stopped (SIGSTOP): its state in /proc is T. */
export const isStopped = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T")
  } catch {
    return false
  }
}

/**
 * A `submit` (`args`) held between two steps of its staging (`FSM_FLEET_DEBUG_HOLD_STAGING=hold`: once its first
 * batch or piece of `stageBytes`, when given, is stored, it writes `hold.held` and waits until `hold` exists):
 * `held()` tells whether it is there now, `release()` lets it go on.
 */
export const startHeldSubmit = (
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  hold: string,
  stageBytes?: number
) =>
  Effect.map(
    startCli(args, {
      ...env,
      ...(stageBytes !== undefined ? { FSM_FLEET_STAGE_BYTES: String(stageBytes) } : {}),
      FSM_FLEET_DEBUG_HOLD_STAGING: hold
    }),
    (cli) => ({ ...cli, held: () => existsSync(`${hold}.held`), release: () => writeFileSync(hold, "") })
  )

/** Polls `check` every 100 ms until it holds, failing after `ms` with `what` and `detail()`. */
export const eventually = (what: string, check: () => Promise<boolean> | boolean, ms = 60_000, detail = () => "") =>
  Effect.promise(async () => {
    const until = Date.now() + ms
    while (!(await check())) {
      if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms\n${detail()}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  })

/**
 * An initialised fleet on `url` with account `acme` (the first of `accounts`) on a fresh sandbox, and `run`: the CLI
 * with the fleet's environment (plus `env`).
 */
export const acmeFleet = (
  url: string,
  options: {
    readonly accounts?: ReadonlyArray<{ readonly apiKey: string; readonly apiToken: string }>
    readonly env?: Record<string, string>
    /** `acme`'s own budget (`accounts add --rate`). */
    readonly rate?: string
  } = {}
) =>
  Effect.gen(function*() {
    const accounts = options.accounts ?? [{ apiKey: "acme-key", apiToken: "acme-token" }]
    const sandbox = yield* startDrillSandbox({ rate: { limit: 10_000, windowMs: 1_000 }, accounts: [...accounts] })
    const account = accounts[0]!
    const dir = yield* tempDir
    const env = fleetEnv(url, options.env)
    const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
      Effect.promise(() => runCli(args, { ...env, ...extra }))
    yield* initFleet(url, [{ name: "acme", baseUrl: sandbox.url, ...account, rate: options.rate }])
    return { sandbox, account, dir, env, run }
  })

/**
 * A fleet on `backend` with a lease of `leaseMs` and three accounts on one sandbox: `acme` and `gamma`, whose records
 * tests count (one per scenario), and `beta` for the jobs that keep workers busy. `submit` queues an import of
 * customers and gives its job id.
 */
export const acmeBetaFleet = (
  backend: Backend,
  leaseMs: number,
  /** Accounts' own budgets (`accounts add --rate`), by name. */
  rates: { readonly acme?: string; readonly beta?: string } = {}
) =>
  Effect.gen(function*() {
    const server = yield* startFleetBackend(backend)
    const sandbox = yield* startDrillSandbox({
      rate: { limit: 10_000, windowMs: 1_000 },
      accounts: [
        { apiKey: "sandbox-key", apiToken: "sandbox-token" },
        { apiKey: "beta-key", apiToken: "beta-token" },
        { apiKey: "gamma-key", apiToken: "gamma-token" }
      ]
    })
    const dir = yield* tempDir
    const env = fleetEnv(server.url, { FSM_FLEET_LEASE_MS: String(leaseMs) })
    const run = (args: ReadonlyArray<string>) => Effect.promise(() => runCli(args, env))
    yield* initFleet(server.url, [
      { name: "acme", baseUrl: sandbox.url, ...sandbox.accounts[0]!, rate: rates.acme },
      { name: "beta", baseUrl: sandbox.url, ...sandbox.accounts[1]!, rate: rates.beta },
      { name: "gamma", baseUrl: sandbox.url, ...sandbox.accounts[2]! }
    ])
    const submit = (args: ReadonlyArray<string>) =>
      Effect.map(run(["submit", "import", "customers", ...args, "--json"]), (r) => {
        assert.strictEqual(r.code, 0, r.stderr)
        return lastJson(r.stdout).job as string
      })
    return { server, sandbox, dir, env, run, submit }
  })

/** A step of PostgreSQL's EXPLAIN (FORMAT JSON) plan, as the index tests read it. */
export interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** A plan's steps, the outermost first. */
export const planNodes = (node: PlanNode): ReadonlyArray<PlanNode> => [node, ...(node.Plans ?? []).flatMap(planNodes)]

/** A client of the database at `url` for the scope. */
export const pgClient = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      return c
    }),
    (c) => Effect.promise(() => c.end())
  )

/** A fleet store of `backend` for the scope, on a server (or database) of its own, initialised (`fleet init`). */
export const initialisedStore = (backend: Backend) =>
  Effect.gen(function*() {
    const server = yield* startFleetBackend(backend)
    const store = yield* openStore(server.url)
    yield* store.init
    return store
  })

/**
 * A PostgreSQL fleet of its own for the scope, initialised (`fleet init`), its store and a client of its database: the
 * set-up of the tests that read the store's tables and plans directly.
 */
export const initialisedPostgres = Effect.gen(function*() {
  const server = yield* startPostgres
  const store = yield* openStore(server.url)
  yield* store.init
  const db = yield* pgClient(server.url)
  return { server, store, db }
})

/**
 * Stores and queues a job as a newer version's `submit` would: an import of customers for `account` in a job format
 * the workers of this build do not know (they refuse it: docs/fleet.md, "a job a worker cannot serve").
 */
export const queueNewerJob = (url: string, id: string, account = "acme") =>
  Effect.gen(function*() {
    yield* withStore(url, (store) =>
      store.addJob({
        id,
        kind: "import",
        account,
        resource: "customers",
        spec: { jobFormat: jobFormat + 1, resource: "customers" },
        rows: 1,
        parent: null
      }))
    yield* Effect.scoped(Effect.flatMap(openQueue(url), (queue) => enqueue(queue, id)))
  })

const nowSql = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms"
const redisNow = async (client: Redis) => {
  const [seconds, micros] = await client.time()
  return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000)
}

/**
 * The store's clock now, in ms (PostgreSQL's `clock_timestamp()`, redis-server's `TIME`), as its events are timed, on
 * one connection for the scope: for a window watched on it, read every 100 ms (a connection per read was a server
 * process each on PostgreSQL, 80 over an 8 s window).
 */
export const storeClock = (url: string): Effect.Effect<{ readonly now: () => Promise<number> }, never, Scope.Scope> =>
  url.startsWith("redis")
    ? Effect.map(
      Effect.acquireRelease(Effect.sync(() => new Redis(url)), (client) => Effect.promise(() => client.quit())),
      (client) => ({ now: () => redisNow(client) })
    )
    : Effect.map(sqlSession(url), (session) => ({
      now: async () => Number((await session.query(nowSql) as Array<{ ms: string }>)[0]!.ms)
    }))

/** The queue's event log with each event's time on the store's clock (a Redis stream id's ms, `created_at_ms`). */
export const timedEvents = async (
  url: string
): Promise<ReadonlyArray<{ readonly event: string; readonly job: string; readonly at: number }>> => {
  if (url.startsWith("redis")) {
    const client = new Redis(url)
    try {
      return await redisTimedEvents(client)
    } finally {
      await client.quit()
    }
  }
  return fromTimedRows(await query(url, timedEventsSql))
}

const timedEventsSql =
  "SELECT event, data->>'jobId' AS job, created_at_ms AS at FROM bullmq.event WHERE queue = 'fsm-bulk' ORDER BY id"

const fromTimedRows = (rows: ReadonlyArray<unknown>) =>
  (rows as Array<{ event: string; job: string; at: string }>).map((r) => ({ ...r, at: Number(r.at) }))

const redisTimedEvents = async (client: Redis) => {
  const entries = await client.xrange("bull:fsm-bulk:events", "-", "+")
  return entries.map(([id, fields]) => {
    const map = new Map<string, string>()
    for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!)
    return { event: map.get("event") ?? "", job: map.get("jobId") ?? "", at: Number(id.split("-")[0]) }
  })
}

/**
 * The queue's event log (`timed`: as `timedEvents` reads it) and the store's clock (`now`: as `storeClock`), read on
 * one connection kept for the scope: for a test that polls the log every 100 ms (a connection per read was a server
 * process each on PostgreSQL, and an ioredis client's connect each on Redis).
 */
export const queueLog = (url: string): Effect.Effect<
  {
    readonly timed: () => Promise<ReadonlyArray<{ readonly event: string; readonly job: string; readonly at: number }>>
    readonly now: () => Promise<number>
  },
  never,
  Scope.Scope
> =>
  url.startsWith("redis")
    ? Effect.map(
      Effect.acquireRelease(Effect.sync(() => new Redis(url)), (client) => Effect.promise(() => client.quit())),
      (client) => ({ timed: () => redisTimedEvents(client), now: () => redisNow(client) })
    )
    : Effect.map(sqlSession(url), (session) => ({
      timed: async () => fromTimedRows(await session.query(timedEventsSql)),
      now: async () => Number((await session.query(nowSql) as Array<{ ms: string }>)[0]!.ms)
    }))
