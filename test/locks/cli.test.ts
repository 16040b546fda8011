/**
 * Concurrent runs and signals, with the built CLI as users run it: one writer per (server, account, resource) on
 * a machine (two imports of one file at once must not both create its rows), locks whose holder is gone or is now
 * another program, and what every signal that ends us leaves behind (no `.lock`, no `.tmp`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { accountOf } from "../../src/client/Api.js"
import { writerLockPath } from "../../src/import/Locks.js"
import { noFaults, type RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { put, readReport, runCli, spawnCli, startTestSandbox, tempDir, until } from "../import/support.js"
import { lastJson } from "../support.js"

const segmentsCsv = (n: number): string =>
  ["description", ...Array.from({ length: n }, (_, i) => `Segmento ${i + 1}`)].join("\n") + "\n"

const segments = (sandbox: RunningSandbox) =>
  Effect.map(sandbox.control.records("sandbox-key", "segments"), (rs) => rs.map((r) => r.description as string))

/** The writer lock file of `resource` at `sandbox` for its first account, under `stateDir`. */
const writerLockOf = (stateDir: string, sandbox: RunningSandbox, resource: string): string => {
  const before = process.env.FSM_BULK_STATE_DIR
  process.env.FSM_BULK_STATE_DIR = stateDir
  try {
    const account = accountOf(sandbox.accounts[0]!.apiKey)
    return writerLockPath(`${sandbox.url}`, account, resource)
  } finally {
    if (before === undefined) delete process.env.FSM_BULK_STATE_DIR
    else process.env.FSM_BULK_STATE_DIR = before
  }
}

/** Files a run directory or the lock folder still holds that a run must not leave: locks and `.tmp` files. */
const leftovers = (dir: string): ReadonlyArray<string> =>
  existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".lock") || n.endsWith(".tmp")) : []

const journalHas = (runDir: string, text: string) => () => {
  const path = Path.join(runDir, "journal.ndjson")
  return existsSync(path) && readFileSync(path, "utf8").includes(text)
}

/** A program that is not fsm-bulk, alive for the test (its pid is what a crashed run's lock may name). */
const otherProgram = Effect.acquireRelease(
  Effect.sync(() => spawn("sleep", ["300"], { stdio: "ignore" })),
  (child) => Effect.sync(() => child.kill("SIGKILL"))
)

describe("one writer per server, account and resource", () => {
  it.scopedLive(
    "two imports of one file into different run directories at once: the second is refused naming the first; one record per row",
    () =>
      Effect.gen(function*() {
        // Latency keeps the first import busy long enough for the second to meet its lock.
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 80 } })
        const dir = yield* tempDir
        const state = Path.join(dir, "state")
        const env = { FSM_BULK_STATE_DIR: state }
        const file = put(dir, "segmentos.csv", segmentsCsv(20))
        const runA = Path.join(dir, "run-a")
        const runB = Path.join(dir, "run-b")
        const a = spawnCli(["import", "segments", file, "--out", runA, "--concurrency", "1"], sandbox, dir, env)
        // The journal's header is written once the run holds its locks, before its first request. From then on
        // a slow server keeps it busy until the second has met its lock, however slowly the machine starts it.
        yield* until(journalHas(runA, "\"state\":\"header\""))
        yield* sandbox.control.setFaults({ latencyMs: 1_000 })

        const b = yield* runCli(["import", "segments", file, "--out", runB, "--json"], sandbox, dir, env)
        assert.isTrue(existsSync(writerLockOf(state, sandbox, "segments")), "the writer lock is in the state folder")
        assert.strictEqual(b.code, 2, b.stderr)
        assert.include(b.stderr, "another fsm-bulk process is writing segments of this account")
        assert.include(b.stderr, `pid ${a.child.pid}`)
        assert.include(b.stderr, `(import into ${runA}, since `)
        assert.strictEqual(lastJson(b.stdout).error.reason, "Locked")
        assert.isFalse(existsSync(Path.join(runB, "journal.ndjson")), "the refused run wrote no journal")
        yield* sandbox.control.setFaults({ latencyMs: 0 })

        const done = yield* Effect.promise(() => a.exit)
        assert.strictEqual(done.code, 0, a.stderr())
        const stored = yield* segments(sandbox)
        assert.strictEqual(stored.length, 20)
        assert.strictEqual(new Set(stored).size, 20)
        assert.deepStrictEqual(leftovers(Path.join(state, "locks")), [], "the writer lock is released")
        assert.deepStrictEqual(leftovers(runA), [])

        // Once the first has ended, the same import runs (and finds every row there: nothing is created twice).
        const again = yield* runCli(["import", "segments", file, "--out", runB], sandbox, dir, env)
        assert.strictEqual(again.code, 0, again.stderr)
        assert.strictEqual((yield* segments(sandbox)).length, 20)
      }),
    120_000
  )

  it.scopedLive(
    "locks naming a live pid of another program (reused after a crash) are stale: the import runs and takes them over",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const state = Path.join(dir, "state")
        const env = { FSM_BULK_STATE_DIR: state }
        const other = yield* otherProgram
        const file = put(dir, "segmentos.csv", segmentsCsv(3))
        const runDir = Path.join(dir, "run")
        mkdirSync(runDir)
        // A run directory's lock as older versions wrote it (pid only), naming the other program.
        writeFileSync(
          Path.join(runDir, ".lock"),
          JSON.stringify({
            pid: other.pid,
            host: os.hostname(),
            command: "import",
            started: "2026-11-20T10:00:00.000Z"
          })
        )
        // A writer lock naming the other program's pid with another process's start time.
        const writer = writerLockOf(state, sandbox, "segments")
        mkdirSync(Path.dirname(writer), { recursive: true })
        writeFileSync(
          writer,
          JSON.stringify({
            pid: other.pid,
            host: os.hostname(),
            command: "import",
            started: "2026-11-20T10:00:00.000Z",
            runDir: "/elsewhere",
            startTicks: "1",
            nonce: "0123"
          })
        )
        const cli = yield* runCli(["import", "segments", file, "--out", runDir], sandbox, dir, env)
        assert.strictEqual(cli.code, 0, cli.stderr)
        assert.strictEqual((yield* segments(sandbox)).length, 3)
        assert.isFalse(existsSync(Path.join(runDir, ".lock")))
        assert.isFalse(existsSync(writer))
        assert.strictEqual(other.exitCode, null, "the other program still runs")
      }),
    60_000
  )
})

