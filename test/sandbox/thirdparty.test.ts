/**
 * Replay of the request forms that public third-party clients of the live API send, written down as data (never
 * their code): an n8n community node, a TypeScript sync service (Supabase edge functions), a Python profit-report
 * tool and a Node integration client. Each form is sent byte for byte as those clients build it (query strings
 * included: double-encoded `paramFilter`, PascalCase names, `Order=Asc`, trailing slashes, GET login) to a
 * sandbox on loopback, and its answer is checked for what the client then reads from it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Answer } from "./harness.js"
import { type call as callAs, fetchAnswer, session } from "./harness.js"

interface Fixture {
  readonly users: { readonly ana: number; readonly bruno: number }
  readonly customers: { readonly padaria: number; readonly mercado: number }
  readonly equipment: number
  readonly tasks: { readonly first: number; readonly second: number }
  readonly webhook: number
}

interface CallForm {
  readonly client: "n8n node" | "sync service" | "profit report" | "node client"
  readonly name: string
  readonly method: string
  /** Path and query after `/v2`, exactly as the client writes it. */
  readonly path: (f: Fixture) => string
  readonly body?: (f: Fixture) => unknown
  /** Headers besides the bearer token (clients send a JSON content type even on GETs). */
  readonly anonymous?: boolean
  /** Undefined when the answer is what the client expects, otherwise what is wrong. */
  readonly check: (a: Answer, f: Fixture) => string | undefined
}

const enc = (value: unknown) => encodeURIComponent(JSON.stringify(value))
/** What the n8n node sends: the JSON encoded by hand, then encoded again by its query-string builder. */
const twice = (value: unknown) => encodeURIComponent(enc(value))
/** Python's urlencode of json.dumps: spaces after separators become `+`. */
const py = (value: unknown) =>
  encodeURIComponent(JSON.stringify(value).replace(/":/g, "\": ").replace(/,"/g, ", \"")).replace(/%20/g, "+")

const window = { startDate: "2026-11-01T00:00:00", endDate: "2026-11-30T23:59:59" }

const ok = (
  a: Answer,
  status = 200
) => (a.status === status ? undefined : `answered ${a.status} ${a.text.slice(0, 160)}`)
const list = (a: Answer) => (a.status === 200 ? (a.body?.result?.entityList as Array<any> | undefined) : undefined)
/** A 200 list whose every item passes `each` (and at least one item). */
const listOf = (each: (item: any, f: Fixture) => boolean = () => true, min = 1) => (a: Answer, f: Fixture) => {
  const items = list(a)
  if (items === undefined) return ok(a)
  if (items.length < min) return `only ${items.length} records`
  const wrong = items.find((item) => !each(item, f))
  return wrong === undefined ? undefined : `a record does not match the filter: ${JSON.stringify(wrong).slice(0, 160)}`
}
/** Like `listOf`, but no matching record is also a sensible answer: the live service's 404. */
const listOrNone = (each: (item: any, f: Fixture) => boolean) =>
(
  a: Answer,
  f: Fixture
) => (a.status === 404 ? undefined : listOf(each)(a, f))
const record = (each: (item: any, f: Fixture) => boolean) => (a: Answer, f: Fixture) =>
  a.status !== 200
    ? ok(a)
    : each(a.body?.result, f)
    ? undefined
    : `unexpected record ${JSON.stringify(a.body?.result).slice(0, 200)}`
const token = (a: Answer) => (a.status === 200 && typeof a.body?.result?.accessToken === "string" ? undefined : ok(a))

