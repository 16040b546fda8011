/**
 * What reaches the terminal (issue 28, defects): printed commands are shell-quoted, so a run directory with spaces,
 * quotes or `$` pastes as the same path (control characters from a server: test/secrets); a credentials file others can read is warned about once, with the chmod that fixes it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { chmodSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { put, runCli, startTestSandbox, tempDir } from "../import/support.js"

/** The words a POSIX shell makes of `line`. */
const shellWords = (line: string): ReadonlyArray<string> =>
  execFileSync("sh", ["-c", `set -- ${line}; printf '%s\\0' "$@"`], { encoding: "utf8" }).split("\0").slice(0, -1)

describe("terminal output", () => {
  it.scopedLive("the next: hint's command pastes into a shell as the same run directory", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        "externalId,name,email\nC-1,Loja,loja@x.com.br\nC-2,Outra,sem-arroba\n"
      )
      const runDir = Path.join(dir, "run $HOME `id` O'Brien")
      const run = yield* runCli(["import", "customers", file, "--out", runDir], sandbox, dir)
      assert.strictEqual(run.code, 1, run.stderr)
      const line = run.stderr.split("\n").find((l) => /^\s*fsm-bulk rerun /.test(l))
      assert.isDefined(line, run.stderr)
      assert.deepStrictEqual(shellWords(line!.trim()), ["fsm-bulk", "rerun", runDir, "--fixed", "CORRECTED.csv"])
    }))

  it.scopedLive("a credentials file others can read: one warning with chmod 600; none once it is private", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const account = sandbox.accounts[0]!
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", "externalId,name\nC-1,Loja\n")
      const credentials = Path.join(dir, "my creds.json")
      writeFileSync(credentials, JSON.stringify({ apiKey: account.apiKey, apiToken: account.apiToken }))
      chmodSync(credentials, 0o644)
      const args = ["import", "customers", file, "--dry-run", "--credentials", credentials]
      const env = { FSM_BASE_URL: sandbox.url }
      const open = yield* runCli([...args, "--out", Path.join(dir, "a")], undefined, dir, env)
      assert.strictEqual(open.code, 0, open.stderr)
      const warnings = open.stderr.split("\n").filter((l) => l.includes("chmod 600"))
      assert.strictEqual(warnings.length, 1, open.stderr)
      assert.include(warnings[0]!, "0644")
      assert.include(warnings[0]!, `chmod 600 '${credentials}'`)
      chmodSync(credentials, 0o600)
      const closed = yield* runCli([...args, "--out", Path.join(dir, "b")], undefined, dir, env)
      assert.strictEqual(closed.code, 0, closed.stderr)
      assert.notInclude(closed.stderr, "chmod")
    }))
})
