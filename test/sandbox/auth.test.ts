import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { call, login, session } from "./harness.js"

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8"))

describe("sandbox: login", () => {
  it.scopedLive("POST and GET /login answer the observed shape with a signed JWT carrying exp", () =>
    Effect.gen(function*() {
      const sandbox = yield* startSandbox({ port: 0, tokenTtlMs: 30 * 60_000 })
      const anon = call(sandbox, null)
      const before = Date.now()
      const post = yield* anon("POST", "/login", { body: { apiKey: "sandbox-key", apiToken: "sandbox-token" } })
      assert.strictEqual(post.status, 200)
      const r = post.body.result
      assert.strictEqual(r.authenticated, true)
      assert.strictEqual(r.message, "OK")
      assert.match(r.created, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      assert.match(r.expiration, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      // Brazil local time without zone: UTC−3.
      const createdAsUtc = Date.parse(`${r.created.replace(" ", "T")}Z`)
      assert.approximately(createdAsUtc + 3 * 3_600_000, before, 5_000)
      assert.strictEqual(Date.parse(`${r.expiration.replace(" ", "T")}Z`) - createdAsUtc, 30 * 60_000)
      const [header, , signature] = r.accessToken.split(".")
      assert.deepStrictEqual(JSON.parse(Buffer.from(header, "base64url").toString()), { alg: "HS256", typ: "JWT" })
      assert.isAbove(signature.length, 20)
      const c = claims(r.accessToken)
      assert.strictEqual(c.sub, "sandbox-key")
      assert.strictEqual(c.exp - c.iat, 30 * 60)
      assert.isString(c.jti)

      const get = yield* anon("GET", "/login", { query: { apiKey: "sandbox-key", apiToken: "sandbox-token" } })
      assert.strictEqual(get.status, 200)
      assert.strictEqual(get.body.result.authenticated, true)
      const works = yield* call(sandbox, get.body.result.accessToken)("GET", "/tasktypes/1")
      assert.strictEqual(works.status, 200)
    }))

  it.scopedLive("400 when a credential is missing, 404 when the credentials are invalid", () =>
    Effect.gen(function*() {
      const sandbox = yield* startSandbox({ port: 0 })
      const anon = call(sandbox, null)
      const missingToken = yield* anon("POST", "/login", { body: { apiKey: "sandbox-key" } })
      assert.strictEqual(missingToken.status, 400)
      assert.isString(missingToken.body.error)
      assert.strictEqual((yield* anon("POST", "/login", { body: { apiToken: "sandbox-token" } })).status, 400)
      assert.strictEqual((yield* anon("GET", "/login", { query: { apiKey: "sandbox-key" } })).status, 400)
      const wrong = yield* anon("POST", "/login", { body: { apiKey: "sandbox-key", apiToken: "nope" } })
      assert.strictEqual(wrong.status, 404)
      assert.notInclude(wrong.text, "nope")
      assert.strictEqual(
        (yield* anon("GET", "/login", { query: { apiKey: "other", apiToken: "sandbox-token" } })).status,
        404
      )
    }))
})

describe("sandbox: tokens", () => {
  // The sandbox reads its time from Effect's Clock: the test moves a TestClock instead of sleeping the TTL out.
  it.scoped("a token expires after the token TTL (the default 30 minutes) and a new login gives a working one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-27T12:00:00Z"))
      const { sandbox, call: api } = yield* session()
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 200)
      yield* TestClock.adjust("29 minutes")
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 200)
      yield* TestClock.adjust("1 minute")
      const expired = yield* api("GET", "/tasktypes/1")
      assert.strictEqual(expired.status, 401)
      assert.strictEqual(expired.body.error, "Token expired")
      const fresh = yield* login(sandbox)
      assert.strictEqual((yield* call(sandbox, fresh)("GET", "/tasktypes/1")).status, 200)
    }))

  it.scopedLive("401 for a missing, malformed, forged, unknown or revoked token", () =>
    Effect.gen(function*() {
      const { sandbox, token, call: api } = yield* session()
      const missing = yield* api("GET", "/users", { token: null })
      assert.strictEqual(missing.status, 401)
      assert.deepStrictEqual(Object.keys(missing.body), ["error"])
      assert.strictEqual(
        (yield* api("GET", "/users", { headers: { authorization: "Basic abc" }, token: null })).status,
        401
      )
      assert.strictEqual((yield* api("GET", "/users", { token: "not-a-jwt" })).status, 401)
      const [h, , s] = token.split(".")
      const forgedClaims = Buffer.from(JSON.stringify({ sub: "sandbox-key", iat: 1, exp: 9_999_999_999, jti: "x" }))
        .toString("base64url")
      const forged = yield* api("GET", "/users", { token: `${h}.${forgedClaims}.${s}` })
      assert.strictEqual(forged.status, 401)
      assert.notInclude(forged.text, token)
      // A token of another sandbox (another signing secret) is unknown here.
      const other = yield* startSandbox({ port: 0 })
      const foreign = yield* login(other)
      assert.strictEqual((yield* api("GET", "/users", { token: foreign })).status, 401)
      // Revocation: every token issued so far answers 401, one already used (its signature checked and
      // remembered) too.
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 200)
      yield* sandbox.control.revokeTokens
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 401)
      assert.strictEqual((yield* call(sandbox, yield* login(sandbox))("GET", "/tasktypes/1")).status, 200)
    }))

  it.scopedLive("each account sees only its own records", () =>
    Effect.gen(function*() {
      const accounts = [
        { apiKey: "sandbox-key", apiToken: "sandbox-token" },
        { apiKey: "acme", apiToken: "acme-secret" }
      ]
      const { sandbox, call: first } = yield* session({ accounts })
      const second = call(sandbox, yield* login(sandbox, "acme", "acme-secret"))
      const created = yield* first("POST", "/segments", { body: { description: "Supermercados" } })
      assert.strictEqual(created.status, 201)
      const id = created.body.result.id
      assert.strictEqual((yield* second("GET", `/segments/${id}`)).status, 404)
      assert.strictEqual((yield* second("GET", "/segments")).status, 404)
      assert.strictEqual((yield* second("DELETE", `/segments/${id}`)).status, 404)
      // Ids are per account: the second account's first segment is also 1.
      const mine = yield* second("POST", "/segments", { body: { description: "Indústrias" } })
      assert.strictEqual(mine.body.result.id, 1)
      assert.deepStrictEqual((yield* sandbox.control.records("sandbox-key", "segments")).map((r) => r["description"]), [
        "Supermercados"
      ])
      assert.deepStrictEqual((yield* sandbox.control.records("acme", "segments")).map((r) => r["description"]), [
        "Indústrias"
      ])
      // Each account is seeded with the task types.
      assert.strictEqual(
        (yield* second("GET", "/tasktypes/1")).body.result.description,
        sandbox.taskTypes[0]!.description
      )
    }))
})

