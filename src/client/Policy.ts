/**
 * The retry policy of one API call as a pure decision (`HttpAdapter.ts` runs it): from the call's state and what
 * its last attempt brought back, what to do next — succeed, give up, say the write is in doubt, abort the run,
 * check a write that may have been applied, or send again (at once, after the backoff, after a rate-limit pause,
 * after a new login). No effect here: the adapter sends, pauses, logs in and looks records up as told.
 * The rules themselves are described at the top of `HttpAdapter.ts`.
 */
import type { ApiRequest } from "./Api.js"
import { isRateLimit } from "./Body.js"
import { type Attempt, mayHaveArrived } from "./Transport.js"
import { judgeWrite } from "./Writes.js"

/** What one call has been through so far. */
export interface CallState {
  /** Failed attempts (5xx, no answer, a 2xx that does not confirm the write). */
  readonly failures: number
  readonly rateLimits: number
  /** 401s of this call, and whether its last attempt was one (the next token is then the one obtained for it). */
  readonly unauthorized: number
  readonly after401: boolean
  /** 401s in a row to tokens issued for this call after its previous 401 and never accepted for any call. */
  readonly refusedFresh: number
  /** Attempts go alone: asked so, or after a 404/500 that may have been a burst's. */
  readonly alone: boolean
}

export const firstState = (req: ApiRequest): CallState => ({
  failures: 0,
  rateLimits: 0,
  unauthorized: 0,
  after401: false,
  refusedFresh: 0,
  alone: req.alone === true
})

/** What the decision reads besides the call's state and the attempt. */
export interface Context {
  readonly maxAttempts: number
  /** Calls failed in a row by a 401 to a token just issued for them, before the run is aborted. */
  readonly unauthorizedInARow: number
  /** Calls of this client failed so, in a row, before this attempt (any accepted token sets it back to 0). */
  readonly refusedInARow: number
  /** Whether the server ever accepted the token this attempt was sent with (before this attempt). */
  readonly tokenProven: boolean
  /** The message of an attempt, as a reply says it. */
  readonly describe: (a: Attempt) => string
}

type Decision =
  /** The answer is the call's reply. */
  | { readonly _tag: "Succeed" }
  /** The call fails with the attempt's message (or `message`), then `suffix`. */
  | { readonly _tag: "GiveUp"; readonly message?: string; readonly suffix?: string }
  /** The write may or may not have been applied. */
  | { readonly _tag: "InDoubt"; readonly why: string }
  /** The run stops: these credentials cannot use the API. */
  | { readonly _tag: "Abort"; readonly message: string }
  /**
   * Send again. `check`: the write may have been applied, look it up (`settleCheck`) before resending;
   * otherwise the attempt is recorded as an earlier one. `backoff`: wait the call's next backoff delay first.
   */
  | { readonly _tag: "Retry"; readonly check: boolean; readonly backoff: boolean }
  /** The attempts ran out on a write that may have been applied: look it up, then settle (`settleCheck`). */
  | { readonly _tag: "CheckLast" }

export interface Step {
  readonly decision: Decision
  readonly state: CallState
  /** The client's count of calls refused in a row, after this attempt. */
  readonly refusedInARow: number
  /** The token this attempt was sent with was accepted by the server: mark it proven. */
  readonly proveToken: boolean
  /** Drop the token (a 401), so the next attempt logs in again. */
  readonly invalidateToken: boolean
  /** Pause every call of the client for the rate-limit pause before anything else (a rate-limit answer). */
  readonly pause: boolean
  /** Said of this attempt in place of its answer's message (a 2xx that does not confirm the write). */
  readonly note?: string
}

type Verdict =
  | { readonly _tag: "ok" | "rejected" | "rate-limited" | "unauthorized" | "transient" }
  /** A 2xx that does not say the write was done: like a lost answer. */
  | { readonly _tag: "unconfirmed"; readonly why: string }
  /** A 202 to a write that is done at once: accepted, maybe applied later. */
  | { readonly _tag: "later"; readonly why: string }

