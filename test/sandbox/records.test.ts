import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { replace, session } from "./harness.js"

describe("sandbox: request errors", () => {
  it.scopedLive("415 for a POST without a JSON content type, 400 for malformed JSON", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const noType = yield* call("POST", "/segments", {
        raw: JSON.stringify({ description: "x" }),
        headers: { "content-type": "text/plain" }
      })
      assert.strictEqual(noType.status, 415)
      assert.isString(noType.body.error)
      const malformed = yield* call("POST", "/segments", {
        raw: "{description:",
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(malformed.status, 400)
      assert.match(malformed.body.error, /malformed JSON/)
      assert.strictEqual(
        (yield* call("PUT", "/users", { raw: "[1,", headers: { "content-type": "application/json" } })).status,
        400
      )
      assert.strictEqual((yield* call("POST", "/segments", { body: [{ description: "x" }] })).status, 400)
    }))

  it.scopedLive("400 for wrong types, naming the fields; numeric strings are accepted", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const bad = yield* call("POST", "/users", {
        body: { login: { a: 1 }, latitude: "abc", workDaysOfWeek: 2, userType: "x" }
      })
      assert.strictEqual(bad.status, 400)
      for (const field of ["login", "latitude", "workDaysOfWeek", "userType"]) {
        assert.include(bad.body.error, `"${field}"`)
      }
      const lenient = yield* call("POST", "/users", {
        body: { login: 12345, latitude: "-23.5", workDaysOfWeek: ["2", 3], userType: "1", checkInManual: "true" }
      })
      assert.strictEqual(lenient.status, 201)
      assert.strictEqual(lenient.body.result.login, "12345")
      assert.strictEqual(lenient.body.result.latitude, -23.5)
      assert.deepStrictEqual(lenient.body.result.workDaysOfWeek, [2, 3])
      assert.strictEqual(lenient.body.result.checkInManual, true)
      assert.strictEqual(
        (yield* call("POST", "/tasks", { body: { idUserFrom: 1, taskDate: "31/12/2026" } })).status,
        400
      )
    }))

  it.scopedLive("404 for an unknown id; 409 for a duplicate key; 422 for a missing field, an unknown reference or enum value", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const unknown = yield* call("GET", "/customers/99")
      assert.strictEqual(unknown.status, 404)
      assert.isString(unknown.body.error)
      assert.strictEqual((yield* call("PATCH", "/customers/abc", { body: [replace("name", "x")] })).status, 404)

      assert.strictEqual(
        (yield* call("POST", "/customers", { body: { externalId: "CLI-1", name: "Padaria" } })).status,
        201
      )
      const dup = yield* call("POST", "/customers", { body: { externalId: "cli-1", name: "Outra" } })
      assert.strictEqual(dup.status, 409)
      assert.include(dup.body.error, "externalId")
      assert.strictEqual(
        (yield* call("POST", "/services", { body: { externalCode: "SRV-1", title: "Limpeza" } })).status,
        201
      )
      assert.strictEqual(
        (yield* call("POST", "/services", { body: { externalCode: "SRV-1", title: "Outro" } })).status,
        409
      )
      assert.strictEqual((yield* call("POST", "/users", { body: { login: "ana" } })).status, 201)
      assert.strictEqual((yield* call("POST", "/users", { body: { login: "ANA" } })).status, 409)
      // Keys used only by the tool (description, name) are not unique on the server.
      assert.strictEqual((yield* call("POST", "/segments", { body: { description: "Varejo" } })).status, 201)
      assert.strictEqual((yield* call("POST", "/segments", { body: { description: "Varejo" } })).status, 201)

      const missing = yield* call("POST", "/customers", { body: { externalId: "CLI-2" } })
      assert.strictEqual(missing.status, 422)
      assert.include(missing.body.error, `"name" is required`)
      const ref = yield* call("POST", "/equipments", { body: { name: "Split", associatedCustomerId: 77 } })
      assert.strictEqual(ref.status, 422)
      assert.include(ref.body.error, "associatedCustomerId")
      assert.include(ref.body.error, "77")
      const refList = yield* call("POST", "/teams", { body: { description: "Equipe", participants: [1, 42] } })
      assert.strictEqual(refList.status, 422)
      assert.include(refList.body.error, "42")
      const en = yield* call("POST", "/users", { body: { login: "bia", userType: 7 } })
      assert.strictEqual(en.status, 422)
      assert.include(en.body.error, "userType")
      const cnpj = yield* call("POST", "/customers", { body: { name: "X", cpfCnpj: "11.222.333/0001-82" } })
      assert.strictEqual(cnpj.status, 422)
      assert.include(cnpj.body.error, "cpfCnpj")
    }))

  it.scopedLive("every response carries a unique X-Request-Id and every error body is {error}", () =>
    Effect.gen(function*() {
      // The login is one of the ten requests of the budget.
      const { call } = yield* session({ rate: { limit: 10, windowMs: 60_000 } })
      const answers = [
        yield* call("GET", "/tasktypes/1"),
        yield* call("GET", "/customers/1"),
        yield* call("GET", "/nowhere"),
        yield* call("GET", "/users", { token: null }),
        yield* call("POST", "/segments", { body: {} }),
        yield* call("POST", "/segments", { body: { description: "a" } }),
        yield* call("DELETE", "/segments/1"),
        yield* call("PUT", "/segments"),
        yield* call("GET", "/tasktypes/1"),
        yield* call("GET", "/tasktypes/1") // over the budget
      ]
      assert.deepStrictEqual(
        answers.map((a) => a.status),
        [200, 404, 404, 401, 422, 201, 204, 405, 200, 403]
      )
      const ids = answers.map((a) => a.headers.get("x-request-id"))
      for (const id of ids) assert.match(id!, /^[0-9a-f-]{36}$/)
      assert.strictEqual(new Set(ids).size, ids.length)
      for (const a of answers.filter((x) => x.status >= 400)) {
        assert.deepStrictEqual(Object.keys(a.body), ["error"])
        assert.isString(a.body.error)
      }
    }))
})