describe("every signal that can end a run leaves no lock and no .tmp", () => {
  it.scopedLive(
    "SIGHUP (the terminal closed) stops an import like Ctrl-C: exit 3, locks and .tmp files gone, resume completes it",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 80 } })
        const dir = yield* tempDir
        const state = Path.join(dir, "state")
        const env = { FSM_BULK_STATE_DIR: state }
        const file = put(dir, "segmentos.csv", segmentsCsv(100))
        const runDir = Path.join(dir, "run")
        const cli = spawnCli(["import", "segments", file, "--out", runDir, "--concurrency", "1"], sandbox, dir, env)
        yield* until(journalHas(runDir, "\"state\":\"done\""))
        cli.child.kill("SIGHUP")
        const exit = yield* Effect.promise(() => cli.exit)
        assert.strictEqual(exit.code, 3, cli.stderr())
        assert.include(cli.stderr(), "SIGHUP: stopping")
        assert.deepStrictEqual(leftovers(runDir), [])
        assert.deepStrictEqual(leftovers(Path.join(state, "locks")), [])
        assert.isTrue(readReport(runDir).some((r) => r._status === "skipped"), "rows not sent are reported skipped")

        const resumed = yield* runCli(["resume", runDir], sandbox, dir, env)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.strictEqual((yield* segments(sandbox)).length, 100)
      }),
    120_000
  )

  for (const signal of ["SIGQUIT", "SIGUSR2"] as const) {
    it.scopedLive(
      `${signal} mid-run ends the import at once with 3, its reports' .tmp files and its locks removed`,
      () =>
        Effect.gen(function*() {
          const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 80 } })
          const dir = yield* tempDir
          const state = Path.join(dir, "state")
          const env = { FSM_BULK_STATE_DIR: state }
          const file = put(dir, "segmentos.csv", segmentsCsv(20))
          const runDir = Path.join(dir, "run")
          const cli = spawnCli(["import", "segments", file, "--out", runDir, "--concurrency", "1"], sandbox, dir, env)
          // The reports are written as rows end: their .tmp files exist while the run sends.
          yield* until(() =>
            journalHas(runDir, "\"state\":\"done\"")() && existsSync(Path.join(runDir, "report.csv.tmp"))
          )
          cli.child.kill(signal)
          const exit = yield* Effect.promise(() => cli.exit)
          assert.strictEqual(exit.code, 3, cli.stderr())
          assert.deepStrictEqual(leftovers(runDir), [])
          assert.deepStrictEqual(leftovers(Path.join(state, "locks")), [])
          const resumed = yield* runCli(["resume", runDir], sandbox, dir, env)
          assert.strictEqual(resumed.code, 0, resumed.stderr)
          assert.strictEqual((yield* segments(sandbox)).length, 20)
        }),
      120_000
    )
  }
})
