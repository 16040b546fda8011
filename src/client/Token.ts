/**
 * The token lifecycle: one access token per `Api` layer, obtained by `POST /login` only (the GET form puts the
 * credentials in URL logs), renewed ahead of expiry, shared by all callers; concurrent callers that find it
 * missing or due wait for one login. A rejected login is remembered and never retried.
 *
 * Expiry comes from the JWT's own lifetime (`exp - iat`, or `exp`) or 30 minutes, measured on this machine's
 * clock from the moment the login was sent. The body's `expiration` is never read: the live service writes it
 * in Brazilian local time without a zone (api-notes B).
 *
 * A token is *proven* once the server accepted it for any call (an answer past authentication: not a 401, not a
 * rate-limit answer, not a 5xx). A 401 on a proven token means it was revoked or expired since: log in again. A
 * 401 on a token the server never accepted, right after a new login for that request, means the credentials
 * cannot do this (see `HttpAdapter`).
 *
 * A login answered with a redirect (301/302/307/308) aborts with a message naming the redirect: the base URL is
 * wrong, and a client that followed it could turn `POST /login` into `GET /login`.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { registerSecret } from "../Secrets.js"
import { ApiAborted } from "./Api.js"
import { errorMessage, isRateLimit, isRedirect, LoginRefused, LoginToken, redirectMessage, resultOf } from "./Body.js"
import type { Budget } from "./Budget.js"
import type { ClientSettings } from "./Config.js"
import type { Counters } from "./Stats.js"
import { type Attempt, noBearer, type Transport } from "./Transport.js"

export interface Token {
  readonly value: Redacted.Redacted<string>
  /** Increases with every login; a 401 invalidates only the token it was answered to. */
  readonly generation: number
  /** When it is renewed (client clock, ms). */
  readonly renewAt: number
}

export interface Tokens {
  readonly get: Effect.Effect<Token, ApiAborted>
  /** Drops `token` if it is still the current one (after a 401), so the next `get` logs in again. */
  readonly invalidate: (token: Token) => Effect.Effect<void>
  /**
   * The token a request holding `token` leaves with: the current one when it is newer and still valid (the
   * request queued while a new login happened), `token` while it is still current; none when `token` was dropped
   * after a 401 and no newer one exists yet (the request must wait for the login rather than meet a 401).
   */
  readonly newest: (token: Token) => Effect.Effect<Option.Option<Token>>
  /** The server accepted `token` for a call. */
  readonly prove: (token: Token) => Effect.Effect<void>
  /** Whether the server ever accepted `token`. */
  readonly proven: (token: Token) => Effect.Effect<boolean>
  /** True while a login is under way (the callers that need a token wait for it). */
  readonly loggingIn: Effect.Effect<boolean>
}

const defaultLifetimeMs = 30 * 60_000

/** The `exp` and `iat` claims (seconds) of a JWT, when it is one. */
export const jwtClaims = (jwt: string): { readonly exp?: number; readonly iat?: number } => {
  const payload = jwt.split(".")[1]
  if (payload === undefined) return {}
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
    if (!Predicate.isRecord(claims)) return {}
    return {
      ...(typeof claims.exp === "number" ? { exp: claims.exp } : {}),
      ...(typeof claims.iat === "number" ? { iat: claims.iat } : {})
    }
  } catch {
    return {}
  }
}

/** Lifetime of a token issued at `sentAt` (client clock): the JWT's own `exp - iat`, else `exp` on our clock, else 30 min. */
export const tokenLifetimeMs = (jwt: string, sentAt: number): number => {
  const { exp, iat } = jwtClaims(jwt)
  const lifetime = exp !== undefined && iat !== undefined
    ? (exp - iat) * 1000
    : exp !== undefined
    ? exp * 1000 - sentAt
    : defaultLifetimeMs
  return lifetime > 0 ? lifetime : defaultLifetimeMs
}

