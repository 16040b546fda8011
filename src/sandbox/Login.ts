/**
 * `POST /login` (JSON `{apiKey, apiToken}`) and the discouraged `GET /login?apiKey=&apiToken=`: 400 when a
 * credential is missing, 404 when they do not match an account, otherwise the observed response shape with
 * Brazil-local, zone-less `created` / `expiration`.
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { timingSafeEqual } from "node:crypto"
import { brazilLoginTime } from "./Dates.js"
import type { Tokens } from "./Tokens.js"
import type { Outcome } from "./Wire.js"
import { reject, result } from "./Wire.js"

export interface Credentials {
  readonly apiKey: string
  readonly apiToken: string
}

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export const login = Effect.fnUntraced(function*(
  accounts: ReadonlyArray<Credentials>,
  tokens: Tokens,
  given: { readonly apiKey: unknown; readonly apiToken: unknown },
  now: number
) {
  const { apiKey, apiToken } = given
  if (typeof apiKey !== "string" || apiKey === "" || typeof apiToken !== "string" || apiToken === "") {
    return yield* reject(400, "apiKey and apiToken are required")
  }
  const account = accounts.find((a) => a.apiKey === apiKey && sameSecret(a.apiToken, apiToken))
  if (account === undefined) return yield* reject(404, "Invalid apiKey or apiToken")
  const issued = tokens.issue(account.apiKey, now)
  return {
    apiKey: account.apiKey,
    outcome: result(
      200,
      {
        authenticated: true,
        created: brazilLoginTime(issued.issuedAt),
        expiration: brazilLoginTime(issued.expiresAt),
        accessToken: issued.accessToken,
        message: "OK"
      },
      false
    ) satisfies Outcome as Outcome
  }
})

/** The credentials of a login request: the JSON body for POST, the query (any case) for GET. */
export const givenCredentials = Effect.fnUntraced(function*(
  method: string,
  body: unknown,
  query: ReadonlyMap<string, string>
) {
  if (method === "GET") return { apiKey: query.get("apikey"), apiToken: query.get("apitoken") }
  if (!Predicate.isRecord(body)) return yield* reject(400, "apiKey and apiToken are required")
  return { apiKey: body["apiKey"], apiToken: body["apiToken"] }
})
