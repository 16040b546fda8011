/**
 * A task's items (products, services, additional costs) are read inside their task before they are planned: a dry
 * run shows what each row would do to the item as read (`would-update` with its changes, `unchanged`,
 * `would-delete`), in report.csv, report.html and the plan file; a delete of an item the task does not hold sends
 * nothing; and an item changed on the server since the plan is a conflict when the plan is applied, not a write.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { readPlan } from "../../src/import/Plan.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { applyRun } from "../plan/support.js"
import { importInto, put, readReport, readSummary, rowStatuses, startTestSandbox, tempDir, writes } from "./support.js"

/** A user, task T-1 holding products P-1 (2 × 49,90) and P-2 (1 × 12), and product P-3 on no task. */
const taskWithItems = (sandbox: RunningSandbox, dir: string) =>
  Effect.gen(function*() {
    const load = (resource: string, csv: string) =>
      importInto(sandbox, {
        resource: resource as any,
        file: put(dir, `${resource}.csv`, csv),
        runDir: Path.join(dir, resource)
      })
    yield* load("users", "externalId,name,login,password\nU-1,Ana,ana,Senha@123\n")
    yield* load("tasks", "externalId,userFromLogin,taskDate\nT-1,ana,2026-12-01T09:00:00\n")
    yield* load("products", "externalId,name,unitaryValue\nP-1,Filtro,\"49,90\"\nP-2,Gás,12\nP-3,Válvula,30\n")
    const seeded = yield* load(
      "task-products",
      "taskExternalId,productExternalId,quantity,value\nT-1,P-1,2,\"49,90\"\nT-1,P-2,1,12\n"
    )
    assert.deepStrictEqual(rowStatuses(readReport(seeded.runDir)), ["2:updated", "3:updated"])
  })

/** The file as a Brazilian implementer writes it: `;`, decimal commas. P-1 changes, P-2 is as held, P-3 is new. */
const itemsCsv = "taskExternalId;productExternalId;quantity;value\r\n" +
  "T-1;P-1;3;49,90\r\n" +
  "T-1;P-2;1;12,00\r\n" +
  "T-1;P-3;1;30,00\r\n"

const heldItems = (sandbox: RunningSandbox) =>
  Effect.map(
    sandbox.control.records("sandbox-key", "task-products"),
    (items) => items.map((x) => [x["code"], x["quantity"], x["value"]])
  )

describe("import: a task's items are compared with the task", () => {
  it.scopedLive("a dry run shows a changed item as would-update with its changes, in report.csv, report.html and the plan", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* taskWithItems(sandbox, dir)
      const held = yield* heldItems(sandbox)
      const mark = (yield* sandbox.control.requests).length
      const plan = Path.join(dir, "items.plan.json")
      const result = yield* importInto(sandbox, {
        resource: "task-products",
        file: put(dir, "items.csv", itemsCsv),
        runDir: Path.join(dir, "dry"),
        dryRun: true,
        planOut: plan
      })
      const report = readReport(result.runDir)
      assert.deepStrictEqual(rowStatuses(report), ["2:would-update", "3:unchanged", "4:would-update"])
      assert.strictEqual(report[0]!._changes, "quantity: 2 → 3")
      assert.match(report[2]!._changes!, /quantity: .* → 1; value: .* → 30/)
      assert.notMatch(report.map((r) => r._changes).join(" "), /not compared/)
      assert.deepStrictEqual(readSummary(result.runDir).planned, { "would-update": 2, unchanged: 1 })
      const html = readFileSync(Path.join(result.runDir, "report.html"), "utf8")
      assert.include(html, "would-update")
      assert.include(html, "quantity: 2 → 3")
      assert.notInclude(html, "not compared")
      const rows = (yield* readPlan(plan)).content.plan
      assert.deepStrictEqual(rows.map((p) => [p.row, p.status, p.intent]), [
        [2, "updated", "put"],
        [3, "unchanged", undefined],
        [4, "updated", "put"]
      ])
      assert.deepStrictEqual(rows[0]!.changes, [{ field: "quantity", from: "2", to: "3" }])
      assert.strictEqual(rows[0]!.state?.read, "record")
      assert.strictEqual(rows[2]!.state?.read, "absent")
      // One GET of the task, no write.
      assert.deepStrictEqual(writes((yield* sandbox.control.requests).slice(mark)), [])
      assert.deepStrictEqual(yield* heldItems(sandbox), held)
    }))

  it.scopedLive("a delete reads the task first: a held item is deleted, one the task does not hold fails unsent", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* taskWithItems(sandbox, dir)
      const file = put(dir, "del.csv", "taskExternalId;productExternalId\r\nT-1;P-2\r\nT-1;P-3\r\n")
      const dry = yield* importInto(sandbox, {
        resource: "task-products",
        file,
        runDir: Path.join(dir, "del-dry"),
        mode: "delete",
        dryRun: true
      })
      assert.deepStrictEqual(rowStatuses(readReport(dry.runDir)), ["2:would-delete", "3:failed"])
      const mark = (yield* sandbox.control.requests).length
      const run = yield* importInto(sandbox, {
        resource: "task-products",
        file,
        runDir: Path.join(dir, "del"),
        mode: "delete"
      })
      const report = readReport(run.runDir)
      assert.deepStrictEqual(rowStatuses(report), ["2:deleted", "3:failed"])
      assert.match(
        report[1]!._error!,
        /the tasks record \d+ holds no task-products item with productId ".+": nothing to delete/
      )
      assert.deepStrictEqual(
        writes((yield* sandbox.control.requests).slice(mark)).map((w) => `${w.method} ${w.path}`),
        ["DELETE /v2/tasks/1/products"]
      )
      assert.deepStrictEqual(yield* heldItems(sandbox), [[1, 2, 49.9]])
    }))

  it.scopedLive("an item changed on the server since the plan is a conflict when the plan is applied, and not sent", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* taskWithItems(sandbox, dir)
      const plan = Path.join(dir, "items.plan.json")
      yield* importInto(sandbox, {
        resource: "task-products",
        file: put(dir, "items.csv", itemsCsv),
        runDir: Path.join(dir, "dry"),
        dryRun: true,
        planOut: plan
      })
      // Someone changes P-1's value on the task after the plan was made.
      yield* importInto(sandbox, {
        resource: "task-products",
        file: put(dir, "edit.csv", "taskExternalId,productExternalId,quantity,value\nT-1,P-1,2,55\n"),
        runDir: Path.join(dir, "edit")
      })
      const mark = (yield* sandbox.control.requests).length
      const applied = yield* applyRun(sandbox, plan, Path.join(dir, "apply"))
      const report = readReport(applied.runDir)
      assert.deepStrictEqual(rowStatuses(report), ["2:conflict", "3:unchanged", "4:updated"])
      assert.match(report[0]!._error!, /changed on the server since the plan \(value\): nothing was sent/)
      assert.deepStrictEqual(
        writes((yield* sandbox.control.requests).slice(mark)).map((w) => `${w.method} ${w.path}`),
        ["PUT /v2/tasks/1/products"]
      )
      assert.deepStrictEqual(yield* heldItems(sandbox), [[1, 2, 55], [2, 1, 12], [3, 1, 30]])
    }))
})
