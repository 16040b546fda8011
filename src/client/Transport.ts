/**
 * One attempt of one request: the only module that knows `HttpClient`. It takes a concurrency permit, then room
 * in the budget (in that order, so a request never holds budget while it queues for a permit), sends, reads the
 * whole answer under the per-attempt timeout, and turns everything into an `Attempt` value; it never fails.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { HttpClientError } from "@effect/platform/HttpClientError"
import { Duration, Effect, Option, Redacted } from "effect"
import type { ApiRequest } from "./Api.js"
import { parseBody } from "./Body.js"
import type { Budget } from "./Budget.js"
import type { ClientSettings } from "./Config.js"
import type { Counters } from "./Stats.js"

export type Attempt =
  | {
    readonly _tag: "Answer"
    readonly status: number
    readonly requestId: string | undefined
    /** The raw text (rate-limit answers are recognised by it). */
    readonly text: string
    readonly body: unknown
  }
  | {
    readonly _tag: "NoAnswer"
    /** `timeout` and `reset` may have reached the server; `refused` never left this machine. */
    readonly outcome: "timeout" | "reset" | "refused"
    readonly detail: string
  }

/** The request may have reached the server, so a write may or may not have been applied. */
export const mayHaveArrived = (a: Attempt): boolean => a._tag === "Answer" || a.outcome !== "refused"

const notSentCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ERR_INVALID_URL", "CERT_HAS_EXPIRED", "DEPTH_ZERO_SELF_SIGNED_CERT", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "ERR_TLS_CERT_ALTNAME_INVALID"])

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
  if (error._tag === "RequestError" && code !== undefined && notSentCodes.has(code)) {
    return { _tag: "NoAnswer", outcome: "refused", detail: `cannot connect to ${host} (${code})` }
  }
  return { _tag: "NoAnswer", outcome: "reset", detail: `connection to ${host} broke before the answer was complete (${code ?? error.reason})` }
}

const queryParams = (query: ApiRequest["query"]): Array<[string, string]> =>
  Object.entries(query ?? {}).flatMap(([k, v]): Array<[string, string]> =>
    v === undefined ? [] : [[k, typeof v === "object" ? JSON.stringify(v) : String(v)]]
  )

export interface Transport {
  readonly send: (req: ApiRequest, bearer: Option.Option<Redacted.Redacted<string>>) => Effect.Effect<Attempt>
}

export const makeTransport = Effect.fn("Transport.make")(function*(settings: ClientSettings, budget: Budget, counters: Counters) {
  const host = new URL(settings.baseUrl).host
  const client = (yield* HttpClient.HttpClient).pipe(
    HttpClient.mapRequest((r) => r.pipe(HttpClientRequest.prependUrl(settings.baseUrl), HttpClientRequest.acceptJson)),
    // Our traces stay ours: no `traceparent` header goes to a third-party API.
    HttpClient.withTracerPropagation(false)
  )
  const inFlight = yield* Effect.makeSemaphore(settings.concurrency)
  const timeout = Duration.millis(settings.requestTimeoutMs)

  const build = (req: ApiRequest, bearer: Option.Option<Redacted.Redacted<string>>) => {
    let r = HttpClientRequest.make(req.method)(req.path, { urlParams: queryParams(req.query) })
    if (req.body !== undefined) r = HttpClientRequest.bodyUnsafeJson(r, req.body)
    if (Option.isSome(bearer)) r = HttpClientRequest.bearerToken(r, Redacted.value(bearer.value))
    return r
  }

  const exchange = (req: ApiRequest, bearer: Option.Option<Redacted.Redacted<string>>) =>
    client.execute(build(req, bearer)).pipe(
      Effect.flatMap((res) =>
        Effect.map(res.text, (text): Attempt => ({
          _tag: "Answer",
          status: res.status,
          requestId: res.headers["x-request-id"],
          text,
          body: parseBody(text)
        }))
      ),
      Effect.timeoutOption(timeout),
      Effect.map(Option.getOrElse((): Attempt => ({
        _tag: "NoAnswer",
        outcome: "timeout",
        detail: `no answer from ${host} within ${Duration.format(timeout)}`
      }))),
      Effect.catchAll((error) => Effect.succeed(fromError(error, host)))
    )

  const send = (req: ApiRequest, bearer: Option.Option<Redacted.Redacted<string>>): Effect.Effect<Attempt> =>
    inFlight.withPermits(1)(budget.spend(Effect.zipRight(counters.add("requests"), exchange(req, bearer)))).pipe(Effect.withSpan("Transport.send", { attributes: { method: req.method, path: req.path } }))

  return { send } satisfies Transport
})
