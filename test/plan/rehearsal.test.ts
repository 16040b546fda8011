/**
 * The whole rehearsal of issue 25, in process against two sandboxes over loopback: the customer's account is
 * exported, a copy is started from that export (`sandbox --seed`), the file is planned against the copy (`import
 * --dry-run --plan`), and the approved plan is applied to the account itself (`apply --force-base-url`, the plan
 * having been made on another server). The two runs' reports agree row by row: key, status, record id.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { readExportCopy } from "../../src/export/Copy.js"
import { statusOfShown } from "../../src/Status.js"
import { cp1252, put, readReport, readSummary, startTestSandbox, tempDir } from "../import/support.js"
import { applyRun, exportTo, planCsv, planRun, seed } from "./support.js"

describe("rehearse on a copy of the account, apply the approved plan to the account", () => {
  it.scopedLive(
    "export → sandbox --seed → plan on the copy → apply to the original: the reports agree row by row",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const original = yield* startTestSandbox()
        yield* seed(original, dir)
        const exported = Path.join(dir, "export")
        yield* exportTo(original, exported)
        const copy = yield* startTestSandbox({ copy: yield* readExportCopy(exported) })
        assert.notStrictEqual(copy.url, original.url)

        const planFile = Path.join(dir, "clientes.plan.json")
        yield* planRun(copy, put(dir, "clientes.csv", cp1252(planCsv)), Path.join(dir, "rehearsal"), planFile)
        // The rehearsal wrote nothing to the copy, and nothing reached the account.
        assert.strictEqual((yield* copy.control.records("sandbox-key", "customers")).length, 3)
        yield* applyRun(original, planFile, Path.join(dir, "applied"), { otherTarget: true, approvedBy: "Ana Souza" })

        // Row by row: the same key and status; and every record the plan read on the copy is the record the apply
        // wrote on the account (the copy kept the account's ids).
        const rehearsal = readReport(Path.join(dir, "rehearsal"))
        const applied = readReport(Path.join(dir, "applied"))
        const keyStatus = (r: Record<string, string>) => `${r.externalId}:${r._status}`
        // The rehearsal's report says what each row would get (`would-update`), the apply's what it got.
        assert.deepStrictEqual(
          applied.map(keyStatus),
          rehearsal.map((r) => `${r.externalId}:${statusOfShown(r._status!)}`)
        )
        assert.deepStrictEqual(applied.map(keyStatus), [
          "K-1:updated",
          "K-2:unchanged",
          "K-3:updated",
          "K-4:created",
          "K-5:created",
          "K-6:invalid"
        ])
        const plan = JSON.parse(readFileSync(planFile, "utf8"))
        const readOnCopy = plan.plan.filter((p: any) => p.state?.read === "record")
        assert.strictEqual(readOnCopy.length, 3)
        for (const p of readOnCopy) {
          const line = applied.find((r) => Number(r._row) === p.row)!
          assert.strictEqual(String(p.state.id), line._record_id, `row ${p.row}`)
        }
        const summary = readSummary(Path.join(dir, "applied"))
        assert.strictEqual(summary.plan.approvedBy, "Ana Souza")
        assert.strictEqual(summary.plan.target.baseUrl, copy.url)
        const records = yield* original.control.records("sandbox-key", "customers")
        assert.strictEqual(records.length, 5)
      }).pipe(Effect.provide(NodeContext.layer)),
    120_000
  )
})
