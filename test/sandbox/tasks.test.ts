import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { createHash } from "node:crypto"
import type { Session } from "./harness.js"
import { session, wideWindow } from "./harness.js"

/** A user, a customer, two equipments and one task (id 1) using the first equipment. */
const taskFixture = (call: Session["call"]) =>
  Effect.gen(function*() {
    yield* call("POST", "/users", { body: { login: "ana" } })
    yield* call("POST", "/customers", { body: { externalId: "C1", name: "Padaria" } })
    yield* call("POST", "/equipments", { body: { externalId: "E1", name: "Split 1", associatedCustomerId: 1 } })
    yield* call("POST", "/equipments", { body: { externalId: "E2", name: "Split 2", associatedCustomerId: 1 } })
    const task = yield* call("POST", "/tasks", {
      body: { externalId: "OS-1", idUserFrom: 1, customerId: 1, taskDate: "2026-12-01T09:00:00", equipmentsId: [1] }
    })
    assert.strictEqual(task.status, 201)
  })

describe("sandbox: task sub-collections", () => {
  it.scopedLive("PUT takes the wrapped PascalCase items of the Blueprint (products by GUID), answers the task; DELETE takes id strings", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      yield* taskFixture(call)
      const filtro = (yield* call("POST", "/products", { body: { externalId: "P1", name: "Filtro" } })).body.result
      const gas = (yield* call("POST", "/products", { body: { externalId: "P2", name: "Gás" } })).body.result
      // Products carry a server-assigned GUID beside their code: task items name them by it.
      assert.match(filtro.productId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      assert.notStrictEqual(filtro.productId, gas.productId)
      const service =
        (yield* call("POST", "/services", { body: { externalCode: "S1", title: "Limpeza" } })).body.result.id
      yield* call("POST", "/additionalcosts", { body: { name: "Deslocamento" } })

      const one = yield* call("PUT", "/tasks/1/products", {
        body: {
          taskProducts: [{
            ProductId: filtro.productId,
            Quantity: "2",
            Value: "49.90",
            DiscountType: "0",
            DiscountValue: "5"
          }]
        }
      })
      assert.strictEqual(one.status, 200)
      assert.strictEqual(one.body.result.taskID, 1) // the whole task
      assert.strictEqual(one.body.result.externalId, "OS-1")
      // Items already on the task (GUIDs compare in any case) are updated, others added.
      const many = yield* call("PUT", "/tasks/1/products", {
        body: {
          taskProducts: [{ ProductId: filtro.productId.toUpperCase(), Quantity: "3", Value: "49.90" }, {
            ProductId: gas.productId,
            Quantity: "1.5",
            Value: "12"
          }]
        }
      })
      assert.strictEqual(many.status, 200)
      yield* call("PUT", "/tasks/1/services", {
        body: {
          taskServices: [{ ServiceId: service, Quantity: "1", Value: "180", DiscountType: "1", DiscountValue: "10" }]
        }
      })
      yield* call("PUT", "/tasks/1/additional-costs", {
        body: { taskAdditionalCosts: [{ AdditionalCostId: "1", Value: "35.00" }] }
      })
      const task = (yield* call("GET", "/tasks/1")).body.result
      assert.deepStrictEqual(task.products, [
        { productId: filtro.productId, code: 1, quantity: 3, value: 49.9, discountType: 0, discountValue: 5 },
        { productId: gas.productId, code: 2, quantity: 1.5, value: 12 }
      ])
      assert.deepStrictEqual(task.services, [{
        serviceId: service,
        quantity: 1,
        value: 180,
        discountType: 1,
        discountValue: 10
      }])
      assert.deepStrictEqual(task.additionalCosts, [{ additionalCostId: 1, value: 35 }])

      // The shapes the tool sent before are refused: a bare object or array, a product named by its code.
      const bare = yield* call("PUT", "/tasks/1/products", { body: { productId: 1, quantity: 2, value: 49.9 } })
      assert.strictEqual(bare.status, 400)
      assert.include(bare.body.error, "taskProducts")
      assert.strictEqual(
        (yield* call("PUT", "/tasks/1/products", { body: [{ productId: 1, quantity: 2 }] })).status,
        400
      )
      assert.strictEqual(
        (yield* call("PUT", "/tasks/1/products", {
          body: { taskProducts: [{ ProductId: 1, Quantity: "1", Value: "1" }] }
        })).status,
        400
      )
      const unknown = yield* call("PUT", "/tasks/1/products", {
        body: { taskProducts: [{ ProductId: "3f2504e0-4f89-11d3-9a0c-0305e82c3301", Quantity: "1", Value: "1" }] }
      })
      assert.strictEqual(unknown.status, 422)
      assert.strictEqual(
        (yield* call("PUT", "/tasks/1/products", {
          body: { taskProducts: [{ ProductId: filtro.productId, Value: "1" }] }
        })).status,
        422
      )
      assert.strictEqual(
        (yield* call("PUT", "/tasks/1/products", {
          body: { taskProducts: [{ ProductId: filtro.productId, Quantity: "1", Value: "1", DiscountType: "2" }] }
        })).status,
        422
      )
      assert.strictEqual(
        (yield* call("PUT", "/tasks/9/products", {
          body: { taskProducts: [{ ProductId: filtro.productId, Quantity: "1", Value: "1" }] }
        })).status,
        404
      )

      assert.strictEqual((yield* call("DELETE", "/tasks/1/products", { body: gas.productId })).status, 400)
      assert.strictEqual((yield* call("DELETE", "/tasks/1/products", { body: [2] })).status, 400) // the code, not the GUID
      assert.strictEqual(
        (yield* call("DELETE", "/tasks/1/products", { body: [gas.productId, "3f2504e0-4f89-11d3-9a0c-0305e82c3301"] }))
          .status,
        404
      ) // nothing removed
      assert.strictEqual((yield* call("DELETE", "/tasks/1/products", { body: [gas.productId] })).status, 204)
      assert.strictEqual((yield* call("DELETE", "/tasks/1/services", { body: [service.toUpperCase()] })).status, 204)
      assert.strictEqual((yield* call("DELETE", "/tasks/1/additional-costs", { body: ["1"] })).status, 204)
      const after = (yield* call("GET", "/tasks/1")).body.result
      assert.deepStrictEqual(after.products.map((p: any) => p.productId), [filtro.productId])
      assert.deepStrictEqual(after.services, [])
      assert.deepStrictEqual(after.additionalCosts, [])
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "task-products"), [
        { taskId: 1, productId: filtro.productId, code: 1, quantity: 3, value: 49.9, discountType: 0, discountValue: 5 }
      ])
      // Record writes do not touch the sub-collections.
      yield* call("PUT", "/tasks", { body: { externalId: "OS-1", products: [], priority: 3 } })
      assert.strictEqual((yield* call("GET", "/tasks/1")).body.result.products.length, 1)
    }))

  it.scopedLive("deleted tasks are listed by GET /tasks/GetDeletedTasks within the window", () =>
    Effect.gen(function*() {
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
      const earlier = yield* call("GET", "/tasks/GetDeletedTasks", {
        query: { paramFilter: { startDate: "2001-01-01", endDate: "2001-12-31" } }
      })
      assert.strictEqual(earlier.status, 404)
    }))
})

