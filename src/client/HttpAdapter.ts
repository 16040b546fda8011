/**
 * The HTTP adapter of the `Api` port. Every call goes: token (cached, renewed ahead of expiry, one login for
 * all callers) → concurrency permit → budget → one attempt under a timeout and a size cap → the per-method policy:
 *
 * - GET, PUT, DELETE are resent on 5xx, timeouts, broken connections and oversized answers, with exponential,
 *   jittered backoff.
 * - POST and PATCH are never resent blindly. When an attempt may have been applied (timeout, reset, oversized
 *   answer, 5xx), a POST is looked up by its correlation key first (found → reconciled, absent → resent, lookup
 *   impossible → in doubt) and a PATCH is re-read and compared (already applied → reconciled, not applied →
 *   resent).
 * - A write is done only on the success its operation has (`Writes.ts`): a 2xx without it (an HTML page, an
 *   empty body, an envelope without the record) is handled like a lost answer, and if it is still unconfirmed
 *   when the attempts run out the row is in doubt; a 202 to a write that is done at once is in doubt.
 * - A rate-limit answer (403 "Rate limit…" or 429) was not applied by the server, whatever the method: every
 *   call pauses for `rateLimitPauseMs` (one window of the budget unless set) and the request is sent again. A 403
 *   without that text is a permission error and is final.
 * - A 401 drops the token and logs in again, every time the token had been accepted before (it was revoked or
 *   expired since), up to `maxAttempts` times per call. A 401 to a token the server never accepted, right after
 *   a new login for this call, twice in a row, means the credentials cannot do this: the call fails (not the
 *   run), and `unauthorizedInARow` such calls in a row abort the run instead of logging in again and again.
 * - A 404 or 500 answered while other requests of this client were in flight may be a burst's (the live service
 *   answers 16 calls at once on one token so, to calls that succeed alone): it is not counted; the call is asked
 *   again alone (nothing else in flight until it is answered), a POST after its lookup by key and a PATCH after
 *   its re-read, as after a lost answer, and that answer counts. Lists, lookups, reconciliations and writes alike.
 * - A redirect is never followed (it would turn a POST into a GET): the call fails with a message naming it.
 *
 * Rate-limited attempts and other failed attempts are counted separately, each up to `maxAttempts`.
 */
import type { HttpClient } from "@effect/platform"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { resource } from "../Resources.js"
import type { ApiRequest, ClientActivity, Evidence, Reply } from "./Api.js"
import { accountOf, Api, ApiAborted } from "./Api.js"
import { errorMessage, isRateLimit, isRedirect, redirectMessage, resultOf } from "./Body.js"
import { makeBudget, SharedBudget } from "./Budget.js"
import { ClientConfig } from "./Config.js"
import { type Get, makePages, type PageLimits } from "./Pages.js"
import { findByKey, lookupFor, patchApplied, resourceOfPath } from "./Reconcile.js"
import { makeCounters } from "./Stats.js"
import { makeTokens, type Token } from "./Token.js"
import { type Attempt, makeTransport, mayHaveArrived, TokenGone } from "./Transport.js"
import { judgeWrite } from "./Writes.js"

/** Calls failed in a row by a 401 to a token just issued for them, before the run is aborted. */
const unauthorizedInARow = 5

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
const outcomeOf = (a: Attempt): string =>
  a._tag === "NoAnswer" ? a.outcome : isRateLimit(a.status, a.text) ? "rate-limited" : String(a.status)

/** What a lost write turned out to be. */
type Check =
  | { readonly _tag: "Applied"; readonly record: Record<string, unknown>; readonly reply: Reply }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Unknown"; readonly why: string }

/**
 * A 404 or 500 answered while other requests of this client were in flight: the live service answers bursts of
 * concurrent calls on one token so, to calls that succeed alone (api-notes, "Live behaviour reported by more public
 * clients"). Such an answer counts only once the call, asked again alone, gets it too.
 */
const maybeBurst = (req: ApiRequest, a: Attempt): boolean =>
  a._tag === "Answer" && a.crowded && (a.status === 500 || (a.status === 404 && req.trustNotFound !== true))

const idempotent = (method: ApiRequest["method"]) => method === "GET" || method === "PUT" || method === "DELETE"