const isWrite = (method: ApiRequest["method"]) => method !== "GET"

const verdictOf = (req: ApiRequest, a: Attempt): Verdict => {
  if (a._tag === "NoAnswer") return { _tag: "transient" }
  if (a.status >= 200 && a.status < 300) {
    if (!isWrite(req.method)) return { _tag: "ok" }
    const judged = judgeWrite(req, a.status, a.body)
    return judged._tag === "Done"
      ? { _tag: "ok" }
      : judged._tag === "Later"
      ? { _tag: "later", why: judged.why }
      : { _tag: "unconfirmed", why: judged.why }
  }
  if (isRateLimit(a.status, a.text)) return { _tag: "rate-limited" }
  if (a.status === 401) return { _tag: "unauthorized" }
  if (a.status >= 500) return { _tag: "transient" }
  return { _tag: "rejected" }
}

/** The server got past authentication: the token was accepted. */
const tokenAccepted = (a: Attempt): boolean =>
  a._tag === "Answer" && a.status < 500 && a.status !== 401 && !isRateLimit(a.status, a.text)

/** The `_retry_outcomes` word of an attempt: `503`, `timeout`, `reset`, `too-large`, `refused`, `rate-limited`, `401`, `200`. */
export const outcomeOf = (a: Attempt): string =>
  a._tag === "NoAnswer" ? a.outcome : isRateLimit(a.status, a.text) ? "rate-limited" : String(a.status)

/**
 * A 404 or 500 answered while other requests of this client were in flight: the live service answers bursts of
 * concurrent calls on one token so, to calls that succeed alone (api-notes, "Live behaviour reported by more public
 * clients"). Such an answer counts only once the call, asked again alone, gets it too.
 */
const maybeBurst = (req: ApiRequest, a: Attempt): boolean =>
  a._tag === "Answer" && a.crowded && (a.status === 500 || (a.status === 404 && req.trustNotFound !== true))

const idempotent = (method: ApiRequest["method"]) => method === "GET" || method === "PUT" || method === "DELETE"

const noCorrelation = "the request has no correlation key to look the record up by"

/** What to do after the attempt `a` of the call `req` in the state `state`. */
export const decide = (req: ApiRequest, state: CallState, a: Attempt, context: Context): Step => {
  const proveToken = tokenAccepted(a)
  const step = {
    state,
    refusedInARow: proveToken ? 0 : context.refusedInARow,
    proveToken,
    invalidateToken: false,
    pause: false
  }
  if (!state.alone && maybeBurst(req, a)) {
    // Not the truth about the record yet: asked again alone, without counting as a failed attempt. A POST
    // or PATCH is checked first (by its key, by a re-read), as after a lost answer, so no create is doubled.
    const alone = { ...state, alone: true, after401: false }
    if (idempotent(req.method)) return { ...step, state: alone, decision: retry(false, false) }
    if (req.method === "POST" && req.correlation === undefined) {
      return { ...step, state: alone, decision: { _tag: "InDoubt", why: noCorrelation } }
    }
    return { ...step, state: alone, decision: retry(true, false) }
  }
  const verdict = verdictOf(req, a)
  const next = verdict._tag === "unauthorized" ? state : { ...state, after401: false }
  switch (verdict._tag) {
    case "ok":
      return { ...step, state: next, decision: { _tag: "Succeed" } }
    case "rejected":
      return { ...step, state: next, decision: { _tag: "GiveUp" } }
    case "later":
      return { ...step, state: next, decision: { _tag: "InDoubt", why: verdict.why } }
    case "unauthorized":
      return { ...onUnauthorized(req, state, a, context), proveToken }
    case "rate-limited": {
      const rateLimits = state.rateLimits + 1
      const decision: Decision = rateLimits >= context.maxAttempts ? { _tag: "GiveUp" } : retry(false, false)
      return { ...step, state: { ...next, rateLimits }, pause: true, decision }
    }
    case "unconfirmed":
    case "transient":
      return { ...onFailure(req, next, a, verdict, context), ...step, state: { ...next, failures: next.failures + 1 } }
  }
}

