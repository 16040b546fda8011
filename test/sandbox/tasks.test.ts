import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Session } from "./harness.js"
import { session, wideWindow } from "./harness.js"

/** A user, a customer, two equipments and one task (id 1) using the first equipment. */
const taskFixture = (call: Session["call"]) =>
  Effect.gen(function* () {
    yield* call("POST", "/users", { body: { login: "ana" } })
    yield* call("POST", "/customers", { body: { externalId: "C1", name: "Padaria" } })
    yield* call("POST", "/equipments", { body: { externalId: "E1", name: "Split 1", associatedCustomerId: 1 } })
    yield* call("POST", "/equipments", { body: { externalId: "E2", name: "Split 2", associatedCustomerId: 1 } })
    const task = yield* call("POST", "/tasks", { body: { externalId: "OS-1", idUserFrom: 1, customerId: 1, taskDate: "2026-12-01T09:00:00", equipmentsId: [1] } })
    assert.strictEqual(task.status, 201)
  })

describe("sandbox: task sub-collections", () => {
  it.scopedLive("PUT upserts items by key (one object or an array), DELETE takes an array of keys, GET shows them", () =>
    Effect.gen(function* () {
      const { sandbox, call } = yield* session()
      yield* taskFixture(call)
      yield* call("POST", "/products", { body: { externalId: "P1", name: "Filtro" } })
      yield* call("POST", "/products", { body: { externalId: "P2", name: "Gás" } })
      const service = (yield* call("POST", "/services", { body: { externalCode: "S1", title: "Limpeza" } })).body.result.id
      yield* call("POST", "/additionalcosts", { body: { name: "Deslocamento" } })

      const one = yield* call("PUT", "/tasks/1/products", { body: { productId: 1, quantity: 2, value: 49.9 } })
      assert.strictEqual(one.status, 200)
      const many = yield* call("PUT", "/tasks/1/products", { body: [{ productId: 1, quantity: 3 }, { productId: 2, quantity: "1" }] })
      assert.strictEqual(many.status, 200)
      yield* call("PUT", "/tasks/1/services", { body: [{ serviceId: service, quantity: 1 }] })
      yield* call("PUT", "/tasks/1/additional-costs", { body: { additionalCostId: 1, value: 35 } })
      const task = (yield* call("GET", "/tasks/1")).body.result
      assert.deepStrictEqual(task.products, [
        { productId: 1, quantity: 3, value: 49.9 },
        { productId: 2, quantity: 1 }
      ])
      assert.deepStrictEqual(task.services, [{ serviceId: service, quantity: 1 }])
      assert.deepStrictEqual(task.additionalCosts, [{ additionalCostId: 1, value: 35 }])

      assert.strictEqual((yield* call("PUT", "/tasks/1/products", { body: { productId: 9, quantity: 1 } })).status, 422)
      assert.strictEqual((yield* call("PUT", "/tasks/1/products", { body: { productId: 1 } })).status, 422)
      assert.strictEqual((yield* call("PUT", "/tasks/9/products", { body: { productId: 1, quantity: 1 } })).status, 404)
      assert.strictEqual((yield* call("DELETE", "/tasks/1/products", { body: 1 })).status, 400)
      assert.strictEqual((yield* call("DELETE", "/tasks/1/products", { body: [2, 7] })).status, 404) // nothing removed
      assert.strictEqual((yield* call("DELETE", "/tasks/1/products", { body: [2] })).status, 204)
      assert.strictEqual((yield* call("DELETE", "/tasks/1/services", { body: [service.toUpperCase()] })).status, 204)
      const after = (yield* call("GET", "/tasks/1")).body.result
      assert.deepStrictEqual(after.products.map((p: any) => p.productId), [1])
      assert.deepStrictEqual(after.services, [])
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "task-products"), [{ taskId: 1, productId: 1, quantity: 3, value: 49.9 }])
      // Record writes do not touch the sub-collections.
      yield* call("PUT", "/tasks", { body: { externalId: "OS-1", products: [], priority: 3 } })
      assert.strictEqual((yield* call("GET", "/tasks/1")).body.result.products.length, 1)
    })
  )

  it.scopedLive("deleted tasks are listed by GET /tasks/GetDeletedTasks within the window", () =>
    Effect.gen(function* () {
      const { call } = yield* session()
      yield* taskFixture(call)
      assert.strictEqual((yield* call("DELETE", "/tasks/1")).status, 204)
      assert.strictEqual((yield* call("GET", "/tasks/1")).status, 404)
      const deleted = yield* call("GET", "/tasks/GetDeletedTasks", { query: { paramFilter: wideWindow } })
      assert.strictEqual(deleted.status, 200)
      const [trace] = deleted.body.result.entityList
      assert.strictEqual(trace.taskID, 1)
      assert.strictEqual(trace.externalId, "OS-1")
      assert.match(trace.deletedDate, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
      const earlier = yield* call("GET", "/tasks/GetDeletedTasks", { query: { paramFilter: { startDate: "2001-01-01", endDate: "2001-12-31" } } })
      assert.strictEqual(earlier.status, 404)
    })
  )
})

