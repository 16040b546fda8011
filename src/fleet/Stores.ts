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
 * (`Unavailable`, so it is tried again): what asking again after a commit whose answer was lost does.
 */
const loseAnswers = (process.env.FSM_FLEET_DEBUG_LOSE_ANSWER ?? "").split(",").filter((op) => op !== "")

const losingAnswer = (store: FleetStore): FleetStore =>
  loseAnswers.reduce((losing, name) => {
    const op: unknown = losing[name as keyof FleetStore]
    if (typeof op !== "function") return losing
    let lost = false
    const losingOp = (...args: Array<unknown>) =>
      Effect.flatMap((op as (...a: Array<unknown>) => Effect.Effect<unknown, FleetError>)(...args), (answer) => {
        if (lost) return Effect.succeed(answer)
        lost = true
        return Effect.fail(
          new FleetError({
            reason: "Unavailable",
            message: `the connection was lost before the answer came (the answer of ${name} was lost: ` +
              `FSM_FLEET_DEBUG_LOSE_ANSWER)`
          })
        )
      })
    return { ...losing, [name]: losingOp }
  }, store)
