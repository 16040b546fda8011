/**
 * One attempt of one request: the only module that knows `HttpClient`. It takes a concurrency permit (all of them
 * for a request sent `alone`), then room
 * in the budget (in that order, so a request never holds budget while it queues for a permit), reads the bearer
 * token only then (the newest one, not one that aged while the request queued), sends, reads the answer under the
 * per-attempt timeout and at most `maxAnswerBytes` of it, and turns everything into an `Attempt` value; it never
 * fails. An answer longer than the cap is abandoned (the connection is closed) and is a `too-large` attempt,
 * which the policy handles like a broken connection.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type { HttpClientError, ResponseError } from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { HttpClientResponse } from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { ApiRequest } from "./Api.js"
import { parseBody } from "./Body.js"
import type { Budget } from "./Budget.js"
import type { ClientSettings } from "./Config.js"
import { makeLanePermits } from "./Lanes.js"
import type { Counters } from "./Stats.js"

export type Attempt =
  | {
    readonly _tag: "Answer"
    readonly status: number
    readonly requestId: string | undefined
    /** The raw text (rate-limit answers are recognised by it). */
    readonly text: string
    readonly body: unknown
    /** The `Location` header (redirects). */
    readonly location: string | undefined
    /**
     * Another request of this client was in flight at some moment of this exchange: a 404 or 500 may then be a
     * burst's (api-notes, "Live behaviour reported by more public clients"), not the truth about the record.
     */
    readonly crowded: boolean
  }
  | {
    readonly _tag: "NoAnswer"
    /**
     * `timeout`, `reset` and `too-large` (an answer past the size cap, abandoned) may have reached the server;
     * `refused` never left this machine.
     */
    readonly outcome: "timeout" | "reset" | "refused" | "too-large"
    readonly detail: string
  }

/** The request may have reached the server, so a write may or may not have been applied. */
export const mayHaveArrived = (a: Attempt): boolean => a._tag === "Answer" || a.outcome !== "refused"

/** The code of an error that stopped a request before any byte of it left (a fleet worker's lease fence). */
export const notSentCode = "ERR_FSM_NOT_SENT"

const notSentCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "ERR_INVALID_URL",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "ERR_TLS_CERT_ALTNAME_INVALID"
])

const errorCode = (cause: unknown): string | undefined => {
  for (let c = cause, depth = 0; c !== undefined && c !== null && depth < 5; depth++) {
    const code = (c as { code?: unknown }).code
    if (typeof code === "string") return code
    c = (c as { cause?: unknown }).cause
  }
  return undefined
}

const fromError = (error: HttpClientError, host: string): Attempt => {
  if (error._tag === "RequestError" && error.reason !== "Transport") {
    return { _tag: "NoAnswer", outcome: "refused", detail: `request to ${host} could not be built (${error.reason})` }
  }
  const code = errorCode(error.cause)
  if (code === notSentCode) {
    const why = error.cause instanceof Error ? error.cause.message : "not sent"
    return { _tag: "NoAnswer", outcome: "refused", detail: `request to ${host} ${why}` }
  }
  if (error._tag === "RequestError" && code !== undefined && notSentCodes.has(code)) {
    return { _tag: "NoAnswer", outcome: "refused", detail: `cannot connect to ${host} (${code})` }
  }
  return {
    _tag: "NoAnswer",
    outcome: "reset",
    detail: `connection to ${host} broke before the answer was complete (${code ?? error.reason})`
  }
}

const queryParams = (query: ApiRequest["query"]): Array<[string, string]> =>
  Object.entries(query ?? {}).flatMap(([k, v]): Array<[string, string]> =>
    v === undefined ? [] : [[k, typeof v === "object" ? JSON.stringify(v) : String(v)]]
  )

/**
 * A request was not sent: its bearer token was dropped after a 401 while it waited for the budget, and the new
 * login is still under way. Internal to the client (the request waits for the login and goes then).
 */
export class TokenGone extends Schema.TaggedError<TokenGone>()("TokenGone", {
  reason: Schema.Literal("Dropped"),
  cause: Schema.optional(Schema.Defect)
}) {}

/**
 * The bearer token of an attempt, read when the request has its permit and budget and is about to leave; it
 * fails with `TokenGone` when the request must not leave with the token it has (the budget room is given back).
 */
export type Bearer<E extends TokenGone = TokenGone> = Effect.Effect<Option.Option<Redacted.Redacted<string>>, E>

/** No bearer token (the login). */
export const noBearer: Bearer<never> = Effect.succeed(Option.none())

export interface Transport {
  readonly send: <E extends TokenGone = never>(req: ApiRequest, bearer: Bearer<E>) => Effect.Effect<Attempt, E>
}

/**
 * The answer's text, or undefined when it passes `max` (it is then not read further: the connection is closed).
 * An answer that declares its length is refused up front when too long and otherwise read whole (Node stops at the
 * declared length); one without a length is read chunk by chunk, up to the cap.
 */