describe("sandbox: questionnaire answers", () => {
  it.scopedLive("are validated, answer 202 and show under questionnaires[].answers[] only after the answer delay", () =>
    Effect.gen(function* () {
      const { sandbox, call } = yield* session({ answerDelayMs: 800 })
      yield* taskFixture(call)
      const answer = { itemID: "1", codigoChecklist: "CHK-PREV", codigoPergunta: "P1", resposta: "Sim" }
      assert.strictEqual((yield* call("PUT", "/tasks/99/questionnaire-response", { body: answer })).status, 404)
      const missing = yield* call("PUT", "/tasks/1/questionnaire-response", { body: { ...answer, resposta: undefined } })
      assert.strictEqual(missing.status, 422)
      assert.include(missing.body.error, "resposta")
      const wrongEquipment = yield* call("PUT", "/tasks/1/questionnaire-response", { body: { ...answer, codigoEquipamento: 2 } })
      assert.strictEqual(wrongEquipment.status, 422)
      assert.include(wrongEquipment.body.error, "codigoEquipamento")
      assert.strictEqual((yield* call("PUT", "/tasks/1/questionnaire-response", { body: [answer] })).status, 400)

      const queued = yield* call("PUT", "/tasks/1/questionnaire-response", { body: answer })
      assert.strictEqual(queued.status, 202)
      assert.isObject(queued.body.result)
      yield* call("PUT", "/tasks/1/questionnaire-response", { body: { ...answer, codigoPergunta: "P2", resposta: "12", codigoEquipamento: 1 } })
      assert.deepStrictEqual((yield* call("GET", "/tasks/1")).body.result.questionnaires, [])
      yield* Effect.sleep("850 millis")
      const [instance] = (yield* call("GET", "/tasks/1")).body.result.questionnaires
      assert.strictEqual(instance.itemID, "1")
      assert.strictEqual(instance.codigoChecklist, "CHK-PREV")
      assert.deepStrictEqual(
        instance.answers.map((a: any) => [a.questionId, a.reply, a.equipmentId]),
        [
          ["P1", "Sim", null],
          ["P2", "12", 1]
        ]
      )
      assert.match(instance.answers[0].replyDate, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
      // The same itemID + checklist + question replaces the earlier answer.
      yield* call("PUT", "/tasks/1/questionnaire-response", { body: { ...answer, resposta: "Não" } })
      yield* Effect.sleep("850 millis")
      const tasks = yield* sandbox.control.records("sandbox-key", "tasks")
      const answers = (tasks[0]!["questionnaires"] as Array<any>)[0].answers
      assert.deepStrictEqual(answers.map((a: any) => a.reply), ["Não", "12"])
    })
  )
})

describe("sandbox: attachments, stock, complete customers and child lists", () => {
  it.scopedLive("attachments take base64 files up to 10 MiB and keep {name, size, sha256}", () =>
    Effect.gen(function* () {
      const { sandbox, call } = yield* session()
      yield* taskFixture(call)
      const bytes = Buffer.from("%PDF-1.4 contrato")
      const put = yield* call("PUT", "/customers/1/attachments", { body: [{ name: "contrato.pdf", file: bytes.toString("base64") }] })
      assert.strictEqual(put.status, 200)
      const expected = { name: "contrato.pdf", size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }
      assert.deepStrictEqual((yield* call("GET", "/customers/1")).body.result.attachments, [expected])
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "customer-attachments"), [{ id: 1, ...expected }])
      assert.strictEqual((yield* call("PUT", "/tasks/1/attachments", { body: { name: "foto.jpg", file: "not base64!" } })).status, 400)
      assert.strictEqual((yield* call("PUT", "/tasks/1/attachments", { body: { name: "foto.jpg" } })).status, 422)
      assert.strictEqual((yield* call("PUT", "/equipments/9/attachments", { body: { name: "a", file: "" } })).status, 404)
      const large = yield* call("PUT", "/equipments/1/attachments", { body: { name: "big.bin", file: Buffer.alloc(10 * 1024 * 1024 + 1).toString("base64") } })
      assert.strictEqual(large.status, 400)
      assert.strictEqual(large.body.error, "attachment too large")
    })
  )

  it.scopedLive("employee product stock, /customers/complete with names, group clients, team users, the service catalog", () =>
    Effect.gen(function* () {
      const { sandbox, call } = yield* session()
      yield* call("POST", "/users", { body: { login: "ana", name: "Ana Souza" } })
      yield* call("POST", "/products", { body: { externalId: "P1", name: "Filtro" } })
      const stock = yield* call("PUT", "/products/employee-product-stock", { body: { userId: 1, productId: 1, amount: 3 } })
      assert.strictEqual(stock.status, 200)
      yield* call("PUT", "/products/employee-product-stock", { body: { userId: 1, productId: 1, amount: 5 } })
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "employee-product-stock"), [{ userId: 1, productId: 1, amount: 5 }])
      assert.strictEqual((yield* call("PUT", "/products/employee-product-stock", { body: { userId: 2, productId: 1, amount: 1 } })).status, 422)

      yield* call("POST", "/customergroups", { body: { description: "Redes de varejo" } })
      yield* call("POST", "/segments", { body: { description: "Supermercados" } })
      yield* call("POST", "/teams", { body: { description: "Equipe Sul", participants: [1] } })
      const complete = yield* call("POST", "/customers/complete", {
        body: { externalId: "C1", name: "Padaria", groups: ["redes de varejo"], segmentName: "Supermercados", teamsName: ["Equipe Sul"], managersName: ["Ana Souza"], billingCity: "São Paulo" }
      })
      assert.strictEqual(complete.status, 201)
      const c = complete.body.result
      assert.deepStrictEqual([c.groupsId, c.segmentId, c.managerTeamsId, c.managersId, c.billingCity], [[1], 1, [1], [1], "São Paulo"])
      const again = yield* call("PUT", "/customers/complete", { body: { externalId: "C1", name: "Padaria Nova", segmentName: "Atacado" } })
      assert.strictEqual(again.status, 422)
      assert.include(again.body.error, "segmentName")
      assert.strictEqual((yield* call("PUT", "/customers/complete", { body: { externalId: "C1", name: "Padaria Nova" } })).status, 200)
      assert.strictEqual((yield* call("POST", "/customers/complete", { body: { externalId: "C1", name: "x" } })).status, 409)

      const clients = yield* call("GET", "/customergroups/1/clients")
      assert.deepStrictEqual(clients.body.result.entityList.map((x: any) => [x.externalId, x.description]), [["C1", "Padaria Nova"]])
      assert.strictEqual((yield* call("GET", "/customergroups/7/clients")).status, 404)
      const members = yield* call("GET", "/teams/1/users")
      assert.deepStrictEqual(members.body.result.entityList, [{ teamId: 1, userId: 1, login: "ana", name: "Ana Souza" }])

      assert.strictEqual((yield* call("GET", "/services/obterListaServicos")).status, 404)
      for (let i = 1; i <= 12; i++) yield* call("POST", "/services", { body: { externalCode: `S${i}`, title: `Serviço ${i}` } })
      const catalog = yield* call("GET", "/services/ObterListaServicos")
      assert.strictEqual(catalog.status, 200)
      assert.strictEqual(catalog.body.result.length, 12) // unpaginated
    })
  )

  it.scopedLive("task types are seeded per account, readable by id and reported by the running sandbox", () =>
    Effect.gen(function* () {
      const { sandbox, call } = yield* session()
      assert.isAtLeast(sandbox.taskTypes.length, 3)
      for (const t of sandbox.taskTypes) assert.deepInclude((yield* call("GET", `/tasktypes/${t.id}`)).body.result, t)
      assert.strictEqual((yield* call("GET", "/tasktypes/999")).status, 404)
      assert.strictEqual((yield* call("GET", "/tickets/request-type")).body.result.entityList.length > 0, true)
    })
  )
})
