import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { ApiRequest } from "../../src/client/Api.js"
import { resource } from "../../src/Resources.js"
import { eventually, makeClient, requestsTo, startTestSandbox } from "./support.js"

const customers = resource("customers")
const newCustomer = (externalId: string): ApiRequest => ({
  method: "POST",
  path: "/customers",
  body: { externalId, name: `Cliente ${externalId}` },
  correlation: { resource: customers, key: "externalId", value: externalId }
})

/** The sandbox cannot refuse a permission: a loopback server that logs in and answers 403 to everything else. */
const forbiddingServer = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly hits: Array<string>; readonly server: Http.Server }>((resume) => {
    const hits: Array<string> = []
    const server = Http.createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`)
      res.setHeader("content-type", "application/json")
      res.setHeader("x-request-id", `req-${hits.length}`)
      if (req.url === "/v2/login") {
        res.end(
          JSON.stringify({ result: { authenticated: true, accessToken: "a.b.c", expiration: "2030-01-01 00:00:00" } })
        )
      } else {
        res.statusCode = 403
        res.end(JSON.stringify({ error: "This integration is not allowed to change users" }))
      }
    })
    server.listen(
      0,
      "127.0.0.1",
      () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`, hits, server }))
    )
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

describe("retries per method", () => {
  it.scopedLive(
    "under 5xx, GET, PUT and DELETE are retried up to the limit; POST and PATCH are never resent blindly",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { maxAttempts: 3 })
        const created = yield* api.request(newCustomer("CLI-1"))
        assert.strictEqual(created.status, 201)
        const id = (created.result as { id: number }).id
        yield* sandbox.control.setFaults({ failRate: 1 })

        const get = yield* api.request({ method: "GET", path: `/customers/${id}` })
        const put = yield* api.request({
          method: "PUT",
          path: "/customers",
          body: { externalId: "CLI-1", name: "Outro" }
        })
        const del = yield* api.request({ method: "DELETE", path: `/customers/${id}` })
        for (const reply of [get, put, del]) {
          assert.isFalse(reply.ok)
          assert.isFalse(reply.inDoubt)
          assert.strictEqual(reply.evidence.attempts, 3)
          assert.strictEqual(reply.evidence.retryOutcomes.length, 2)
          assert.isTrue(reply.evidence.retryOutcomes.every((o) => ["500", "502", "503"].includes(o)))
          assert.include([500, 502, 503], reply.status)
          assert.match(reply.error!, /Internal server error|Bad Gateway|Service Unavailable/)
        }

        const postWithoutKey = yield* api.request({
          method: "POST",
          path: "/keywords",
          body: { description: "Urgente" }
        })
        const postWithKey = yield* api.request(newCustomer("CLI-2"))
        const patch = yield* api.request({
          method: "PATCH",
          path: `/customers/${id}`,
          body: [{ op: "replace", path: "name", value: "Novo" }]
        })
        for (const reply of [postWithoutKey, postWithKey, patch]) {
          assert.isFalse(reply.ok)
          assert.isTrue(reply.inDoubt)
          assert.strictEqual(reply.evidence.attempts, 1)
          assert.match(reply.error!, /may or may not have been applied/)
        }

        const log = yield* sandbox.control.requests
        assert.strictEqual(requestsTo(log, "GET", /^\/v2\/customers\/\d+$/).length, 3 + 3) // the GET, then the PATCH's re-reads
        assert.strictEqual(requestsTo(log, "PUT", /^\/v2\/customers$/).length, 3)
        assert.strictEqual(requestsTo(log, "DELETE", /^\/v2\/customers\/\d+$/).length, 3)
        assert.strictEqual(requestsTo(log, "POST", /^\/v2\/keywords$/).length, 1)
        assert.strictEqual(requestsTo(log, "POST", /^\/v2\/customers$/).length, 2) // CLI-1 before the faults, CLI-2 once
        assert.strictEqual(requestsTo(log, "PATCH", /^\/v2\/customers\/\d+$/).length, 1)
        // The lookup of CLI-2, retried as a GET, then the whole list as another way to the same answer.
        assert.strictEqual(requestsTo(log, "GET", /^\/v2\/customers$/).length, 3 + 3)
      }),
    30_000
  )

  it.scopedLive("a GET recovers from a passing 5xx, and the evidence tells the story", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const api = yield* makeClient(sandbox, { backoffBaseMs: 1_000, backoffMaxMs: 2_000 })
      yield* api.request({ method: "GET", path: "/tasktypes/1" })
      yield* sandbox.control.setFaults({ failRate: 1 })
      const fiber = yield* Effect.fork(api.request({ method: "GET", path: "/tasktypes/2" }))
      yield* eventually(Effect.map(sandbox.control.requests, (log) => log.some((e) => (e.status ?? 0) >= 500)))
      yield* sandbox.control.setFaults({ failRate: 0 })
      const reply = yield* Fiber.join(fiber)
      assert.isTrue(reply.ok)
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.evidence.attempts, 2)
      assert.lengthOf(reply.evidence.retryOutcomes, 1)
      assert.match(reply.evidence.retryOutcomes[0]!, /^50[023]$/)
      assert.match(reply.evidence.requestId!, /^[0-9a-f-]{36}$/)
      assert.isAtLeast(reply.evidence.durationMs, 700)
      assert.deepInclude(reply.result, { id: 2, description: "Manutenção corretiva" })
      assert.strictEqual((yield* api.stats).retries, 1)
    }), 30_000)

  it.scopedLive(
    "a POST whose response was dropped after the server applied it is reconciled by externalId, with no duplicate",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox)
        yield* api.request({ method: "GET", path: "/tasktypes/1" })
        yield* sandbox.control.setFaults({ dropAfterWriteRate: 1 })
        const reply = yield* api.request(newCustomer("CLI-DROP"))
        assert.isTrue(reply.ok)
        assert.isTrue(reply.reconciled)
        assert.isFalse(reply.inDoubt)
        assert.strictEqual(reply.evidence.attempts, 1)
        assert.deepStrictEqual(reply.evidence.retryOutcomes, ["reset"])
        assert.strictEqual(reply.status, 200) // the final exchange is the lookup
        const stored = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(stored.length, 1)
        assert.strictEqual((reply.result as { id: unknown }).id, stored[0]!.id)
        assert.strictEqual((reply.result as { externalId: unknown }).externalId, "CLI-DROP")
        const log = yield* sandbox.control.requests
        assert.strictEqual(requestsTo(log, "POST", /^\/v2\/customers$/).length, 1)
        assert.isTrue(requestsTo(log, "POST", /^\/v2\/customers$/)[0]!.applied)
      }),
    30_000
  )

  it.scopedLive(
    "a POST that failed before it was applied is looked up, found absent, and sent again once",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { backoffBaseMs: 1_000, backoffMaxMs: 2_000 })
        yield* api.request({ method: "GET", path: "/tasktypes/1" })
        yield* sandbox.control.setFaults({ failRate: 1 })
        const fiber = yield* Effect.fork(api.request(newCustomer("CLI-RETRY")))
        yield* eventually(
          Effect.map(sandbox.control.requests, (log) => log.some((e) => e.method === "POST" && (e.status ?? 0) >= 500))
        )
        yield* sandbox.control.setFaults({ failRate: 0 })
        const reply = yield* Fiber.join(fiber)
        assert.isTrue(reply.ok)
        assert.isFalse(reply.reconciled)
        assert.strictEqual(reply.status, 201)
        assert.strictEqual(reply.evidence.attempts, 2)
        const log = yield* sandbox.control.requests
        const writes = log.filter((e) => e.method === "POST" && e.path === "/v2/customers")
        assert.strictEqual(writes.length, 2)
        // The lookup came between the two sends and found nothing.
        const lookups = log.filter((e) => e.method === "GET" && e.path === "/v2/customers")
        assert.strictEqual(lookups.at(-1)!.status, 404)
        assert.isTrue(lookups.at(-1)!.at >= writes[0]!.at && lookups.at(-1)!.at <= writes[1]!.at)
        assert.strictEqual((yield* sandbox.control.records("sandbox-key", "customers")).length, 1)
      }),
    30_000
  )

  it.scopedLive(
    "a PATCH whose response was lost is re-read: applied → not resent; not applied → resent",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { backoffBaseMs: 1_000, backoffMaxMs: 2_000 })
        const created = yield* api.request(newCustomer("CLI-P"))
        const path = `/customers/${(created.result as { id: number }).id}`

        yield* sandbox.control.setFaults({ dropAfterWriteRate: 1 })
        const dropped = yield* api.request({
          method: "PATCH",
          path,
          body: [{ op: "replace", path: "/name", value: "Padaria Nova" }]
        })
        yield* sandbox.control.setFaults({ dropAfterWriteRate: 0 })
        assert.isTrue(dropped.ok)
        assert.isTrue(dropped.reconciled)
        assert.deepStrictEqual(dropped.evidence.retryOutcomes, ["reset"])
        assert.strictEqual((dropped.result as { description: string }).description, "Padaria Nova")

        yield* sandbox.control.setFaults({ failRate: 1 })
        const fiber = yield* Effect.fork(
          api.request({ method: "PATCH", path, body: [{ op: "replace", path: "name", value: "Padaria Velha" }] })
        )
        yield* eventually(
          Effect.map(sandbox.control.requests, (log) => log.some((e) => e.method === "PATCH" && (e.status ?? 0) >= 500))
        )
        yield* sandbox.control.setFaults({ failRate: 0 })
        const resent = yield* Fiber.join(fiber)
        assert.isTrue(resent.ok)
        assert.isFalse(resent.reconciled)
        assert.strictEqual(resent.evidence.attempts, 2)

        const log = yield* sandbox.control.requests
        assert.strictEqual(requestsTo(log, "PATCH", /^\/v2\/customers\/\d+$/).length, 3)
        const [stored] = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(stored!.description, "Padaria Velha")
      }),
    30_000
  )

  it.scopedLive(
    "a timeout is an outcome of its own, and idempotent calls are retried on it",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { requestTimeoutMs: 100, maxAttempts: 2 })
        yield* api.request({ method: "GET", path: "/tasktypes/1" })
        yield* sandbox.control.setFaults({ latencyMs: 400 })
        const reply = yield* api.request({ method: "GET", path: "/tasktypes/1" })
        assert.isFalse(reply.ok)
        assert.isUndefined(reply.status)
        assert.strictEqual(reply.evidence.attempts, 2)
        assert.deepStrictEqual(reply.evidence.retryOutcomes, ["timeout"])
        assert.match(reply.error!, /no answer from 127\.0\.0\.1:\d+ within/)
      }),
    30_000
  )

  it.scopedLive(
    "a 403 that is not a rate limit is a permission error: reported, never retried, no pause",
    () =>
      Effect.gen(function*() {
        const server = yield* forbiddingServer
        const sandbox = { url: server.url, accounts: [{ apiKey: "k", apiToken: "t" }] }
        const api = yield* makeClient(sandbox as never, { rateLimitPauseMs: 60_000 })
        const started = Date.now()
        const first = yield* api.request({ method: "PUT", path: "/users", body: { externalId: "U1", login: "u1" } })
        const second = yield* api.request({ method: "GET", path: "/users/1" })
        assert.isBelow(Date.now() - started, 5_000)
        for (const reply of [first, second]) {
          assert.isFalse(reply.ok)
          assert.strictEqual(reply.status, 403)
          assert.strictEqual(reply.evidence.attempts, 1)
          assert.deepStrictEqual(reply.evidence.retryOutcomes, [])
          assert.strictEqual(reply.error, "This integration is not allowed to change users")
        }
        assert.strictEqual(first.evidence.requestId, "req-2")
        assert.deepStrictEqual(server.hits, ["POST /v2/login", "PUT /v2/users", "GET /v2/users/1"])
        assert.strictEqual((yield* api.stats).rateLimited, 0)
      }),
    30_000
  )
})