describe("sandbox: writes", () => {
  it.scopedLive("upsert by externalId: 201 created then 200 updated, by id, and a login taken by another user is 409", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      const created = yield* call("PUT", "/users", {
        body: { externalId: "USR-1", login: "ana", password: "x", name: "Ana" }
      })
      assert.strictEqual(created.status, 201)
      assert.strictEqual(created.body.result.userID, 1)
      const updated = yield* call("PUT", "/users", { body: { externalId: "USR-1", login: "ana", name: "Ana Souza" } })
      assert.strictEqual(updated.status, 200)
      assert.strictEqual(updated.body.result.name, "Ana Souza")
      const byId = yield* call("PUT", "/users", { body: { id: 1, jobPosition: "Técnica" } })
      assert.strictEqual(byId.status, 200)
      assert.strictEqual(byId.body.result.jobPosition, "Técnica")
      assert.strictEqual(byId.body.result.name, "Ana Souza") // properties not sent are kept
      assert.strictEqual((yield* call("PUT", "/users", { body: { externalId: "USR-2", login: "bia" } })).status, 201)
      const conflict = yield* call("PUT", "/users", { body: { externalId: "USR-2", login: "ANA" } })
      assert.strictEqual(conflict.status, 409)
      assert.strictEqual((yield* call("PUT", "/users", { body: { externalId: "USR-3" } })).status, 422) // login required on create
      assert.strictEqual((yield* sandbox.control.records("sandbox-key", "users")).length, 2)
    }))

  it.scopedLive("customers upsert by cpfCnpj only with identifierBycpfCnpj; services by externalCode", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      assert.strictEqual(
        (yield* call("POST", "/customers", { body: { name: "Padaria", cpfCnpj: "11.222.333/0001-81" } })).status,
        201
      )
      const without = yield* call("PUT", "/customers", {
        body: { description: "Padaria 2", cpfCnpj: "11222333000181" }
      })
      assert.strictEqual(without.status, 201)
      const withFlag = yield* call("PUT", "/customers", {
        body: {
          name: "Padaria Nova",
          description: "Padaria Nova",
          cpfCnpj: "11222333000181",
          identifierBycpfCnpj: true
        }
      })
      assert.strictEqual(withFlag.status, 200)
      assert.strictEqual(withFlag.body.result.id, 1)
      assert.strictEqual(withFlag.body.result.description, "Padaria Nova")
      // The upsert reads the name from `description` (the Blueprint), or from `name` (the spec's name for the field,
      // which public clients of the live API send on PUT); a body with neither is refused.
      const nameOnly = yield* call("PUT", "/customers", { body: { externalId: "C9", name: "Sem descrição" } })
      assert.strictEqual(nameOnly.status, 201)
      assert.strictEqual(nameOnly.body.result.description, "Sem descrição")
      const neither = yield* call("PUT", "/customers", { body: { externalId: "C10", cpfCnpj: "11222333000181" } })
      assert.strictEqual(neither.status, 422)
      assert.include(neither.body.error, "description")
      assert.notProperty(withFlag.body.result, "identifierBycpfCnpj")
      assert.strictEqual(
        (yield* call("PUT", "/services", { body: { externalCode: "SRV-1", title: "Limpeza" } })).status,
        201
      )
      const service = yield* call("PUT", "/services", {
        body: { externalCode: "srv-1", title: "Limpeza completa", price: 180 }
      })
      assert.strictEqual(service.status, 200)
      assert.match(service.body.result.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      assert.deepStrictEqual((yield* sandbox.control.records("sandbox-key", "services")).map((s) => s["title"]), [
        "Limpeza completa"
      ])
    }))

  it.scopedLive("JSON Patch replace/add/remove with or without a leading slash; server-owned properties are ignored", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      yield* call("POST", "/segments", { body: { description: "Varejo" } })
      yield* call("POST", "/customers", { body: { externalId: "C1", name: "Padaria", note: "n", latitude: -23 } })
      const patched = yield* call("PATCH", "/customers/1", {
        body: [replace("/name", "Padaria Pão Quente"), { op: "add", path: "segmentId", value: 1 }, {
          op: "remove",
          path: "/note"
        }, replace("id", 99)]
      })
      assert.strictEqual(patched.status, 200)
      assert.strictEqual(patched.body.result.id, 1)
      assert.strictEqual(patched.body.result.description, "Padaria Pão Quente")
      assert.strictEqual(patched.body.result.segmentId, 1)
      assert.strictEqual(patched.body.result.note, "") // an unset text reads back as "", as the live service sends it
      assert.strictEqual(patched.body.result.latitude, -23)
      // The read-back name addresses the same property.
      assert.strictEqual(
        (yield* call("PATCH", "/customers/1", { body: [replace("description", "P")] })).body.result.description,
        "P"
      )
      assert.strictEqual((yield* call("PATCH", "/customers/1", { body: [{ op: "remove", path: "name" }] })).status, 422)
      assert.strictEqual((yield* call("PATCH", "/customers/1", { body: [replace("segmentId", 5)] })).status, 422)
      assert.strictEqual((yield* call("PATCH", "/customers/1", { body: [replace("latitude", "north")] })).status, 400)
      assert.strictEqual(
        (yield* call("PATCH", "/customers/1", { body: [{ op: "move", path: "name", from: "note" }] })).status,
        400
      )
      assert.strictEqual((yield* call("PATCH", "/customers/1", { body: { name: "x" } })).status, 400)
      assert.strictEqual((yield* call("GET", "/customers/1")).body.result.description, "P")
    }))

  it.scopedLive("DELETE answers 204 with no body and the record is gone; PUT /{id} updates", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      yield* call("POST", "/keywords", { body: { description: "Urgente" } })
      const deleted = yield* call("DELETE", "/keywords/1")
      assert.strictEqual(deleted.status, 204)
      assert.strictEqual(deleted.text, "")
      assert.strictEqual((yield* call("GET", "/keywords/1")).status, 404)
      assert.strictEqual((yield* call("DELETE", "/keywords/1")).status, 404)
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "keywords"), [])
      yield* call("POST", "/additionalcosts", { body: { name: "Deslocamento", value: 35 } })
      const updated = yield* call("PUT", "/additionalcosts/1", { body: { value: "40.5" } })
      assert.strictEqual(updated.status, 200)
      assert.deepStrictEqual([updated.body.result.name, updated.body.result.value], ["Deslocamento", 40.5])
      assert.strictEqual((yield* call("PUT", "/additionalcosts/2", { body: { value: 1 } })).status, 404)
    }))

  it.scopedLive("Blueprint write forms: expenseDate in a patch, webhooks by name, products' money as \"12,00\", tickets created with 200", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      yield* call("POST", "/users", { body: { login: "ana" } })
      yield* call("POST", "/expensetypes", { body: { description: "Combustível" } })
      yield* call("POST", "/expenses", { body: { userToId: 1, typeId: 1, date: "2026-11-20", amount: 10 } })
      const moved = yield* call("PATCH", "/expenses/1", { body: [replace("expenseDate", "2026-11-21")] })
      assert.strictEqual(moved.status, 200)
      assert.strictEqual(moved.body.result.date, "2026-11-21T00:00:00")
      // The live service patches the date only as expenseDate: `date` is accepted and ignored.
      yield* call("PATCH", "/expenses/1", { body: [replace("/date", "2030-01-01")] })
      assert.strictEqual((yield* call("GET", "/expenses/1")).body.result.date, "2026-11-21T00:00:00")

      const hook = yield* call("POST", "/webhooks", {
        body: { entity: "Task", action: "inclusao", targetUrl: "https://example.com.br/h" }
      })
      assert.strictEqual(hook.status, 201)
      // Written by name (any case) or code; read back by name, as the Blueprint shows.
      assert.deepStrictEqual([hook.body.result.entity, hook.body.result.action], ["Task", "Inclusao"])
      assert.strictEqual(
        (yield* call("POST", "/webhooks", {
          body: { entity: "Tarefa", action: 1, targetUrl: "https://example.com.br/x" }
        })).status,
        400
      )

      const product = yield* call("POST", "/products", {
        body: { externalId: "P1", name: "Filtro", unitaryValue: "12,50", unitaryCost: "7,00" }
      })
      assert.strictEqual(product.status, 201)
      assert.deepStrictEqual([product.body.result.unitaryValue, product.body.result.unitaryCost], ["12,50", "7,00"])

      // GPS intervals are the Blueprint's five values only.
      assert.strictEqual((yield* call("POST", "/users", { body: { login: "bia", gpsFrequency: 150 } })).status, 422)
      assert.strictEqual((yield* call("POST", "/users", { body: { login: "bia", gpsFrequency: 180 } })).status, 201)

      const ticket = yield* call("POST", "/tickets", { body: { title: "Pingando", priority: 1 } })
      assert.strictEqual(ticket.status, 200)
      assert.strictEqual(ticket.body.result.priority, 1)
    }))
})

