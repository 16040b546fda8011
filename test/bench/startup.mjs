/**
 * The start-up of a command: CPU (user + system), wall time and peak RSS of `--version`, `validate --help` and an
 * `import --dry-run` of a 3-row file against a sandbox on loopback, each run N times one after another; medians.
 * What every spawned command pays before it does anything (docs/benchmarks.md, "Start-up of a command").
 *
 *   node test/bench/startup.mjs [BIN] [N]      # BIN: dist/bin.js (build first), N: 20
 *
 * Not part of `npm run bench`: it measures the process, not a pipeline. Times come from /usr/bin/time (GNU).
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..")
const bin = Path.resolve(process.argv[2] ?? Path.join(root, "dist", "bin.js"))
const runs = Number(process.argv[3] ?? 20)
const dir = mkdtempSync(Path.join(tmpdir(), "fsm-startup-"))
const file = Path.join(dir, "clientes.csv")
writeFileSync(
  file,
  "externalId;name;email\nc1;Ana;ana@example.com\nc2;Bruno;bruno@example.com\nc3;Carla;carla@example.com\n"
)

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** One timed run: [cpu s, wall s, peak RSS MB, exit code]. */
const timed = (args, env) => {
  const out = Path.join(dir, "time.txt")
  try {
    execFileSync("/usr/bin/time", ["-o", out, "-f", "%U %S %e %M", process.execPath, bin, ...args], {
      env,
      stdio: "ignore"
    })
  } catch (e) {
    if (typeof e.status !== "number") throw e
  }
  const [u, s, e, m] = readFileSync(out, "utf8").trim().split("\n").at(-1).split(" ").map(Number)
  return [u + s, e, m / 1024]
}

const sandbox = spawn(process.execPath, [bin, "sandbox", "--port", "0", "--rate-limit", "100000/60s"], {
  stdio: ["ignore", "pipe", "pipe"]
})
const url = await new Promise((resolve, reject) => {
  let text = ""
  const look = (d) => {
    text += d.toString()
    const m = /http:\/\/127\.0\.0\.1:\d+\/v2/.exec(text)
    if (m !== null) resolve(m[0])
  }
  sandbox.stdout.on("data", look)
  sandbox.stderr.on("data", look)
  sandbox.on("exit", () => reject(new Error(`the sandbox ended: ${text}`)))
})

const env = { ...process.env, FSM_API_KEY: "sandbox-key", FSM_API_TOKEN: "sandbox-token" }
const commands = [
  ["--version", () => ["--version"]],
  ["validate --help", () => ["validate", "--help"]],
  [
    "import --dry-run (3 rows)",
    (i) => ["import", "customers", file, "--dry-run", "--base-url", url, "--out", Path.join(dir, `run-${i}`)]
  ]
]
console.log(
  `${bin}, ${runs} runs each, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`
)
for (const [name, args] of commands) {
  const rows = Array.from({ length: runs }, (_, i) => timed(args(i), env))
  const cpu = rows.map((r) => r[0])
  console.log(
    `${name.padEnd(28)} CPU median ${median(cpu).toFixed(2)} s (min ${Math.min(...cpu).toFixed(2)}), ` +
      `wall median ${median(rows.map((r) => r[1])).toFixed(2)} s, peak RSS median ${
        median(rows.map((r) => r[2])).toFixed(0)
      } MB`
  )
}
sandbox.kill("SIGTERM")
rmSync(dir, { recursive: true, force: true })
