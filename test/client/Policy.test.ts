/**
 * The retry policy of one call (`src/client/Policy.ts`) case by case, without HTTP: each row is the call's state,
 * what its attempt brought back, and what the adapter must do next. The adapter's tests (Retries, RateLimit,
 * Token, Answers) check the same rules over loopback.
 */
import { describe, expect, it } from "vitest"
import type { ApiRequest } from "../../src/client/Api.js"
import { type CallState, type Context, decide, firstState, settleCheck, type Step } from "../../src/client/Policy.js"
import type { Attempt } from "../../src/client/Transport.js"
import { resource } from "../../src/Resources.js"

const customers = resource("customers")
const correlation = { resource: customers, key: "externalId", value: "C-1" }
const get: ApiRequest = { method: "GET", path: "/customers/7" }
const put: ApiRequest = { method: "PUT", path: "/customers/7", body: { name: "Mercado" } }
const del: ApiRequest = { method: "DELETE", path: "/customers/7" }
const patch: ApiRequest = { method: "PATCH", path: "/customers/7", body: { name: "Mercado" }, correlation }
const post: ApiRequest = { method: "POST", path: "/customers", body: { externalId: "C-1" }, correlation }
const postBare: ApiRequest = { method: "POST", path: "/customers", body: { externalId: "C-1" } }
const trusting: ApiRequest = { ...get, trustNotFound: true }

const answer = (status: number, body: unknown = { error: "x" }, extra: Partial<Attempt> = {}): Attempt => ({
  _tag: "Answer",
  status,
  requestId: "r-1",
  text: JSON.stringify(body ?? ""),
  body,
  location: undefined,
  crowded: false,
  ...extra
} as Attempt)
const crowded = (status: number) => answer(status, { error: "x" }, { crowded: true })
const rateLimited403 = answer(403, { error: "Rate limit exceeded" })
const noAnswer = (outcome: "timeout" | "reset" | "refused" | "too-large"): Attempt => ({
  _tag: "NoAnswer",
  outcome,
  detail: outcome
})
const created = answer(201, { result: { id: 7, externalId: "C-1" } })
const html = answer(200, "<html>gateway</html>")

const max = 3
const context: Context = {
  maxAttempts: max,
  unauthorizedInARow: 5,
  refusedInARow: 0,
  tokenProven: true,
  describe: (a) => (a._tag === "Answer" ? `HTTP ${a.status}` : a.detail)
}
const fresh = (req: ApiRequest, over: Partial<CallState> = {}): CallState => ({ ...firstState(req), ...over })

type Expected = Partial<Omit<Step, "state">> & { readonly state?: Partial<CallState> }
const retry = (check: boolean, backoff: boolean) => ({ _tag: "Retry", check, backoff }) as const
const noCorrelation = "the request has no correlation key to look the record up by"

const cases: ReadonlyArray<
  readonly [string, ApiRequest, Partial<CallState>, Attempt, Partial<Context>, Expected]