describe("sandbox: read-back differences", () => {
  it.scopedLive("names, ids, money and dates come back as the live service sends them", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const user =
        (yield* call("POST", "/users", { body: { login: "ana", password: "segredo", name: "Ana" } })).body.result
      assert.strictEqual(user.userID, 1)
      assert.notProperty(user, "id")
      assert.notProperty(user, "password")
      const customer = (yield* call("POST", "/customers", { body: { name: "Padaria" } })).body.result
      assert.strictEqual(customer.description, "Padaria")
      assert.notProperty(customer, "name")
      const product =
        (yield* call("POST", "/products", { body: { name: "Filtro", unitaryValue: 12, unitaryCost: "1234.5" } })).body
          .result
      assert.strictEqual(product.code, 1)
      assert.strictEqual(product.unitaryValue, "12,00")
      assert.strictEqual(product.unitaryCost, "1234,50")
      const service = (yield* call("POST", "/services", { body: { title: "Limpeza", price: 12.345 } })).body.result
      assert.strictEqual(service.price, "12.35")
      const task =
        (yield* call("POST", "/tasks", { body: { idUserFrom: 1, taskDate: "2026-12-01T09:00:00.000Z" } })).body.result
      assert.strictEqual(task.taskID, 1)
      assert.strictEqual(task.taskDate, "2026-12-01T06:00:00") // zone converted to Brazil local time, no zone, no fractions
      assert.strictEqual(task.expense, "0,00")
      assert.strictEqual(task.taskStatus, 1)
      const equipment =
        (yield* call("POST", "/equipments", { body: { name: "Split", warrantyStartDate: "2025-01-15" } })).body.result
      assert.strictEqual(equipment.warrantyStartDate, "2025-01-15T00:00:00")
      assert.strictEqual(equipment.warrantyEndDate, "0001-01-01T00:00:00") // an equipment's unset date (issue 23)
      const webhook =
        (yield* call("POST", "/webhooks", { body: { entity: 4, action: 1, targetUrl: "https://example.com/h" } })).body
          .result
      assert.strictEqual(webhook.urlResponse, "https://example.com/h")
      assert.notProperty(webhook, "targetUrl")
      const order = (yield* call("POST", "/serviceorders", { body: { externalId: "SO-1", customerId: 1 } })).body.result
      assert.strictEqual(order.code, 1)
      assert.strictEqual((yield* call("GET", "/serviceorders/1")).body.result.externalId, "SO-1")
      // Unknown properties are accepted and stored.
      const extra = (yield* call("POST", "/segments", { body: { description: "Varejo", color: "azul" } })).body.result
      assert.strictEqual(extra.color, "azul")
    }))
})