describe("sandbox: rate limit", () => {
  it.scoped("counts every request per client IP, logins included, and answers 403 over the budget (sliding)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-27T12:00:00Z"))
      const windowMs = 60_000
      const { sandbox, call: api } = yield* session({ rate: { limit: 5, windowMs } }) // the login is request 1
      yield* TestClock.adjust("1 second")
      for (let i = 0; i < 4; i++) assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 200)
      const over = yield* api("GET", "/tasktypes/1")
      assert.strictEqual(over.status, 403)
      assert.deepStrictEqual(over.body, { error: "Rate limit temporarily exceeded" })
      assert.isString(over.headers.get("x-request-id"))
      const overLogin = yield* call(sandbox, null)("POST", "/login", {
        body: { apiKey: "sandbox-key", apiToken: "sandbox-token" }
      })
      assert.strictEqual(overLogin.status, 403)
      // The window slides: once the login is older than the window, one more request fits (and only one).
      yield* TestClock.adjust(windowMs - 1_001)
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 403)
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 200)
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 403)
      // No admitted burst exceeds the budget in any window.
      const admitted = (yield* sandbox.control.requests).filter((r) => r.status !== 403).map((r) => r.at)
      for (const start of admitted) {
        assert.isAtMost(admitted.filter((t) => t >= start && t < start + windowMs).length, 5)
      }
    }))

  it.scoped("fixed mode resets the count at each window boundary", () =>
    Effect.gen(function*() {
      const windowMs = 60_000
      // The login falls in the window before the burst's, which starts exactly at a boundary.
      yield* TestClock.setTime(Date.parse("2026-11-27T12:00:00Z") - 1)
      const { call: api } = yield* session({ rate: { limit: 2, windowMs }, rateMode: "fixed" })
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 200)
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 200)
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 403)
      yield* TestClock.adjust(windowMs - 1)
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 403)
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* api("GET", "/tasktypes/1")).status, 200)
    }))
})
