/**
 * Plan, then apply exactly that (issue 25, part 2), in process against the real sandbox over loopback: the apply
 * ends each row as the dry run predicted; a record edited on the server between plan and apply is `conflict` and
 * not sent; an edited input, another server or another account is refused before anything is sent; a rehearsal
 * on a copy, applied to the original, agrees with it row by row.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { statusOfShown } from "../../src/Status.js"
import {
  cp1252,
  importInto,
  put,
  readJournalLines,
  readReport,
  readSummary,
  rowStatuses,
  startTestSandbox,
  tempDir,
  writes
} from "../import/support.js"
import { applyRun, planCsv, planRun, seed } from "./support.js"

/** `2:would-update` → `2:updated`: a rehearsal's row by the status it stands for. */
const shownAsDone = (rowStatus: string) => {
  const [row, status] = rowStatus.split(":")
  return `${row}:${statusOfShown(status!)}`
}

const byKey = (records: ReadonlyArray<Record<string, unknown>>) =>
  Object.fromEntries(records.map((r) => [String(r["externalId"]), r]))

describe("plan, then apply exactly that", () => {
  it.scopedLive(
    "the plan holds each row's action, state and changes; apply ends every row as the dry run said",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        yield* seed(sandbox, dir)
        const file = put(dir, "clientes.csv", cp1252(planCsv))
        const planFile = Path.join(dir, "clientes.plan.json")
        const dry = yield* planRun(sandbox, file, Path.join(dir, "dry"), planFile)
        assert.strictEqual(dry.summary.dryRun, true)

        const plan = JSON.parse(readFileSync(planFile, "utf8"))
        assert.strictEqual(plan.format, "fsm-bulk-plan")
        assert.strictEqual(plan.source.sha256.length, 64)
        assert.strictEqual(plan.target.baseUrl, sandbox.url)
        assert.strictEqual(plan.mode, "upsert")
        const rows = Object.fromEntries(plan.plan.map((p: any) => [p.row, p]))
        assert.deepStrictEqual(plan.plan.map((p: any) => `${p.row}:${p.status}:${p.intent ?? "-"}`), [
          "2:updated:upsert",
          "3:unchanged:-",
          "4:updated:upsert",
          "5:created:upsert",
          "6:created:upsert",
          "7:invalid:-"
        ])
        assert.deepStrictEqual(rows[2].changes, [{ field: "note", from: "n1", to: "nota revisada" }])
        assert.deepStrictEqual(rows[4].changes, [{ field: "name", from: "Gama S.A.", to: "Gama Serviços S.A." }])
        assert.strictEqual(rows[2].state.read, "record")
        assert.strictEqual(rows[5].state.read, "absent")
        assert.match(rows[7].error, /name/)
        // Its report.html draws what would change, row by row.
        const dryHtml = readFileSync(Path.join(dir, "dry", "report.html"), "utf8")
        assert.include(dryHtml, "What would change")
        assert.match(
          dryHtml,
          /<td>2<\/td><td><span class="tag plan">would-update<\/span><\/td><td>\d*<\/td><td>note: [^<]*n1[^<]*nota revisada/
        )
        assert.match(
          dryHtml,
          /<td>5<\/td><td><span class="tag plan">would-create<\/span><\/td><td><\/td><td>a new record/
        )
        assert.notMatch(dryHtml, /<td>3<\/td><td><span/)
        // A dry run writes nothing.
        const before = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(before.length, 3)

        const writesBefore = writes(yield* sandbox.control.requests).length
        const applied = yield* applyRun(sandbox, planFile, Path.join(dir, "apply"), { approvedBy: "Ana Souza" })
        assert.deepStrictEqual(
          rowStatuses(readReport(Path.join(dir, "apply"))),
          rowStatuses(readReport(Path.join(dir, "dry"))).map(shownAsDone)
        )
        assert.strictEqual(applied.exitCode, 1) // the invalid row
        // Exactly the planned writes: the API's upsert (PUT /customers) of rows 2, 4, 5 and 6.
        const sent = writes(yield* sandbox.control.requests).slice(writesBefore)
        assert.deepStrictEqual(sent.map((e) => `${e.method} ${e.path}`), Array(4).fill("PUT /v2/customers"))
        const after = byKey(yield* sandbox.control.records("sandbox-key", "customers"))
        assert.strictEqual(after["K-1"]!["note"], "nota revisada")
        assert.strictEqual(after["K-3"]!["description"], "Gama Serviços S.A.")
        assert.strictEqual(after["K-5"]!["description"], "Épsilon Refrigeração")
        assert.isUndefined(after["K-6"])

        // The run records the plan's sha256 and the approver: journal header, summary, report.xlsx's summary.
        const header = readJournalLines(Path.join(dir, "apply"))[0]!
        assert.strictEqual(header.command, "apply")
        assert.strictEqual(header.plan.file, planFile)
        assert.strictEqual(header.plan.approvedBy, "Ana Souza")
        assert.strictEqual(header.plan.sha256.length, 64)
        const summary = readSummary(Path.join(dir, "apply"))
        assert.strictEqual(summary.plan.sha256, header.plan.sha256)
        assert.strictEqual(summary.plan.approvedBy, "Ana Souza")
        const html = readFileSync(Path.join(dir, "apply", "report.html"), "utf8")
        assert.include(html, header.plan.sha256)
        assert.include(html, "Ana Souza")
      }),
    120_000
  )

  it.scopedLive(
    "a record edited on the server since the plan is conflict and not sent; the other rows go",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        yield* seed(sandbox, dir)
        const planFile = Path.join(dir, "p.json")
        yield* planRun(sandbox, put(dir, "clientes.csv", cp1252(planCsv)), Path.join(dir, "dry"), planFile)

        // A row taken out of the plan (its sign-off refused) is never written.
        const plan = JSON.parse(readFileSync(planFile, "utf8"))
        writeFileSync(planFile, JSON.stringify({ ...plan, plan: plan.plan.filter((p: any) => p.row !== 6) }))
        // Someone else, meanwhile: K-1's e-mail (a field the file does not touch) and K-4 created.
        yield* importInto(sandbox, {
          resource: "customers",
          file: put(
            dir,
            "other.csv",
            "externalId,name,email\nK-1,Alfa Ltda,financeiro@alfa.com.br\nK-4,Delta (outro),\n"
          ),
          runDir: Path.join(dir, "other")
        })
        const writesBefore = writes(yield* sandbox.control.requests).length
        yield* applyRun(sandbox, planFile, Path.join(dir, "apply"))
        const report = readReport(Path.join(dir, "apply"))
        assert.deepStrictEqual(rowStatuses(report), [
          "2:conflict",
          "3:unchanged",
          "4:updated",
          "5:conflict",
          "6:conflict",
          "7:invalid"
        ])
        assert.match(report[0]!._error!, /changed on the server since the plan \(email\)/)
        assert.match(report[3]!._error!, /then absent, now id/)
        assert.strictEqual(report[4]!._error, "row 6 is not in the plan: nothing was sent")
        const sent = writes(yield* sandbox.control.requests).slice(writesBefore)
        assert.strictEqual(sent.length, 1)
        const after = byKey(yield* sandbox.control.records("sandbox-key", "customers"))
        assert.strictEqual(after["K-1"]!["note"], "n1")
        assert.deepStrictEqual(after["K-1"]!["email"], ["financeiro@alfa.com.br"])
        assert.strictEqual(after["K-4"]!["description"], "Delta (outro)")
        assert.strictEqual(after["K-3"]!["description"], "Gama Serviços S.A.")
        assert.isUndefined(after["K-5"])
      }),
    120_000
  )

  it.scopedLive(
    "an edited input, another server or another account is refused, nothing sent",
    () =>
      Effect.gen(function*() {
        const a = { apiKey: "conta-a", apiToken: "token-a" }
        const b = { apiKey: "conta-b", apiToken: "token-b" }
        const sandbox = yield* startTestSandbox({ accounts: [a, b] })
        const other = yield* startTestSandbox({ accounts: [a] })
        const dir = yield* tempDir
        yield* seed(sandbox, dir, "seed", "conta-a")
        const file = put(dir, "clientes.csv", cp1252(planCsv))
        const planFile = Path.join(dir, "p.json")
        yield* planRun(sandbox, file, Path.join(dir, "dry"), planFile, "conta-a")
        const writesBefore = writes(yield* sandbox.control.requests).length

        const otherAccount = yield* Effect.either(
          applyRun(sandbox, planFile, Path.join(dir, "b"), { apiKey: "conta-b" })
        )
        assert.isTrue(Either.isLeft(otherAccount))
        if (Either.isLeft(otherAccount)) assert.match(otherAccount.left.message, /another account of/)
        const otherServer = yield* Effect.either(applyRun(other, planFile, Path.join(dir, "other")))
        assert.isTrue(Either.isLeft(otherServer))
        if (Either.isLeft(otherServer)) {
          assert.include(otherServer.left.message, `made against ${sandbox.url}, not ${other.url}`)
          assert.include(otherServer.left.message, "--force-base-url")
        }
        assert.strictEqual(writes(yield* other.control.requests).length, 0)

        // One cell edited after the plan: refused, naming the file.
        writeFileSync(file, cp1252(planCsv.replace("nota revisada", "nota revisada 2")))
        const edited = yield* Effect.either(
          applyRun(sandbox, planFile, Path.join(dir, "edited"), { apiKey: "conta-a" })
        )
        assert.isTrue(Either.isLeft(edited))
        if (Either.isLeft(edited)) {
          assert.strictEqual(edited.left._tag, "UsageError")
          assert.include(edited.left.message, `${file} changed since the plan`)
        }
        assert.strictEqual(writes(yield* sandbox.control.requests).length, writesBefore)
      }),
    120_000
  )

  it.scopedLive(
    "rehearsal: plan against a copy, apply to the original, the two reports agree row by row",
    () =>
      Effect.gen(function*() {
        const original = yield* startTestSandbox()
        const copy = yield* startTestSandbox()
        const dir = yield* tempDir
        // The copy holds what the original holds: the same files imported in the same order.
        yield* seed(original, dir, "seed-original")
        yield* seed(copy, dir, "seed-copy")
        const planFile = Path.join(dir, "rehearsed.plan.json")
        yield* planRun(copy, put(dir, "clientes.csv", cp1252(planCsv)), Path.join(dir, "rehearsal"), planFile)
        const refused = yield* Effect.either(applyRun(original, planFile, Path.join(dir, "refused")))
        assert.isTrue(Either.isLeft(refused))
        yield* applyRun(original, planFile, Path.join(dir, "applied"), { otherTarget: true, approvedBy: "Bruno" })
        const rehearsal = readReport(Path.join(dir, "rehearsal"))
        const applied = readReport(Path.join(dir, "applied"))
        // The rehearsal's report shows what each row would get (`would-update`), the applied run's what it got.
        assert.deepStrictEqual(rowStatuses(applied), rowStatuses(rehearsal).map(shownAsDone))
        // Row by row: the same key, the same status, and for the rows that change a record the same changes.
        const plan = JSON.parse(readFileSync(planFile, "utf8"))
        assert.deepStrictEqual(
          applied.map((r, i) => `${r._row}:${r.externalId}:${r._status}:${JSON.stringify(plan.plan[i].changes ?? [])}`),
          rehearsal.map((r, i) =>
            `${r._row}:${r.externalId}:${statusOfShown(r._status!)}:${JSON.stringify(plan.plan[i].changes ?? [])}`
          )
        )
        const changed = byKey(yield* original.control.records("sandbox-key", "customers"))
        assert.strictEqual(changed["K-1"]!["note"], "nota revisada")
        assert.strictEqual(changed["K-5"]!["description"], "Épsilon Refrigeração")
        // The run says which target the plan was made on.
        assert.strictEqual(readSummary(Path.join(dir, "applied")).plan.target.baseUrl, copy.url)
      }),
    120_000
  )
})