export const callForms: ReadonlyArray<CallForm> = [
  // --- n8n community node: GET login with a query and a trailing slash; lists as `<entity>/?paramFilter=<JSON
  // encoded twice>&page&pageSize&order`; create/upsert/delete on `<entity>/`.
  {
    client: "n8n node",
    name: "GET login/ with query",
    method: "GET",
    anonymous: true,
    path: () => "/login/?apiKey=sandbox-key&apiToken=sandbox-token",
    check: token
  },
  {
    client: "n8n node",
    name: "customers, empty filter",
    method: "GET",
    path: () => `/customers/?paramFilter=${twice({})}&page=1&pageSize=10&order=asc`,
    check: listOf(undefined, 2)
  },
  {
    client: "n8n node",
    name: "customers by id",
    method: "GET",
    path: (f) => `/customers/?paramFilter=${twice({ id: f.customers.mercado })}&page=1&pageSize=10&order=asc`,
    check: listOf((c, f) => c.id === f.customers.mercado)
  },
  {
    client: "n8n node",
    name: "customer groups",
    method: "GET",
    path: () => `/customerGroups/?paramFilter=${twice({})}&page=1&pageSize=10&order=asc`,
    check: listOf()
  },
  {
    client: "n8n node",
    name: "gps positions of a day",
    method: "GET",
    path: () => `/gps/?paramFilter=${twice({ date: "2026-11-20" })}&page=1&pageSize=10&order=asc`,
    check: listOf((p) => String(p.positionDate).startsWith("2026-11-20"))
  },
  {
    client: "n8n node",
    name: "products",
    method: "GET",
    path: () => `/products/?paramFilter=${twice({})}&page=1&pageSize=10&order=asc`,
    check: listOf((p) => typeof p.productId === "string" && p.productId.length === 36)
  },
  {
    client: "n8n node",
    name: "task types",
    method: "GET",
    path: () => `/taskTypes/?paramFilter=${twice({})}&page=1&pageSize=10&order=asc`,
    check: listOf((t) => typeof t.description === "string", 6)
  },
  {
    client: "n8n node",
    name: "tasks in a window",
    method: "GET",
    path: () => `/tasks/?paramFilter=${twice(window)}&page=1&pageSize=10&order=asc`,
    check: listOf((t) => typeof t.taskID === "number", 2)
  },
  {
    client: "n8n node",
    name: "teams",
    method: "GET",
    path: () => `/teams/?paramFilter=${twice({})}&page=1&pageSize=10&order=asc`,
    check: listOf()
  },
  {
    client: "n8n node",
    name: "users",
    method: "GET",
    path: () => `/users/?paramFilter=${twice({})}&page=1&pageSize=10&order=asc`,
    check: listOf(undefined, 2)
  },
  {
    client: "n8n node",
    name: "webhooks",
    method: "GET",
    path: () => `/webHooks/?paramFilter=${twice({})}&page=1&pageSize=10&order=asc`,
    check: listOf((w) => w.entity === "Task" && w.action === "Inclusao")
  },
  {
    client: "n8n node",
    name: "create a customer",
    method: "POST",
    path: () => "/customers/",
    body: () => ({ externalId: "N8N-1", name: "Oficina Central", active: "true" }),
    check: (a) => ok(a, 201)
  },
  {
    client: "n8n node",
    name: "upsert a customer",
    method: "PUT",
    path: () => "/customers/",
    body: () => ({ externalId: "N8N-1", name: "Oficina Central Ltda" }),
    check: (a) => ok(a, 200)
  },
  {
    client: "n8n node",
    name: "delete a customer",
    method: "DELETE",
    path: () => "/customers/3",
    check: (a) => ok(a, 204)
  },

  // --- TypeScript sync service: GET login with a trailing slash; lists with lower-case names and filters
  // encoded once; one users call in PascalCase; item reads; task writes.
  {
    client: "sync service",
    name: "GET login/ with encoded query",
    method: "GET",
    anonymous: true,
    path: () => `/login/?apiKey=${encodeURIComponent("sandbox-key")}&apiToken=${encodeURIComponent("sandbox-token")}`,
    check: token
  },
  {
    client: "sync service",
    name: "users without paramFilter",
    method: "GET",
    path: () => "/users/?page=1&pageSize=100",
    // The Blueprint requires paramFilter on users (api-notes, "Live behaviour reported by more public clients"):
    // this client's call is refused as the live service refuses it.
    check: (a) => ok(a, 400)
  },
  {
    client: "sync service",
    name: "users in PascalCase",
    method: "GET",
    path: () => `/users/?Page=1&PageSize=200&Order=asc&ParamFilter=${enc({})}`,
    check: listOf(undefined, 2)
  },
  {
    client: "sync service",
    name: "tasks, window, ascending",
    method: "GET",
    path: () => `/tasks/?page=1&pageSize=100&order=asc&paramFilter=${enc(window)}`,
    check: listOf((t) => t.taskDate >= "2026-11-01", 2)
  },
  {
    client: "sync service",
    name: "tasks, window, descending",
    method: "GET",
    path: () => `/tasks/?page=1&pageSize=100&order=desc&paramFilter=${enc(window)}`,
    check: (a, f) => (list(a)?.[0]?.taskID === f.tasks.second ? undefined : ok(a) ?? "not in descending order")
  },
  {
    client: "sync service",
    name: "tasks, unfinished category",
    method: "GET",
    path: () => `/tasks/?page=1&pageSize=100&order=asc&paramFilter=${enc({ ...window, status: 0 })}`,
    check: listOf((t) => t.finished === false, 2)
  },
  {
    client: "sync service",
    name: "tasks of a customer with selectFields",
    method: "GET",
    path: (f) =>
      `/tasks/?page=1&pageSize=200&order=desc&paramFilter=${
        enc({ ...window, customerId: f.customers.padaria })
      }&selectFields=${encodeURIComponent("taskID,customerId,taskDate,userToName")}`,
    // Tasks are served at most 100 a page (tested live by one author): 200 is refused as the live service does.
    check: (a) => ok(a, 400)
  },
  {
    client: "sync service",
    name: "tasks of a task type (taskType and type)",
    method: "GET",
    path: () => `/tasks/?page=1&pageSize=100&order=desc&paramFilter=${enc({ ...window, taskType: 2, type: 2 })}`,
    check: listOf((t) => t.taskType === 2)
  },
  {
    client: "sync service",
    name: "one task with derived fields",
    method: "GET",
    path: (f) => `/tasks/${f.tasks.first}`,
    check: record((t) =>
      t.userFromName === "Ana Souza" && t.userToName === "Ana Souza" &&
      t.customerDescription === "Padaria Pão Quente" && t.taskTypeDescription === "Manutenção preventiva" &&
      typeof t.taskUrl === "string" && t.taskUrl !== "" && t.checkIn === false && t.checkInDate === "" &&
      t.duration === "" && typeof t.dateLastUpdate === "string" && t.dateLastUpdate !== ""
    )
  },
  {
    client: "sync service",
    name: "one task, id encoded",
    method: "GET",
    path: (f) => `/tasks/${encodeURIComponent(String(f.tasks.second))}`,
    check: record((t, f) => t.taskID === f.tasks.second && t.customerId === f.customers.mercado)
  },
  {
    client: "sync service",
    name: "reschedule a task (JSON Patch with leading /)",
    method: "PATCH",
    path: (f) => `/tasks/${f.tasks.first}`,
    body: (
      f
    ) => [{ op: "replace", path: "/taskDate", value: "2026-11-22T10:00:00" }, {
      op: "replace",
      path: "/idUserTo",
      value: f.users.bruno
    }, { op: "replace", path: "/taskType", value: 1 }],
    check: record((t) => t.taskDate === "2026-11-22T10:00:00" && t.userToName === "Bruno Lima")
  },
  {
    client: "sync service",
    name: "create a task on tasks/",
    method: "POST",
    path: () => "/tasks/",
    body: (f) => ({
      idUserFrom: f.users.ana,
      idUserTo: f.users.bruno,
      customerId: f.customers.padaria,
      taskType: 1,
      taskDate: "2026-11-25T08:00:00",
      priority: 2,
      checkinType: 1,
      orientation: "Preventiva programada",
      equipmentsId: [f.equipment],
      address: "Av. Paulista, 1000",
      latitude: -23.56,
      longitude: -46.65
    }),
    check: (a) => (a.status === 201 && typeof a.body?.result?.taskID === "number" ? undefined : ok(a, 201))
  },
  {
    client: "sync service",
    name: "create a task on tasks (no slash)",
    method: "POST",
    path: () => "/tasks",
    body: (f) => ({ idUserFrom: f.users.ana, taskDate: "2026-11-26T08:00:00", orientation: "Visita" }),
    check: (a) => ok(a, 201)
  },
  {
    client: "sync service",
    name: "task types by description",
    method: "GET",
    path: () => `/tasktypes/?paramFilter=${enc({ description: "Instalação" })}&page=1&pageSize=100&order=asc`,
    check: listOf((t) => t.description === "Instalação")
  },
  {
    client: "sync service",
    name: "one task type",
    method: "GET",
    path: () => "/tasktypes/3",
    check: record((t) => t.id === 3 && t.description === "Instalação")
  },
  {
    client: "sync service",
    name: "create a task type",
    method: "POST",
    path: () => "/tasktypes/",
    body: () => ({
      description: "Preventiva 90 min",
      standartTime: "01:30:00",
      sendSatisfactionSurvey: false,
      sendDigitalOs: false,
      active: true,
      requirements: {
        fillReport: true,
        getSignature: false,
        fillRolledKilometer: false,
        emailTheTask: false,
        minimumNumberOfPhotos: 0,
        requiredQuestionnaires: []
      }
    }),
    check: (
      a
    ) => (a.status === 201 && a.body?.result?.standartTime === "01:30:00"
      ? undefined
      : ok(a, 201) ?? `answer ${a.text.slice(0, 200)}`)
  },
  {
    client: "sync service",
    name: "questionnaires",
    method: "GET",
    path: () => `/questionnaires/?paramFilter=${enc({})}&page=1&pageSize=100`,
    check: listOf((q) => Array.isArray(q.questions))
  },
  {
    client: "sync service",
    name: "one equipment",
    method: "GET",
    path: (f) => `/equipments/${f.equipment}`,
    check: record((e, f) => e.associatedCustomerId === f.customers.padaria)
  },
  {
    client: "sync service",
    name: "equipments of a customer",
    method: "GET",
    path: (f) =>
      `/equipments/?paramFilter=${
        enc({ associatedCustomerId: f.customers.padaria, active: true })
      }&page=1&pageSize=100`,
    check: listOf((e, f) => e.associatedCustomerId === f.customers.padaria)
  },
  {
    client: "sync service",
    name: "equipments with selectFields",
    method: "GET",
    path: () =>
      `/equipments/?paramFilter=${encodeURIComponent("{}")}&page=1&pageSize=100&order=asc&selectFields=${
        encodeURIComponent("id,name,associatedCustomerId,categoryId")
      }`,
    check: listOf((e) => Object.keys(e).length === 4)
  },
  {
    client: "sync service",
    name: "equipment categories",
    method: "GET",
    path: () => `/equipmentCategories/?paramFilter=${encodeURIComponent("{}")}&page=1&pageSize=100&order=asc`,
    check: listOf()
  },
  {
    client: "sync service",
    name: "active customers",
    method: "GET",
    path: () => `/customers/?paramFilter=${enc({ active: true })}&page=1&pageSize=100`,
    check: listOf((c) => c.active === true)
  },
  {
    client: "sync service",
    name: "customers by name with selectFields",
    method: "GET",
    path: () =>
      `/customers/?page=1&pageSize=50&order=asc&paramFilter=${
        enc({ description: "Mercado Bom Preço" })
      }&selectFields=id,description`,
    check: listOf((c) => c.description === "Mercado Bom Preço" && Object.keys(c).length === 2)
  },
  {
    client: "sync service",
    name: "customers with selectfields (lower case)",
    method: "GET",
    path: () =>
      `/customers/?paramFilter=${enc({})}&page=1&pageSize=500&order=asc&selectfields=${
        encodeURIComponent("id,description,cpfCnpj,address")
      }`,
    check: listOf((c) => "cpfCnpj" in c)
  },
  {
    client: "sync service",
    name: "one customer",
    method: "GET",
    path: (f) => `/customers/${f.customers.padaria}`,
    check: record((c) =>
      c.description === "Padaria Pão Quente" && typeof c.creationDate === "string" && c.creationDate !== ""
    )
  },

  // --- Python profit report: GET login/ with the secrets in the query; lists without paramFilter and with a huge
  // pageSize; tasks with urlencode(json.dumps(...)) and day-only dates, status category and type.
  {
    client: "profit report",
    name: "GET login/ with query",
    method: "GET",
    anonymous: true,
    path: () => "/login/?apiKey=sandbox-key&apiToken=sandbox-token",
    check: token
  },
  {
    client: "profit report",
    name: "tasks, finished either way, of a type",
    method: "GET",
    path: () =>
      `/tasks/?page=1&pageSize=100&paramFilter=${
        py({ startDate: "2026-11-01", endDate: "2026-11-30", status: 3, type: 2 })
      }`,
    check: listOrNone((t) => t.finished === true && t.taskType === 2)
  },
  {
    client: "profit report",
    name: "products, no filter, huge page",
    method: "GET",
    path: () => "/products/?pageSize=9999999",
    check: listOf()
  },
  {
    client: "profit report",
    name: "services, no filter, huge page",
    method: "GET",
    path: () => "/services/?pageSize=999999999",
    check: listOf()
  },
  {
    client: "profit report",
    name: "task types, no filter, huge page",
    method: "GET",
    path: () => "/taskTypes/?pageSize=999999999",
    check: listOf(undefined, 6)
  },
  {
    client: "profit report",
    name: "users, no filter, huge page",
    method: "GET",
    path: () => "/users/?pageSize=9999999",
    // No paramFilter: refused, as the Blueprint says the live service does.
    check: (a) => ok(a, 400)
  },

  // --- Node integration client: POST login without a slash; `ParamFilter` (encoded once), `Page`, `PageSize`,
  // `Order=Asc`, no trailing slash.
  {
    client: "node client",
    name: "POST login",
    method: "POST",
    anonymous: true,
    path: () => "/login",
    body: () => ({ apiKey: "sandbox-key", apiToken: "sandbox-token" }),
    check: token
  },
  {
    client: "node client",
    name: "customers, no filter",
    method: "GET",
    path: () => "/customers?Page=1&PageSize=1000&Order=Asc",
    check: listOf(undefined, 2)
  },
  {
    client: "node client",
    name: "customer by id",
    method: "GET",
    path: (f) => `/customers?ParamFilter=${enc({ id: f.customers.mercado })}&Page=1&PageSize=1&Order=Asc`,
    check: listOf((c, f) => c.id === f.customers.mercado)
  },
  {
    client: "node client",
    name: "customers created since, active",
    method: "GET",
    path: () =>
      `/customers?ParamFilter=${
        enc({ creationDate: "2020-01-01T00:00:00", active: true })
      }&Page=1&PageSize=1000&Order=Asc`,
    check: listOf((c) => c.active === true)
  },
  {
    client: "node client",
    name: "tasks of a customer",
    method: "GET",
    path: (f) =>
      `/tasks?ParamFilter=${enc({ customerId: f.customers.mercado, ...window })}&Page=1&PageSize=100&Order=Asc`,
    check: listOf((t, f) => t.customerId === f.customers.mercado)
  },
  {
    client: "node client",
    name: "user by name",
    method: "GET",
    path: () => `/users?ParamFilter=${enc({ name: "Bruno Lima" })}&Page=1&PageSize=100&Order=Asc`,
    check: listOf((u) => u.name === "Bruno Lima")
  },
  {
    client: "node client",
    name: "user by userID",
    method: "GET",
    path: (f) => `/users?ParamFilter=${enc({ userID: f.users.bruno })}&Page=1&PageSize=100&Order=Asc`,
    check: listOf((u, f) => (u.userID ?? u.userId) === f.users.bruno)
  }
]

