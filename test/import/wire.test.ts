/**
 * What the tool writes is what the live service takes (the vendor's API Blueprint, api-reference §3): the import
 * pipeline in process against the real sandbox, which refuses the shapes the tool sent before.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { importInto, put, readReport, rowStatuses, startTestSandbox, tempDir, writes } from "./support.js"

/** Imports one CSV (upsert unless told) and returns its report. */
const load = (
  sandbox: RunningSandbox,
  dir: string,
  resource: string,
  csv: string,
  mode: "upsert" | "create" | "update" | "delete" = "upsert"
) =>
  Effect.gen(function*() {
    const name = `${resource}-${mode}-${Math.random().toString(36).slice(2, 8)}`
    const result = yield* importInto(sandbox, {
      resource: resource as any,
      file: put(dir, `${name}.csv`, csv),
      runDir: Path.join(dir, name),
      mode
    })
    return readReport(result.runDir)
  })

/** A user, a task, two products, a service and an additional cost. */
const taskWithCatalog = (sandbox: RunningSandbox, dir: string) =>
  Effect.gen(function*() {
    yield* load(sandbox, dir, "users", "externalId,name,login,password\nU-1,Ana,ana,Senha@123\n")
    yield* load(
      sandbox,
      dir,
      "tasks",
      "externalId,userFromLogin,taskDate,priority,orientation\nT-1,ana,2026-12-01T09:00:00,medium,Levar escada\n"
    )
    yield* load(sandbox, dir, "products", "externalId,name,unitaryValue\nP-1,Filtro,\"49,90\"\nP-2,Gás,12\n")
    yield* load(sandbox, dir, "services", "externalCode,title\nS-1,Limpeza\n")
    yield* load(sandbox, dir, "additional-costs", "name,value\nDeslocamento,35\n")
  })

