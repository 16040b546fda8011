/**
 * `resume` and `rerun` continue against the server the run was sent to (its journal's base URL), and only with
 * credentials the user paired with that server (--base-url / FSM_BASE_URL, or the credentials file's `baseUrl`):
 * the journal's URL alone never receives them (a run directory may come from anywhere, edited). A different URL
 * stops them with exit 2 naming both (unless --force-base-url), and a run sent to an embedded sandbox can only be
 * rehearsed again. Built CLI against sandboxes on loopback.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { importInto, put, readJournalLines, readReport, runCli, startTestSandbox, tempDir, writes } from "./support.js"

/** Cuts the journal as a kill -9 would: the answers of `rows` and the end of the run never written. */
const killedAt = (runDir: string, rows: ReadonlyArray<number>) => {
  const path = Path.join(runDir, "journal.ndjson")
  const kept = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .filter((l) => {
      const line = JSON.parse(l)
      return !(line.state === "end" || (line.state === "done" && rows.includes(line.row)))
    })
  writeFileSync(path, kept.map((l) => `${l}\n`).join(""))
}

/** Credentials only, as in a new shell: no FSM_BASE_URL. */
const credentialsOf = (sandbox: RunningSandbox) => ({
  FSM_API_KEY: sandbox.accounts[0]!.apiKey,
  FSM_API_TOKEN: sandbox.accounts[0]!.apiToken
})
const pointedAt = (sandbox: RunningSandbox) => ({ ...credentialsOf(sandbox), FSM_BASE_URL: sandbox.url })

/** A credentials file of `sandbox`'s account, with the base URL it is for when `baseUrl` is given. */
const credentialsFile = (dir: string, name: string, sandbox: RunningSandbox, baseUrl?: string) =>
  put(
    dir,
    name,
    JSON.stringify({
      apiKey: sandbox.accounts[0]!.apiKey,
      apiToken: sandbox.accounts[0]!.apiToken,
      ...(baseUrl !== undefined ? { baseUrl } : {})
    })
  )

const sent = (sandbox: RunningSandbox) => Effect.map(sandbox.control.requests, (log) => writes(log).length)

describe("resume continues against the run's own server", () => {
  it.scopedLive("credentials paired with the run's server go back to it, unpaired ones are refused; another URL is refused (exit 2) unless --force-base-url", () =>
    Effect.gen(function*() {
      const own = yield* startTestSandbox()
      const other = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\nK-3,Três\nK-4,Quatro\n")
      const runDir = Path.join(dir, "run")
      yield* importInto(own, {
        resource: "customers",
        file: put(dir, "first.csv", "externalId,name\nK-1,Um\nK-2,Dois\n"),
        runDir: Path.join(dir, "first")
      })
      yield* importInto(own, { resource: "customers", file, runDir })
      // As if killed while rows 4 and 5 were sent, and before they reached the server.
      killedAt(runDir, [4, 5])
      yield* importInto(own, {
        resource: "customers",
        file: put(dir, "d.csv", "externalId\nK-3\nK-4\n"),
        runDir: Path.join(dir, "d"),
        mode: "delete"
      })
      assert.strictEqual(readJournalLines(runDir)[0]!.baseUrl, own.url)

      const refused = yield* runCli(["resume", runDir], undefined, dir, pointedAt(other))
      assert.strictEqual(refused.code, 2, refused.stderr)
      assert.include(refused.stderr, `this run was sent to ${own.url}, but your credentials are for ${other.url}`)
      assert.include(refused.stderr, "--force-base-url")
      assert.strictEqual((yield* other.control.requests).length, 0)

      // Credentials that name no server are not sent to the journal's: refused before any request, naming it.
      const asked = (yield* own.control.requests).length
      const unpaired = yield* runCli(["resume", runDir], undefined, dir, credentialsOf(own))
      assert.strictEqual(unpaired.code, 2, unpaired.stderr)
      assert.include(unpaired.stderr, `this run was sent to ${own.url}, as its run directory says`)
      assert.include(unpaired.stderr, `--base-url ${own.url}`)
      assert.strictEqual((yield* own.control.requests).length, asked)

      // Credentials that carry their server's URL go back to it.
      const before = yield* sent(own)
      const resumed = yield* runCli(
        ["resume", runDir, "--credentials", credentialsFile(dir, "own.json", own, own.url)],
        undefined,
        dir
      )
      assert.strictEqual(resumed.code, 0, resumed.stderr)
      assert.notInclude(resumed.stderr, "embedded sandbox")
      // Rows 4 and 5 were looked up on the run's server, not found, and sent there.
      assert.strictEqual((yield* sent(own)) - before, 2)
      const stored = yield* own.control.records(own.accounts[0]!.apiKey, "customers")
      assert.deepStrictEqual(stored.map((c) => c.externalId).sort(), ["K-1", "K-2", "K-3", "K-4"])
      assert.strictEqual((yield* other.control.requests).length, 0)

      // Forced, it goes where it is told (and says the run changed servers).
      killedAt(runDir, [5])
      const forced = yield* runCli(["resume", runDir, "--force-base-url"], undefined, dir, pointedAt(other))
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.include(forced.stderr, `this run was sent to ${own.url}; it now continues against ${other.url}`)
      assert.strictEqual(yield* sent(other), 1)
    }))

  it.scopedLive("a run sent to the embedded sandbox resumes as a rehearsal, said so, and is refused against a real URL", () =>
    Effect.gen(function*() {
      const real = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\n")
      const runDir = Path.join(dir, "run")
      const run = yield* runCli(["import", "customers", file, "--out", runDir], undefined, dir)
      assert.strictEqual(run.code, 0, run.stderr)
      assert.isTrue(readJournalLines(runDir)[0]!.embedded)
      killedAt(runDir, [3])

      const refused = yield* runCli(["resume", runDir], undefined, dir, pointedAt(real))
      assert.strictEqual(refused.code, 2, refused.stderr)
      assert.include(refused.stderr, `this run was sent to an embedded, in-memory sandbox, not to ${real.url}`)
      assert.strictEqual((yield* real.control.requests).length, 0)

      const rehearsal = yield* runCli(["resume", runDir], undefined, dir)
      assert.strictEqual(rehearsal.code, 0, rehearsal.stderr)
      assert.include(rehearsal.stderr, "a new, empty embedded sandbox, a rehearsal only")
    }))
})

