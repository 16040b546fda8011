/**
 * Plan and apply as a user runs them (`node dist/bin.js`, built first), against a sandbox on loopback: the plan
 * printed for sign-off, the refusals' exit codes and messages, and a SIGKILL during `apply`, then `resume`: only
 * the plan's writes reach the server, and a row in conflict is never sent.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import {
  cp1252,
  importInto,
  journalCount,
  put,
  readJournalLines,
  readReport,
  readSummary,
  rowStatuses,
  runCli,
  spawnCli,
  startTestSandbox,
  tempDir,
  until,
  writes
} from "../import/support.js"
import { lastJson } from "../support.js"
import { planCsv, seed } from "./support.js"

describe("plan and apply from the command line", () => {
  it.scopedLive(
    "plan show prints the plan for sign-off; a changed input or another account exits 2, nothing sent",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({
          accounts: [{ apiKey: "sandbox-key", apiToken: "sandbox-token" }, { apiKey: "outra", apiToken: "outra-token" }]
        })
        const dir = yield* tempDir
        yield* seed(sandbox, dir)
        const file = put(dir, "clientes.csv", cp1252(planCsv))
        const planFile = Path.join(dir, "clientes.plan.json")
        const dry = yield* runCli(
          ["import", "customers", file, "--dry-run", "--plan", planFile, "--out", Path.join(dir, "dry")],
          sandbox,
          dir
        )
        assert.strictEqual(dry.code, 1, dry.stderr) // row 7 is invalid
        assert.include(dry.stderr, `plan: ${planFile}`)

        const shown = yield* runCli(["plan", "show", planFile, "--limit", "2"], sandbox, dir)
        assert.strictEqual(shown.code, 0, shown.stderr)
        const sha = (yield* Effect.promise(() => import("node:crypto"))).createHash("sha256").update(
          readFileSync(planFile)
        ).digest("hex")
        assert.include(shown.stdout, `plan ${planFile}`)
        assert.include(shown.stdout, `sha256     ${sha}`)
        assert.include(shown.stdout, `input      ${file} (sha256 `)
        assert.include(shown.stdout, `target     ${sandbox.url}, account `)
        assert.include(shown.stdout, "rows       6: ")
        assert.include(shown.stdout, "rows that send a write: 4")
        assert.include(shown.stdout, `  row 2  updated (upsert)  K-1  note: "n1" → "nota revisada"`)
        assert.include(shown.stdout, `  row 4  updated (upsert)  K-3  name: "Gama S.A." → "Gama Serviços S.A."`)
        assert.notInclude(shown.stdout, "row 5 ")
        assert.include(shown.stdout, "… and 2 more (--all lists every row")
        assert.include(shown.stdout, `fsm-bulk apply ${planFile} --approved-by NAME`)
        const invalid = yield* runCli(["plan", "show", planFile, "--status", "invalid,unchanged"], sandbox, dir)
        assert.include(invalid.stdout, "rows invalid,unchanged: 2")
        assert.include(invalid.stdout, "  row 3  unchanged  K-2")
        assert.match(invalid.stdout, /  row 7  invalid  name: /)

        const writesBefore = writes(yield* sandbox.control.requests).length
        const otherAccount = yield* runCli(["apply", planFile], sandbox, dir, {
          FSM_API_KEY: "outra",
          FSM_API_TOKEN: "outra-token"
        })
        assert.strictEqual(otherAccount.code, 2, otherAccount.stderr)
        assert.include(otherAccount.stderr, "was made against another account of")

        writeFileSync(file, cp1252(planCsv.replace("Delta Manutenção", "Delta Manutenção e Obras")))
        const edited = yield* runCli(["apply", planFile, "--json"], sandbox, dir)
        assert.strictEqual(edited.code, 2, edited.stderr)
        assert.include(edited.stderr, `${file} changed since the plan`)
        assert.strictEqual(lastJson(edited.stdout).exitCode, 2)
        assert.strictEqual(writes(yield* sandbox.control.requests).length, writesBefore)
      }),
    180_000
  )

  it.scopedLive(
    "a SIGKILL during apply, then resume: only the plan's writes are sent, a conflict never",
    () =>
      Effect.gen(function*() {
        // Latency keeps several writes in flight at any moment, so the kill catches some between send and answer.
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 120 } })
        const dir = yield* tempDir
        yield* seed(sandbox, dir)
        const rows = Array.from({ length: 40 }, (_, i) => `K-${i + 10};Cliente Número ${i + 10};nova`)
        const file = put(
          dir,
          "clientes.csv",
          cp1252(`externalId;name;note\r\n${rows.join("\r\n")}\r\nK-1;Alfa Ltda;nota revisada\r\n`)
        )
        const planFile = Path.join(dir, "p.json")
        const dry = yield* runCli(
          ["import", "customers", file, "--dry-run", "--plan", planFile, "--out", Path.join(dir, "dry")],
          sandbox,
          dir
        )
        assert.strictEqual(dry.code, 0, dry.stderr)
        // K-1 (the last row) is edited on the server after the plan.
        yield* importInto(sandbox, {
          resource: "customers",
          file: put(dir, "other.csv", "externalId,name,note\nK-1,Alfa Ltda,editado por outra pessoa\n"),
          runDir: Path.join(dir, "other")
        })
        const writesBefore = writes(yield* sandbox.control.requests).length

        const runDir = Path.join(dir, "apply")
        const cli = spawnCli(
          ["apply", planFile, "--approved-by", "Ana", "--out", runDir, "--rate", "50/2s", "--concurrency", "8"],
          sandbox,
          dir
        )
        yield* until(() => journalCount(runDir, "done") >= 8, 60_000)
        cli.child.kill("SIGKILL")
        const killed = yield* Effect.promise(() => cli.exit)
        assert.strictEqual(killed.signal, "SIGKILL")
        // K-1, the last row, was not reached: it is the resume that finds it in conflict.
        assert.isBelow(journalCount(runDir, "done"), 30)

        const resumed = yield* runCli(["resume", runDir, "--rate", "50/2s", "--json"], sandbox, dir)
        assert.strictEqual(resumed.code, 1, resumed.stderr) // the conflict
        assert.strictEqual(lastJson(resumed.stdout).plan.approvedBy, "Ana")
        assert.include(
          resumed.stderr,
          "rows in conflict no longer match the plan (see _error); plan them again: fsm-bulk import customers"
        )
        assert.notInclude(resumed.stderr, "--overwrite")
        const report = readReport(runDir)
        assert.deepStrictEqual(rowStatuses(report), [...rows.map((_, i) => `${i + 2}:created`), "42:conflict"])
        const stored = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(stored.length, 43)
        assert.strictEqual(stored.find((c) => c["externalId"] === "K-1")!["note"], "editado por outra pessoa")
        // Only planned writes: one PUT per created row at most (the in-flight rows were looked up, not resent blindly)
        // and none for K-1.
        const sent = writes(yield* sandbox.control.requests).slice(writesBefore).filter((w) => w.applied)
        assert.isAtMost(sent.length, 40)
        assert.isTrue(sent.every((w) => w.method === "PUT" && w.path === "/v2/customers"))
        const journal = readJournalLines(runDir)
        assert.isTrue(journal.some((l) => l.state === "resumed"))
        assert.isFalse(journal.some((l) => l.state === "sending" && l.row === 42))
        assert.strictEqual(readSummary(runDir).plan.file, planFile)
      }),
    180_000
  )

  it.scopedLive(
    "a plan read through a mapping profile applies with it; a profile edited after the plan exits 2",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        // The customer's own sheet: a title row, Portuguese headers, a footer.
        const file = put(
          dir,
          "planilha.csv",
          cp1252(
            "Clientes ativos em 27/11/2026;;\r\nCódigo;Razão;Observação\r\nC-1;Padaria Pão Quente;cliente antigo\r\n" +
              "C-2;Oficina São José;\r\nTotal: 2;;\r\n"
          )
        )
        const profile = put(
          dir,
          "planilha.map.json",
          JSON.stringify({
            resource: "customers",
            columns: { Código: "externalId", Razão: "name", Observação: "note" }
          })
        )
        const planFile = Path.join(dir, "p.json")
        const dry = yield* runCli(
          ["import", "customers", file, "--map", profile, "--dry-run", "--plan", planFile, "--out", "dry"],
          sandbox,
          dir
        )
        assert.strictEqual(dry.code, 0, dry.stderr)
        const plan = JSON.parse(readFileSync(planFile, "utf8"))
        assert.strictEqual(plan.read.map.file, profile)
        assert.strictEqual(plan.read.map.profile.columns["Código"], "externalId")
        assert.deepStrictEqual(plan.plan.map((p: any) => `${p.row}:${p.status}:${p.key}`), [
          "3:created:C-1",
          "4:created:C-2"
        ])

        writeFileSync(profile, readFileSync(profile, "utf8") + "\n")
        const edited = yield* runCli(["apply", planFile], sandbox, dir)
        assert.strictEqual(edited.code, 2, edited.stderr)
        assert.include(edited.stderr, `${profile}: the mapping profile changed since the plan`)
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)

        writeFileSync(profile, readFileSync(profile, "utf8").trimEnd())
        const applied = yield* runCli(["apply", planFile, "--approved-by", "João", "--out", "apply"], sandbox, dir)
        assert.strictEqual(applied.code, 0, applied.stderr)
        assert.include(applied.stderr, `applied plan ${planFile} (sha256 `)
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(dir, "apply"))), ["3:created", "4:created"])
        const stored = yield* sandbox.control.records("sandbox-key", "customers")
        assert.deepStrictEqual(stored.map((c) => c["externalId"]).sort(), ["C-1", "C-2"])
      }),
    180_000
  )
  it.scopedLive(
    "a plan made on the embedded sandbox applies to the embedded sandbox (its address is new each time)",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", cp1252("externalId;name\r\nK-1;Alfa Ltda\r\nK-2;Beta & Filhos\r\n"))
        const planFile = Path.join(dir, "clientes.plan.json")
        const dry = yield* runCli(
          ["import", "customers", file, "--dry-run", "--plan", planFile, "--out", "dry"],
          undefined,
          dir
        )
        assert.strictEqual(dry.code, 0, dry.stderr)
        assert.strictEqual(JSON.parse(readFileSync(planFile, "utf8")).target.embedded, true)
        const applied = yield* runCli(["apply", planFile, "--out", "apply"], undefined, dir)
        assert.strictEqual(applied.code, 0, applied.stderr)
        assert.include(applied.stderr, "a rehearsal only")
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(dir, "apply"))), ["2:created", "3:created"])
      }),
    180_000
  )
})
