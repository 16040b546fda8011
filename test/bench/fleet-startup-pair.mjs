/**
 * Two builds of the CLI side by side on the fleet's commands, on each backend (a throwaway PostgreSQL and a
 * redis-server, test/bench/fleet.mjs): `accounts add`, `worker` from its spawn to its ready line (then SIGTERM),
 * `submit import` of a 3-row file, `status` and `wait` of a job that has ended (cancelled: `wait` exits 3 at once),
 * each run N times with the builds interleaved (A, B, A, B…) so the machine's load falls on both alike. Both builds
 * share each backend's fleet (initialised once by A). Prints every run (wall s, CPU s user + system, peak RSS MB)
 * and the medians. docs/benchmarks.md, "Start-up of a command" (the fleet's packages in the bundle).
 *
 *   node test/bench/fleet-startup-pair.mjs OLD_BIN NEW_BIN [N] [pg|redis]   # N: 3; both backends unless named
 *
 * Times come from /usr/bin/time (GNU); the worker's from its spawn to its ready line (CPU and RSS from /proc).
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import * as Path from "node:path"
import { fleetKey, startPostgres, startRedis } from "./fleet.mjs"
import { f, pair } from "./pair.mjs"

const bins = [Path.resolve(process.argv[2]), Path.resolve(process.argv[3])]
const runs = Number(process.argv[4] ?? 3)
const backends = process.argv[5] !== undefined ? [process.argv[5]] : ["pg", "redis"]
const dir = mkdtempSync(Path.join(tmpdir(), "fsm-fleet-startup-pair-"))
// a file like the users': Windows-1252, `;`, a Portuguese header
writeFileSync(Path.join(dir, "segmentos.csv"), Buffer.from("Descri\xe7\xe3o;\nAlfa;\nBeta;\nGama;\n", "latin1"))

const timeOf = (out) => {
  const [u, s, e, m] = readFileSync(out, "utf8").trim().split("\n").at(-1).split(" ").map(Number)
  return { wall: e, cpu: u + s, rss: m / 1024 }
}

/** One command to its end (exit 0, or `expected`): wall, CPU and peak RSS. */
const command = (bin, args, env, expected = 0) => {
  const out = Path.join(dir, "time.txt")
  try {
    execFileSync("/usr/bin/time", ["-o", out, "-f", "%U %S %e %M", process.execPath, bin, ...args], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      env
    })
  } catch (e) {
    if (e.status !== expected) throw new Error(`${args.join(" ")}: exit ${e.status}: ${e.stderr}`)
  }
  return timeOf(out)
}

/** The output of one command (for the job ids the scenarios need). */
const output = (bin, args, env) =>
  execFileSync(process.execPath, [bin, ...args], { cwd: dir, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

/** A worker from its spawn to its ready line: wall, and CPU and peak RSS read from /proc at that moment. */
const worker = (bin, env) =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [bin, "worker", "--egress-id", `pair-${process.hrtime.bigint()}`], {
      cwd: dir,
      stdio: ["ignore", "ignore", "pipe"],
      env
    })
    let text = ""
    let ready
    child.stderr.on("data", (d) => {
      text += d.toString()
      if (ready === undefined && / ready/.test(text)) {
        const wall = Number(process.hrtime.bigint() - started) / 1e9
        // utime and stime are fields 14 and 15 of /proc/PID/stat, in clock ticks (100 a second on Linux)
        const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))
        ready = { wall, cpu: (Number(stat[11]) + Number(stat[12])) / 100, rss: Number(hwm[1]) / 1024 }
        child.kill("SIGTERM")
      }
    })
    child.on("exit", () =>
      ready === undefined ? reject(new Error(`the worker ended before ready: ${text}`)) : resolve(ready))
  })

const pairOf = (name, run) => pair(name, runs, bins, run, 24)

console.log(`load average at start ${loadavg().map((l) => f(l)).join(" ")}`)
for (const backend of backends) {
  const server = backend === "pg" ? await startPostgres() : await startRedis()
  try {
    const env = {
      PATH: process.env.PATH ?? "",
      NO_COLOR: "1",
      FSM_FLEET_URL: await server.database(),
      FSM_FLEET_KEY: fleetKey,
      FSM_API_KEY: "chave",
      FSM_API_TOKEN: "segredo"
    }
    output(bins[0], ["fleet", "init"], env)
    output(bins[0], ["accounts", "add", "acme", "--base-url", "http://127.0.0.1:9/v2"], env)
    // a job that has ended, for `wait`
    const ended = output(bins[0], ["submit", "import", "segments", "segmentos.csv", "--account", "acme"], env).trim()
    output(bins[0], ["cancel", ended], env)
    const at = `${backend}:`.padEnd(7)
    await pairOf(
      `${at}accounts add`,
      (bin) => command(bin, ["accounts", "add", "acme", "--base-url", "http://127.0.0.1:9/v2"], env)
    )
    await pairOf(`${at}worker to ready`, (bin) => worker(bin, env))
    await pairOf(
      `${at}submit import`,
      (bin) => command(bin, ["submit", "import", "segments", "segmentos.csv", "--account", "acme"], env)
    )
    await pairOf(`${at}status`, (bin) => command(bin, ["status"], env))
    await pairOf(`${at}wait (ended)`, (bin) => command(bin, ["wait", ended], env, 3))
  } finally {
    await server.stop()
  }
}
console.log(`load average at end ${loadavg().map((l) => f(l)).join(" ")}`)
rmSync(dir, { recursive: true, force: true })