describe("sandbox: questionnaire answers", () => {
  it.scoped("are validated, answer 202 and show under questionnaires[].answers[] only after the answer delay", () =>
    Effect.gen(function*() {
      // The delay of the live service (up to 5 minutes), on a TestClock moved by the test.
      yield* TestClock.setTime(Date.parse("2026-11-27T12:00:00Z"))
      const { sandbox, call } = yield* session({ answerDelayMs: 5 * 60_000 })
      yield* taskFixture(call)
      const answer = { itemID: "1", codigoChecklist: "CHK-PREV", codigoPergunta: "P1", resposta: "Sim" }
      assert.strictEqual((yield* call("PUT", "/tasks/99/questionnaire-response", { body: answer })).status, 404)
      const missing = yield* call("PUT", "/tasks/1/questionnaire-response", {
        body: { ...answer, resposta: undefined }
      })
      assert.strictEqual(missing.status, 422)
      assert.include(missing.body.error, "resposta")
      const wrongEquipment = yield* call("PUT", "/tasks/1/questionnaire-response", {
        body: { ...answer, codigoEquipamento: 2 }
      })
      assert.strictEqual(wrongEquipment.status, 422)
      assert.include(wrongEquipment.body.error, "codigoEquipamento")
      assert.strictEqual((yield* call("PUT", "/tasks/1/questionnaire-response", { body: [answer] })).status, 400)

      const queued = yield* call("PUT", "/tasks/1/questionnaire-response", { body: answer })
      assert.strictEqual(queued.status, 202)
      assert.isObject(queued.body.result)
      yield* call("PUT", "/tasks/1/questionnaire-response", {
        body: { ...answer, codigoPergunta: "P2", resposta: "12", codigoEquipamento: 1 }
      })
      assert.deepStrictEqual((yield* call("GET", "/tasks/1")).body.result.questionnaires, [])
      yield* TestClock.adjust("4 minutes")
      assert.deepStrictEqual((yield* call("GET", "/tasks/1")).body.result.questionnaires, [])
      yield* TestClock.adjust("1 minute")
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
      assert.deepStrictEqual(
        ((yield* sandbox.control.records("sandbox-key", "tasks"))[0]!["questionnaires"] as Array<any>)[0].answers
          .map((a: any) => a.reply),
        ["Sim", "12"]
      )
      yield* TestClock.adjust("5 minutes")
      const tasks = yield* sandbox.control.records("sandbox-key", "tasks")
      const answers = (tasks[0]!["questionnaires"] as Array<any>)[0].answers
      assert.deepStrictEqual(answers.map((a: any) => a.reply), ["Não", "12"])
    }))
})