describe("import: write bodies the live service takes", () => {
  it.scopedLive("task products, services and additional costs go wrapped, products by their GUID; deletes send id strings", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* taskWithCatalog(sandbox, dir)
      const products = yield* sandbox.control.records("sandbox-key", "products")
      const guid = (externalId: string) => products.find((p) => p["externalId"] === externalId)!["productId"]

      const items = yield* load(
        sandbox,
        dir,
        "task-products",
        "taskExternalId,productExternalId,quantity,value,discountType,discountValue\nT-1,P-1,2,\"49,90\",amount,5\nT-1,P-2,1,12,percent,10\n"
      )
      assert.deepStrictEqual(rowStatuses(items), ["2:updated", "3:updated"])
      const stored = yield* sandbox.control.records("sandbox-key", "task-products")
      assert.deepStrictEqual(
        stored.map((
          x
        ) => [x["productId"], x["code"], x["quantity"], x["value"], x["discountType"], x["discountValue"]]),
        [[guid("P-1"), 1, 2, 49.9, 0, 5], [guid("P-2"), 2, 1, 12, 1, 10]]
      )
      const services = yield* load(
        sandbox,
        dir,
        "task-services",
        "taskExternalId,serviceExternalCode,quantity,value,discountType,discountValue\nT-1,S-1,1,180,amount,20\n"
      )
      assert.deepStrictEqual(rowStatuses(services), ["2:updated"])
      const costs = yield* load(
        sandbox,
        dir,
        "task-additional-costs",
        "taskExternalId,additionalCostName,value\nT-1,Deslocamento,35\n"
      )
      assert.deepStrictEqual(rowStatuses(costs), ["2:updated"])
      const [task] = yield* sandbox.control.records("sandbox-key", "tasks")
      assert.deepStrictEqual(
        (task!["services"] as Array<any>).map((s) => [s.quantity, s.value, s.discountType, s.discountValue]),
        [[1, 180, 0, 20]]
      )
      assert.deepStrictEqual((task!["additionalCosts"] as Array<any>).map((c) => [c.additionalCostId, c.value]), [[
        1,
        35
      ]])

      // Delete by the product's code or key: the body names the product by its GUID.
      const mark = (yield* sandbox.control.requests).length
      const deleted = yield* load(
        sandbox,
        dir,
        "task-products",
        "taskExternalId,productExternalId\nT-1,P-2\n",
        "delete"
      )
      assert.deepStrictEqual(rowStatuses(deleted), ["2:deleted"])
      assert.deepStrictEqual(
        writes((yield* sandbox.control.requests).slice(mark)).map((w) => `${w.method} ${w.path} ${w.status}`),
        ["DELETE /v2/tasks/1/products 204"]
      )
      assert.deepStrictEqual(
        (yield* sandbox.control.records("sandbox-key", "task-products")).map((x) => x["productId"]),
        [guid("P-1")]
      )
      const costGone = yield* load(
        sandbox,
        dir,
        "task-additional-costs",
        "taskExternalId,additionalCostName\nT-1,Deslocamento\n",
        "delete"
      )
      assert.deepStrictEqual(rowStatuses(costGone), ["2:deleted"])
    }))

  it.scopedLive("a product whose GUID cannot be read fails its row with the reason, and nothing is written", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* taskWithCatalog(sandbox, dir)
      const mark = (yield* sandbox.control.requests).length
      const items = yield* load(sandbox, dir, "task-products", "taskExternalId,productId,quantity,value\nT-1,99,1,1\n")
      assert.deepStrictEqual(rowStatuses(items), ["2:failed"])
      assert.match(items[0]!._error!, /productId 99: cannot read the productId of products 99 \(.*no record.*\)/i)
      assert.deepStrictEqual(writes((yield* sandbox.control.requests).slice(mark)), [])
    }))

  it.scopedLive("attachments go as {removeAllAttachmentsInsertedByMe, attachments:[{name, file}]}; receipts as {deleteAttachment, attachment}", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* load(sandbox, dir, "customers", "externalId,name\nC-1,Um\n")
      mkdirSync(Path.join(dir, "anexos"))
      const bytes = Buffer.from("%PDF-1.4 contrato")
      put(dir, "anexos/contrato.pdf", bytes)
      put(dir, "anexos/foto.jpg", Buffer.from("jpeg"))
      const first = yield* load(
        sandbox,
        dir,
        "customer-attachments",
        "customerExternalId,file,name\nC-1,anexos/contrato.pdf,Contrato.pdf\n"
      )
      assert.deepStrictEqual(rowStatuses(first), ["2:updated"])
      yield* load(sandbox, dir, "customer-attachments", "customerExternalId,file\nC-1,anexos/foto.jpg\n")
      assert.deepStrictEqual(
        (yield* sandbox.control.records("sandbox-key", "customer-attachments")).map((a) => a["name"]),
        ["Contrato.pdf", "foto.jpg"]
      )
      // The flag removes what was attached before.
      const replaced = yield* load(
        sandbox,
        dir,
        "customer-attachments",
        "customerExternalId,file,removeAllAttachmentsInsertedByMe\nC-1,anexos/contrato.pdf,true\n"
      )
      assert.deepStrictEqual(rowStatuses(replaced), ["2:updated"])
      const kept = yield* sandbox.control.records("sandbox-key", "customer-attachments")
      assert.deepStrictEqual(kept.map((a) => [a["name"], a["sha256"]]), [[
        "contrato.pdf",
        createHash("sha256").update(bytes).digest("hex")
      ]])

      // An expense receipt: one file, no name; an old file's `name` column is ignored.
      yield* load(sandbox, dir, "users", "externalId,name,login,password\nU-1,Ana,ana,Senha@123\n")
      yield* load(sandbox, dir, "expense-types", "description\nCombustível\n")
      yield* load(
        sandbox,
        dir,
        "expenses",
        "userToLogin,typeDescription,date,amount\nana,Combustível,2026-11-20,42.50\n",
        "create"
      )
      const receipt = yield* load(sandbox, dir, "expense-attachments", "id,file,name\n1,anexos/foto.jpg,recibo.jpg\n")
      assert.deepStrictEqual(rowStatuses(receipt), ["2:updated"])
      const [expense] = yield* sandbox.control.records("sandbox-key", "expenses")
      assert.deepStrictEqual((expense!["attachments"] as Array<any>).map((a) => a.size), [4])
    }))

  it.scopedLive("customers' upsert carries description, an expense's date is patched as expenseDate, webhooks are written by name", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const customers = yield* load(sandbox, dir, "customers", "externalId,name\nC-1,Padaria\n")
      assert.deepStrictEqual(rowStatuses(customers), ["2:created"])
      const renamed = yield* load(sandbox, dir, "customers", "externalId,name\nC-1,Padaria Pão Quente\n")
      assert.deepStrictEqual(rowStatuses(renamed), ["2:updated"])
      assert.deepStrictEqual(
        (yield* sandbox.control.records("sandbox-key", "customers")).map((c) => c["description"]),
        ["Padaria Pão Quente"]
      )

      yield* load(sandbox, dir, "users", "externalId,name,login,password\nU-1,Ana,ana,Senha@123\n")
      yield* load(sandbox, dir, "expense-types", "description\nCombustível\n")
      yield* load(
        sandbox,
        dir,
        "expenses",
        "userToLogin,typeDescription,date,amount\nana,Combustível,2026-11-20,42.50\n",
        "create"
      )
      const moved = yield* load(sandbox, dir, "expenses", "id,date\n1,2026-11-21\n", "update")
      assert.deepStrictEqual(rowStatuses(moved), ["2:updated"])
      assert.strictEqual((yield* sandbox.control.records("sandbox-key", "expenses"))[0]!["date"], "2026-11-21T00:00:00")

      const hooks = yield* load(
        sandbox,
        dir,
        "webhooks",
        "entity,action,targetUrl\nTask,Inclusao,https://example.com.br/a\n7,3,https://example.com.br/b\n"
      )
      assert.deepStrictEqual(rowStatuses(hooks), ["2:created", "3:created"])
      const stored = yield* sandbox.control.records("sandbox-key", "webhooks")
      assert.deepStrictEqual(stored.map((w) => [w["entity"], w["action"]]).sort(), [[4, 1], [7, 3]])
    }))

  it.scopedLive("ticket priorities and discount types use the API's codes; labels are safe, changed numbers are refused", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const tickets = yield* load(
        sandbox,
        dir,
        "tickets",
        "title,priority\nAlta,high\nBaixa,low\nMédia,2\nAmbígua,3\n",
        "create"
      )
      assert.deepStrictEqual(rowStatuses(tickets), ["2:created", "3:created", "4:created", "5:invalid"])
      assert.match(
        tickets[3]!._error!,
        /priority: "3" is ambiguous: .*1 \(high\), 2 \(medium\), 3 \(low\).*3 meant high; write the label/
      )
      const stored = yield* sandbox.control.records("sandbox-key", "tickets")
      assert.deepStrictEqual(stored.map((t) => [t["title"], t["priority"]]).sort(), [["Alta", 1], ["Baixa", 3], [
        "Média",
        2
      ]])

      yield* taskWithCatalog(sandbox, dir)
      // 2 was the tool's code for an amount: still read as one, with a warning naming the column.
      const items = yield* load(
        sandbox,
        dir,
        "task-products",
        "taskExternalId,productExternalId,quantity,value,discountType,discountValue\nT-1,P-1,1,10,2,3\n"
      )
      assert.deepStrictEqual(rowStatuses(items), ["2:updated"])
      assert.match(
        items[0]!._error!,
        /warning: discountType: 2 is this tool's former code for "amount", sent as the API's 0; write the label "amount"/
      )
      assert.deepStrictEqual(
        (yield* sandbox.control.records("sandbox-key", "task-products")).map((x) => x["discountType"]),
        [0]
      )
    }))

  it.scopedLive("employee stock (204) is updated and a ticket (200 on create) created, as the API answers them", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* taskWithCatalog(sandbox, dir)
      const stock = yield* load(
        sandbox,
        dir,
        "employee-product-stock",
        "userLogin,productExternalId,amount\nana,P-1,3\n"
      )
      assert.deepStrictEqual(rowStatuses(stock), ["2:updated"])
      assert.deepStrictEqual(
        (yield* sandbox.control.records("sandbox-key", "employee-product-stock")).map((
          s
        ) => [s["productId"], s["amount"]]),
        [[1, 3]]
      )
      const mark = (yield* sandbox.control.requests).length
      const ticket = yield* load(sandbox, dir, "tickets", "title,priority\nPingando,medium\n", "create")
      assert.deepStrictEqual(rowStatuses(ticket), ["2:created"])
      assert.deepStrictEqual(
        writes((yield* sandbox.control.requests).slice(mark)).map((w) => `${w.method} ${w.path} ${w.status}`),
        ["POST /v2/tickets 200"]
      )
    }))
})
