/**
 * The commands as a user runs them (`node dist/bin.js`, built first), against a sandbox on loopback: a SIGKILL in
 * the middle of a run then `resume`, a SIGINT that stops cleanly, and the exit-2 refusals that send nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { journalRows, untilInFlight } from "../drills/support.js"
import { lastJson } from "../support.js"
import {
  customersCsv,
  journalCount,
  layout,
  put,
  readJournalLines,
  readReport,
  readSummary,
  runCli,
  spawnCli,
  startTestSandbox,
  tempDir,
  until,
  writes
} from "./support.js"

describe("crash safety", () => {
  it.scopedLive(
    "a SIGKILL in the middle of a run, then resume: exactly one record per valid row and one report line per input row",
    () =>
      Effect.gen(function*() {
        // Latency keeps several creates in flight at any moment, so the kill catches some between send and answer.
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 120 } })
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", customersCsv(60, [7]))
        const runDir = Path.join(dir, "run")
        const cli = spawnCli(
          ["import", "customers", file, "--mode", "create", "--out", runDir, "--rate", "50/2s", "--concurrency", "8"],
          sandbox,
          dir
        )
        yield* untilInFlight(runDir, 10)
        cli.child.kill("SIGKILL")
        const killed = yield* Effect.promise(() => cli.exit)
        assert.strictEqual(killed.signal, "SIGKILL")

        const { done, inFlight } = journalRows(runDir)
        assert.isAbove(inFlight.size, 0, "the kill should catch rows in flight")
        assert.isBelow(done.size, 60)

        const resumed = yield* runCli(["resume", runDir, "--rate", "50/2s", "--json"], sandbox, dir)
        assert.strictEqual(resumed.code, 1, resumed.stderr) // row 9 is invalid
        const summary = lastJson(resumed.stdout)
        assert.strictEqual(summary.runDir, runDir)
        assert.strictEqual(summary.rows, 60)

        const stored = yield* sandbox.control.records("sandbox-key", "customers")
        const keys = stored.map((c) => c.externalId as string)
        assert.strictEqual(keys.length, 59)
        assert.strictEqual(new Set(keys).size, 59)

        const report = readReport(runDir)
        assert.strictEqual(report.length, 60)
        assert.deepStrictEqual(report.map((r) => Number(r._row)), Array.from({ length: 60 }, (_, i) => i + 2))
        for (const r of report) {
          if (r.externalId === "K-7") assert.strictEqual(r._status, "invalid")
          else assert.strictEqual(r._status, "created", `${r._row}: ${r._error}`)
        }
        // The rows in flight were looked up, not blindly sent again (a resend would have met a 409).
        for (const inFlightRow of inFlight) {
          const row = report.find((r) => Number(r._row) === inFlightRow)!
          assert.strictEqual(row._status, "created")
        }
        assert.deepStrictEqual(readSummary(runDir).counts.created, 59)
        // Rows done before the kill were not sent again: one create per record, plus at most the in-flight resends.
        const posts = writes(yield* sandbox.control.requests).filter((w) => w.method === "POST" && w.applied)
        assert.strictEqual(posts.length, 59)
      }),
    60_000
  )

  it.scopedLive(
    "SIGINT stops sending, writes the reports with the rows not reached, exits 3 and says how to resume",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 80 } })
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", customersCsv(80))
        const runDir = Path.join(dir, "run")
        const cli = spawnCli(["import", "customers", file, "--out", runDir, "--rate", "40/2s", "--json"], sandbox, dir)
        yield* until(() => journalCount(runDir, "done") >= 5)
        cli.child.kill("SIGINT")
        const exit = yield* Effect.promise(() => cli.exit)
        assert.strictEqual(exit.code, 3, cli.stderr())
        assert.match(cli.stderr(), /fsm-bulk resume/)
        const summary = lastJson(cli.stdout())
        assert.strictEqual(summary.interrupted, true)
        assert.strictEqual(summary.exitCode, 3)
        const report = readReport(runDir)
        assert.strictEqual(report.length, 80)
        const skipped = report.filter((r) => r._status === "skipped")
        assert.isAbove(skipped.length, 0)
        assert.match(skipped[0]!._error!, /resume/)
        assert.isTrue(
          report.every((r) => r._status === "created" || r._status === "skipped" || r._status === "in-doubt")
        )

        const resumed = yield* runCli(["resume", runDir, "--rate", "200/2s"], sandbox, dir)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        const after = readReport(runDir)
        assert.strictEqual(after.length, 80)
        assert.isTrue(after.every((r) => r._status === "created" || r._status === "updated"))
        assert.strictEqual((yield* sandbox.control.records("sandbox-key", "customers")).length, 80)
      }),
    60_000
  )
})

describe("exit codes and refusals", () => {
  it.scopedLive(
    "unreadable input and bad usage exit 2 with a message naming the file and the problem; nothing is sent",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const duplicate = put(dir, "dup.csv", "externalId,name,Name\nK-1,Um,Dois\n")
        const a = yield* runCli(["import", "customers", duplicate, "--out", Path.join(dir, "a")], sandbox, dir)
        assert.strictEqual(a.code, 2)
        assert.match(a.stderr, /dup\.csv/)
        assert.match(a.stderr, /name/i)

        const binary = put(dir, "bin.csv", Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 7, 8, 0, 0]))
        const b = yield* runCli(["import", "customers", binary, "--out", Path.join(dir, "b")], sandbox, dir)
        assert.strictEqual(b.code, 2)
        assert.match(b.stderr, /bin\.csv/)

        const c = yield* runCli(
          ["import", "teams", put(dir, "t.csv", "description\nA\n"), "--mode", "update"],
          sandbox,
          dir
        )
        assert.strictEqual(c.code, 2)
        assert.match(c.stderr, /cannot change an existing teams record/)

        const d = yield* runCli(["import", "clientez", duplicate], sandbox, dir)
        assert.strictEqual(d.code, 2)
        assert.match(d.stderr, /unknown resource "clientez"/) // (`clientes` is customers' Portuguese name)

        const e = yield* runCli(["resume", Path.join(dir, "nowhere")], sandbox, dir)
        assert.strictEqual(e.code, 2)
        assert.match(e.stderr, /nowhere/)

        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)
      }),
    60_000
  )

  it.scopedLive(
    "credentials rejected: exit 3, nothing sent, every row reported as not attempted; resume with the right ones finishes",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const runDir = Path.join(dir, "run")
        const file = put(dir, "c.csv", customersCsv(6))
        const aborted = yield* runCli(["import", "customers", file, "--out", runDir], sandbox, dir, {
          FSM_API_TOKEN: "wrong"
        })
        assert.strictEqual(aborted.code, 3, aborted.stderr)
        assert.match(aborted.stderr, /rejected the credentials/)
        assert.match(aborted.stderr, /fsm-bulk resume/)
        assert.notInclude(aborted.stderr, "wrong")
        const report = readReport(runDir)
        assert.strictEqual(report.length, 6)
        assert.isTrue(report.every((r) => r._status === "skipped"), JSON.stringify(report.map((r) => r._status)))
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)

        const resumed = yield* runCli(["resume", runDir], sandbox, dir)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.isTrue(readReport(runDir).every((r) => r._status === "created"))
        assert.strictEqual((yield* sandbox.control.records("sandbox-key", "customers")).length, 6)
      }),
    60_000
  )

  it.scopedLive(
    "credentials rejected while looking records or references up (before any write): exit 3 at once, no write, summary and journal say aborted",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const wrong = { FSM_API_TOKEN: "wrong" }
        const runs = [
          // Segments have no upsert in the API: the rows' keys are looked up first.
          { name: "segments", args: ["import", "segments", put(dir, "s.csv", "description\nVarejo\nAtacado\n")] },
          // An update finds each record by its key.
          { name: "update", args: ["import", "customers", put(dir, "u.csv", customersCsv(3)), "--mode", "update"] },
          // References are resolved with list calls before anything is sent.
          {
            name: "refs",
            args: [
              "import",
              "customers",
              put(dir, "r.csv", "externalId,name,segmentDescription\nK-1,Um,Varejo\nK-2,Dois,Varejo\n")
            ]
          }
        ]
        for (const run of runs) {
          const runDir = Path.join(dir, run.name)
          const cli = yield* runCli([...run.args, "--out", runDir, "--json"], sandbox, dir, wrong)
          assert.strictEqual(cli.code, 3, `${run.name}: ${cli.stderr}`)
          assert.match(cli.stderr, /rejected the credentials/)
          assert.match(cli.stderr, /the journal is kept: continue it with `fsm-bulk resume /)
          assert.notInclude(cli.stderr + cli.stdout, "wrong")

          const summary = readSummary(runDir)
          assert.strictEqual(summary.exitCode, 3, run.name)
          assert.isTrue(summary.interrupted, run.name)
          assert.match(summary.aborted, /rejected the credentials/, run.name)
          assert.strictEqual(summary.counts.failed, 0, run.name)
          assert.strictEqual(summary.counts.skipped, summary.rows, run.name)
          const report = readReport(runDir)
          assert.isTrue(
            report.every((r) => r._status === "skipped" && /not attempted: the run was aborted/.test(r._error!)),
            JSON.stringify(report)
          )
          const lines = readJournalLines(runDir)
          assert.deepStrictEqual(lines.map((l) => l.state), ["header", "end"], run.name)
          assert.isTrue(lines[1]!.interrupted)
          assert.match(lines[1]!.aborted, /rejected the credentials/)
        }
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)
      }),
    60_000
  )

  it.scopedLive(
    "validate checks offline and writes the same report; import exits 0 when every row ended well and prints the run directory",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "c.csv", "externalId,name,email\nK-1,Um,um@x.com.br\nK-2,Dois,nope\n")
        const v = yield* runCli(["validate", "customers", file, "--out", Path.join(dir, "v"), "--json"], undefined, dir)
        assert.strictEqual(v.code, 1, v.stderr)
        assert.deepStrictEqual(readReport(Path.join(dir, "v")).map((r) => r._status), ["valid", "invalid"])
        assert.strictEqual(lastJson(v.stdout).command, "validate")

        const ok = yield* runCli(["import", "customers", put(dir, "ok.csv", "externalId,name\nK-1,Um\n")], sandbox, dir)
        assert.strictEqual(ok.code, 0, ok.stderr)
        // The target is said first, before anything is sent, as a user checks it before a bulk write.
        assert.strictEqual(ok.stderr.split("\n")[0], `fsm-bulk: target ${sandbox.url} (budget 400/60s)`)
        const runDir = /run directory: (.+)/.exec(ok.stderr)![1]!.trim()
        assert.match(Path.basename(runDir), /^\d{8}T\d{6}Z-customers$/)
        assert.strictEqual(readSummary(runDir).counts.created, 1)
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 1)
      }),
    60_000
  )

  it.scopedLive("validate: Ctrl-C stops it at once with exit 3, saying so, and keeps no half-written report", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "c.csv", customersCsv(200_000))
      const out = Path.join(dir, "v")
      const cli = spawnCli(["validate", "customers", file, "--out", out], undefined, dir)
      // The report files appear (as .tmp) once the first rows are validated.
      yield* until(() => existsSync(Path.join(out, "report.csv.tmp")))
      cli.child.kill("SIGINT")
      const ended = yield* Effect.promise(() => cli.exit)
      assert.strictEqual(ended.code, 3, cli.stderr())
      assert.include(cli.stderr(), "SIGINT: stopping the validation; no report is kept")
      assert.isFalse(existsSync(out), "the run directory, created by this run, is removed with its partial reports")
    }))

  it.scopedLive("validate: decimal marks that disagree far into the file stop it (exit 2, row and column named), leaving no run directory", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // The first row settles the decimal comma; the contradiction comes thousands of rows (many reads) later.
      const rows = Array.from({ length: 5000 }, (_, i) => `K-${i},Cliente ${i},"-23,${i + 1}"`)
      rows.push(`K-5000,Cliente 5000,-23.5`)
      const file = put(dir, "c.csv", ["externalId,name,latitude", ...rows].join("\n") + "\n")
      const out = Path.join(dir, "v")
      const v = yield* runCli(["validate", "customers", file, "--out", out], undefined, dir)
      assert.strictEqual(v.code, 2, v.stderr)
      assert.include(
        v.stderr,
        `(row 5002, column "latitude"): numbers disagree on the decimal mark: "-23,1" (row 2, column "latitude") has a decimal comma`
      )
      assert.isFalse(existsSync(out), "the run directory was created by this run and holds nothing")
    }))
})

describe("validate as a user runs it", () => {
  it.scopedLive("the CLI notes an expense-attachments file's retired name column", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      put(dir, "recibo.jpg", Buffer.from("jpeg"))
      const file = put(dir, "r.csv", "id,file,name\n1,recibo.jpg,recibo.jpg\n")
      const run = yield* runCli(["validate", "expense-attachments", file], undefined, dir)
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(
        run.stdout + run.stderr,
        `column "name" is no longer used (the API keeps one receipt per expense, without a file name); its values are ignored`
      )
    }))

  it.scopedLive("validate refuses attachment paths outside the input's folder as import does, and a missing --attachments-root stops before any row (exit 2)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { book } = layout(dir)
      const file = put(
        book,
        "anexos.csv",
        "customerExternalId,file\nCLI-1,docs/contrato.pdf\nCLI-1,/proc/self/environ\nCLI-1,..\\..\\etc\\passwd\n"
      )
      const run = yield* runCli(
        ["validate", "customer-attachments", file, "--out", Path.join(dir, "v")],
        undefined,
        dir
      )
      assert.strictEqual(run.code, 1)
      const report = readReport(Path.join(dir, "v"))
      assert.deepStrictEqual(report.map((r) => r._status), ["valid", "invalid", "invalid"])
      assert.include(report[1]!._error, `file: "/proc/self/environ" is outside the attachments folder ${book}`)
      assert.include(report[2]!._error, `file: "..\\..\\etc\\passwd" is outside the attachments folder`)
      const missing = yield* runCli(
        [
          "validate",
          "customer-attachments",
          file,
          "--attachments-root",
          Path.join(dir, "nope"),
          "--out",
          Path.join(dir, "w")
        ],
        undefined,
        dir
      )
      assert.strictEqual(missing.code, 2)
      assert.include(missing.stderr, `--attachments-root: ${Path.join(dir, "nope")} does not exist`)
    }))
})