> = [
  // Success and final answers.
  ["GET 200 succeeds and proves the token", get, {}, answer(200, { result: [] }), { refusedInARow: 3 }, {
    decision: { _tag: "Succeed" },
    proveToken: true,
    refusedInARow: 0
  }],
  ["POST 201 with the record's id succeeds", post, {}, created, {}, { decision: { _tag: "Succeed" } }],
  ["DELETE 204 succeeds", del, {}, answer(204, undefined), {}, { decision: { _tag: "Succeed" } }],
  ["GET 404 alone is final", get, {}, answer(404), {}, { decision: { _tag: "GiveUp" }, proveToken: true }],
  ["403 without rate-limit text is a permission error, final", put, {}, answer(403), {}, {
    decision: { _tag: "GiveUp" }
  }],
  ["a redirect is never followed", get, {}, answer(302, ""), {}, { decision: { _tag: "GiveUp" } }],
  ["a 401 past 401s leaves after401 once another answer comes", get, { after401: true }, answer(400), {}, {
    decision: { _tag: "GiveUp" },
    state: { after401: false }
  }],
  // Rate limits: pause every call, resend at once, each counted up to the limit.
  ["403 Rate limit pauses and resends", post, {}, rateLimited403, {}, {
    decision: retry(false, false),
    pause: true,
    proveToken: false,
    state: { rateLimits: 1, failures: 0 }
  }],
  ["429 pauses and resends", get, { rateLimits: 1 }, answer(429), {}, {
    decision: retry(false, false),
    pause: true,
    state: { rateLimits: 2 }
  }],
  ["the last rate limit pauses, then gives up", get, { rateLimits: max - 1 }, answer(429), {}, {
    decision: { _tag: "GiveUp" },
    pause: true
  }],
  // Transient failures of idempotent calls: resent after the backoff.
  ["GET 503 is resent after the backoff", get, {}, answer(503), {}, {
    decision: retry(false, true),
    state: { failures: 1 },
    proveToken: false
  }],
  ["PUT timeout is resent after the backoff", put, { failures: 1 }, noAnswer("timeout"), {}, {
    decision: retry(false, true),
    state: { failures: 2 }
  }],
  ["GET 503 on the last attempt gives up", get, { failures: max - 1 }, answer(503), {}, {
    decision: { _tag: "GiveUp" }
  }],
  [
    "DELETE 202 does not confirm: resent after the backoff, with the reason as its message",
    del,
    {},
    answer(202, {}),
    {},
    {
      decision: retry(false, true),
      note: "the API answered 202 with 202 (accepted for later)"
    }
  ],
  ["PUT 200 with an HTML page on the last attempt is in doubt", put, { failures: max - 1 }, html, {}, {
    decision: { _tag: "InDoubt", why: "the answer does not confirm it" },
    note: "the API answered 200 with an HTML page"
  }],
  // Writes that may have been applied: looked up before any resend.
  ["POST 503 is checked by its key after the backoff", post, {}, answer(503), {}, {
    decision: retry(true, true),
    state: { failures: 1 }
  }],
  ["PATCH reset is re-read after the backoff", patch, {}, noAnswer("reset"), {}, { decision: retry(true, true) }],
  ["POST too-large is checked", post, {}, noAnswer("too-large"), {}, { decision: retry(true, true) }],
  ["POST refused never left: resent without a check", post, {}, noAnswer("refused"), {}, {
    decision: retry(false, true)
  }],
  ["POST 200 with an HTML page is checked, with the reason as its message", post, {}, html, {}, {
    decision: retry(true, true),
    note: "the API answered 200 with an HTML page"
  }],
  ["POST without a correlation key that may have arrived is in doubt", postBare, {}, noAnswer("timeout"), {}, {
    decision: { _tag: "InDoubt", why: noCorrelation }
  }],
  ["POST 503 on the last attempt is checked once more, then settled", post, { failures: max - 1 }, answer(503), {}, {
    decision: { _tag: "CheckLast" }
  }],
  [
    "PATCH timeout on the last attempt is re-read, then settled",
    patch,
    { failures: max - 1 },
    noAnswer("timeout"),
    {},
    {
      decision: { _tag: "CheckLast" }
    }
  ],
  ["POST refused on the last attempt gives up without a check", post, { failures: max - 1 }, noAnswer("refused"), {}, {
    decision: { _tag: "GiveUp" }
  }],
  ["POST 202 is in doubt: accepted for later", post, {}, answer(202, {}), {}, {
    decision: {
      _tag: "InDoubt",
      why:
        "the API answered 202 (accepted for later processing) to POST /customers, which is written at once when it succeeds; it may or may not be applied later"
    }
  }],
  // A 404/500 while other calls were in flight: asked again alone, not counted.
  ["crowded GET 500 is asked again alone, at once, not counted", get, {}, crowded(500), {}, {
    decision: retry(false, false),
    state: { alone: true, failures: 0 }
  }],
  ["crowded PUT 404 is asked again alone", put, { after401: true }, crowded(404), {}, {
    decision: retry(false, false),
    state: { alone: true, after401: false }
  }],
  ["crowded POST 404 is looked up by its key first", post, {}, crowded(404), {}, {
    decision: retry(true, false),
    state: { alone: true }
  }],
  ["crowded PATCH 500 is re-read first", patch, {}, crowded(500), {}, { decision: retry(true, false) }],
  ["crowded POST without a correlation key is in doubt", postBare, {}, crowded(500), {}, {
    decision: { _tag: "InDoubt", why: noCorrelation },
    state: { alone: true }
  }],
  ["crowded 404 to a call that trusts 404 is final", trusting, {}, crowded(404), {}, { decision: { _tag: "GiveUp" } }],
  ["a 500 to a call already alone counts", get, { alone: true }, crowded(500), {}, {
    decision: retry(false, true),
    state: { failures: 1 }
  }],
  // 401: log in again; the credentials that cannot do this fail the call, many in a row abort the run.
  ["401 drops the token and logs in again", post, {}, answer(401), {}, {
    decision: retry(false, false),
    invalidateToken: true,
    proveToken: false,
    state: { unauthorized: 1, after401: true, refusedFresh: 0 }
  }],
  ["401 to the token obtained for it: one more login", get, { unauthorized: 1, after401: true }, answer(401), {
    tokenProven: false
  }, { decision: retry(false, false), invalidateToken: true, state: { refusedFresh: 1, unauthorized: 2 } }],
  ["401 to a proven token after a 401 is a new revocation", get, { unauthorized: 1, after401: true }, answer(401), {
    tokenProven: true
  }, { decision: retry(false, false), state: { refusedFresh: 0 } }],
  [
    "a second fresh token refused: the call fails",
    get,
    { unauthorized: 1, after401: true, refusedFresh: 1 },
    answer(
      401
    ),
    { tokenProven: false },
    {
      decision: {
        _tag: "GiveUp",
        message:
          "the API answered 401 to GET /customers/7 even with tokens just issued for it: these credentials are not allowed to do this (HTTP 401)"
      },
      invalidateToken: true,
      refusedInARow: 1
    }
  ],
  ["401 on the last attempt: the call fails", put, { unauthorized: max - 1 }, answer(401), {}, {
    decision: {
      _tag: "GiveUp",
      message: "the API answered 401 to PUT /customers/7 3 times, logging in again each time (HTTP 401)"
    },
    refusedInARow: 1
  }],
  ["the fifth call failed so in a row aborts the run", get, { unauthorized: max - 1 }, answer(401), {
    refusedInARow: 4
  }, {
    decision: {
      _tag: "Abort",
      message:
        "the API answered 401 to 5 calls in a row (the last GET /customers/7) even with a token just issued for them: these credentials are not allowed to use it"
    },
    refusedInARow: 5
  }],
  ["a 503 neither proves the token nor resets the count in a row", get, {}, answer(503), { refusedInARow: 2 }, {
    proveToken: false,
    refusedInARow: 2
  }]
]

