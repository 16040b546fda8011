/**
 * `fsm-bulk sandbox --host` on an address other machines reach: the published default account is never served
 * by accident. Without `--account` it refuses to start (exit 2, saying what to do); with `--account` it serves
 * only the given accounts, and with `--allow-default-account` the default one too; it warns on stderr either way.
 * The built CLI, listening on 0.0.0.0 port 0, reached over loopback.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { assert, describe, it } from "vitest"

const bin = join(import.meta.dirname, "../../dist/bin.js")

interface Started {
  readonly url: string
  readonly stderr: () => string
  readonly stop: () => Promise<number | null>
}

/** Starts the sandbox and waits for its address (rewritten to loopback), or for its exit. */
const start = (
  args: ReadonlyArray<string>
): Promise<Started | { readonly code: number | null; readonly stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, "sandbox", ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)))
    void exited.then((code) => resolve({ code, stderr }))
    createInterface({ input: child.stdout }).once("line", (line) => {
      const m = /^listening on http:\/\/[^:]+:(\d+)\/v2$/.exec(line)
      assert.isNotNull(m, line)
      // stderr's settings line follows the accounts: wait for the "running" notice before reading it.
      const ready = setInterval(() => {
        if (!stderr.includes("sandbox running")) return
        clearInterval(ready)
        resolve({
          url: `http://127.0.0.1:${m![1]}/v2`,
          stderr: () => stderr,
          stop: () => {
            child.kill("SIGTERM")
            return exited
          }
        })
      }, 20)
    })
  })

const loginStatus = async (url: string, apiKey: string, apiToken: string) =>
  (await fetch(`${url}/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey, apiToken })
  })).status

describe("fsm-bulk sandbox on an address other machines reach", () => {
  it("refuses to serve only the published default account (exit 2, saying what to do)", async () => {
    const started = await start(["--host", "0.0.0.0", "--port", "0"])
    if ("url" in started) await started.stop()
    assert.notProperty(started, "url")
    const refused = started as { code: number | null; stderr: string }
    assert.strictEqual(refused.code, 2, refused.stderr)
    assert.include(refused.stderr, "--host 0.0.0.0: other machines can reach this address")
    assert.include(refused.stderr, "--account KEY:TOKEN")
    assert.include(refused.stderr, "--allow-default-account")
  }, 60_000)

  it("with --account it serves that account only, and warns", async () => {
    const started = (await start(["--host", "0.0.0.0", "--port", "0", "--account", "acme:acme-secret"])) as Started
    try {
      assert.property(started, "url")
      assert.include(started.stderr(), "WARNING: the sandbox listens on 0.0.0.0, which other machines can reach")
      assert.strictEqual(await loginStatus(started.url, "acme", "acme-secret"), 200)
      // The service answers unknown credentials with 404.
      assert.strictEqual(await loginStatus(started.url, "sandbox-key", "sandbox-token"), 404)
    } finally {
      assert.strictEqual(await started.stop(), 0)
    }
  }, 60_000)

  it(
    "with --allow-default-account it serves the default account, and warns that its credentials are published",
    async () => {
      const started = (await start(["--host", "0.0.0.0", "--port", "0", "--allow-default-account"])) as Started
      try {
        assert.property(started, "url")
        assert.include(started.stderr(), "the default account's credentials sandbox-key:sandbox-token are published")
        assert.strictEqual(await loginStatus(started.url, "sandbox-key", "sandbox-token"), 200)
      } finally {
        assert.strictEqual(await started.stop(), 0)
      }
    },
    60_000
  )

  it("on loopback nothing changes: the default account is served without a warning", async () => {
    const started = (await start(["--port", "0", "--account", "acme:acme-secret"])) as Started
    try {
      assert.notInclude(started.stderr(), "WARNING")
      assert.strictEqual(await loginStatus(started.url, "sandbox-key", "sandbox-token"), 200)
    } finally {
      await started.stop()
    }
  }, 60_000)
})