describe("sandbox: attachments, stock, complete customers and child lists", () => {
  it.scopedLive("attachments take the Blueprint's upload bodies (base64 up to 10 MiB), keep {name, size, sha256} and answer the record", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      yield* taskFixture(call)
      const upload = (name: string, file: string, remove = false) => ({
        removeAllAttachmentsInsertedByMe: remove,
        attachments: [{ name, file }]
      })
      const bytes = Buffer.from("%PDF-1.4 contrato")
      const put = yield* call("PUT", "/customers/1/attachments", {
        body: upload("contrato.pdf", bytes.toString("base64"))
      })
      assert.strictEqual(put.status, 200)
      assert.strictEqual(put.body.result.externalId, "C1") // the whole customer
      const expected = {
        name: "contrato.pdf",
        size: bytes.length,
        sha256: createHash("sha256").update(bytes).digest("hex")
      }
      assert.deepStrictEqual(put.body.result.attachments, [expected])
      assert.deepStrictEqual((yield* call("GET", "/customers/1")).body.result.attachments, [expected])
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "customer-attachments"), [{
        id: 1,
        ...expected
      }])
      // A second file is added; the flag removes the earlier ones first.
      yield* call("PUT", "/customers/1/attachments", { body: upload("foto.jpg", "AAAA") })
      assert.strictEqual((yield* call("GET", "/customers/1")).body.result.attachments.length, 2)
      yield* call("PUT", "/customers/1/attachments", { body: upload("novo.pdf", "AAAA", true) })
      assert.deepStrictEqual((yield* call("GET", "/customers/1")).body.result.attachments.map((a: any) => a.name), [
        "novo.pdf"
      ])
      // The bare array and object the tool sent before are refused.
      assert.strictEqual(
        (yield* call("PUT", "/tasks/1/attachments", { body: [{ name: "foto.jpg", file: "AAAA" }] })).status,
        400
      )
      assert.strictEqual(
        (yield* call("PUT", "/tasks/1/attachments", { body: { name: "foto.jpg", file: "AAAA" } })).status,
        400
      )
      assert.strictEqual(
        (yield* call("PUT", "/tasks/1/attachments", { body: upload("foto.jpg", "not base64!") })).status,
        400
      )
      assert.strictEqual(
        (yield* call("PUT", "/tasks/1/attachments", {
          body: { removeAllAttachmentsInsertedByMe: false, attachments: [{ name: "foto.jpg" }] }
        })).status,
        400
      )
      assert.strictEqual((yield* call("PUT", "/equipments/9/attachments", { body: upload("a", "") })).status, 404)
      const large = yield* call("PUT", "/equipments/1/attachments", {
        body: upload("big.bin", Buffer.alloc(10 * 1024 * 1024 + 1).toString("base64"))
      })
      assert.strictEqual(large.status, 400)
      assert.strictEqual(large.body.error, "attachment too large")

      // Expenses: one receipt, no name; a new one replaces it.
      yield* call("POST", "/expensetypes", { body: { description: "Combustível" } })
      yield* call("POST", "/expenses", { body: { userToId: 1, typeId: 1, date: "2026-11-20", amount: 10 } })
      const receipt = yield* call("PUT", "/expenses/1/attachments", {
        body: { deleteAttachment: false, attachment: "AAAA" }
      })
      assert.strictEqual(receipt.status, 200)
      assert.strictEqual(receipt.body.result.amount, 10)
      yield* call("PUT", "/expenses/1/attachments", {
        body: { deleteAttachment: true, attachment: bytes.toString("base64") }
      })
      assert.deepStrictEqual((yield* call("GET", "/expenses/1")).body.result.attachments.map((a: any) => a.size), [
        bytes.length
      ])
      assert.strictEqual(
        (yield* call("PUT", "/expenses/1/attachments", { body: [{ name: "r.jpg", file: "AAAA" }] })).status,
        400
      )
      assert.strictEqual(
        (yield* call("PUT", "/expenses/1/attachments", { body: { deleteAttachment: false } })).status,
        400
      )
    }))

  it.scopedLive("employee product stock, /customers/complete with names, group clients, team users, the service catalog", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      yield* call("POST", "/users", { body: { login: "ana", name: "Ana Souza" } })
      yield* call("POST", "/products", { body: { externalId: "P1", name: "Filtro" } })
      const stock = yield* call("PUT", "/products/employee-product-stock", {
        body: { userId: 1, productId: 1, amount: 3 }
      })
      assert.strictEqual(stock.status, 204)
      yield* call("PUT", "/products/employee-product-stock", { body: { userId: 1, productId: 1, amount: 5 } })
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "employee-product-stock"), [{
        userId: 1,
        productId: 1,
        amount: 5
      }])
      assert.strictEqual(
        (yield* call("PUT", "/products/employee-product-stock", { body: { userId: 2, productId: 1, amount: 1 } }))
          .status,
        422
      )

      yield* call("POST", "/customergroups", { body: { description: "Redes de varejo" } })
      yield* call("POST", "/segments", { body: { description: "Supermercados" } })
      yield* call("POST", "/teams", { body: { description: "Equipe Sul", participants: [1] } })
      const complete = yield* call("POST", "/customers/complete", {
        body: {
          externalId: "C1",
          name: "Padaria",
          groups: ["redes de varejo"],
          segmentName: "Supermercados",
          teamsName: ["Equipe Sul"],
          managersName: ["Ana Souza"],
          billingCity: "São Paulo"
        }
      })
      assert.strictEqual(complete.status, 201)
      const c = complete.body.result
      assert.deepStrictEqual([c.groupsId, c.segmentId, c.managerTeamsId, c.managersId, c.billingCity], [[1], 1, [1], [
        1
      ], "São Paulo"])
      const again = yield* call("PUT", "/customers/complete", {
        body: { externalId: "C1", name: "Padaria Nova", segmentName: "Atacado" }
      })
      assert.strictEqual(again.status, 422)
      assert.include(again.body.error, "segmentName")
      assert.strictEqual(
        (yield* call("PUT", "/customers/complete", { body: { externalId: "C1", name: "Padaria Nova" } })).status,
        200
      )
      assert.strictEqual(
        (yield* call("POST", "/customers/complete", { body: { externalId: "C1", name: "x" } })).status,
        409
      )

      const clients = yield* call("GET", "/customergroups/1/clients")
      assert.deepStrictEqual(clients.body.result.entityList.map((x: any) => [x.externalId, x.description]), [[
        "C1",
        "Padaria Nova"
      ]])
      assert.strictEqual((yield* call("GET", "/customergroups/7/clients")).status, 404)
      const members = yield* call("GET", "/teams/1/users")
      assert.deepStrictEqual(members.body.result.entityList, [{
        teamId: 1,
        userId: 1,
        login: "ana",
        name: "Ana Souza"
      }])

      assert.strictEqual((yield* call("GET", "/services/obterListaServicos")).status, 404)
      for (let i = 1; i <= 12; i++) {
        yield* call("POST", "/services", { body: { externalCode: `S${i}`, title: `Serviço ${i}` } })
      }
      const catalog = yield* call("GET", "/services/ObterListaServicos")
      assert.strictEqual(catalog.status, 200)
      assert.strictEqual(catalog.body.result.length, 12) // unpaginated
    }))

  it.scopedLive("task types are seeded per account, readable by id and reported by the running sandbox", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      assert.isAtLeast(sandbox.taskTypes.length, 3)
      for (const t of sandbox.taskTypes) assert.deepInclude((yield* call("GET", `/tasktypes/${t.id}`)).body.result, t)
      assert.strictEqual((yield* call("GET", "/tasktypes/999")).status, 404)
      assert.strictEqual((yield* call("GET", "/tickets/request-type")).body.result.entityList.length > 0, true)
    }))
})