describe("the retry policy of one call", () => {
  it.each(cases)("%s", (_, req, state, attempt, over, expected) => {
    const step = decide(req, fresh(req, state), attempt, { ...context, ...over })
    const { state: expectedState, ...rest } = expected
    expect(step).toMatchObject(rest)
    if (expectedState !== undefined) expect(step.state).toMatchObject(expectedState)
    if (!("pause" in expected)) expect(step.pause).toBe(false)
    if (!("invalidateToken" in expected)) {
      expect(step.invalidateToken).toBe(attempt._tag === "Answer" && attempt.status === 401)
    }
    if (!("note" in expected)) expect(step.note).toBeUndefined()
  })

  it.each(
    [
      ["Applied", false, "Reconciled"],
      ["Applied", true, "Reconciled"],
      ["Unknown", false, "InDoubt"],
      ["Unknown", true, "InDoubt"],
      ["Absent", false, "Resend"],
      ["Absent", true, "GiveUp"]
    ] as const
  )("a write looked up and found %s (last attempt: %s) is settled as %s", (found, last, settled) => {
    expect(settleCheck(found, last)).toBe(settled)
  })

  it("a call starts with nothing counted, alone when asked so", () => {
    expect(firstState(get)).toEqual({
      failures: 0,
      rateLimits: 0,
      unauthorized: 0,
      after401: false,
      refusedFresh: 0,
      alone: false
    })
    expect(firstState({ ...get, alone: true }).alone).toBe(true)
  })
})