const readCapped = (res: HttpClientResponse, max: number): Effect.Effect<string | undefined, ResponseError> => {
  const declared = res.headers["content-length"]
  if (declared !== undefined && /^\d+$/.test(declared.trim())) {
    return Number(declared) > max
      ? Effect.succeed(undefined)
      : res.text
  }
  return res.stream.pipe(
    Stream.runFoldWhile(
      { chunks: [] as Array<Uint8Array>, size: 0 },
      (acc) => acc.size <= max,
      (acc, chunk) => {
        acc.chunks.push(chunk)
        acc.size += chunk.length
        return acc
      }
    ),
    Effect.map((acc) => (acc.size > max ? undefined : Buffer.concat(acc.chunks, acc.size).toString("utf8")))
  )
}

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`

export const makeTransport = Effect.fn("Transport.make")(
  function*(settings: ClientSettings, budget: Budget, counters: Counters) {
    const host = new URL(settings.baseUrl).host
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((r) =>
        r.pipe(HttpClientRequest.prependUrl(settings.baseUrl), HttpClientRequest.acceptJson)
      ),
      // Our traces stay ours: no `traceparent` header goes to a third-party API. And no span a request: the
      // client's span (its attributes, its redacted copies of every header) cost a row more than its own work and
      // nothing reads it.
      HttpClient.withTracerPropagation(false),
      HttpClient.withTracerDisabledWhen(() => true)
    )
    const inFlight = yield* makeLanePermits(settings.concurrency)
    /**
     * A request sent `alone` holds `gate` while it waits for every permit; while one is waiting or running
     * (`closing`), other requests pass the gate on their way to a permit, so nothing new starts until it has been
     * answered. Otherwise they go straight to a permit.
     */
    const gate = yield* Effect.makeSemaphore(1)
    let closing = 0
    const permits = (req: ApiRequest) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
      if (req.alone === true) {
        return Effect.acquireUseRelease(
          Effect.sync(() => closing++),
          () => gate.withPermits(1)(inFlight.withPermits(settings.concurrency)(self)),
          () => Effect.sync(() => closing--)
        )
      }
      return Effect.suspend(() =>
        closing === 0
          ? inFlight.withPermits(1)(self)
          : Effect.acquireUseRelease(gate.withPermits(1)(inFlight.take(1)), () => self, () => inFlight.release(1))
      )
    }
    const timeout = Duration.millis(settings.requestTimeoutMs)
    /** The exchanges under way; each is marked crowded when another overlaps it. */
    const exchanging = new Set<{ crowded: boolean }>()
    const watched = (self: Effect.Effect<Attempt>): Effect.Effect<Attempt> =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          const me = { crowded: exchanging.size > 0 }
          for (const other of exchanging) other.crowded = true
          exchanging.add(me)
          return me
        }),
        (me) => Effect.map(self, (a): Attempt => (a._tag === "Answer" ? { ...a, crowded: me.crowded } : a)),
        (me) => Effect.sync(() => exchanging.delete(me))
      )

    const build = (req: ApiRequest, bearer: Option.Option<Redacted.Redacted<string>>) => {
      let r = HttpClientRequest.make(req.method)(req.path, { urlParams: queryParams(req.query) })
      if (req.body !== undefined) r = HttpClientRequest.bodyUnsafeJson(r, req.body)
      if (Option.isSome(bearer)) r = HttpClientRequest.bearerToken(r, Redacted.value(bearer.value))
      return r
    }

    const exchange = (req: ApiRequest, bearer: Option.Option<Redacted.Redacted<string>>) =>
      client.execute(build(req, bearer)).pipe(
        Effect.flatMap((res) =>
          Effect.map(readCapped(res, settings.maxAnswerBytes), (text): Attempt =>
            text === undefined
              ? {
                _tag: "NoAnswer",
                outcome: "too-large",
                detail: `the answer of ${host} to ${req.method} ${req.path} (HTTP ${res.status}) passed ${
                  mib(settings.maxAnswerBytes)
                }; it was abandoned unread`
              }
              : {
                _tag: "Answer",
                status: res.status,
                requestId: res.headers["x-request-id"],
                text,
                body: parseBody(text),
                location: res.headers["location"],
                crowded: false
              })
        ),
        Effect.timeoutOption(timeout),
        Effect.map(Option.getOrElse((): Attempt => ({
          _tag: "NoAnswer",
          outcome: "timeout",
          detail: `no answer from ${host} within ${Duration.format(timeout)}`
        }))),
        Effect.catchAll((error) => Effect.succeed(fromError(error, host)))
      )

    const send = <E extends TokenGone = never>(req: ApiRequest, bearer: Bearer<E>): Effect.Effect<Attempt, E> =>
      permits(req)(
        budget.spend(
          Effect.flatMap(bearer, (token) =>
            Effect.zipRight(
              Effect.zipRight(counters.add("requests"), Effect.sync(() => req.onSent?.())),
              watched(exchange(req, token))
            )),
          (e) => e instanceof TokenGone
        )
      )

    return { send } satisfies Transport
  }
)