export const make = Effect.gen(function*() {
  const settings = yield* ClientConfig
  const counters = yield* makeCounters(settings.rate.windowMs)
  const shared = yield* Effect.serviceOption(SharedBudget)
  const budget = Option.isSome(shared) ? shared.value : yield* makeBudget(settings.rate, settings.budgetMarginMs)
  const transport = yield* makeTransport(settings, budget, counters)
  const backoff = Schedule.exponential(Duration.millis(settings.backoffBaseMs), 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.millis(settings.backoffMaxMs)))
  )
  const tokens = yield* makeTokens(settings, transport, budget, counters, backoff)
  /** Calls failed one after the other by a 401 to a token just issued for them. */
  let refusedInARow = 0
  /** Page sizes the server refused, learned once for the whole run. */
  const pageLimits: PageLimits = new Map()
  const listGet: Get = (path, query, trustNotFound) =>
    request({ method: "GET", path, query, ...(trustNotFound === true ? { trustNotFound } : {}) })

  const describe = (a: Attempt): string =>
    a._tag === "NoAnswer"
      ? a.detail
      : isRedirect(a.status)
      ? redirectMessage(a.status, a.location, settings.baseUrl)
      : errorMessage(a.status, a.body)

  /** Looks a POST's record up by its correlation key; the lookup's own GETs follow the GET policy. */
  const findPosted = Effect.fn("Api.findPosted")(function*(req: ApiRequest) {
    const correlation = req.correlation
    if (correlation === undefined) {
      return { _tag: "Unknown", why: "the request has no correlation key to look the record up by" } as Check
    }
    // Some resources are written through one path and listed through another (`/customers/complete`).
    const listed = correlation.resource.readVia !== undefined
      ? resource(correlation.resource.readVia)
      : correlation.resource
    const lookup = lookupFor(listed, correlation.key)
    let lastReply: Reply | undefined
    const get: Get = (path, query, trustNotFound) =>
      Effect.tap(listGet(path, query, trustNotFound), (r) => Effect.sync(() => (lastReply = r)))
    const search = (filtered: boolean) =>
      makePages(settings, get, pageLimits)(listed.path, {
        resource: listed,
        ...(filtered && lookup.filterKey !== undefined ? { filter: { [lookup.filterKey]: correlation.value } } : {})
      }).pipe(
        Stream.map((page) => findByKey(page.records, lookup, correlation.value)),
        Stream.filter((record) => record !== undefined),
        Stream.runHead,
        Effect.either
      )
    let found = yield* search(true)
    // A filtered list with no match answers 500 now and then on the live service: the whole list, matched here,
    // is another way to the same answer (as the import's lookups do; not for date-windowed lists).
    if (
      Either.isLeft(found) && found.left._tag === "ListFailed" && lookup.filterKey !== undefined &&
      listed.dateWindow === undefined
    ) {
      yield* Effect.logDebug(`looking ${req.path} up by ${correlation.key}: ${found.left.message}; walking the list`)
      found = yield* search(false)
    }
    if (Either.isLeft(found)) {
      if (found.left._tag === "ApiAborted") return yield* found.left
      return { _tag: "Unknown", why: `looking it up by ${correlation.key} failed: ${found.left.message}` } as Check
    }
    return Option.match(found.right, {
      onNone: (): Check => ({ _tag: "Absent" }),
      onSome: (record): Check => ({ _tag: "Applied", record: record!, reply: lastReply! })
    })
  })

  /** Re-reads a PATCHed record and tells whether the patch is already on it. */
  const checkPatched = Effect.fn("Api.checkPatched")(function*(req: ApiRequest) {
    const reply = yield* request({ method: "GET", path: req.path })
    if (reply.status === 404) return { _tag: "Absent" } as Check
    if (!reply.ok || !Predicate.isRecord(reply.result)) {
      return {
        _tag: "Unknown",
        why: `re-reading ${req.path} failed: ${reply.error ?? "the answer is not a record"}`
      } as Check
    }
    const applied = patchApplied(req.body, reply.result, req.correlation?.resource ?? resourceOfPath(req.path))
    if (applied === undefined) {
      return { _tag: "Unknown", why: "the patch cannot be compared with the re-read record" } as Check
    }
    return applied ? ({ _tag: "Applied", record: reply.result, reply } as Check) : ({ _tag: "Absent" } as Check)
  })

  const request: (req: ApiRequest) => Effect.Effect<Reply, ApiAborted> = Effect.fn("Api.request")(
    function*(req: ApiRequest) {
      const startedAt = yield* Clock.currentTimeMillis
      const delays = yield* Schedule.driver(backoff)
      const earlier: Array<string> = []
      let attempts = 0
      let failures = 0
      let rateLimits = 0
      /** 401s of this call, and whether its last attempt was one (the next token is then the one obtained for it). */
      let unauthorized = 0
      let after401 = false
      /** 401s in a row to tokens issued for this call after its previous 401 and never accepted for any call. */
      let refusedFresh = 0
      /** Why a 2xx answer of this call did not confirm the write (its message in place of the answer's). */
      const notes = new WeakMap<Attempt, string>()
      const told = (a: Attempt) => notes.get(a) ?? describe(a)
      /** The last attempt of a POST/PATCH that may have been applied: checked before anything is resent. */
      let unsure: Attempt | undefined
      /** Attempts go alone: asked so, or after a 404/500 that may have been a burst's. */
      let alone = req.alone === true

      const evidence = (final: { readonly status: number | undefined; readonly requestId: string | undefined }) =>
        Effect.map(Clock.currentTimeMillis, (now): Evidence => ({
          status: final.status,
          requestId: final.requestId,
          attempts,
          retryOutcomes: [...earlier],
          durationMs: now - startedAt
        }))

      const answerOf = (a: Attempt) =>
        a._tag === "Answer" ? { status: a.status, requestId: a.requestId } : { status: undefined, requestId: undefined }

      const finalReply = (a: Attempt, ok: boolean, note = "") =>
        Effect.map(evidence(answerOf(a)), (ev): Reply => ({
          ok,
          status: ev.status,
          body: a._tag === "Answer" ? a.body : undefined,
          result: a._tag === "Answer" ? resultOf(a.body) : undefined,
          error: ok ? undefined : `${told(a)}${note}`,
          inDoubt: false,
          reconciled: false,
          evidence: ev
        }))

      const inDoubtReply = (a: Attempt, why: string) =>
        Effect.map(evidence(answerOf(a)), (ev): Reply => ({
          ok: false,
          status: ev.status,
          body: a._tag === "Answer" ? a.body : undefined,
          result: undefined,
          error: `${told(a)}; it may or may not have been applied: ${why}`,
          inDoubt: true,
          reconciled: false,
          evidence: ev
        }))

      /** The lost write was found applied: the last attempt becomes an earlier one, the check is the final exchange. */
      const reconciledReply = (a: Attempt, check: Extract<Check, { _tag: "Applied" }>) => {
        earlier.push(outcomeOf(a))
        return Effect.map(
          evidence({ status: check.reply.status, requestId: check.reply.evidence.requestId }),
          (ev): Reply => ({
            ok: true,
            status: ev.status,
            body: check.reply.body,
            result: check.record,
            error: undefined,
            inDoubt: false,
            reconciled: true,
            evidence: ev
          })
        )
      }

      const check = (r: ApiRequest) => (r.method === "POST" ? findPosted(r) : checkPatched(r))

      while (true) {
        if (unsure !== undefined) {
          const found = yield* check(req)
          if (found._tag === "Applied") return yield* reconciledReply(unsure, found)
          if (found._tag === "Unknown") return yield* inDoubtReply(unsure, found.why)
          // Not applied: the attempt becomes an earlier one and the request is sent again.
          earlier.push(outcomeOf(unsure))
          unsure = undefined
        }
        const token = yield* tokens.get
        // The token is read again when the request leaves: one that was dropped while it queued is replaced by a
        // newer one, or, when the new login is still under way, the request is not sent and waits for it.
        let used: Token = token
        const bearer = Effect.flatMap(tokens.newest(token), (t) =>
          Option.isSome(t)
            ? Effect.succeed(Option.some((used = t.value).value))
            : Effect.fail(new TokenGone({ reason: "Dropped" })))
        const sent = yield* Effect.either(transport.send(alone && req.alone !== true ? { ...req, alone } : req, bearer))
        if (Either.isLeft(sent)) {
          continue
        }
        const a = sent.right
        if (attempts > 0) {
          yield* counters.add("retries")
        }
        attempts += 1
        if (tokenAccepted(a)) {
          yield* tokens.prove(used)
          refusedInARow = 0
        }
        if (!alone && maybeBurst(req, a)) {
          // Not the truth about the record yet: asked again alone, without counting as a failed attempt. A POST
          // or PATCH is checked first (by its key, by a re-read), as after a lost answer, so no create is doubled.
          alone = true
          after401 = false
          if (idempotent(req.method)) {
            earlier.push(outcomeOf(a))
            continue
          }
          if (req.method === "POST" && req.correlation === undefined) {
            return yield* inDoubtReply(a, "the request has no correlation key to look the record up by")
          }
          unsure = a
          continue
        }
        const verdict = verdictOf(req, a)
        if (verdict._tag !== "unauthorized") after401 = false

        switch (verdict._tag) {
          case "ok":
            return yield* finalReply(a, true)
          case "rejected":
            return yield* finalReply(a, false)
          case "later":
            return yield* inDoubtReply(a, verdict.why)
          case "unauthorized": {
            yield* tokens.invalidate(used)
            unauthorized += 1
            const obtainedForIt = after401 && !(yield* tokens.proven(used))
            refusedFresh = obtainedForIt ? refusedFresh + 1 : 0
            after401 = true
            // A revocation can land between a login and the first answer to its token (a storm's pause in between):
            // one refused fresh token is given one more login; a second one in a row is not a coincidence.
            const cannot = refusedFresh >= 2
            if (cannot || unauthorized >= settings.maxAttempts) {
              // The tokens were issued for this call after its previous 401 and the server never accepted them:
              // these credentials cannot do this. The call fails; many in a row abort rather than log in again and
              // again.
              if (++refusedInARow >= unauthorizedInARow) {
                return yield* new ApiAborted({
                  reason: "Unauthorized",
                  message:
                    `the API answered 401 to ${refusedInARow} calls in a row (the last ${req.method} ${req.path}) even with a token just issued for them: these credentials are not allowed to use it`
                })
              }
              notes.set(
                a,
                cannot
                  ? `the API answered 401 to ${req.method} ${req.path} even with tokens just issued for it: these credentials are not allowed to do this (${
                    describe(a)
                  })`
                  : `the API answered 401 to ${req.method} ${req.path} ${unauthorized} times, logging in again each time (${
                    describe(a)
                  })`
              )
              return yield* finalReply(a, false)
            }
            // A new revocation (or expiry): log in again and resend. A 401 was not applied, whatever the method.
            earlier.push(outcomeOf(a))
            continue
          }
          case "rate-limited": {
            yield* counters.add("rateLimited")
            yield* budget.pause(settings.rateLimitPauseMs)
            if (++rateLimits >= settings.maxAttempts) return yield* finalReply(a, false)
            earlier.push(outcomeOf(a))
            continue
          }
          case "unconfirmed":
          case "transient": {
            if (verdict._tag === "unconfirmed") notes.set(a, verdict.why)
            const lost = !idempotent(req.method) && mayHaveArrived(a)
            if (lost && req.method === "POST" && req.correlation === undefined) {
              return yield* inDoubtReply(a, "the request has no correlation key to look the record up by")
            }
            if (++failures >= settings.maxAttempts) {
              // A write answered 2xx without confirming it may have been applied, whatever the method.
              if (!lost) {
                return verdict._tag === "unconfirmed"
                  ? yield* inDoubtReply(a, "the answer does not confirm it")
                  : yield* finalReply(a, false)
              }
              const found = yield* check(req)
              if (found._tag === "Applied") return yield* reconciledReply(a, found)
              if (found._tag === "Unknown") return yield* inDoubtReply(a, found.why)
              return yield* finalReply(a, false, " (checked afterwards: it was not applied)")
            }
            // A write that may have been applied is checked (after the backoff) before anything is resent.
            if (lost) unsure = a
            else earlier.push(outcomeOf(a))
            yield* delays.next(undefined).pipe(Effect.ignore)
            continue
          }
        }
      }
    }
  )

  /** A pause holds every request, logins included, so it is said first; then a login, then the window. */
  const activity = Effect.gen(function*() {
    const inWindow = yield* counters.inWindow
    const holding = yield* budget.holding
    if (holding.pausedUntil !== undefined) {
      return { state: "paused", pausedUntil: holding.pausedUntil, inWindow } satisfies ClientActivity
    }
    if (yield* tokens.loggingIn) return { state: "logging-in", inWindow } satisfies ClientActivity
    return { state: holding.forRoom ? "waiting-budget" : "sending", inWindow } satisfies ClientActivity
  })

  return Api.of({
    baseUrl: settings.baseUrl,
    budget: settings.rate,
    embedded: settings.embedded,
    account: accountOf(Redacted.value(settings.credentials.apiKey)),
    request,
    pages: makePages(settings, listGet, pageLimits),
    stats: counters.get,
    activity
  })
})

/** The live `Api`: needs the client configuration and an `HttpClient` (see `src/cli/Connection.ts`). */
export const layer: Layer.Layer<Api, never, ClientConfig | HttpClient.HttpClient> = Layer.effect(Api, make)

export const HttpAdapter = { make, layer } as const
