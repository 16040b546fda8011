/**
 * CPU of a command and of every process it starts, by what each process is (measurement only, Linux).
 *
 *   node test/bench/proc-cpu.mjs [--every MS] [--json FILE] -- COMMAND ARGS…
 *   e.g. node test/bench/proc-cpu.mjs -- /work/bin/vt --project cli --no-isolate test/fleet/onboard-cli.test.ts
 *
 * Reads /proc every MS (100) and keeps, for each process that descends from COMMAND (known by its pid and start
 * time, so a reused pid is another process), its user + system CPU at its last sighting and its command line.
 * A process's CPU in its last interval before it ends is missed, and a process that lives less than one interval
 * may be missed whole: the sum is a lower bound; compare it with `/usr/bin/time` of the same run (printed as
 * "CPU of the tree by rusage", the CPU of every descendant reaped). Prints a table by kind of process:
 * vitest (its main process and workers: the tests, in-process runs, sandboxes), the spawned CLI by command, the
 * fleet's workers, PostgreSQL, redis-server, the rest; and each second's CPU of the whole tree (idle seconds show
 * where the run waits).
 */
import { spawn } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"

const argv = process.argv.slice(2)
const dash = argv.indexOf("--")
if (dash < 0 || dash === argv.length - 1) {
  console.error("usage: node test/bench/proc-cpu.mjs [--every MS] [--json FILE] -- COMMAND ARGS…")
  process.exit(2)
}
const opts = argv.slice(0, dash)
const option = (name, fallback) => {
  const i = opts.indexOf(name)
  return i < 0 ? fallback : opts[i + 1]
}
const every = Number(option("--every", "100"))
const jsonFile = option("--json", undefined)
const command = argv.slice(dash + 1)

const ticks = 100 // USER_HZ on Linux
const readStat = (pid) => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8")
    const close = text.lastIndexOf(")")
    const comm = text.slice(text.indexOf("(") + 1, close)
    const f = text.slice(close + 2).split(" ")
    // fields after the comm: state(0) ppid(1) … utime(11) stime(12) … starttime(19)
    return { comm, ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / ticks, start: f[19] }
  } catch {
    return undefined
  }
}
const readCmdline = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((s) => s !== "")
  } catch {
    return []
  }
}

const t0 = Date.now()
const child = spawn(command[0], command.slice(1), { stdio: "inherit" })
const ours = new Set([child.pid]) // live pids of the tree
const procs = new Map() // `${pid}@${start}` -> { pid, comm, args, cpu, first, last }
const perSecond = []
let lastTotal = 0

const sample = () => {
  const seen = []
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    const stat = readStat(pid)
    if (stat !== undefined) seen.push({ pid, ...stat })
  }
  // Parents before children is not guaranteed: repeat until no new member of the tree is found.
  const byPid = new Map(seen.map((s) => [s.pid, s]))
  const live = new Set()
  let grew = true
  while (grew) {
    grew = false
    for (const s of seen) {
      if (live.has(s.pid)) continue
      if (s.pid === child.pid || live.has(s.ppid) || (ours.has(s.pid) && procs.has(`${s.pid}@${s.start}`))) {
        live.add(s.pid)
        grew = true
      }
    }
  }
  const now = (Date.now() - t0) / 1000
  for (const pid of live) {
    const s = byPid.get(pid)
    const key = `${pid}@${s.start}`
    let p = procs.get(key)
    if (p === undefined) {
      p = { pid, comm: s.comm, args: readCmdline(pid), cpu: 0, first: now, last: now }
      procs.set(key, p)
    }
    // A node process's command line is read again until it names its script (a fork shows node's argv first).
    if (p.args.length < 2) p.args = readCmdline(pid)
    p.cpu = Math.max(p.cpu, s.cpu)
    p.last = now
  }
  ours.clear()
  for (const pid of live) ours.add(pid)
  const total = [...procs.values()].reduce((a, p) => a + p.cpu, 0)
  const second = Math.floor(now)
  perSecond[second] = (perSecond[second] ?? 0) + (total - lastTotal)
  lastTotal = total
}

