/**
 * The live service's limits as the sandbox emulates them (api-notes, "Live behaviour reported by more public
 * clients"): page caps, paramFilter required, bursts of 404/500 above N requests in flight on one token, 500 for
 * empty filtered lists, slow pages, the Blueprint's error bodies and the task types' paging quirk.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { session, wideWindow } from "./harness.js"

describe("sandbox: the live service's limits", () => {
  it.scopedLive(
    "read-back: equipments' urlImage, uriAnexos, expirationDate and unset dates as 0001-01-01T00:00:00, customers' uriAttachments",
    () =>
      Effect.gen(function*() {
        const { call } = yield* session()
        const equipment = yield* call("POST", "/equipments", { body: { name: "Compressor" } })
        const id = equipment.body.result.id
        const read = (yield* call("GET", `/equipments/${id}`)).body.result
        assert.strictEqual(read.urlImage, "")
        assert.deepStrictEqual(read.uriAnexos, [])
        assert.strictEqual(read.expirationDate, "0001-01-01T00:00:00")
        assert.strictEqual(read.warrantyStartDate, "0001-01-01T00:00:00")
        assert.strictEqual(read.warrantyEndDate, "0001-01-01T00:00:00")
        const dated = yield* call("POST", "/equipments", { body: { name: "Bomba", warrantyEndDate: "2027-01-31" } })
        const datedRead = (yield* call("GET", `/equipments/${dated.body.result.id}`)).body.result
        assert.match(datedRead.warrantyEndDate, /^2027-01-31/)
        const customer = yield* call("POST", "/customers", { body: { name: "Padaria" } })
        const customerRead = (yield* call("GET", `/customers/${customer.body.result.id}`)).body.result
        assert.deepStrictEqual(customerRead.uriAttachments, [])
      })
  )

  it.scopedLive("tasks answer 400 above 100 a page (firm, default); --no-page-caps serves any size", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      yield* call("POST", "/users", { body: { login: "ana" } })
      yield* call("POST", "/tasks", { body: { externalId: "OS-1", idUserFrom: 1, taskDate: "2026-12-01" } })
      const ok = yield* call("GET", "/tasks", { query: { paramFilter: wideWindow, pageSize: 100 } })
      assert.strictEqual(ok.status, 200)
      const refused = yield* call("GET", "/tasks", { query: { paramFilter: wideWindow, pageSize: 150 } })
      assert.strictEqual(refused.status, 400)
      assert.deepStrictEqual(refused.body, { error: "You cannot request more than 100 tasks per page." })
      // Other collections have no known cap.
      assert.strictEqual((yield* call("GET", "/segments", { query: { pageSize: 1000 } })).status, 404)
      const uncapped = yield* session({ pageCaps: false })
      yield* uncapped.call("POST", "/users", { body: { login: "ana" } })
      yield* uncapped.call("POST", "/tasks", { body: { externalId: "OS-1", idUserFrom: 1, taskDate: "2026-12-01" } })
      assert.strictEqual(
        (yield* uncapped.call("GET", "/tasks", { query: { paramFilter: wideWindow, pageSize: 1000 } })).status,
        200
      )
    }))

  it.scopedLive("pageCapOf (--page-cap) caps any list, replaces the table's cap, and setPageCap changes it while running", () =>
    Effect.gen(function*() {
      const { call, sandbox } = yield* session({ pageCapOf: { segments: 20, tasks: 50 }, pageCaps: false })
      yield* call("POST", "/segments", { body: { description: "Hospitais" } })
      assert.strictEqual((yield* call("GET", "/segments", { query: { pageSize: 20 } })).status, 200)
      const refused = yield* call("GET", "/segments", { query: { pageSize: 21 } })
      assert.strictEqual(refused.status, 400)
      assert.deepStrictEqual(refused.body, { error: "You cannot request more than 20 segments per page." })
      // With --no-page-caps too, and in place of the table's 100 for tasks.
      const tasks = yield* call("GET", "/tasks", { query: { paramFilter: wideWindow, pageSize: 51 } })
      assert.deepStrictEqual(tasks.body, { error: "You cannot request more than 50 tasks per page." })
      yield* sandbox.control.setPageCap("segments", 5)
      assert.strictEqual((yield* call("GET", "/segments", { query: { pageSize: 20 } })).status, 400)
      yield* sandbox.control.setPageCap("segments", undefined)
      assert.strictEqual((yield* call("GET", "/segments", { query: { pageSize: 1000 } })).status, 200)
      const wrong = yield* Effect.flip(session({ pageCapOf: { segmentz: 5 } }))
      assert.match(wrong.message, /page cap of "segmentz": no such resource/)
    }))

  it.scopedLive("users and webhooks need paramFilter (400 with the Blueprint's message); {} is enough", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const users = yield* call("GET", "/users")
      assert.strictEqual(users.status, 400)
      assert.strictEqual(users.body.error, "The paramFilter is required as ParamUserFilter string json.")
      assert.strictEqual((yield* call("GET", "/webhooks")).status, 400)
      assert.strictEqual((yield* call("GET", "/users", { query: { paramFilter: {} } })).status, 404)
      assert.strictEqual((yield* call("GET", "/webhooks", { query: { paramFilter: {} } })).status, 404)
      assert.strictEqual((yield* call("GET", "/segments")).status, 404)
    }))

  it.scopedLive("users' unset hourValue reads 0 (the Blueprint's default), in a list, by id and in the create answer", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const created = yield* call("POST", "/users", { body: { login: "ana" } })
      assert.strictEqual(created.body.result.hourValue, 0)
      const id = created.body.result.userID
      assert.strictEqual((yield* call("GET", `/users/${id}`)).body.result.hourValue, 0)
      yield* call("POST", "/users", { body: { login: "bia", hourValue: 85.5 } })
      const listed = (yield* call("GET", "/users", { query: { paramFilter: {} } })).body.result.entityList
      assert.deepStrictEqual(listed.map((u: { hourValue: unknown }) => u.hourValue), [0, 85.5])
      // A value set back to nothing reads 0 again.
      yield* call("PATCH", `/users/${id}`, { body: [{ op: "replace", path: "hourValue", value: null }] })
      assert.strictEqual((yield* call("GET", `/users/${id}`)).body.result.hourValue, 0)
    }))

  it.scopedLive("a second webhook for one entity is refused: 409, the Blueprint's body with errorCode 1026", () =>
    Effect.gen(function*() {
      const { call } = yield* session()
      const first = yield* call("POST", "/webhooks", {
        body: { entity: "Task", action: "Inclusao", targetUrl: "https://example.com.br/a" }
      })
      assert.strictEqual(first.status, 201)
      // Another action or URL for the same entity (by name or by code) is a second subscription of it.
      for (
        const body of [{ entity: 4, action: 2, targetUrl: "https://example.com.br/b" }, {
          entity: "task",
          action: 1,
          targetUrl: "https://example.com.br/a"
        }]
      ) {
        const refused = yield* call("POST", "/webhooks", { body })
        assert.strictEqual(refused.status, 409)
        assert.deepStrictEqual(refused.body, {
          message: `Webhook for entity "Task" already exists (id ${first.body.result.id})`,
          target: null,
          errorCode: 1026,
          errors: null
        })
      }
      // Another entity is free; once the first is deleted, its entity is free again.
      assert.strictEqual(
        (yield* call("POST", "/webhooks", {
          body: { entity: "Customer", action: 1, targetUrl: "https://example.com.br/a" }
        }))
          .status,
        201
      )
      assert.strictEqual((yield* call("DELETE", `/webhooks/${first.body.result.id}`)).status, 204)
      assert.strictEqual(
        (yield* call("POST", "/webhooks", {
          body: { entity: "Task", action: 2, targetUrl: "https://example.com.br/b" }
        }))
          .status,
        201
      )
      const listed = (yield* call("GET", "/webhooks", { query: { paramFilter: {} } })).body.result.entityList
      assert.deepStrictEqual(listed.map((w: { entity: string }) => w.entity).sort(), ["Customer", "Task"])
    }))

  it.scopedLive("error bodies in the Blueprint's shape with the switch; the rate limit keeps {error}", () =>
    Effect.gen(function*() {
      const { call } = yield* session({ errorBodies: "blueprint", rate: { limit: 3, windowMs: 60_000 } })
      const users = yield* call("GET", "/users")
      assert.deepStrictEqual(users.body, {
        message: "The paramFilter is required as ParamUserFilter string json.",
        target: null,
        errorCode: 0,
        errors: null
      })
      assert.deepStrictEqual((yield* call("GET", "/customers/99")).status, 404)
      const limited = yield* call("GET", "/segments")
      assert.strictEqual(limited.status, 403)
      assert.deepStrictEqual(limited.body, { error: "Rate limit temporarily exceeded" })
    }))

  it.scopedLive("task types: totalItems 0 and no nextPage link with the switch (one author's observation)", () =>
    Effect.gen(function*() {
      const plain = yield* session()
      const regular = (yield* plain.call("GET", "/taskTypes", { query: { pageSize: 1 } })).body.result
      assert.isAbove(regular.pagedSearchReturnData.totalItems, 1)
      assert.deepStrictEqual(regular.links.map((l: any) => l.rel), ["self", "nextPage"])
      const quirky = yield* session({ taskTypesQuirk: true })
      const page = (yield* quirky.call("GET", "/taskTypes", { query: { pageSize: 1 } })).body.result
      assert.strictEqual(page.entityList.length, 1)
      assert.strictEqual(page.pagedSearchReturnData.totalItems, 0)
      assert.deepStrictEqual(page.links.map((l: any) => l.rel), ["self"])
    }))

  it.scopedLive("above N requests in flight on one token, calls fail in bursts of 404/500; alone they succeed", () =>
    Effect.gen(function*() {
      const { call, sandbox } = yield* session()
      yield* call("POST", "/segments", { body: { description: "Varejo" } })
      // The latency keeps every call of the burst in flight while the others arrive.
      yield* sandbox.control.setFaults({ burstAbove: 2, burstRate: 1, latencyMs: 1_000 })
      const burst = yield* Effect.all(Array.from({ length: 8 }, () => call("GET", "/segments")), {
        concurrency: "unbounded"
      })
      const failed = burst.filter((a) => a.status === 404 || a.status === 500)
      assert.isAbove(failed.length, 0)
      assert.isTrue(burst.every((a) => [200, 404, 500].includes(a.status)))
      // A 404 to a list that is not empty, as the live service gives under load.
      const alone = yield* call("GET", "/segments")
      assert.strictEqual(alone.status, 200)
      assert.strictEqual(alone.body.result.entityList.length, 1)
      const log = yield* sandbox.control.requests
      assert.isTrue(log.filter((e) => e.method === "GET").every((e) => !e.applied))
    }))

  it.scopedLive("an empty filtered list answers 500 at the rate set; unfiltered and non-empty lists do not", () =>
    Effect.gen(function*() {
      const { call, sandbox } = yield* session()
      yield* call("POST", "/customers", { body: { externalId: "C1", name: "Padaria" } })
      yield* sandbox.control.setFaults({ emptyListFailRate: 1 })
      assert.strictEqual(
        (yield* call("GET", "/customers", { query: { paramFilter: { externalId: "NOPE" } } })).status,
        500
      )
      assert.strictEqual(
        (yield* call("GET", "/customers", { query: { paramFilter: { externalId: "C1" } } })).status,
        200
      )
      assert.strictEqual((yield* call("GET", "/segments")).status, 404)
      // A date window alone is no filter.
      assert.strictEqual((yield* call("GET", "/tasks", { query: { paramFilter: wideWindow } })).status, 404)
    }))
})
