/**
 * A fleet worker's CPU to its ready line, for its first import job and for a second one, two builds side by side:
 * one worker at a time (the builds alternated) on a throwaway redis-server (test/bench/fleet.mjs) against the
 * sandbox, each job a 20-row customers file like the users' (Windows-1252, `;`, decimal commas) queued by `submit
 * import` once the worker is ready; CPU read from /proc at the ready line and at each job's `done` line. Shows where
 * the load of a job's code (fleet/JobRunner.ts: at the first job of its kind) falls. docs/benchmarks.md, "A fleet
 * worker's start without its jobs' code".
 *
 *   node test/bench/fleet-first-job.mjs OLD_BIN NEW_BIN [N]   # N: 5
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import * as Path from "node:path"
import { fleetKey, startRedis } from "./fleet.mjs"
import { f, median } from "./pair.mjs"
import { openSandbox } from "./sandbox.mjs"

const bins = [Path.resolve(process.argv[2]), Path.resolve(process.argv[3])]
const runs = Number(process.argv[4] ?? 5)
const dir = mkdtempSync(Path.join(tmpdir(), "fsm-first-job-"))
const rows = Array.from({ length: 20 }, (_, i) => `C-${i};Padaria S\xe3o Jo\xe3o ${i};-23,56${i}7`)
writeFileSync(
  Path.join(dir, "clientes.csv"),
  Buffer.from(["C\xf3digo;Nome;latitude", ...rows, ""].join("\r\n"), "latin1")
)
const cpuOf = (pid) => {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(s[11]) + Number(s[12])) / 100
}
console.log(`load average at start ${loadavg().map((l) => f(l)).join(" ")}`)
const server = await startRedis()
const sandbox = await openSandbox({ rate: { limit: 10000, windowMs: 1000 } })
try {
  const env = {
    PATH: process.env.PATH,
    NO_COLOR: "1",
    FSM_FLEET_URL: await server.database(),
    FSM_FLEET_KEY: fleetKey,
    FSM_API_KEY: sandbox.account.apiKey,
    FSM_API_TOKEN: sandbox.account.apiToken
  }
  execFileSync(process.execPath, [bins[1], "fleet", "init"], { env, stdio: "ignore" })
  execFileSync(process.execPath, [bins[1], "accounts", "add", "acme", "--base-url", sandbox.url], {
    env,
    stdio: "ignore"
  })
  // synchronous: the sandbox (this process) answers the worker once the job is queued; its CPU is not the worker's
  const submit = () =>
    execFileSync(process.execPath, [
      bins[1],
      "submit",
      "import",
      "customers",
      "clientes.csv",
      "--account",
      "acme",
      "--decimal",
      ","
    ], { env, cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  const seen = [[], []]
  for (let i = 0; i < runs; i++) {
    for (const b of [0, 1]) {
      const r = await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [bins[b], "worker", "--egress-id", `fj-${i}-${b}`], {
          env,
          stdio: ["ignore", "ignore", "pipe"]
        })
        let text = "", at = {}, jobs = []
        const waitFor = (re, key, then) => {
          if (at[key] === undefined && re.test(text)) {
            at[key] = cpuOf(child.pid)
            then()
          }
        }
        child.stderr.on("data", (d) => {
          text += d
          waitFor(/ ready/, "ready", () => jobs.push(submit()))
          if (jobs[0]) waitFor(new RegExp(`job ${jobs[0]} done`), "first", () => jobs.push(submit()))
          if (jobs[1]) waitFor(new RegExp(`job ${jobs[1]} done`), "second", () => child.kill("SIGTERM"))
        })
        child.on("exit", () =>
          at.second !== undefined
            ? resolve({ ready: at.ready, first: at.first - at.ready, second: at.second - at.first })
            : reject(new Error(text)))
      })
      seen[b].push(r)
    }
  }
  for (const b of [0, 1]) {
    const m = (k) => f(median(seen[b].map((r) => r[k])))
    console.log(
      `${b === 0 ? "A (old)" : "B (new)"}: CPU to ready ${m("ready")} s, first import job ${m("first")} s, second ${
        m("second")
      } s   runs (ready/first/second): ${seen[b].map((r) => `${f(r.ready)}/${f(r.first)}/${f(r.second)}`).join("  ")}`
    )
  }
} finally {
  await server.stop()
  await sandbox.stop()
}
console.log(`load average at end ${loadavg().map((l) => f(l)).join(" ")}`)
rmSync(dir, { recursive: true, force: true })
