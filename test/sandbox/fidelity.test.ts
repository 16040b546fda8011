/**
 * The sandbox answering as the live service and its Blueprint do (api-reference §1–3), over loopback: every form
 * of `paramFilter` and query names, paths in any case with a trailing slash, GET login; the Blueprint's filters;
 * derived read-back fields and unset values; the users' id name switch; task types listed and written; the
 * read-only lists (questionnaires, GPS positions, satisfaction surveys, quotations).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Answer } from "./harness.js"
import { fetchAnswer, replace, session, wideWindow } from "./harness.js"

const ids = (
  a: Answer,
  name = "id"
): Array<unknown> => (a.status === 200 ? a.body.result.entityList.map((x: any) => x[name]) : [])

describe("sandbox: protocol forms", () => {
  it.scopedLive("paramFilter encoded twice, PascalCase names, an empty paramFilter, paths in any case with a trailing slash", () =>
    Effect.gen(function*() {
      const { sandbox, token, call } = yield* session()
      for (const [id, name] of [["C1", "Padaria"], ["C2", "Mercado"]]) {
        yield* call("POST", "/customers", { body: { externalId: id, name } })
      }
      const get = (pathAndQuery: string) =>
        fetchAnswer(`${sandbox.url}${pathAndQuery}`, { headers: { authorization: `Bearer ${token}` } })
      const once = encodeURIComponent(JSON.stringify({ externalId: "C2" }))
      assert.deepStrictEqual(
        ids(
          yield* get(`/customers/?paramFilter=${encodeURIComponent(once)}&page=1&pageSize=10&order=asc`),
          "externalId"
        ),
        ["C2"]
      )
      assert.deepStrictEqual(
        ids(yield* get(`/Customers?ParamFilter=${once}&Page=1&PageSize=10&Order=Asc`), "externalId"),
        ["C2"]
      )
      assert.deepStrictEqual(ids(yield* get(`/CUSTOMERS/?paramFilter=&page=1`), "externalId"), ["C1", "C2"])
      assert.deepStrictEqual(ids(yield* get(`/customers/?paramFilter=null`), "externalId"), ["C1", "C2"])
      assert.strictEqual((yield* get(`/customers/?paramFilter=${encodeURIComponent("%7Bnot json")}`)).status, 400)
      // Links as the live service writes them: ParamFilter, Page, PageSize, Order=Asc in PascalCase.
      const paged = yield* get(
        `/customers/?paramFilter=${encodeURIComponent(JSON.stringify({ active: null }))}&pageSize=1`
      )
      const next = new URL(paged.body.result.links[1].href)
      assert.deepStrictEqual([...next.searchParams], [["ParamFilter", "{\"active\":null}"], ["Page", "2"], [
        "PageSize",
        "1"
      ], ["Order", "Asc"]])
      assert.deepStrictEqual(
        ids(yield* fetchAnswer(next.href, { headers: { authorization: `Bearer ${token}` } }), "externalId"),
        ["C2"]
      )
      const login = yield* fetchAnswer(`${sandbox.url}/LOGIN/?ApiKey=sandbox-key&ApiToken=sandbox-token`, {
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(login.status, 200)
      assert.strictEqual(typeof login.body.result.accessToken, "string")
    }))
})

describe("sandbox: Blueprint filters", () => {
  it.scopedLive("tasks: status categories, type, idUserTo, taskID, priority, tags, customerGroupId, dateLastUpdate", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const ana = (yield* call("POST", "/users", { body: { login: "ana", name: "Ana" } })).body.result.userID
      const bruno = (yield* call("POST", "/users", { body: { login: "bruno", name: "Bruno" } })).body.result.userID
      const tag = (yield* call("POST", "/keywords", { body: { description: "Urgente" } })).body.result.id
      const customer =
        (yield* call("POST", "/customers", { body: { externalId: "C1", name: "Padaria" } })).body.result.id
      yield* call("POST", "/customergroups", { body: { description: "Varejo", clientsId: [customer] } })
      const task = (body: object) =>
        Effect.map(
          call("POST", "/tasks", { body: { idUserFrom: ana, taskDate: "2026-11-20T09:00:00", ...body } }),
          (a) => a.body.result.taskID as number
        )
      const t1 = yield* task({ idUserTo: ana, taskType: 1, priority: 1, keyWords: [tag], customerId: customer })
      const t2 = yield* task({ idUserTo: bruno, taskType: 2, priority: 3 })
      const list = (filter: object) => call("GET", "/tasks", { query: { paramFilter: { ...wideWindow, ...filter } } })
      assert.deepStrictEqual(ids(yield* list({ status: 0 }), "taskID"), [t1, t2]) // unfinished: both are open
      assert.deepStrictEqual(ids(yield* list({ status: "4" }), "taskID"), [t1, t2]) // all
      assert.deepStrictEqual(ids(yield* list({ status: "unfinished" }), "taskID"), [t1, t2])
      assert.strictEqual((yield* list({ status: 3 })).status, 404) // finished either way: none is
      assert.strictEqual((yield* list({ status: 9 })).status, 400)
      assert.deepStrictEqual(ids(yield* list({ type: 2 }), "taskID"), [t2])
      assert.deepStrictEqual(ids(yield* list({ idUserTo: bruno }), "taskID"), [t2])
      assert.deepStrictEqual(ids(yield* list({ taskID: String(t2) }), "taskID"), [t2])
      assert.deepStrictEqual(ids(yield* list({ priority: "3" }), "taskID"), [t2])
      assert.deepStrictEqual(ids(yield* list({ tags: String(tag) }), "taskID"), [t1])
      assert.deepStrictEqual(ids(yield* list({ customerGroupId: 1 }), "taskID"), [t1])
      assert.deepStrictEqual(ids(yield* list({ orientation: "" }), "taskID"), [t1, t2]) // an empty filter value filters nothing
      assert.deepStrictEqual(ids(yield* list({ dateLastUpdate: "2000-01-01T00:00:00" }), "taskID"), [t1, t2])
      assert.strictEqual((yield* list({ dateLastUpdate: "2999-01-01T00:00:00" })).status, 404)
    }))

  it.scopedLive("the id under any of its names; customers' creationDate; users by name; expenses by type", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      yield* call("POST", "/users", { body: { login: "ana", name: "Ana" } })
      yield* call("POST", "/users", { body: { login: "bruno", name: "Bruno" } })
      for (const [id, name] of [["C1", "Padaria"], ["C2", "Mercado"]]) {
        yield* call("POST", "/customers", { body: { externalId: id, name } })
      }
      const users = (filter: object) => call("GET", "/users", { query: { paramFilter: filter } })
      assert.deepStrictEqual(ids(yield* users({ userID: 2 }), "userID"), [2])
      assert.deepStrictEqual(ids(yield* users({ userId: 2 }), "userID"), [2])
      assert.deepStrictEqual(ids(yield* users({ name: "ana" }), "userID"), [1])
      const customers = (filter: object) => call("GET", "/customers", { query: { paramFilter: filter } })
      assert.deepStrictEqual(ids(yield* customers({ id: 2 })), [2])
      assert.deepStrictEqual(ids(yield* customers({ externalId: "C1,C2" })), [1, 2])
      assert.deepStrictEqual(ids(yield* customers({ creationDate: "2001-01-01" })), [1, 2])
      assert.strictEqual((yield* customers({ creationDate: "2999-01-01" })).status, 404)
      assert.strictEqual((yield* customers({ creationDate: "yesterday" })).status, 400)
      const type = (yield* call("POST", "/expensetypes", { body: { description: "Combustível" } })).body.result.id
      const other = (yield* call("POST", "/expensetypes", { body: { description: "Almoço" } })).body.result.id
      for (const typeId of [type, other]) {
        yield* call("POST", "/expenses", { body: { userToId: 1, typeId, date: "2026-11-20", amount: 10 } })
      }
      const expenses = yield* call("GET", "/expenses", { query: { paramFilter: { ...wideWindow, type: other } } })
      assert.deepStrictEqual(expenses.body.result.entityList.map((e: any) => e.typeId), [other])
      assert.strictEqual(expenses.body.result.entityList[0].typeName, "Almoço")
    }))
})

describe("sandbox: read-back", () => {
  it.scopedLive("a task carries the names, URL, check-in/out, dates and unset values the live service sends", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const ana = (yield* call("POST", "/users", { body: { login: "ana", name: "Ana Souza" } })).body.result.userID
      const bruno = (yield* call("POST", "/users", { body: { login: "bruno", name: "Bruno Lima" } })).body.result.userID
      const customer =
        (yield* call("POST", "/customers", { body: { externalId: "C1", name: "Padaria" } })).body.result.id
      const created = yield* call("POST", "/tasks", {
        body: { idUserFrom: ana, idUserTo: ana, customerId: customer, taskType: 3, taskDate: "2026-11-20T09:00:00" }
      })
      assert.strictEqual(created.status, 201)
      const t = created.body.result
      assert.include(t, {
        userFromName: "Ana Souza",
        userToName: "Ana Souza",
        customerDescription: "Padaria",
        customerExternalId: "C1",
        taskTypeDescription: "Instalação"
      })
      assert.include(t, {
        checkIn: false,
        checkInDate: "",
        checkOut: false,
        checkOutDate: "",
        finished: false,
        duration: "",
        report: "",
        pendency: ""
      })
      assert.include(t, {
        deliveredDate: "0001-01-01T00:00:00",
        teamId: 0,
        orientation: "",
        ticketId: 0,
        estimatedDuration: "00:00:00"
      })
      assert.match(t.taskUrl, /^http:\/\/127\.0\.0\.1:\d+\/tarefa\/1$/)
      assert.match(t.creationDate, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
      assert.strictEqual(t.dateLastUpdate, t.creationDate)
      const patched = yield* call("PATCH", `/tasks/${t.taskID}`, { body: [replace("idUserTo", bruno)] })
      assert.strictEqual(patched.body.result.userToName, "Bruno Lima")
      const listed = yield* call("GET", "/tasks", {
        query: { paramFilter: wideWindow, selectfields: "taskID,userToName" }
      })
      assert.deepStrictEqual(listed.body.result.entityList, [{ taskID: t.taskID, userToName: "Bruno Lima" }])
      const none = (yield* call("POST", "/tasks", { body: { idUserFrom: ana, taskDate: "2026-11-21" } })).body.result
      assert.include(none, {
        customerId: 0,
        idUserTo: 0,
        taskType: 0,
        userToName: "",
        customerDescription: "",
        taskTypeDescription: ""
      })
    }))

  it.scopedLive("questionnaire answers read back with the Blueprint's names next to the written ones", () =>
    Effect.gen(function*() {
      const { call } = yield* session({ answerDelayMs: 0 })
      yield* call("POST", "/users", { body: { login: "ana" } })
      const task =
        (yield* call("POST", "/tasks", { body: { idUserFrom: 1, taskDate: "2026-11-20", questionnaireId: 1 } })).body
          .result.taskID
      const answer = { itemID: "1", codigoChecklist: "1", codigoPergunta: "2", resposta: "7" }
      assert.strictEqual((yield* call("PUT", `/tasks/${task}/questionnaire-response`, { body: answer })).status, 202)
      const [group] = (yield* call("GET", `/tasks/${task}`)).body.result.questionnaires
      assert.include(group, {
        itemId: "1",
        itemID: "1",
        questionnaireId: "1",
        questionnaireDescription: "Checklist de manutenção preventiva"
      })
      assert.include(group.answers[0], {
        questionId: "2",
        reply: "7",
        questionDescription: "Temperatura de saída (°C)",
        replyId: 1
      })
    }))

  it.scopedLive("users' userType object, products' GUID, webhook names, record dates; userId behind a switch", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const user = (yield* call("POST", "/users", {
        body: { login: "ana", userType: 2, address: "Rua A", latitude: -23.5, longitude: -46.6 }
      })).body.result
      assert.deepStrictEqual(user.userType, { userTypeId: 2, description: "team manager" })
      assert.deepStrictEqual(user.basePoint, { address: "Rua A", latitude: -23.5, longitude: -46.6 })
      assert.strictEqual(user.userID, 1)
      const product = (yield* call("POST", "/products", { body: { name: "Filtro" } })).body.result
      assert.match(product.productId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      assert.strictEqual((yield* call("GET", `/products/${product.code}`)).body.result.productId, product.productId)
      const hook =
        (yield* call("POST", "/webhooks", { body: { entity: 4, action: 1, targetUrl: "https://x/h" } })).body.result
      assert.include(hook, { entity: "Task", action: "Inclusao", deleteDate: "" })
      const segment = (yield* call("POST", "/segments", { body: { description: "Varejo" } })).body.result
      assert.strictEqual(segment.registrationDate, segment.creationDate)

      const blueprint = yield* session({ userIdStyle: "userId" })
      const listed = yield* blueprint.call("POST", "/users", { body: { login: "ana" } })
      assert.strictEqual(listed.body.result.userId, 1)
      assert.notProperty(listed.body.result, "userID")
      const list = yield* blueprint.call("GET", "/users", { query: { paramFilter: {} } })
      assert.deepStrictEqual(list.body.result.entityList.map((u: any) => u.userId), [1])
    }))
})

describe("sandbox: task types and read-only lists", () => {
  it.scopedLive("task types are listed, created, patched and deleted", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const all = yield* call("GET", "/taskTypes/", { query: { pageSize: 100 } })
      assert.strictEqual(all.body.result.entityList.length, 6)
      assert.include(all.body.result.entityList[0], {
        id: 1,
        description: "Manutenção preventiva",
        standartTime: "01:00:00",
        active: true
      })
      const created = yield* call("POST", "/taskTypes/", {
        body: { description: "Preventiva 90 min", standartTime: "01:30:00", requirements: { fillReport: true } }
      })
      assert.strictEqual(created.status, 201)
      assert.include(created.body.result, { id: 7, standartTime: "01:30:00", standardTime: "01:30:00" })
      assert.strictEqual(
        (yield* call("PATCH", "/tasktypes/7", { body: [replace("standartTime", "02:00:00")] })).body.result
          .standartTime,
        "02:00:00"
      )
      const found = yield* call("GET", "/tasktypes", { query: { paramFilter: { description: "preventiva 90 MIN" } } })
      assert.deepStrictEqual(ids(found), [7])
      assert.strictEqual(
        (yield* call("POST", "/tasks", { body: { idUserFrom: 1, taskDate: "2026-11-20" } })).status,
        422
      ) // no user 1 yet
      assert.strictEqual((yield* call("DELETE", "/tasktypes/7")).status, 204)
      assert.strictEqual((yield* call("GET", "/tasktypes/7")).status, 404)
    }))

  it.scopedLive("questionnaires, GPS positions, satisfaction surveys and quotations are seeded and listed with their filters", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const questionnaires = yield* call("GET", "/questionnaires/")
      assert.deepStrictEqual(ids(questionnaires), [1, 2])
      assert.isArray(questionnaires.body.result.entityList[0].questions)
      assert.strictEqual((yield* call("GET", "/questionnaires/2")).body.result.description, "Vistoria de entrega")
      const day = yield* call("GET", "/gps/", { query: { paramFilter: { date: "2026-11-20" } } })
      assert.strictEqual(day.body.result.entityList.length, 2)
      assert.notProperty(day.body.result.entityList[0], "id") // positions have no id
      assert.include(day.body.result.entityList[0], {
        userId: 1,
        positionDate: "2026-11-20T08:00:00",
        NetworkOperatorName: "VIVO"
      })
      assert.strictEqual(
        (yield* call("GET", "/gps/", { query: { paramFilter: { ...wideWindow, userId: 2 } } })).body.result.entityList
          .length,
        1
      )
      assert.strictEqual((yield* call("GET", "/gps/")).status, 400) // a day or a window is needed
      const survey = yield* call("GET", "/satisfactionSurveys/", { query: { paramFilter: { taskId: [1] } } })
      assert.deepStrictEqual(ids(survey), [1])
      assert.strictEqual(
        (yield* call("GET", "/satisfactionSurveys/", { query: { paramFilter: { taskID: [2] } } })).status,
        404
      )
      const quotation = yield* call("GET", "/quotations/1")
      assert.include(quotation.body.result, { publicId: 1, descount: "0.00" })
      assert.deepStrictEqual(
        ids(yield* call("GET", "/quotations", { query: { paramFilter: { CurrentStage: "em aberto" } } }), "publicId"),
        [1]
      )
    }))
})
