/**
 * What the client makes of answers the sandbox never gives: a 2xx that does not say the write was done, a 202 to
 * a create, an endless body, a list that repeats its page forever, a redirect. Each from a loopback fake. The
 * same answers seen through the built CLI are in `cli.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import type { ApiRequest } from "../../src/client/Api.js"
import { judgeWrite } from "../../src/client/Writes.js"
import { resource } from "../../src/Resources.js"
import { fakeApi, makeClient, reply } from "./support.js"

const customers = resource("customers")
const newCustomer = (externalId: string): ApiRequest => ({
  method: "POST",
  path: "/customers",
  body: { externalId, name: `Cliente ${externalId}` },
  correlation: { resource: customers, key: "externalId", value: externalId }
})

const html = "<html><body><h1>Welcome to nginx!</h1></body></html>"

describe("a write is done only on its operation's success", () => {
  it("reads each operation's documented success, and nothing else, as done", () => {
    const post = (path: string): ApiRequest => ({ method: "POST", path })
    const put = (path: string): ApiRequest => ({ method: "PUT", path })
    const done = { _tag: "Done" }
    assert.deepStrictEqual(judgeWrite(post("/customers"), 201, { result: { id: 7, externalId: "A" } }), done)
    assert.deepStrictEqual(judgeWrite(post("/tickets"), 200, { result: { id: 7 } }), done)
    assert.deepStrictEqual(judgeWrite(put("/users"), 200, { result: { userID: 3 } }), done)
    assert.deepStrictEqual(judgeWrite(put("/products"), 201, { result: { code: 9 } }), done)
    assert.deepStrictEqual(judgeWrite(post("/customers/complete"), 201, { result: { id: 4 } }), done)
    assert.deepStrictEqual(
      judgeWrite({ method: "PATCH", path: "/serviceorders/12" }, 200, { result: { code: 12 } }),
      done
    )
    assert.deepStrictEqual(judgeWrite(put("/tasks/5/products"), 200, { result: [{ productId: 1 }] }), done)
    assert.deepStrictEqual(judgeWrite(put("/tasks/5/attachments"), 200, { result: { taskID: 5 } }), done)
    assert.deepStrictEqual(
      judgeWrite(put("/tasks/5/questionnaire-response"), 202, { result: { message: "queued" } }),
      done
    )
    assert.deepStrictEqual(judgeWrite(put("/tasks/5/questionnaire-response"), 202, undefined), done)
    assert.deepStrictEqual(judgeWrite(put("/products/employee-product-stock"), 204, undefined), done)
    assert.deepStrictEqual(judgeWrite({ method: "DELETE", path: "/customers/7" }, 204, undefined), done)
    assert.deepStrictEqual(judgeWrite({ method: "DELETE", path: "/tasks/5/products" }, 204, undefined), done)

    const tag = (req: ApiRequest, status: number, body: unknown) => judgeWrite(req, status, body)._tag
    assert.strictEqual(tag(post("/customers"), 200, html), "Unconfirmed")
    assert.strictEqual(tag(post("/customers"), 200, undefined), "Unconfirmed")
    assert.strictEqual(tag(post("/customers"), 200, { foo: 1 }), "Unconfirmed")
    assert.strictEqual(tag(post("/customers"), 201, { result: { name: "no id" } }), "Unconfirmed")
    assert.strictEqual(tag(post("/customers"), 204, undefined), "Unconfirmed")
    assert.strictEqual(tag(post("/customers"), 202, { result: { id: 1 } }), "Later")
    assert.strictEqual(tag(put("/customers"), 202, undefined), "Later")
    assert.strictEqual(tag(put("/tasks/5/products"), 200, html), "Unconfirmed")
    assert.strictEqual(tag(put("/tasks/5/questionnaire-response"), 202, html), "Unconfirmed")
    assert.strictEqual(tag({ method: "DELETE", path: "/customers/7" }, 200, html), "Unconfirmed")
    assert.match((judgeWrite(post("/customers"), 200, html) as { why: string }).why, /200 with an HTML page/)
  })

  it.scopedLive(
    "a create answered 200 with HTML, an empty body or {\"foo\":1}, or 202, is never reported done",
    () =>
      Effect.gen(function*() {
        // POST /customers answers by the externalId it is sent; lists answer 404 (nothing found by the lookup).
        const answers: Record<string, (res: Parameters<typeof reply>[0]) => void> = {
          HTML: (res) => reply(res, 200, html, { "content-type": "text/html" }),
          EMPTY: (res) => reply(res, 200),
          FOO: (res) => reply(res, 200, { foo: 1 }),
          QUEUED: (res) => reply(res, 202, { result: { id: 5, externalId: "QUEUED" } })
        }
        const server = yield* fakeApi((hit, res) => {
          if (hit.method === "POST" && hit.url === "/v2/customers") {
            return answers[JSON.parse(hit.body).externalId]!(res)
          }
          if (hit.method === "POST" && hit.url === "/v2/keywords") return reply(res, 200, html)
          if (hit.method === "GET" && hit.url.startsWith("/v2/customers")) return reply(res, 404)
          if (hit.method === "PUT" && hit.url === "/v2/customers") return reply(res, 200, { foo: 1 })
        })
        const api = yield* makeClient(server.target, { maxAttempts: 2 })
        for (const key of ["HTML", "EMPTY", "FOO"]) {
          const r = yield* api.request(newCustomer(key))
          assert.isFalse(r.ok, key)
          // Looked up by its key after each answer: absent, so resent; still unconfirmed: checked once more, absent.
          assert.isFalse(r.inDoubt, key)
          assert.strictEqual(r.evidence.attempts, 2)
          assert.match(r.error!, /the API answered 200 with .*checked afterwards: it was not applied/, key)
        }
        const queued = yield* api.request(newCustomer("QUEUED"))
        assert.isFalse(queued.ok)
        assert.isTrue(queued.inDoubt)
        assert.strictEqual(queued.evidence.attempts, 1)
        assert.match(queued.error!, /202 \(accepted for later processing\).*may or may not be applied/)

        // Without a key to look it up by, an unconfirmed create is in doubt at once (it may have been applied).
        const keyword = yield* api.request({ method: "POST", path: "/keywords", body: { description: "x" } })
        assert.isTrue(keyword.inDoubt)
        assert.strictEqual(keyword.evidence.attempts, 1)
        assert.match(keyword.error!, /200 with an HTML page; it may or may not have been applied/)

        // An upsert is resent (it is idempotent); still unconfirmed when the attempts run out: in doubt.
        const upsert = yield* api.request({ method: "PUT", path: "/customers", body: { externalId: "U", name: "U" } })
        assert.isTrue(upsert.inDoubt)
        assert.strictEqual(upsert.evidence.attempts, 2)
        assert.deepStrictEqual(upsert.evidence.retryOutcomes, ["200"])
        assert.match(upsert.error!, /200 with JSON without the \{"result": …\} envelope/)

        assert.strictEqual(
          server.hits.filter((h) => h.method === "POST" && h.url === "/v2/customers").length,
          3 * 2 + 1
        )
      }),
    30_000
  )
})

describe("answers too large to read", () => {
  it.scopedLive(
    "an endless body is cut at the cap and handled like a reset: the process lives and the call fails cleanly",
    () =>
      Effect.gen(function*() {
        const endless = (res: Parameters<typeof reply>[0]) => {
          res.writeHead(200, { "content-type": "application/json" })
          const chunk = Buffer.alloc(64 * 1024, "x")
          const pump = () => {
            while (!res.destroyed && res.write(chunk));
            if (!res.destroyed) res.once("drain", pump)
          }
          res.write("{\"result\":\"")
          pump()
        }
        const server = yield* fakeApi((hit, res) => {
          if (hit.url.startsWith("/v2/keywords")) return endless(res)
          if (hit.url === "/v2/big") {
            res.writeHead(200, { "content-type": "application/json", "content-length": String(3 * 1024 * 1024) })
            return void res.end()
          }
        })
        const api = yield* makeClient(server.target, { maxAttempts: 2, maxAnswerBytes: 1024 * 1024 })
        const get = yield* api.request({ method: "GET", path: "/keywords/1" })
        assert.isFalse(get.ok)
        assert.isUndefined(get.status)
        assert.strictEqual(get.evidence.attempts, 2)
        assert.deepStrictEqual(get.evidence.retryOutcomes, ["too-large"])
        assert.match(get.error!, /answer .* to GET \/keywords\/1 \(HTTP 200\) passed 1 MiB; it was abandoned unread/)

        // A create whose answer was lost this way may have been applied: without a key to look it up, in doubt.
        const post = yield* api.request({ method: "POST", path: "/keywords", body: { description: "x" } })
        assert.isTrue(post.inDoubt)

        // A declared length past the cap is not even read.
        const big = yield* api.request({ method: "GET", path: "/big" })
        assert.deepStrictEqual(big.evidence.retryOutcomes, ["too-large"])
      }),
    30_000
  )
})

describe("lists that never end", () => {
  it.scopedLive(
    "a list that answers the same full page with a nextPage link for every page stops with an error on page 2",
    () =>
      Effect.gen(function*() {
        const page = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, description: `k${i}` }))
        const server = yield* fakeApi((hit, res) => {
          if (hit.url.startsWith("/v2/keywords")) {
            return reply(res, 200, {
              result: {
                entityList: page,
                pagedSearchReturnData: { pageSize: 10 },
                links: [{ rel: "nextPage", href: "x" }]
              }
            })
          }
        })
        const api = yield* makeClient(server.target, { pageSize: 10 })
        const failed = yield* Effect.flip(Stream.runCollect(api.pages("/keywords")))
        assert.strictEqual(failed._tag, "ListFailed")
        assert.match(failed.message, /page 2 holds only records already listed on earlier pages/)
        assert.strictEqual(server.hits.filter((h) => h.url.startsWith("/v2/keywords")).length, 2)
      }),
    30_000
  )

  it.scopedLive(
    "a page that repeats some records of the one before (a record inserted meanwhile shifts the list) is still walked",
    () =>
      Effect.gen(function*() {
        const ids: Record<string, Array<number>> = { "1": [1, 2, 3, 4, 5], "2": [5, 6, 7, 8, 9], "3": [10] }
        const server = yield* fakeApi((hit, res) => {
          const page = new URL(hit.url, "http://x").searchParams.get("page") ?? "1"
          if (hit.url.startsWith("/v2/keywords")) {
            return reply(res, 200, {
              result: {
                entityList: ids[page]!.map((id) => ({ id, description: `k${id}` })),
                links: [{ rel: "nextPage", href: "x" }]
              }
            })
          }
        })
        const api = yield* makeClient(server.target, { pageSize: 5 })
        const pages = yield* Stream.runCollect(api.pages("/keywords"))
        assert.deepStrictEqual([...pages].map((p) => p.records.map((r) => r.id)), [ids["1"], ids["2"], ids["3"]])
      }),
    30_000
  )
})

describe("redirects", () => {
  it.scopedLive(
    "a login answered 301 aborts with a message that says redirect and where to, never following it",
    () =>
      Effect.gen(function*() {
        const server = yield* fakeApi((hit, res) => {
          if (hit.url === "/v2/login") {
            return reply(res, 301, undefined, { location: "https://api.example.com/v2/login" })
          }
        })
        const api = yield* makeClient(server.target)
        const exit = yield* Effect.exit(api.request({ method: "GET", path: "/keywords" }))
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
        assert.strictEqual(error?.reason, "Redirected")
        assert.match(error!.message, /answered a redirect \(HTTP 301\) to https:\/\/api\.example\.com\/v2\/login/)
        assert.match(
          error!.message,
          /check --base-url \/ FSM_BASE_URL.*perhaps --base-url https:\/\/api\.example\.com\/v2/
        )
        assert.notMatch(error!.message, /rejected the credentials/)
        assert.deepStrictEqual(server.hits.map((h) => `${h.method} ${h.url}`), ["POST /v2/login"])
      }),
    30_000
  )

  it.scopedLive("a call answered 308 mid-run fails with a message that says redirect", () =>
    Effect.gen(function*() {
      const moved = yield* fakeApi((hit, res) => {
        if (hit.url.startsWith("/v2/keywords")) return reply(res, 308, undefined, { location: "/v3/keywords" })
      })
      const api = yield* makeClient(moved.target)
      const r = yield* api.request({ method: "GET", path: "/keywords/1" })
      assert.isFalse(r.ok)
      assert.strictEqual(r.status, 308)
      assert.match(r.error!, /answered a redirect \(HTTP 308\) to \/v3\/keywords/)
    }), 30_000)
})