const kind = (p) => {
  const a = p.args
  const script = a.findIndex((x) => x.endsWith("/bin.js") || x.endsWith("dist/bin.js"))
  if (script >= 0) {
    const rest = a.slice(script + 1)
    if (rest[0] === "worker") return ["fleet worker", "worker"]
    const words = rest.filter((x) => !x.startsWith("-") || x === "--version" || x === "--help").slice(0, 2)
    const name = ["submit", "accounts", "fleet", "keys", "sandbox"].includes(words[0])
      ? words.join(" ")
      : words[0] ?? ""
    return ["spawned CLI", name || rest.join(" ").slice(0, 30)]
  }
  if (a.some((x) => x.includes("tinypool"))) return ["vitest", "worker"]
  if (a.some((x) => x.includes("vitest"))) return ["vitest", "main"]
  if (
    p.comm === "postgres" || p.comm.startsWith("postgres") || ["initdb", "pg_ctl", "runuser", "su"].includes(p.comm)
  ) {
    return [
      "PostgreSQL",
      p.comm === "postgres" && a[0]?.startsWith("postgres:") ? a[0].split(" ").slice(0, 2).join(" ") : p.comm
    ]
  }
  if (p.comm === "redis-server") return ["redis-server", "redis-server"]
  if (p.comm === "npm" || p.comm === "npx" || a.some((x) => x.endsWith("/npx") || x.endsWith("npx-cli.js"))) {
    return ["npx/npm", p.comm]
  }
  return ["other", p.comm]
}

const timer = setInterval(sample, every)
sample()
const signals = ["SIGINT", "SIGTERM"]
for (const s of signals) process.on(s, () => child.kill(s))
child.on("exit", (code, signal) => {
  clearInterval(timer)
  const wall = (Date.now() - t0) / 1000
  const rusage = process.resourceUsage()
  const tree = (rusage.userCPUTime + rusage.systemCPUTime) / 1e6
  const groups = new Map()
  for (const p of procs.values()) {
    if (p.pid === process.pid) continue
    const [group, sub] = kind(p)
    const g = groups.get(group) ?? { n: 0, cpu: 0, subs: new Map() }
    g.n++
    g.cpu += p.cpu
    const s = g.subs.get(sub) ?? { n: 0, cpu: 0, max: 0 }
    s.n++
    s.cpu += p.cpu
    s.max = Math.max(s.max, p.cpu)
    g.subs.set(sub, s)
    groups.set(group, g)
  }
  const sum = [...groups.values()].reduce((a, g) => a + g.cpu, 0)
  const out = []
  out.push(
    `exit ${code ?? signal}, wall ${wall.toFixed(1)} s, load at end ${
      readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
    }`
  )
  out.push(
    `CPU seen by sampling (every ${every} ms): ${sum.toFixed(1)} s; the sampler’s own CPU (not in the sum): ${
      tree.toFixed(1)
    } s`
  )
  out.push("| processes | how many | CPU s | share | by command (n × mean CPU s, max) |")
  out.push("|---|---|---|---|---|")
  for (const [group, g] of [...groups.entries()].sort((a, b) => b[1].cpu - a[1].cpu)) {
    const subs = [...g.subs.entries()].sort((a, b) => b[1].cpu - a[1].cpu)
      .map(([k, s]) => `${k} ${s.n} × ${(s.cpu / s.n).toFixed(2)} (max ${s.max.toFixed(2)})`).join("; ")
    out.push(`| ${group} | ${g.n} | ${g.cpu.toFixed(1)} | ${((100 * g.cpu) / sum).toFixed(0)} % | ${subs} |`)
  }
  const secs = Array.from({ length: perSecond.length }, (_, i) => perSecond[i] ?? 0)
  const idle = secs.filter((c) => c < 0.25).length
  out.push(
    `seconds of the run: ${secs.length}; with under a quarter of a core busy: ${idle}; ` +
      `with over 1.5 cores: ${secs.filter((c) => c > 1.5).length}`
  )
  out.push(
    `CPU per 10 s: ${
      Array.from({ length: Math.ceil(secs.length / 10) }, (_, i) =>
        secs.slice(i * 10, i * 10 + 10).reduce((a, c) =>
          a + c, 0).toFixed(1)).join(" ")
    }`
  )
  console.error(out.join("\n"))
  if (jsonFile !== undefined) {
    writeFileSync(
      jsonFile,
      JSON.stringify({ command, wall, every, perSecond: secs, procs: [...procs.values()] }, null, 1)
    )
  }
  process.exit(code ?? 1)
})