export const makeTokens = Effect.fn("Tokens.make")(function*(
  settings: ClientSettings,
  transport: Transport,
  budget: Budget,
  counters: Counters,
  backoff: Schedule.Schedule<unknown>
) {
  const lock = yield* Effect.makeSemaphore(1)
  registerSecret(Redacted.value(settings.credentials.apiKey))
  registerSecret(Redacted.value(settings.credentials.apiToken))
  let current: Option.Option<Token> = Option.none()
  let rejected: Option.Option<ApiAborted> = Option.none()
  let generation = 0
  let loggingIn = false
  /** Generations the server accepted, and those dropped after a 401. */
  const accepted = new Set<number>()
  const dropped = new Set<number>()

  const loginRequest = () => ({
    method: "POST" as const,
    path: "/login",
    body: {
      apiKey: Redacted.value(settings.credentials.apiKey),
      apiToken: Redacted.value(settings.credentials.apiToken)
    }
  })

  const describe = (
    a: Attempt
  ) => (a._tag === "Answer" ? `HTTP ${a.status}: ${errorMessage(a.status, a.body)}` : a.detail)

  const login = Effect.fn("Tokens.login")(function*() {
    const delays = yield* Schedule.driver(backoff)
    let failures = 0
    let rateLimits = 0
    while (true) {
      const sentAt = yield* Clock.currentTimeMillis
      yield* counters.add("logins")
      const a = yield* transport.send(loginRequest(), noBearer)
      if (a._tag === "Answer") {
        if (a.status >= 200 && a.status < 300) {
          const result = resultOf(a.body)
          if (Schema.is(LoginRefused)(result)) {
            return yield* new ApiAborted({
              reason: "CredentialsRejected",
              message: `the API did not authenticate these credentials: ${errorMessage(a.status, a.body)}`
            })
          }
          const login = Schema.decodeUnknownOption(LoginToken)(result)
          if (Option.isNone(login)) {
            return yield* new ApiAborted({ reason: "Unreachable", message: "the login answer carried no access token" })
          }
          const accessToken = login.value.accessToken
          registerSecret(accessToken)
          const lifetime = tokenLifetimeMs(accessToken, sentAt)
          const renewIn = lifetime - Math.min(settings.renewBeforeMs, lifetime / 4)
          generation += 1
          return { value: Redacted.make(accessToken), generation, renewAt: sentAt + renewIn } satisfies Token
        }
        if (isRateLimit(a.status, a.text)) {
          yield* counters.add("rateLimited")
          yield* budget.pause(settings.rateLimitPauseMs)
          if (++rateLimits < settings.maxAttempts) continue
          return yield* new ApiAborted({
            reason: "Unreachable",
            message: `login kept being rate-limited (${rateLimits} times)`
          })
        }
        if (isRedirect(a.status)) {
          return yield* new ApiAborted({
            reason: "Redirected",
            message: redirectMessage(a.status, a.location, settings.baseUrl)
          })
        }
        if (a.status === 403) {
          return yield* new ApiAborted({ reason: "Forbidden", message: `login forbidden: ${describe(a)}` })
        }
        if (a.status < 500) {
          // Spec: 400 when apiKey or apiToken is missing, 404 when they are invalid. Never retried.
          return yield* new ApiAborted({
            reason: "CredentialsRejected",
            message: `the API rejected the credentials (${
              describe(a)
            }); check FSM_API_KEY/FSM_API_TOKEN or --credentials`
          })
        }
      }
      if (++failures >= settings.maxAttempts) {
        return yield* new ApiAborted({
          reason: "Unreachable",
          message: `login failed ${failures} times; last: ${describe(a)}`
        })
      }
      yield* counters.add("retries")
      yield* delays.next(undefined).pipe(Effect.ignore)
    }
  })

  const renewed = lock.withPermits(1)(
    Effect.gen(function*() {
      if (Option.isSome(rejected)) return yield* rejected.value
      const now = yield* Clock.currentTimeMillis
      if (Option.isSome(current) && now < current.value.renewAt) return current.value
      loggingIn = true
      const token = yield* login().pipe(
        Effect.tapError((e) => Effect.sync(() => (rejected = Option.some(e)))),
        Effect.ensuring(Effect.sync(() => (loggingIn = false)))
      )
      current = Option.some(token)
      return token
    })
  )

  const get: Effect.Effect<Token, ApiAborted> = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) => Option.isSome(current) && now < current.value.renewAt ? Effect.succeed(current.value) : renewed
  )

  const invalidate = (token: Token) =>
    Effect.sync(() => {
      dropped.add(token.generation)
      if (Option.isSome(current) && current.value.generation === token.generation) current = Option.none()
    })

  const newest = (token: Token) =>
    Effect.map(Clock.currentTimeMillis, (now): Option.Option<Token> => {
      if (Option.isNone(current)) return dropped.has(token.generation) ? Option.none() : Option.some(token)
      if (current.value.generation > token.generation) {
        return now < current.value.renewAt
          ? Option.some(current.value)
          : Option.none()
      }
      return Option.some(token)
    })

  const prove = (token: Token) => Effect.sync(() => void accepted.add(token.generation))

  const proven = (token: Token) => Effect.sync(() => accepted.has(token.generation))

  return {
    get,
    invalidate,
    newest,
    prove,
    proven,
    loggingIn: Effect.sync(() => loggingIn)
  } satisfies Tokens
})
