import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetchAnswer, session, wideWindow } from "./harness.js"

describe("sandbox: lists", () => {
  it.scopedLive("pages with page/pageSize/order, the full envelope and a nextPage link only when there is a next page", () =>
    Effect.gen(function*() {
      const { call, token } = yield* session()
      for (let i = 1; i <= 25; i++) yield* call("POST", "/segments", { body: { description: `Segmento ${i}` } })
      const first = yield* call("GET", "/segments")
      assert.strictEqual(first.status, 200)
      const r = first.body.result
      assert.strictEqual(r.entityList.length, 10) // default page size
      assert.deepStrictEqual(r.pagedSearchReturnData, { order: 0, pageSize: 10, page: 1, totalItems: 25 })
      assert.deepStrictEqual(r.links.map((l: any) => l.rel), ["self", "nextPage"])
      assert.strictEqual(r.links[1].method, "GET")
      // Following nextPage links walks every record exactly once.
      const seen: Array<number> = []
      let href: string | undefined = r.links.find((l: any) => l.rel === "self").href
      while (href !== undefined) {
        const page = yield* fetchAnswer(href, { headers: { authorization: `Bearer ${token}` } })
        seen.push(...page.body.result.entityList.map((s: any) => s.id))
        href = page.body.result.links.find((l: any) => l.rel === "nextPage")?.href
      }
      assert.deepStrictEqual(seen, Array.from({ length: 25 }, (_, i) => i + 1))
      const last = yield* call("GET", "/segments", { query: { page: 3, pageSize: 10 } })
      assert.strictEqual(last.body.result.entityList.length, 5)
      assert.deepStrictEqual(last.body.result.links.map((l: any) => l.rel), ["self"])
      const desc = yield* call("GET", "/segments", { query: { pageSize: 3, order: "desc" } })
      assert.deepStrictEqual(desc.body.result.entityList.map((s: any) => s.id), [25, 24, 23])
      assert.strictEqual(desc.body.result.pagedSearchReturnData.order, 1)
      assert.deepStrictEqual(
        (yield* call("GET", "/segments", { query: { pageSize: 2, order: 1 } })).body.result.entityList.map((s: any) =>
          s.id
        ),
        [25, 24]
      )
      const big = yield* call("GET", "/segments", { query: { pageSize: 1000 } }) // no cap
      assert.strictEqual(big.body.result.entityList.length, 25)
      assert.strictEqual((yield* call("GET", "/segments", { query: { page: 0 } })).status, 400)
      assert.strictEqual((yield* call("GET", "/segments", { query: { order: "sideways" } })).status, 400)
    }))

  it.scopedLive("paramFilter filters by the table's keys (case-insensitive, exact), selectfields picks properties", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      yield* call("POST", "/customers", { body: { externalId: "C1", name: "Padaria Pão Quente", active: true } })
      yield* call("POST", "/customers", { body: { externalId: "C2", name: "Padaria", active: false } })
      yield* call("POST", "/customers", { body: { externalId: "C3", name: "Mercado", active: true } })
      const byName = yield* call("GET", "/customers", { query: { paramFilter: { description: "PADARIA" } } })
      assert.deepStrictEqual(byName.body.result.entityList.map((c: any) => c.externalId), ["C2"])
      const active = yield* call("GET", "/customers", { query: { paramFilter: { active: true } } })
      assert.deepStrictEqual(active.body.result.entityList.map((c: any) => c.externalId), ["C1", "C3"])
      const selected = yield* call("GET", "/customers", {
        query: { paramFilter: { externalId: "c3" }, selectfields: "id,Description" }
      })
      assert.deepStrictEqual(selected.body.result.entityList, [{ id: 3, description: "Mercado" }])
      assert.strictEqual((yield* call("GET", "/customers", { query: { paramFilter: "{not json" } })).status, 400)
      // Tasks take a comma-separated list of externalIds.
      yield* call("POST", "/users", { body: { login: "ana" } })
      for (const id of ["OS-1", "OS-2", "OS-3"]) {
        yield* call("POST", "/tasks", { body: { externalId: id, idUserFrom: 1, taskDate: "2026-12-01" } })
      }
      const tasks = yield* call("GET", "/tasks", { query: { paramFilter: { ...wideWindow, externalId: "OS-1,os-3" } } })
      assert.deepStrictEqual(tasks.body.result.entityList.map((t: any) => t.externalId), ["OS-1", "OS-3"])
    }))

  it.scopedLive("an empty result answers 404 as the live service does, or 200 with the switch", () =>
    Effect.gen(function*() {
      const live = yield* session()
      const empty = yield* live.call("GET", "/users", { query: { paramFilter: {} } })
      assert.strictEqual(empty.status, 404)
      assert.deepStrictEqual(empty.body, { error: "No records found" })
      yield* live.call("POST", "/users", { body: { login: "ana" } })
      assert.strictEqual((yield* live.call("GET", "/users", { query: { paramFilter: {}, page: 2 } })).status, 404) // past the end
      assert.strictEqual(
        (yield* live.call("GET", "/users", { query: { paramFilter: { name: "ninguém" } } })).status,
        404
      )
      const switched = yield* session({ emptyListStatus: 200 })
      const ok = yield* switched.call("GET", "/users", { query: { paramFilter: {} } })
      assert.strictEqual(ok.status, 200)
      assert.deepStrictEqual(ok.body.result.entityList, [])
      assert.strictEqual(ok.body.result.pagedSearchReturnData.totalItems, 0)
    }))

  it.scopedLive("tasks, deleted tasks, expenses and tickets need startDate and endDate (400 without them); the window is inclusive", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      for (const path of ["/tasks", "/tasks/GetDeletedTasks", "/expenses", "/tickets"]) {
        const without = yield* call("GET", path)
        assert.strictEqual(without.status, 400, path)
        assert.strictEqual(without.body.error, "Invalid Date")
        assert.strictEqual(
          (yield* call("GET", path, { query: { paramFilter: { startDate: "2026-01-01" } } })).status,
          400,
          path
        )
        assert.strictEqual(
          (yield* call("GET", path, { query: { paramFilter: { startDate: "2026-13-01", endDate: "2026-12-31" } } }))
            .status,
          400,
          path
        )
      }
      yield* call("POST", "/users", { body: { login: "ana" } })
      yield* call("POST", "/tasks", { body: { externalId: "A", idUserFrom: 1, taskDate: "2026-11-30T23:59:59" } })
      yield* call("POST", "/tasks", { body: { externalId: "B", idUserFrom: 1, taskDate: "2026-12-01T00:00:00" } })
      yield* call("POST", "/tasks", { body: { externalId: "C", idUserFrom: 1, taskDate: "2026-12-31T18:00:00" } })
      yield* call("POST", "/tasks", { body: { externalId: "D", idUserFrom: 1, taskDate: "2027-01-01" } })
      const december = yield* call("GET", "/tasks", {
        query: { paramFilter: { startDate: "2026-12-01", endDate: "2026-12-31" } }
      })
      assert.deepStrictEqual(december.body.result.entityList.map((t: any) => t.externalId), ["B", "C"])
      const timed = yield* call("GET", "/tasks", {
        query: { paramFilter: { startDate: "2026-11-30T23:59:59", endDate: "2026-12-31T17:59:59" } }
      })
      assert.deepStrictEqual(timed.body.result.entityList.map((t: any) => t.externalId), ["A", "B"])
    }))

  it.scopedLive("paths and query names are case-insensitive and a trailing slash is accepted", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      yield* call("POST", "/Segments/", { body: { description: "Varejo" } })
      yield* call("POST", "/SEGMENTS", { body: { description: "Indústria" } })
      const listed = yield* call("GET", "/sEgMeNtS/", { query: { PageSize: 1, PAGE: 2, ORDER: "ASC" } })
      assert.strictEqual(listed.status, 200)
      assert.deepStrictEqual(listed.body.result.entityList.map((s: any) => s.description), ["Indústria"])
      assert.deepStrictEqual(listed.body.result.pagedSearchReturnData, {
        order: 0,
        pageSize: 1,
        page: 2,
        totalItems: 2
      })
      assert.strictEqual((yield* call("GET", "/segments/2/")).body.result.description, "Indústria")
      const tasksUpper = yield* call("GET", "/TASKS/getdeletedtasks", { query: { ParamFilter: wideWindow } })
      assert.strictEqual(tasksUpper.status, 404) // the route exists; no task was deleted yet
      assert.strictEqual(tasksUpper.body.error, "No records found")
      assert.strictEqual(
        (yield* call("GET", "/segments", { query: { PARAMFILTER: { DESCRIPTION: "varejo" } } })).body.result.entityList
          .length,
        1
      )
    }))
})
