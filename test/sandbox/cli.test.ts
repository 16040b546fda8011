import { Effect } from "effect"
import { spawn } from "node:child_process"
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { accountA, cliEnv, http, runCli, seedEverything, startTestSandbox } from "../export/support.js"

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
      ["--account", "no-colon"],
      ["--page-cap", "tasks=0"],
      ["--page-cap", "taks=50"]
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

describe("fsm-bulk sandbox --seed", () => {
  /** Runs `body` with the export of a sandbox account seeded with every resource, in a directory of its own. */
  const withExport = (body: (exported: string) => Promise<void>) =>
    Effect.runPromise(
      Effect.scoped(Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        yield* Effect.promise(() => seedEverything(sandbox))
        const exported = join(mkdtempSync(join(dir, "export-")), "out")
        const done = yield* Effect.promise(() => runCli(["export", "--out", exported], cliEnv(sandbox, accountA)))
        assert.strictEqual(done.code, 0, done.stderr)
        yield* Effect.promise(() => body(exported))
      }))
    )

  it("serves the exported records under their ids to every account", async () => {
    await withExport(async (exported) => {
      const child = spawn(process.execPath, [bin, "sandbox", "--port", "0", "--seed", exported, "--account", "a:b"], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const first = await new Promise<string>((resolve) =>
        createInterface({ input: child.stdout }).once("line", resolve)
      )
      try {
        const url = /^listening on (\S+)$/.exec(first)?.[1]
        assert.isDefined(url, `${first}\n${stderr}`)
        for (const account of [{ apiKey: "sandbox-key", apiToken: "sandbox-token" }, { apiKey: "a", apiToken: "b" }]) {
          const api = await http({ url } as RunningSandbox, account)
          const customers = await api.send("GET", "/customers?pageSize=100")
          assert.deepStrictEqual(
            customers.entityList.map((c: any) => `${c.id}:${c.externalId}:${c.segmentId}`),
            ["1:CLI-0001:1", "2:CLI-0002:0", "3:CLI-0003:0"]
          )
        }
        assert.match(stderr, /accounts start as the export in .*out \(\d+ records of \d+ lists\)/)
      } finally {
        child.kill("SIGTERM")
      }
      assert.strictEqual(await exited, 0)
    })
  }, 120_000)

  it("refuses an export that differs from its manifest, naming the file, with exit code 2", async () => {
    await withExport(async (exported) => {
      appendFileSync(join(exported, "users.csv"), "9,USR-9,Intrusa,intrusa\n")
      const run = await runCli(["sandbox", "--port", "0", "--seed", exported])
      assert.strictEqual(run.code, 2)
      assert.match(run.stderr, /users\.csv differs from the manifest/)
      assert.notMatch(run.stdout, /listening/)
    })
  }, 120_000)
})
