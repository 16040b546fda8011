/**
 * How much acknowledged data `fsm-bulk sandbox --data FILE` loses to a `kill -9` under load: a sandbox process
 * (built CLI) gets a stream of creates from several connections; it is killed at a random moment; FILE is read
 * back and every create answered 201 but missing from it is lost. Reports the age of the oldest lost answer at the
 * kill (the window the README states), over several rounds. What is kept is what a sandbox started again on
 * FILE holds (FILE and its change log).
 *
 *   node test/bench/sandbox-kill.mjs [rounds=5] [preload=20000] [writers=16] [runMs=4000]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { openSandbox } from "./sandbox.mjs"

const [rounds = 5, preload = 20_000, writers = 16, runMs = 4_000] = process.argv.slice(2).map(Number)
const bin = join(import.meta.dirname, "../../dist/bin.js")

/** A data file holding `n` customers already (a sandbox that has been used for a while). */
const preloaded = (file, n) => {
  const customers = Array.from(
    { length: n },
    (_, i) => ({
      id: i + 1,
      externalId: `PRE-${i + 1}`,
      name: `Cliente ${i + 1} com um nome comprido o bastante`,
      active: true
    })
  )
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      accounts: { "sandbox-key": { nextIds: { customers: n + 1 }, tables: { customers }, pendingAnswers: [] } }
    })
  )
}

const round = async (dir, index) => {
  const file = join(dir, `state-${index}.json`)
  preloaded(file, preload)
  const child = spawn(process.execPath, [bin, "sandbox", "--port", "0", "--rate-limit", "1000000/1s", "--data", file], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  const url = await new Promise((resolve) =>
    createInterface({ input: child.stdout }).once("line", (line) => resolve(/^listening on (\S+)$/.exec(line)[1]))
  )
  const login = await fetch(`${url}/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey: "sandbox-key", apiToken: "sandbox-token" })
  })
  const token = (await login.json()).result.accessToken
  const acked = new Map() // externalId → time the 201 arrived
  let stop = false
  let next = 0
  const writer = async () => {
    while (!stop) {
      const externalId = `W-${next++}`
      try {
        const res = await fetch(`${url}/customers`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ externalId, name: `Novo ${externalId}` })
        })
        await res.arrayBuffer()
        if (res.status === 201 && !stop) acked.set(externalId, performance.now())
      } catch {
        // The kill.
      }
    }
  }
  const running = Array.from({ length: writers }, writer)
  await new Promise((r) => setTimeout(r, runMs * (0.5 + Math.random() / 2)))
  stop = true
  const killedAt = performance.now()
  child.kill("SIGKILL")
  await Promise.all(running)
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", r)))
  const again = await openSandbox({ dataFile: file })
  const stored = new Set((await again.records("customers")).map((c) => c.externalId))
  await again.stop()
  const lost = [...acked].filter(([id]) => !stored.has(id))
  const oldest = lost.reduce((m, [, at]) => Math.max(m, killedAt - at), 0)
  return { acked: acked.size, lost: lost.length, oldestLostMs: Math.round(oldest) }
}

const dir = mkdtempSync(join(tmpdir(), "fsm-sandbox-kill-"))
try {
  const results = []
  for (let i = 0; i < rounds; i++) {
    const r = await round(dir, i)
    results.push(r)
    console.log(
      `round ${
        i + 1
      }: ${r.acked} creates answered 201, ${r.lost} lost; oldest lost answer ${r.oldestLostMs} ms before the kill`
    )
  }
  console.log(
    `worst: ${Math.max(...results.map((r) => r.oldestLostMs))} ms (preload ${preload} customers, ${writers} writers)`
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
