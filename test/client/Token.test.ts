import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, TestClock } from "effect"
import { jwtClaims, tokenLifetimeMs } from "../../src/client/Token.js"
import { eventually, fakeApi, makeClient, reply, requestsTo, startTestSandbox } from "./support.js"

const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`

describe("token lifetime", () => {
  it("comes from the JWT's own exp - iat, measured on the client's clock", () => {
    assert.deepStrictEqual(jwtClaims(jwt({ iat: 100, exp: 1900 })), { iat: 100, exp: 1900 })
    // A server clock three hours off does not matter: only the lifetime is used.
    assert.strictEqual(tokenLifetimeMs(jwt({ iat: 100, exp: 1900 }), 50_000_000), 1_800_000)
    assert.strictEqual(tokenLifetimeMs(jwt({ exp: 2_000 }), 1_000_000), 1_000_000)
    assert.strictEqual(tokenLifetimeMs("not-a-jwt", 0), 30 * 60_000)
    assert.strictEqual(tokenLifetimeMs(jwt({ iat: 100, exp: 100 }), 0), 30 * 60_000)
  })
})

describe("token lifecycle against the sandbox", () => {
  it.scoped("many concurrent calls at the renewal point share exactly one login", () =>
    Effect.gen(function*() {
      // Client and sandbox both read Effect's Clock, here the TestClock: the 4.6 s pass in no time, and the
      // sandbox expires the token on the same clock the client renews it on.
      const sandbox = yield* startTestSandbox({ tokenTtlMs: 6_000 })
      // Renewal 1.5 s before expiry (at most a quarter of the lifetime): the token is renewed 4.5 s after it was
      // issued, before the server drops it. The 50 calls start just past the renewal point.
      const api = yield* makeClient(sandbox, { renewBeforeMs: 1_500, concurrency: 50 })
      const first = yield* api.request({ method: "GET", path: "/keywords" })
      assert.strictEqual(first.status, 404)
      yield* TestClock.adjust(4_600)
      const replies = yield* Effect.forEach(
        Array.from({ length: 50 }, () => ({ method: "GET" as const, path: "/tasktypes/1" })),
        (req) => api.request(req),
        { concurrency: "unbounded" }
      )
      assert.isTrue(replies.every((r) => r.ok && r.evidence.attempts === 1))
      const log = yield* sandbox.control.requests
      assert.strictEqual(requestsTo(log, "POST", /\/login$/i).length, 2)
      assert.strictEqual(requestsTo(log, "GET", /\/login$/i).length, 0)
      assert.strictEqual(log.filter((e) => e.status === 401).length, 0)
      assert.strictEqual((yield* api.stats).logins, 2)
      // The sandbox stamped (and judged expiry) on the test's clock: the calls came at 4.6 s of a 6 s token.
      assert.deepStrictEqual([...new Set(log.map((e) => e.at))], [0, 4_600])
    }), 20_000)

  it.scopedLive("a 401 in the middle of a run logs in once more and every call recovers", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const api = yield* makeClient(sandbox, { concurrency: 20 })
      yield* api.request({ method: "GET", path: "/tasktypes/1" })
      yield* sandbox.control.revokeTokens
      const replies = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => api.request({ method: "POST", path: "/keywords", body: { description: `k${i}` } }),
        { concurrency: "unbounded" }
      )
      assert.isTrue(replies.every((r) => r.ok && r.status === 201))
      const retried = replies.filter((r) => r.evidence.retryOutcomes.includes("401"))
      assert.isAbove(retried.length, 0)
      assert.isTrue(retried.every((r) => r.evidence.attempts === 2))
      const log = yield* sandbox.control.requests
      assert.strictEqual(requestsTo(log, "POST", /\/login$/i).length, 2)
      assert.strictEqual(log.filter((e) => e.status === 401).length, retried.length)
      assert.strictEqual((yield* sandbox.control.records("sandbox-key", "keywords")).length, 20)
    }), 20_000)

  it.scopedLive(
    "401s to the tokens just issued for a call fail that call only; five such calls in a row abort the run",
    () =>
      Effect.gen(function*() {
        // Tokens that die after 1 ms: the JWT's whole-second claims say nothing usable, so the client believes
        // them valid and the server answers 401 to the first use and again right after the new login.
        const sandbox = yield* startTestSandbox({ tokenTtlMs: 1 })
        const api = yield* makeClient(sandbox)
        const first = yield* api.request({ method: "GET", path: "/tasktypes/1" })
        assert.isFalse(first.ok)
        assert.isFalse(first.inDoubt)
        assert.strictEqual(first.status, 401)
        // The first 401 and the first refused fresh token each get a new login; the second refused fresh token ends it.
        assert.strictEqual(first.evidence.attempts, 3)
        assert.deepStrictEqual(first.evidence.retryOutcomes, ["401", "401"])
        assert.match(
          first.error!,
          /401 to GET \/tasktypes\/1 even with tokens just issued for it: these credentials are not allowed to do this/
        )
        for (const n of [2, 3, 4]) {
          const again = yield* api.request({ method: "GET", path: `/tasktypes/${n}` })
          assert.strictEqual(again.status, 401)
        }
        const exit = yield* Effect.exit(api.request({ method: "POST", path: "/keywords", body: { description: "x" } }))
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          assert.strictEqual(error?._tag, "ApiAborted")
          assert.strictEqual(error?.reason, "Unauthorized")
          assert.match(error!.message, /401 to 5 calls in a row/)
        }
        const log = yield* sandbox.control.requests
        assert.strictEqual(requestsTo(log, "POST", /\/login$/i).length, 15)
        assert.strictEqual(requestsTo(log, "GET", /\/login$/i).length, 0)
      }),
    20_000
  )

  it.scopedLive(
    "a call that succeeds in between resets the count: 401s to single calls never abort a healthy run",
    () =>
      Effect.gen(function*() {
        // The fake refuses /users to every token (as if the account could not use it) and serves /keywords.
        const server = yield* fakeApi((hit, res) => {
          if (hit.url.startsWith("/v2/users")) return reply(res, 401, { error: "Unauthorized" })
          if (hit.url.startsWith("/v2/keywords")) return reply(res, 200, { result: { id: 1, description: "k" } })
        })
        const api = yield* makeClient(server.target)
        for (let i = 0; i < 8; i++) {
          const refused = yield* api.request({ method: "GET", path: "/users/1" })
          assert.strictEqual(refused.status, 401)
          assert.isTrue((yield* api.request({ method: "GET", path: "/keywords/1" })).ok)
        }
      }),
    20_000
  )

  it.scopedLive(
    "a 401 on a token issued after the call's previous 401, once that token had worked, is a new revocation: log in again",
    () =>
      Effect.gen(function*() {
        // The fake revokes every token issued so far when told to; /flaky answers 503 once. The call meets a
        // revocation (401), logs in (t2), gets the 503, and while it backs off t2 works for another call and is
        // then revoked: the resend meets a 401 on t2, a token issued after its first 401.
        const revoked = new Set<string>()
        let flaky = 0
        let revokeAfterNextOk = false
        const server = yield* fakeApi((hit, res) => {
          if (hit.url === "/v2/login") {
            return hit.method === "POST"
              ? undefined
              : reply(res, 405, { error: "POST only" })
          }
          if (hit.bearer === undefined || revoked.has(hit.bearer)) return reply(res, 401, { error: "Token revoked" })
          if (hit.url === "/v2/flaky/1" && flaky++ === 0) {
            revokeAfterNextOk = true
            return reply(res, 503, { error: "Service Unavailable" })
          }
          reply(res, 200, { result: { id: 1 } })
          if (revokeAfterNextOk && hit.url !== "/v2/flaky/1") {
            revokeAfterNextOk = false
            revoked.add(hit.bearer)
          }
        })
        const api = yield* makeClient(server.target, { backoffBaseMs: 1_000, backoffMaxMs: 2_000 })
        assert.isTrue((yield* api.request({ method: "GET", path: "/keywords/1" })).ok) // t1 works
        revoked.add("t1")
        const fiber = yield* Effect.fork(api.request({ method: "GET", path: "/flaky/1" }))
        yield* eventually(Effect.sync(() => flaky > 0))
        assert.isTrue((yield* api.request({ method: "GET", path: "/keywords/2" })).ok) // t2 works, then is revoked
        const reply1 = yield* Fiber.join(fiber)
        assert.isTrue(reply1.ok, reply1.error)
        assert.deepStrictEqual(reply1.evidence.retryOutcomes, ["401", "503", "401"])
        assert.strictEqual(reply1.evidence.attempts, 4)
        const calls = server.hits.filter((h) => h.url === "/v2/flaky/1").map((h) => h.bearer)
        assert.deepStrictEqual(calls, ["t1", "t2", "t2", "t3"])
        assert.strictEqual(server.hits.filter((h) => h.url === "/v2/login").length, 3)
        assert.isTrue(server.hits.filter((h) => h.url === "/v2/login").every((h) => h.method === "POST"))
      }),
    20_000
  )

  it.scopedLive(
    "rejected credentials abort every call after one login, and the token never shows",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { credentials: { apiKey: "sandbox-key", apiToken: "wrong-secret-123" } })
        const exits = yield* Effect.forEach(
          [1, 2, 3, 4, 5],
          () => Effect.exit(api.request({ method: "GET", path: "/keywords" })),
          { concurrency: "unbounded" }
        )
        for (const exit of exits) {
          assert.isTrue(Exit.isFailure(exit))
          if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
            assert.strictEqual(exit.cause.error.reason, "CredentialsRejected")
            assert.notInclude(exit.cause.error.message, "wrong-secret-123")
            assert.match(exit.cause.error.message, /404/)
          } else assert.fail("expected a failure")
        }
        const log = yield* sandbox.control.requests
        assert.strictEqual(log.length, 1)
        assert.strictEqual(log[0]!.status, 404)
        const again = yield* Effect.exit(api.request({ method: "GET", path: "/keywords" }))
        assert.isTrue(Exit.isFailure(again))
        assert.strictEqual((yield* sandbox.control.requests).length, 1)
      }),
    20_000
  )
})
