/**
 * Two builds of the CLI side by side: `--version`, `--help`, `validate` of a 3-row file and `sandbox` from its
 * start to its ready line (then SIGTERM), each run N times with the builds interleaved (A, B, A, B…) so the
 * machine's load falls on both alike. Prints every run (wall s, CPU s user + system, peak RSS MB) and the medians.
 * docs/benchmarks.md, "Start-up of a command" (the bundle's before and after).
 *
 *   node test/bench/startup-pair.mjs OLD_BIN NEW_BIN [N]     # N: 3; e.g. a worktree of the unbundled commit
 *
 * Times come from /usr/bin/time (GNU); the sandbox's from its spawn to its ready line (CPU and RSS from /proc).
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import * as Path from "node:path"
import { f, pair } from "./pair.mjs"

const bins = [Path.resolve(process.argv[2]), Path.resolve(process.argv[3])]
const runs = Number(process.argv[4] ?? 3)
const dir = mkdtempSync(Path.join(tmpdir(), "fsm-startup-pair-"))
writeFileSync(Path.join(dir, "segmentos.csv"), Buffer.from("Descri\xe7\xe3o;\nAlfa;\nBeta;\nGama;\n", "latin1"))

const timeOf = (out) => {
  const [u, s, e, m] = readFileSync(out, "utf8").trim().split("\n").at(-1).split(" ").map(Number)
  return { wall: e, cpu: u + s, rss: m / 1024 }
}

/** One command to its end: wall, CPU and peak RSS. */
const command = (bin, args) => {
  const out = Path.join(dir, "time.txt")
  execFileSync("/usr/bin/time", ["-o", out, "-f", "%U %S %e %M", process.execPath, bin, ...args], {
    cwd: dir,
    stdio: "ignore",
    env: { ...process.env, NO_COLOR: "1" }
  })
  return timeOf(out)
}

/** The sandbox from its spawn to its ready line: wall, and CPU and peak RSS read from /proc at that moment. */
const sandbox = (bin) =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [bin, "sandbox", "--port", "0"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" }
    })
    let text = ""
    let ready
    const look = (d) => {
      text += d.toString()
      if (ready === undefined && /http:\/\/127\.0\.0\.1:\d+\/v2/.test(text)) {
        const wall = Number(process.hrtime.bigint() - started) / 1e9
        // utime and stime are fields 14 and 15 of /proc/PID/stat, in clock ticks (100 a second on Linux)
        const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))
        ready = { wall, cpu: (Number(stat[11]) + Number(stat[12])) / 100, rss: Number(hwm[1]) / 1024 }
        child.kill("SIGTERM")
      }
    }
    child.stdout.on("data", look)
    child.stderr.on("data", look)
    child.on("exit", () =>
      ready === undefined ? reject(new Error(`the sandbox ended before ready: ${text}`)) : resolve(ready))
  })

const scenarios = [
  ["--version", (bin) => command(bin, ["--version"])],
  ["--help", (bin) => command(bin, ["--help"])],
  [
    "validate (3 rows)",
    (bin) => command(bin, ["validate", "segments", "segmentos.csv", "--out", `v-${Math.random()}`])
  ],
  ["sandbox to ready", sandbox]
]

console.log(`load average at start ${loadavg().map((l) => f(l)).join(" ")}`)
for (const [name, run] of scenarios) await pair(name, runs, bins, run)
console.log(`load average at end ${loadavg().map((l) => f(l)).join(" ")}`)
rmSync(dir, { recursive: true, force: true })