const retry = (check: boolean, backoff: boolean): Decision => ({ _tag: "Retry", check, backoff })

/** A 401: log in again and resend, unless the credentials plainly cannot do this. */
const onUnauthorized = (req: ApiRequest, state: CallState, a: Attempt, context: Context): Step => {
  const unauthorized = state.unauthorized + 1
  const obtainedForIt = state.after401 && !context.tokenProven
  const refusedFresh = obtainedForIt ? state.refusedFresh + 1 : 0
  const next = { ...state, unauthorized, refusedFresh, after401: true }
  const step = { state: next, proveToken: false, invalidateToken: true, pause: false }
  // A revocation can land between a login and the first answer to its token (a storm's pause in between):
  // one refused fresh token is given one more login; a second one in a row is not a coincidence.
  const cannot = refusedFresh >= 2
  if (!cannot && unauthorized < context.maxAttempts) {
    // A new revocation (or expiry): log in again and resend. A 401 was not applied, whatever the method.
    return { ...step, refusedInARow: context.refusedInARow, decision: retry(false, false) }
  }
  // The tokens were issued for this call after its previous 401 and the server never accepted them: these
  // credentials cannot do this. The call fails; many in a row abort rather than log in again and again.
  const refusedInARow = context.refusedInARow + 1
  if (refusedInARow >= context.unauthorizedInARow) {
    return {
      ...step,
      refusedInARow,
      decision: {
        _tag: "Abort",
        message:
          `the API answered 401 to ${refusedInARow} calls in a row (the last ${req.method} ${req.path}) even with a token just issued for them: these credentials are not allowed to use it`
      }
    }
  }
  const message = cannot
    ? `the API answered 401 to ${req.method} ${req.path} even with tokens just issued for it: these credentials are not allowed to do this (${
      context.describe(a)
    })`
    : `the API answered 401 to ${req.method} ${req.path} ${unauthorized} times, logging in again each time (${
      context.describe(a)
    })`
  return { ...step, refusedInARow, decision: { _tag: "GiveUp", message } }
}

/** A 5xx, no answer, or a 2xx that does not confirm the write. */
const onFailure = (
  req: ApiRequest,
  state: CallState,
  a: Attempt,
  verdict: Verdict,
  context: Context
): { readonly decision: Decision; readonly note?: string } => {
  const note = verdict._tag === "unconfirmed" ? { note: verdict.why } : {}
  const lost = !idempotent(req.method) && mayHaveArrived(a)
  if (lost && req.method === "POST" && req.correlation === undefined) {
    return { ...note, decision: { _tag: "InDoubt", why: noCorrelation } }
  }
  if (state.failures + 1 >= context.maxAttempts) {
    // A write answered 2xx without confirming it may have been applied, whatever the method.
    if (lost) return { ...note, decision: { _tag: "CheckLast" } }
    return verdict._tag === "unconfirmed"
      ? { ...note, decision: { _tag: "InDoubt", why: "the answer does not confirm it" } }
      : { ...note, decision: { _tag: "GiveUp" } }
  }
  // A write that may have been applied is checked (after the backoff) before anything is resent.
  return { ...note, decision: retry(lost, true) }
}

/** What a lost write turned out to be. */
export type Found = "Applied" | "Absent" | "Unknown"

/**
 * After a write that may have been applied was looked up: `Reconciled` (it was: the check's answer is the reply),
 * `InDoubt` (the lookup could not tell), or, when it was not applied, `Resend` — or `GiveUp` when it was the
 * call's last attempt (`CheckLast`).
 */
export const settleCheck = (found: Found, last: boolean): "Reconciled" | "InDoubt" | "Resend" | "GiveUp" =>
  found === "Applied" ? "Reconciled" : found === "Unknown" ? "InDoubt" : last ? "GiveUp" : "Resend"

/** The reply's note when a write checked after its last attempt was not applied. */
export const checkedNotApplied = " (checked afterwards: it was not applied)"
