/**
 * Measured child processes: each scenario that weighs memory runs in a process of its own, whose peak RSS the
 * preloaded maxrss.cjs writes at exit; its wall time is taken here, from spawn to close (Node's start included,
 * as a user waits for it too).
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../../", import.meta.url))
export const bin = join(root, "dist/bin.js")
const preload = fileURLToPath(new URL("./maxrss.cjs", import.meta.url))

/**
 * Runs `node <args…>` to its end. Resolves with its exit code, wall time (ms), peak RSS (MiB), stdout and stderr;
 * `env` is added to a minimal environment (PATH only), so no FSM_* variable of the caller leaks in.
 */
export const runNode = (args, { env = {}, cwd = root } = {}) =>
  new Promise((resolve, reject) => {
    const scratch = mkdtempSync(join(tmpdir(), "fsm-bench-rss-"))
    const rssFile = join(scratch, "rss.json")
    const started = performance.now()
    const child = spawn(process.execPath, ["--require", preload, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", ...env, FSM_BENCH_RSS_FILE: rssFile },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code, signal) => {
      const ms = performance.now() - started
      let rssMiB
      try {
        rssMiB = JSON.parse(readFileSync(rssFile, "utf8")).maxRssKiB / 1024
      } catch {
        rssMiB = undefined
      }
      rmSync(scratch, { recursive: true, force: true })
      resolve({ code, signal, ms, rssMiB, stdout, stderr })
    })
  })

/** `runNode` of the built CLI; fails loudly (with its stderr) when the exit code is not `expect`. */
export const runCli = async (args, { env = {}, expect = 0 } = {}) => {
  const result = await runNode([bin, ...args], { env })
  if (result.code !== expect) {
    throw new Error(
      `fsm-bulk ${args.join(" ")} exited ${result.code ?? result.signal} (expected ${expect})\n${
        result.stderr.slice(-4000)
      }`
    )
  }
  return result
}

/** The last line of stdout parsed as JSON (the `--json` summary). */
export const jsonSummary = (stdout) => JSON.parse(stdout.trim().split("\n").at(-1))