describe("rerun sends the rows again to the run's own server", () => {
  it.scopedLive("with FSM_BASE_URL it goes to the parent run's server; another URL is refused (exit 2) unless --force-base-url", () =>
    Effect.gen(function*() {
      const own = yield* startTestSandbox()
      const other = yield* startTestSandbox()
      const dir = yield* tempDir
      // K-2 exists already: created with --mode create, it fails (409) and is the row to rerun.
      yield* importInto(own, {
        resource: "customers",
        file: put(dir, "seed.csv", "externalId,name\nK-2,Dois\n"),
        runDir: Path.join(dir, "seed")
      })
      const runDir = Path.join(dir, "run")
      yield* importInto(own, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois novo\n"),
        runDir,
        mode: "create"
      })
      assert.deepStrictEqual(readReport(runDir).map((r) => r._status), ["created", "failed"])
      // Fixed: the row's key is freed on the server.
      yield* importInto(own, {
        resource: "customers",
        file: put(dir, "d.csv", "externalId\nK-2\n"),
        runDir: Path.join(dir, "d"),
        mode: "delete"
      })

      const refused = yield* runCli(["rerun", runDir, "--out", Path.join(dir, "r1")], undefined, dir, pointedAt(other))
      assert.strictEqual(refused.code, 2, refused.stderr)
      assert.include(
        refused.stderr,
        `the run being rerun was sent to ${own.url}, but your credentials are for ${other.url}`
      )
      assert.strictEqual((yield* other.control.requests).length, 0)

      const before = yield* sent(own)
      const rerun = yield* runCli(["rerun", runDir, "--out", Path.join(dir, "r2")], undefined, dir, pointedAt(own))
      assert.strictEqual(rerun.code, 0, rerun.stderr)
      assert.strictEqual((yield* sent(own)) - before, 1)
      assert.deepStrictEqual(readReport(Path.join(dir, "r2")).map((r) => `${r._row}:${r._status}`), ["3:created"])
      assert.strictEqual(readJournalLines(Path.join(dir, "r2"))[0]!.baseUrl, own.url)

      const forced = yield* runCli(
        ["rerun", runDir, "--out", Path.join(dir, "r3"), "--force-base-url"],
        undefined,
        dir,
        pointedAt(other)
      )
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.strictEqual(yield* sent(other), 1)
    }))
})

describe("a run directory from elsewhere", () => {
  it.scopedLive("whose journal names another host never gets your credentials sent there (rerun, resume, undo)", () =>
    Effect.gen(function*() {
      const prod = yield* startTestSandbox()
      const elsewhere = yield* startTestSandbox({ accounts: [{ apiKey: "x", apiToken: "y" }] })
      const dir = yield* tempDir
      const runDir = Path.join(dir, "received")
      yield* importInto(prod, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,\n"),
        runDir
      })
      // The journal, edited on the way: its base URL now names another host.
      const journal = Path.join(runDir, "journal.ndjson")
      writeFileSync(journal, readFileSync(journal, "utf8").split(prod.url).join(elsewhere.url))
      assert.strictEqual(readJournalLines(runDir)[0]!.baseUrl, elsewhere.url)

      const plain = credentialsFile(dir, "prod.json", prod)
      const paired = credentialsFile(dir, "prod-paired.json", prod, prod.url)
      for (
        const args of [
          ["rerun", runDir, "--credentials", plain, "--out", Path.join(dir, "r1")],
          ["rerun", runDir, "--credentials", paired, "--out", Path.join(dir, "r2")],
          ["resume", runDir, "--credentials", plain],
          ["undo", runDir, "--credentials", plain, "--out", Path.join(dir, "u1")]
        ]
      ) {
        const run = yield* runCli(args, undefined, dir)
        assert.strictEqual(run.code, 2, `${args.join(" ")}: ${run.stderr}`)
        assert.include(run.stderr, elsewhere.url)
        assert.include(run.stderr, "nothing was sent")
      }
      // Not a login, not a request: the other host heard nothing.
      assert.deepStrictEqual(yield* elsewhere.control.requests, [])

      // A credentials file for one server and --base-url naming another: refused too.
      const mixed = yield* runCli(
        ["import", "customers", Path.join(dir, "c.csv"), "--credentials", paired, "--out", Path.join(dir, "m")],
        undefined,
        dir,
        { FSM_BASE_URL: elsewhere.url }
      )
      assert.strictEqual(mixed.code, 2, mixed.stderr)
      assert.include(mixed.stderr, `are for ${prod.url}, but --base-url / FSM_BASE_URL is ${elsewhere.url}`)
      assert.deepStrictEqual(yield* elsewhere.control.requests, [])
    }))
})
