/**
 * What an idle fleet worker costs: for each build and backend (a throwaway PostgreSQL and a redis-server,
 * test/bench/fleet.mjs), one `worker` on a fleet with no jobs, its CPU (utime + stime from /proc/PID/stat) at its
 * ready line and after IDLE seconds more, the builds alternated (A, B, A, B…) so the machine's load falls on both
 * alike, and the CPU of the store's server (PostgreSQL's postmaster and backends, redis-server) over the same IDLE
 * seconds. Prints every run and the medians, with the load average. docs/benchmarks.md, "The test suite's time".
 *
 *   node test/bench/worker-idle.mjs OLD_BIN NEW_BIN [N] [pg|redis] [IDLE_S] [LEASE_MS]   # N 3, both, 20 s, 30000
 *
 * With PROFILE_DIR set, each worker runs under `--cpu-prof --cpu-prof-dir=PROFILE_DIR/BUILD-BACKEND-RUN`.
 */
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { loadavg } from "node:os"
import * as Path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fleetKey, startPostgres, startRedis } from "./fleet.mjs"
import { f, median } from "./pair.mjs"

const bins = [Path.resolve(process.argv[2]), Path.resolve(process.argv[3])]
const runs = Number(process.argv[4] ?? 3)
const backends = process.argv[5] !== undefined && process.argv[5] !== "both" ? [process.argv[5]] : ["pg", "redis"]
const idleS = Number(process.argv[6] ?? 20)
const lease = process.argv[7] ?? "30000"

/**
 * CPU of the store's server (utime + stime, seconds): its processes whose command line names `port` (the postmaster,
 * redis-server) and their children (PostgreSQL's backends, one a connection).
 */
const serverCpu = (port) => {
  const stats = []
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8")
      const fields = stat.replace(/^.*\) /, "").split(" ")
      stats.push({
        pid,
        ppid: fields[1],
        comm: /\((.*)\)/.exec(stat)[1],
        cmd,
        cpu: (Number(fields[11]) + Number(fields[12])) / 100
      })
    } catch {
      // gone meanwhile
    }
  }
  const roots = new Set(
    stats.filter((p) => /postgres|redis/.test(p.comm) && p.cmd.includes(String(port))).map((p) => p.pid)
  )
  return stats.filter((p) => roots.has(p.pid) || roots.has(p.ppid)).reduce((sum, p) => sum + p.cpu, 0)
}

/** utime + stime of `pid`, in seconds (fields 14 and 15 of /proc/PID/stat, 100 ticks a second). */
const cpuOf = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(stat[11]) + Number(stat[12])) / 100
}

/** One worker: CPU at its ready line and over the next `idleS` seconds, then SIGTERM. */
const idleWorker = (bin, env, profile, port) =>
  new Promise((resolve, reject) => {
    const args = profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profile}`]
    const child = spawn(process.execPath, [...args, bin, "worker", "--egress-id", `idle-${process.hrtime.bigint()}`], {
      stdio: ["ignore", "ignore", "pipe"],
      env
    })
    let text = ""
    let figures
    child.stderr.on("data", (d) => {
      text += d.toString()
      if (figures === undefined && / ready/.test(text)) {
        figures = { ready: cpuOf(child.pid), server: serverCpu(port) }
        void sleep(idleS * 1_000).then(() => {
          figures.idle = cpuOf(child.pid) - figures.ready
          figures.server = serverCpu(port) - figures.server
          child.kill("SIGTERM")
        })
      }
    })
    child.on("exit", () =>
      figures?.idle === undefined ? reject(new Error(`the worker ended early: ${text}`)) : resolve(figures))
  })

console.log(`load average at start ${loadavg().map((l) => f(l)).join(" ")}; idle ${idleS} s, lease ${lease} ms`)
for (const backend of backends) {
  const server = backend === "pg" ? await startPostgres() : await startRedis()
  try {
    const url = await server.database()
    const env = {
      PATH: process.env.PATH ?? "",
      NO_COLOR: "1",
      FSM_FLEET_URL: url,
      FSM_FLEET_KEY: fleetKey,
      FSM_FLEET_LEASE_MS: lease
    }
    const { execFileSync } = await import("node:child_process")
    execFileSync(process.execPath, [bins[0], "fleet", "init"], { env, stdio: "ignore" })
    const all = [[], []]
    for (let i = 0; i < runs; i++) {
      for (const b of [0, 1]) {
        const profile = process.env.PROFILE_DIR === undefined
          ? undefined
          : Path.join(process.env.PROFILE_DIR, `${b === 0 ? "old" : "new"}-${backend}-${i}`)
        const r = await idleWorker(bins[b], env, profile, new URL(url).port)
        all[b].push(r)
        console.log(
          `${backend} ${b === 0 ? "A" : "B"} run ${i + 1}: ready ${f(r.ready)} s CPU, idle ${idleS} s ` +
            `${f(r.idle)} s CPU (${f((100 * r.idle) / idleS, 1)} % of a core), the store's server ${
              f(r.server)
            } s; load ${f(loadavg()[0])}`
        )
      }
    }
    for (const b of [0, 1]) {
      console.log(
        `${backend} ${b === 0 ? "A" : "B"} medians: ready ${f(median(all[b].map((r) => r.ready)))} s, ` +
          `idle ${f(median(all[b].map((r) => r.idle)))} s per ${idleS} s, server ${
            f(median(all[b].map((r) => r.server)))
          } s`
      )
    }
  } finally {
    await server.stop()
  }
}
console.log(`load average at end ${loadavg().map((l) => f(l)).join(" ")}`)
