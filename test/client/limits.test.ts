/**
 * The client under the live service's limits (api-notes, "Live behaviour reported by more public clients"): page
 * caps from the table and learned from a 400, a 404 on a list taken as the end only once confirmed alone, the
 * task types' linkless pages, walks that fail when the list shifts under them, slow pages, the in-flight limit.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import type { Page } from "../../src/client/Api.js"
import { ClientConfig, defaultConcurrency, safeInFlight } from "../../src/client/Config.js"
import { resource } from "../../src/Resources.js"
import { fakeApi, makeClient, reply, requestsTo, startTestSandbox } from "./support.js"

const collect = <E>(s: Stream.Stream<Page, E>) => Effect.map(Stream.runCollect(s), Chunk.toArray)
const wide = { since: "2026-01-01", until: "2026-12-31" }

describe("client: page sizes", () => {
  it.scopedLive(
    "tasks are listed 100 a page whatever page size is asked for (the live service answers 400 above)",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { pageSize: 500 })
        yield* api.request({ method: "POST", path: "/users", body: { login: "ana" } })
        yield* Effect.forEach(
          Array.from({ length: 101 }, (_, i) => i),
          (i) =>
            api.request({
              method: "POST",
              path: "/tasks",
              body: { externalId: `OS-${i}`, idUserFrom: 1, taskDate: "2026-06-01" }
            }),
          { concurrency: 8, discard: true }
        )
        const pages = yield* collect(api.pages("/tasks", { resource: resource("tasks"), pageSize: 1000, ...wide }))
        assert.strictEqual(new Set(pages.flatMap((p) => p.records.map((r) => r.taskID))).size, 101)
        const log = yield* sandbox.control.requests
        assert.deepStrictEqual(requestsTo(log, "GET", /\/tasks$/).filter((e) => e.status === 400), [])
      }),
    60_000
  )

  it.scopedLive("a 400 naming a page limit is settled on that size at once and remembered for the run", () =>
    Effect.gen(function*() {
      const records = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, description: `s${i + 1}` }))
      const server = yield* fakeApi((hit, res) => {
        if (!hit.url.startsWith("/v2/segments")) return
        const q = new URL(hit.url, "http://x").searchParams
        const size = Number(q.get("pageSize"))
        const page = Number(q.get("page"))
        if (size > 7) {
          return reply(res, 400, {
            message: "You cannot request more than 7 segments per page.",
            target: null,
            errorCode: 0,
            errors: null
          })
        }
        const slice = records.slice((page - 1) * size, page * size)
        if (slice.length === 0) return reply(res, 404, { message: "No records found" })
        reply(res, 200, {
          result: {
            entityList: slice,
            pagedSearchReturnData: { order: 0, pageSize: size, page, totalItems: records.length },
            links: [{ rel: "self" }, ...(page * size < records.length ? [{ rel: "nextPage" }] : [])]
          }
        })
      })
      const api = yield* makeClient(server.target, { pageSize: 500 })
      const first = yield* collect(api.pages("/segments"))
      assert.deepStrictEqual(first.map((p) => p.records.length), [7, 3])
      const again = yield* collect(api.pages("/segments"))
      assert.deepStrictEqual(again.map((p) => p.records.length), [7, 3])
      const asked = server.hits.filter((h) => h.url.startsWith("/v2/segments"))
        .map((h) => Number(new URL(h.url, "http://x").searchParams.get("pageSize")))
      // One refused call in the whole run, then 7 a page.
      assert.deepStrictEqual(asked, [500, 7, 7, 7, 7])
    }))

  it.scopedLive("task types whose pages say totalItems 0 and give no next link are walked to a short page", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ taskTypesQuirk: true })
      const api = yield* makeClient(sandbox, { pageSize: 1 })
      const pages = yield* collect(api.pages("/taskTypes"))
      assert.isAbove(sandbox.taskTypes.length, 1)
      assert.strictEqual(pages.flatMap((p) => p.records).length, sandbox.taskTypes.length)
    }))
})

describe("client: a 404 or 500 on a list is never \"no such record\" unconfirmed", () => {
  it.scopedLive(
    "under bursts above N in flight, a filtered list finds its record or fails, never answers empty",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { concurrency: 8, maxAttempts: 3 })
        yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => i),
          (i) =>
            api.request({ method: "POST", path: "/customers", body: { externalId: `C${i}`, name: `Cliente ${i}` } }),
          { concurrency: 1, discard: true }
        )
        yield* sandbox.control.setFaults({ burstAbove: 1, burstRate: 1, latencyMs: 200 })
        const found = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => i),
          (i) =>
            Effect.either(collect(api.pages("/customers", { filter: { externalId: `C${i}` } }))).pipe(
              Effect.map(Either.map((pages) => pages.flatMap((p) => p.records.map((r) => r["externalId"]))))
            ),
          { concurrency: "unbounded" }
        )
        const log = yield* sandbox.control.requests
        assert.isAbove(requestsTo(log, "GET", /\/customers$/).filter((e) => e.status === 404).length, 0)
        found.forEach((result, i) => {
          if (Either.isRight(result)) assert.deepStrictEqual(result.right, [`C${i}`])
          else assert.strictEqual(result.left._tag, "ListFailed")
        })
        assert.isTrue(found.some(Either.isRight))
        // A list really empty is still empty: its 404, asked again alone, is a 404 again.
        yield* sandbox.control.setFaults({ burstAbove: 0, latencyMs: 0 })
        assert.deepStrictEqual(yield* collect(api.pages("/customers", { filter: { externalId: "NOPE" } })), [])
      }),
    60_000
  )

  it.scopedLive("an empty filtered list that answers 500 fails the walk instead of ending it", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ faults: { emptyListFailRate: 1 } })
      const api = yield* makeClient(sandbox, { maxAttempts: 2 })
      const failed = yield* Effect.flip(collect(api.pages("/customers", { filter: { externalId: "NOPE" } })))
      assert.strictEqual(failed._tag, "ListFailed")
    }))
})

describe("client: a write answered 404 or 500 in a burst is asked again alone before it counts", () => {
  it.scopedLive(
    "PUT, PATCH, DELETE and POST under bursts above 1 in flight all succeed once, with no duplicate; a real 404 stays one",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const apiKey = sandbox.accounts[0]!.apiKey
        const api = yield* makeClient(sandbox, { concurrency: 8, maxAttempts: 2 })
        const ids = yield* Effect.forEach(
          Array.from({ length: 6 }, (_, i) => i),
          (i) =>
            Effect.map(
              api.request({ method: "POST", path: "/customers", body: { externalId: `C${i}`, name: `Cliente ${i}` } }),
              (r) => (r.result as { id: number }).id
            )
        )
        // Every call made while another is in flight on the token answers 404 or 500, and nothing is applied.
        yield* sandbox.control.setFaults({ burstAbove: 1, burstRate: 1, latencyMs: 50 })
        const customer = resource("customers")
        const replies = yield* Effect.all([
          api.request({ method: "PUT", path: "/customers", body: { externalId: "C0", name: "Novo 0" } }),
          api.request({ method: "PUT", path: "/customers", body: { externalId: "C1", name: "Novo 1" } }),
          api.request({
            method: "PATCH",
            path: `/customers/${ids[2]}`,
            body: [{ op: "replace", path: "name", value: "Novo 2" }]
          }),
          api.request({ method: "DELETE", path: `/customers/${ids[3]}` }),
          api.request({ method: "DELETE", path: `/customers/${ids[4]}` }),
          ...[6, 7, 8].map((i) =>
            api.request({
              method: "POST",
              path: "/customers",
              body: { externalId: `C${i}`, name: `Cliente ${i}` },
              correlation: { resource: customer, key: "externalId", value: `C${i}` }
            })
          )
        ], { concurrency: "unbounded" })
        const log = yield* sandbox.control.requests
        const burst = log.filter((e) => e.method !== "GET" && (e.status === 404 || e.status === 500))
        assert.isAbove(burst.length, 0, "writes met bursts")
        replies.forEach((r, i) => assert.isTrue(r.ok, `call ${i}: ${r.error}`))
        const stored = yield* sandbox.control.records(apiKey, "customers")
        assert.deepStrictEqual(
          stored.map((c) => [c["externalId"], c["description"]]).sort(),
          [["C0", "Novo 0"], ["C1", "Novo 1"], ["C2", "Novo 2"], ["C5", "Cliente 5"], ["C6", "Cliente 6"], [
            "C7",
            "Cliente 7"
          ], ["C8", "Cliente 8"]]
        )
        // A record that is really gone answers 404 alone too: that 404 counts, once confirmed.
        const gone = yield* Effect.all([
          api.request({ method: "DELETE", path: `/customers/${ids[3]}` }),
          api.request({ method: "GET", path: `/customers/${ids[5]}` })
        ], { concurrency: "unbounded" })
        assert.strictEqual(gone[0].status, 404)
        assert.isFalse(gone[0].ok)
        assert.isTrue(gone[1].ok)
      }),
    60_000
  )
})

describe("client: a walk whose list shifts under it", () => {
  it.scopedLive("records deleted while a walk is under way fail it (Shifted) instead of skipping live records", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const api = yield* makeClient(sandbox, { pageSize: 10 })
      yield* Effect.forEach(
        Array.from({ length: 30 }, (_, i) => i),
        (i) => api.request({ method: "POST", path: "/segments", body: { description: `s${i}` } }),
        { concurrency: 1, discard: true }
      )
      const walked = yield* Effect.flip(collect(
        api.pages("/segments", { resource: resource("segments") }).pipe(
          Stream.tap((page) =>
            page.page === 1
              // Five records of page 1 are deleted while page 2 is still to come: 5 others would be skipped.
              ? Effect.forEach(page.records.slice(0, 5), (r) =>
                api.request({ method: "DELETE", path: `/segments/${String(r["id"])}` }), { discard: true })
              : Effect.void
          )
        )
      ))
      assert.strictEqual(walked._tag, "ListFailed")
      if (walked._tag === "ListFailed") {
        assert.strictEqual(walked.reason, "Shifted")
        assert.match(walked.message, /changed while it was read/)
      }
      // Walked again once nothing changes, it is whole.
      const again = yield* collect(api.pages("/segments", { resource: resource("segments") }))
      assert.strictEqual(again.flatMap((p) => p.records).length, 25)
    }))
})

describe("client: sized for the live service's pace", () => {
  it("waits 60 s for an attempt (pages of 100 tasks take over 25 s) and keeps at most 8 requests in flight", () => {
    const settings = ClientConfig.make({
      baseUrl: "https://api.example.com/v2",
      credentials: { apiKey: "k", apiToken: "t" },
      rate: { limit: 10_000, windowMs: 1_000 }
    })
    assert.isAtLeast(settings.requestTimeoutMs, 50_000)
    assert.strictEqual(safeInFlight, 8)
    assert.strictEqual(settings.concurrency, 8)
    assert.strictEqual(defaultConcurrency({ limit: 400, windowMs: 60_000 }), 4)
  })

  it.scopedLive(
    "slow pages: a page slowed past the attempt's time limit is a timeout, a small page answers",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { pageLatencyPerRecordMs: 200 } })
        const api = yield* makeClient(sandbox, { requestTimeoutMs: 2_000, maxAttempts: 1 })
        yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => api.request({ method: "POST", path: "/segments", body: { description: `s${i}` } }),
          { concurrency: 4, discard: true }
        )
        const big = yield* api.request({ method: "GET", path: "/segments", query: { paramFilter: {}, pageSize: 20 } })
        assert.isUndefined(big.status)
        assert.match(big.error ?? "", /no answer .* within/)
        const small = yield* api.request({ method: "GET", path: "/segments", query: { paramFilter: {}, pageSize: 1 } })
        assert.strictEqual(small.status, 200)
      }),
    60_000
  )
})

describe("client: a second webhook for one entity (1026)", () => {
  it.scopedLive("the refusal is one failed POST whose message carries the service's code; never retried or reconciled", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const api = yield* makeClient(sandbox)
      const webhooks = resource("webhooks")
      const post = (targetUrl: string) =>
        api.request({
          method: "POST",
          path: "/webhooks",
          body: { entity: "Task", action: "Inclusao", targetUrl },
          correlation: { resource: webhooks, key: "targetUrl", value: targetUrl }
        })
      const first = yield* post("https://example.com.br/a")
      assert.isTrue(first.ok)
      const second = yield* post("https://example.com.br/b")
      assert.isFalse(second.ok)
      assert.strictEqual(second.status, 409)
      assert.strictEqual(
        second.error,
        `Webhook for entity "Task" already exists (id ${(first.result as { id: number }).id}) (error code 1026)`
      )
      assert.strictEqual(requestsTo(yield* sandbox.control.requests, "POST", /\/webhooks$/).length, 2)
    }))
})
