/**
 * The fleet's store a URL names (checked by `fleetUrl`): `postgres://` opens PgStore.ts, `redis://` RedisStore.ts.
 * Each backend, and its client package (pg, ioredis), loads only when its URL is used.
 */
import type { Scope } from "effect"
import * as Effect from "effect/Effect"
import { FleetError } from "./Errors.js"
import { isRedisUrl } from "./Queue.js"
import type { FleetStore } from "./Store.js"

/** The fleet's store at `url`, for the scope. */
export const openStore = (url: string): Effect.Effect<FleetStore, FleetError, Scope.Scope> =>
  Effect.map(
    isRedisUrl(url)
      ? Effect.flatMap(Effect.promise(() => import("./RedisStore.js")), (m) => m.openRedisStore(url))
      : Effect.flatMap(Effect.promise(() => import("./PgStore.js")), (m) => m.openPgStore(url)),
    losingAnswer
  )

/**
 * Tests only: `FSM_FLEET_DEBUG_LOSE_ANSWER=OP[,OP…]` (operations of `FleetStore`, `addJobs` say) loses the first answer
 * of each of those operations in the process: it runs, then fails as a connection lost before its answer came does
 * (`Unavailable`, so it is tried again): what asking again after a commit whose answer was lost does. `OP*` loses the
 * first answer of every call of it (each piece of every file a submit stores, say, is then stored twice).
 */
const loseAnswers = (process.env.FSM_FLEET_DEBUG_LOSE_ANSWER ?? "").split(",").filter((op) => op !== "")

/** `call`: which call of the operation lost it (`OP*`; each message differs, so a command says each one). */
const lostAnswer = (name: string, call?: number) =>
  new FleetError({
    reason: "Unavailable",
    message: `the connection was lost before the answer came (the answer of ${name} was lost` +
      `${call === undefined ? "" : `, call ${call}`}: FSM_FLEET_DEBUG_LOSE_ANSWER)`
  })

const losingAnswer = (store: FleetStore): FleetStore =>
  loseAnswers.reduce((losing, entry) => {
    const everyCall = entry.endsWith("*")
    const name = everyCall ? entry.slice(0, -1) : entry
    const op: unknown = losing[name as keyof FleetStore]
    if (typeof op !== "function") return losing
    const once = { lost: false }
    let calls = 0
    const losingOp = (...args: Array<unknown>) => {
      // One flag per call (its retries run the same effect again) or one for the process.
      const call = ++calls
      const flag = everyCall ? { lost: false } : once
      return Effect.flatMap((op as (...a: Array<unknown>) => Effect.Effect<unknown, FleetError>)(...args), (answer) => {
        if (flag.lost) return Effect.succeed(answer)
        flag.lost = true
        return Effect.fail(lostAnswer(name, everyCall ? call : undefined))
      })
    }
    return { ...losing, [name]: losingOp }
  }, store)