/** The records the call forms read: two users, customers, an equipment, two tasks (one finished), a webhook. */
const seed = (call: ReturnType<typeof callAs>) =>
  Effect.gen(function*() {
    const id = (a: Answer, name: string) => {
      if (a.status !== 201) throw new Error(`seeding ${name}: ${a.status} ${a.text}`)
      const r = a.body.result
      return (r.userID ?? r.userId ?? r.taskID ?? r.id) as number
    }
    const ana = id(yield* call("POST", "/users", { body: { login: "ana", name: "Ana Souza", password: "x" } }), "ana")
    const bruno = id(
      yield* call("POST", "/users", { body: { login: "bruno", name: "Bruno Lima", password: "x" } }),
      "bruno"
    )
    const padaria = id(
      yield* call("POST", "/customers", { body: { externalId: "C1", name: "Padaria Pão Quente", active: true } }),
      "padaria"
    )
    const mercado = id(
      yield* call("POST", "/customers", { body: { externalId: "C2", name: "Mercado Bom Preço", active: false } }),
      "mercado"
    )
    yield* call("POST", "/customergroups", { body: { description: "Varejo", clientsId: [padaria] } })
    yield* call("POST", "/teams", { body: { description: "Equipe Sul", participants: [ana], managers: [bruno] } })
    const category = id(
      yield* call("POST", "/equipmentcategories", { body: { externalId: "EQC", description: "Split" } }),
      "category"
    )
    const equipment = id(
      yield* call("POST", "/equipments", {
        body: {
          externalId: "E1",
          name: "Split sala",
          associatedCustomerId: padaria,
          categoryId: category,
          active: true
        }
      }),
      "equipment"
    )
    yield* call("POST", "/products", { body: { externalId: "P1", name: "Filtro", unitaryValue: 10 } })
    yield* call("POST", "/services", { body: { externalCode: "S1", title: "Limpeza", price: 100 } })
    const first = id(
      yield* call("POST", "/tasks", {
        body: {
          externalId: "OS-1",
          idUserFrom: ana,
          idUserTo: ana,
          customerId: padaria,
          taskType: 1,
          taskDate: "2026-11-20T09:00:00"
        }
      }),
      "task 1"
    )
    const second = id(
      yield* call("POST", "/tasks", {
        body: {
          externalId: "OS-2",
          idUserFrom: ana,
          idUserTo: bruno,
          customerId: mercado,
          taskType: 2,
          taskDate: "2026-11-21T09:00:00"
        }
      }),
      "task 2"
    )
    const webhook = id(
      yield* call("POST", "/webhooks", { body: { entity: 4, action: 1, targetUrl: "https://example.com/hook" } }),
      "webhook"
    )
    return {
      users: { ana, bruno },
      customers: { padaria, mercado },
      equipment,
      tasks: { first, second },
      webhook
    } satisfies Fixture
  })

describe("sandbox: third-party call forms", () => {
  it.scopedLive("every call form public clients send gets the answer they read", () =>
    Effect.gen(function*() {
      const { sandbox, token, call } = yield* session({ rate: { limit: 10_000, windowMs: 60_000 } })
      const fixture = yield* seed(call)
      const failures: Array<string> = []
      for (const form of callForms) {
        const headers: Record<string, string> = { "content-type": "application/json" }
        if (form.anonymous !== true) headers["authorization"] = `Bearer ${token}`
        const body = form.body?.(fixture)
        const answer = yield* fetchAnswer(`${sandbox.url}${form.path(fixture)}`, {
          method: form.method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        const problem = form.check(answer, fixture)
        if (problem !== undefined) failures.push(`${form.client}: ${form.name}: ${problem}`)
      }
      process.stdout.write(
        `third-party call forms: ${callForms.length - failures.length} of ${callForms.length} work\n`
      )
      assert.deepStrictEqual(failures, [])
    }))
})
