/**
 * A survivor worker's memory (docs/benchmarks.md, "Memory of a survivor worker"): the peak RSS (VmHWM of
 * /proc/PID/status, read just before it stops) of a worker with `--jobs J` that runs 2 × J jobs at once, its J job
 * slots and its J takeover slots (Queue.ts, `takeoverSlots`) after the other worker was killed (-9) while it ran J
 * jobs, beside a worker of the same settings that ran J jobs alone. Each job is a part of `--part-rows` customers
 * (the import's columns of data.mjs), the workers' budget `--rate` (slow enough that the parts overlap), a lease of
 * 3 s. Prints each worker's VmHWM, the jobs it held at once, and the load.
 *
 *   npm run build && node test/bench/survivor-memory.mjs [--backend postgres|redis] [--jobs 2] [--part-rows 1500]
 *     [--rate 400/1s]
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { customersCsv, importColumns } from "./data.mjs"
import { fleetKey, initFleet, startStore, startWorker, stopWorkers } from "./fleet.mjs"
import { jsonSummary, runCli } from "./measure.mjs"
import { openSandbox } from "./sandbox.mjs"

const { values: flags } = parseArgs({
  options: {
    backend: { type: "string", default: "postgres" },
    jobs: { type: "string", default: "2" },
    "part-rows": { type: "string", default: "1500" },
    rate: { type: "string", default: "400/1s" }
  }
})
const jobs = Number(flags.jobs)
const partRows = Number(flags["part-rows"])
const load = () => readFileSync("/proc/loadavg", "utf8").trim()
const hwmMiB = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024

/** Waits until `check()` holds (polled every 100 ms), failing after `ms`. */
const until = async (what, check, ms = 300_000) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The jobs a worker has taken (its `lease` lines), and how many it has ended. */
const taken = (w) =>
  new Set([...w.stderr().matchAll(/job (\S+) \((?:import|chunk) customers\) lease/g)].map((m) => m[1]))
const ended = (w) => [...w.stderr().matchAll(/job \S+ (done|failed)/g)].length

const store = await startStore(flags.backend)
const sandbox = await openSandbox({ rate: { limit: 10_000, windowMs: 1_000 } })
const running = []
try {
  const url = await store.database()
  const env = { PATH: process.env.PATH ?? "", FSM_FLEET_URL: url, FSM_FLEET_KEY: fleetKey, FSM_FLEET_LEASE_MS: "3000" }
  await initFleet(env, [{ name: "bench", url: sandbox.url, ...sandbox.account }])
  const submit = async (parts) => {
    const file =
      (await customersCsv(parts * partRows, importColumns, `customers-survivor-${parts * partRows}.csv`)).path
    const r = await runCli([
      "submit",
      "import",
      "customers",
      file,
      "--account",
      "bench",
      "--chunk-rows",
      String(partRows),
      "--json"
    ], { env })
    return jsonSummary(r.stdout).job
  }
  const worker = (id) => {
    const w = startWorker(["--egress-id", id, "--jobs", String(jobs), "--rate", flags.rate], env)
    running.push(w)
    return w
  }

  // Alone: J jobs at once.
  const alone = worker("alone")
  await alone.ready
  const first = await submit(jobs)
  await runCli(["wait", first], { env })
  const aloneHwm = hwmMiB(alone.child.pid)
  console.log(`${flags.backend}: worker alone, ${taken(alone).size} jobs at once: VmHWM ${aloneHwm.toFixed(0)} MiB`)
  await stopWorkers([alone])

  // Two workers take J jobs each; one is killed; the survivor takes its J over.
  const before = load()
  const killed = worker("killed")
  const survivor = worker("survivor")
  await Promise.all([killed.ready, survivor.ready])
  const second = await submit(2 * jobs)
  await until("each worker runs J jobs", () => taken(killed).size >= jobs && taken(survivor).size >= jobs)
  killed.child.kill("SIGKILL")
  await until("the survivor holds 2 × J jobs", () => taken(survivor).size >= 2 * jobs)
  const atOnce = ended(survivor) === 0 ? 2 * jobs : `fewer than ${2 * jobs} (${ended(survivor)} ended before)`
  await runCli(["wait", second], { env, expect: null }).catch(() => undefined)
  await until("the submission ends", () => ended(survivor) >= 2 * jobs)
  const survivorHwm = hwmMiB(survivor.child.pid)
  console.log(
    `${flags.backend}: survivor, ${atOnce} jobs at once (${jobs} job slots + ${jobs} takeover slots): ` +
      `VmHWM ${survivorHwm.toFixed(0)} MiB`
  )
  console.log(`  load: ${before} → ${load()}; uptime ${execFileSync("uptime", { encoding: "utf8" }).trim()}`)
} finally {
  await stopWorkers(running)
  await sandbox.stop()
  await store.stop()
}
