import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { session } from "./harness.js"

/** The fetch failure of a connection closed without a response, or undefined when a response came. */
const transportFailure = (url: string, init: RequestInit) =>
  Effect.promise(() =>
    fetch(url, init).then(
      (res) => `status ${res.status}`,
      (e: unknown) => (e instanceof Error ? "failed" : String(e))
    )
  )

describe("sandbox: fault injection", () => {
  it.scopedLive("latency is added before every response", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      yield* sandbox.control.setFaults({ latencyMs: 150 })
      const started = Date.now()
      assert.strictEqual((yield* call("GET", "/tasktypes/1")).status, 200)
      assert.isAtLeast(Date.now() - started, 145)
    }))

  it.scopedLive("fail rate: random 500/502/503 with an error body, nothing applied", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session({ rate: { limit: 1000, windowMs: 60_000 } })
      yield* sandbox.control.setFaults({ failRate: 1 })
      const statuses = new Set<number>()
      for (let i = 0; i < 30; i++) {
        const a = yield* call("POST", "/segments", { body: { description: `S${i}` } })
        statuses.add(a.status)
        assert.isString(a.body.error)
        assert.isString(a.headers.get("x-request-id"))
      }
      assert.deepStrictEqual([...statuses].sort(), [500, 502, 503])
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "segments"), [])
      yield* sandbox.control.setFaults({ failRate: 0 })
      assert.strictEqual((yield* call("POST", "/segments", { body: { description: "ok" } })).status, 201)
    }))

  it.scopedLive("reset rate: the connection is destroyed before anything is applied", () =>
    Effect.gen(function*() {
      const { sandbox, token } = yield* session()
      yield* sandbox.control.setFaults({ resetRate: 1 })
      const outcome = yield* transportFailure(`${sandbox.url}/segments`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ description: "Varejo" })
      })
      assert.strictEqual(outcome, "failed")
      assert.deepStrictEqual(yield* sandbox.control.records("sandbox-key", "segments"), [])
      const last = (yield* sandbox.control.requests).at(-1)!
      assert.deepStrictEqual([last.method, last.path, last.status, last.applied], [
        "POST",
        "/v2/segments",
        undefined,
        false
      ])
    }))

  it.scopedLive("drop after write: the write is applied and the connection destroyed with no response", () =>
    Effect.gen(function*() {
      const { sandbox, token, call } = yield* session()
      yield* sandbox.control.setFaults({ dropAfterWriteRate: 1 })
      // Reads and refused writes still answer.
      assert.strictEqual((yield* call("GET", "/tasktypes/1")).status, 200)
      assert.strictEqual((yield* call("POST", "/segments", { body: {} })).status, 422)
      const outcome = yield* transportFailure(`${sandbox.url}/segments`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ description: "Varejo" })
      })
      assert.strictEqual(outcome, "failed")
      assert.deepStrictEqual((yield* sandbox.control.records("sandbox-key", "segments")).map((s) => s["description"]), [
        "Varejo"
      ])
      const last = (yield* sandbox.control.requests).at(-1)!
      assert.deepStrictEqual([last.status, last.applied, last.apiKey], [undefined, true, "sandbox-key"])
      yield* sandbox.control.setFaults({ dropAfterWriteRate: 0 })
      assert.strictEqual((yield* call("GET", "/segments/1")).status, 200)
    }))

  it.scopedLive("a rate-limit storm answers 403 to everything until it ends", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      yield* sandbox.control.setFaults({ rateLimitStormUntil: Date.now() + 800 })
      const during = yield* call("GET", "/tasktypes/1")
      assert.strictEqual(during.status, 403)
      assert.deepStrictEqual(during.body, { error: "Rate limit temporarily exceeded" })
      yield* Effect.sleep("850 millis")
      assert.strictEqual((yield* call("GET", "/tasktypes/1")).status, 200)
    }))

  it.scopedLive("the request log lists every request in arrival order with status, account and whether it applied", () =>
    Effect.gen(function*() {
      const { sandbox, call } = yield* session()
      yield* call("POST", "/segments", { body: { description: "Varejo" } })
      yield* call("GET", "/segments/1")
      yield* call("GET", "/segments/1", { token: null })
      const log = yield* sandbox.control.requests
      assert.deepStrictEqual(
        log.map((e) => [e.method, e.path, e.status, e.apiKey, e.applied]),
        [
          ["POST", "/v2/login", 200, "sandbox-key", false],
          ["POST", "/v2/segments", 201, "sandbox-key", true],
          ["GET", "/v2/segments/1", 200, "sandbox-key", false],
          ["GET", "/v2/segments/1", 401, undefined, false]
        ]
      )
      for (let i = 1; i < log.length; i++) assert.isAtLeast(log[i]!.at, log[i - 1]!.at)
    }))
})
