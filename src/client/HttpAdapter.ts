/**
 * The HTTP adapter of the `Api` port. Every call goes: token (cached, renewed ahead of expiry, one login for
 * all callers) → concurrency permit → budget → one attempt under a timeout and a size cap → the per-method policy
 * (decided by `Policy.ts`, a pure function of the call's state and the attempt; this module carries it out):
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
import { errorMessage, isRedirect, redirectMessage, resultOf } from "./Body.js"
import { makeBudget, SharedBudget } from "./Budget.js"
import { ClientConfig } from "./Config.js"
import { type Get, makePages, type PageLimits } from "./Pages.js"
import { checkedNotApplied, decide, firstState, outcomeOf, settleCheck } from "./Policy.js"
import { findByKey, lookupFor, patchApplied, resourceOfPath } from "./Reconcile.js"
import { makeCounters } from "./Stats.js"
import { makeTokens, type Token } from "./Token.js"
import { type Attempt, makeTransport, TokenGone } from "./Transport.js"

/** Calls failed in a row by a 401 to a token just issued for them, before the run is aborted. */
const unauthorizedInARow = 5

/** What a lost write turned out to be. */
type Check =
  | { readonly _tag: "Applied"; readonly record: Record<string, unknown>; readonly reply: Reply }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Unknown"; readonly why: string }

const answerOf = (a: Attempt) =>
  a._tag === "Answer" ? { status: a.status, requestId: a.requestId } : { status: undefined, requestId: undefined }

/**
 * The replies a call can end with, each carrying its evidence: the attempts made (`attempts()`), the outcomes of
 * the earlier ones, the time since `startedAt`; `told` is an attempt's message.
 */
const makeReplies = (
  startedAt: number,
  earlier: Array<string>,
  attempts: () => number,
  told: (a: Attempt) => string
) => {
  const evidence = (final: { readonly status: number | undefined; readonly requestId: string | undefined }) =>
    Effect.map(Clock.currentTimeMillis, (now): Evidence => ({
      status: final.status,
      requestId: final.requestId,
      attempts: attempts(),
      retryOutcomes: [...earlier],
      durationMs: now - startedAt
    }))

  const final = (a: Attempt, ok: boolean, note = "") =>
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

  const inDoubt = (a: Attempt, why: string) =>
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
  const reconciled = (a: Attempt, check: Extract<Check, { _tag: "Applied" }>) => {
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
  return { final, inDoubt, reconciled } as const
}

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
  const driverOf = () => Schedule.driver(backoff)
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

  const request: (req: ApiRequest) => Effect.Effect<Reply, ApiAborted> = Effect.fnUntraced(
    function*(req: ApiRequest) {
      const startedAt = yield* Clock.currentTimeMillis
      /** The backoff's driver, made at the first backoff (most requests never need one). */
      let delays: Effect.Effect.Success<ReturnType<typeof driverOf>> | undefined
      const earlier: Array<string> = []
      let attempts = 0
      let state = firstState(req)
      /** Why a 2xx answer of this call did not confirm the write (its message in place of the answer's). */
      const notes = new WeakMap<Attempt, string>()
      const replies = makeReplies(startedAt, earlier, () => attempts, (a) => notes.get(a) ?? describe(a))
      /** The last attempt of a POST/PATCH that may have been applied: checked before anything is resent. */
      let unsure: Attempt | undefined

      const check = (r: ApiRequest) => (r.method === "POST" ? findPosted(r) : checkPatched(r))
      /** Looks the write of the attempt `a` up and settles the call, or answers `undefined`: send it again. */
      const checked = Effect.fnUntraced(function*(a: Attempt, last: boolean) {
        const found = yield* check(req)
        switch (settleCheck(found._tag, last)) {
          case "Reconciled":
            return yield* replies.reconciled(a, found as Extract<Check, { _tag: "Applied" }>)
          case "InDoubt":
            return yield* replies.inDoubt(a, (found as Extract<Check, { _tag: "Unknown" }>).why)
          case "GiveUp":
            return yield* replies.final(a, false, checkedNotApplied)
          case "Resend":
            // Not applied: the attempt becomes an earlier one and the request is sent again.
            earlier.push(outcomeOf(a))
            return undefined
        }
      })

      while (true) {
        if (unsure !== undefined) {
          const settled = yield* checked(unsure, false)
          if (settled !== undefined) return settled
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
        const alone = state.alone
        const sent = yield* Effect.either(transport.send(alone && req.alone !== true ? { ...req, alone } : req, bearer))
        if (Either.isLeft(sent)) {
          continue
        }
        const a = sent.right
        if (attempts > 0) {
          yield* counters.add("retries")
        }
        attempts += 1
        const step = decide(req, state, a, {
          maxAttempts: settings.maxAttempts,
          unauthorizedInARow,
          refusedInARow,
          tokenProven: yield* tokens.proven(used),
          describe
        })
        state = step.state
        refusedInARow = step.refusedInARow
        if (step.note !== undefined) notes.set(a, step.note)
        if (step.proveToken) yield* tokens.prove(used)
        if (step.invalidateToken) yield* tokens.invalidate(used)
        if (step.pause) {
          yield* counters.add("rateLimited")
          yield* budget.pause(settings.rateLimitPauseMs)
        }
        const decision = step.decision
        switch (decision._tag) {
          case "Succeed":
            return yield* replies.final(a, true)
          case "GiveUp":
            if (decision.message !== undefined) notes.set(a, decision.message)
            return yield* replies.final(a, false, decision.suffix)
          case "InDoubt":
            return yield* replies.inDoubt(a, decision.why)
          case "Abort":
            return yield* new ApiAborted({ reason: "Unauthorized", message: decision.message })
          case "CheckLast":
            return (yield* checked(a, true))!
          case "Retry":
            if (decision.check) unsure = a
            else earlier.push(outcomeOf(a))
            if (decision.backoff) yield* (delays ??= yield* driverOf()).next(undefined).pipe(Effect.ignore)
            continue
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
