import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const bin = join(import.meta.dirname, "../../dist/bin.js")
let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "fsm-sandbox-cli-"))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("fsm-bulk sandbox", () => {
  it(
    "prints its address and credentials, serves, and stops on SIGTERM with the data file saved and exit code 0",
    async () => {
      const data = join(dir, "state.json")
      const child = spawn(process.execPath, [
        bin,
        "sandbox",
        "--port",
        "0",
        "--account",
        "acme:acme-secret",
        "--answer-delay",
        "10ms",
        "--data",
        data
      ], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on("exit", (code, signal) => resolve({ code, signal }))
      )
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const lines: Array<string> = []
      const reader = createInterface({ input: child.stdout })
      const firstLines = new Promise<void>((resolve) =>
        reader.on("line", (line) => {
          lines.push(line)
          if (lines.length === 3) resolve()
        })
      )
      try {
        await firstLines
        const m = /^listening on (http:\/\/127\.0\.0\.1:(\d+)\/v2)$/.exec(lines[0]!)
        assert.isNotNull(m, lines[0])
        assert.notStrictEqual(Number(m![2]), 0)
        assert.include(lines[1], "sandbox-key")
        assert.include(lines[1], "sandbox-token")
        assert.include(lines[2], "acme-secret")
        const url = m![1]!
        const login = await fetch(`${url}/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ apiKey: "acme", apiToken: "acme-secret" })
        })
        const token = ((await login.json()) as { result: { accessToken: string } }).result.accessToken
        const created = await fetch(`${url}/segments`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ description: "Varejo" })
        })
        assert.strictEqual(created.status, 201)
      } finally {
        child.kill("SIGTERM")
      }
      const { code, signal } = await exited
      assert.isNull(signal) // it stopped by itself, not killed by the signal
      assert.strictEqual(code, 0, stderr) // a stop asked for is the normal end, not an abort
      assert.include(stderr, `sandbox stopped; state saved to ${data}`)
      assert.notInclude(stderr, "interrupted")
      const saved = JSON.parse(readFileSync(data, "utf8"))
      assert.strictEqual(saved.accounts.acme.tables.segments[0].description, "Varejo")
    },
    60_000
  )

  it("a bad flag value stops with a message naming the flag and exit code 2", async () => {
    const cases = [
      ["--fail-rate", "2"],
      ["--account", "no-colon"]
    ] as const
    const runs = await Promise.all(
      cases.map(
        ([flag, value]) =>
          new Promise<{ flag: string; status: number | null; stdout: string; stderr: string }>((resolve) => {
            const child = spawn(process.execPath, [bin, "sandbox", "--port", "0", flag, value], {
              stdio: ["ignore", "pipe", "pipe"]
            })
            let stdout = ""
            let stderr = ""
            child.stdout.on("data", (d) => (stdout += d))
            child.stderr.on("data", (d) => (stderr += d))
            child.on("exit", (status) => resolve({ flag, status, stdout, stderr }))
          })
      )
    )
    for (const run of runs) {
      assert.strictEqual(run.status, 2, `${run.flag}: ${run.stderr}`)
      assert.include(run.stderr, run.flag)
      assert.strictEqual(run.stdout, "")
    }
  }, 60_000)
})
