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
 * Tests only: `FSM_FLEET_DEBUG_LOSE_ANSWER=OP` (an operation of `FleetStore`, `addJobs` say) loses the first answer of
 * that operation in the process: it runs, then fails as a connection lost before its answer came does (`Unavailable`,
 * so it is tried again): what asking again after a commit whose answer was lost does.
 */
const loseAnswer = process.env.FSM_FLEET_DEBUG_LOSE_ANSWER ?? ""

const losingAnswer = (store: FleetStore): FleetStore => {
  const op: unknown = store[loseAnswer as keyof FleetStore]
  if (typeof op !== "function") return store
  let lost = false
  const losing = (...args: Array<unknown>) =>
    Effect.flatMap((op as (...a: Array<unknown>) => Effect.Effect<unknown, FleetError>)(...args), (answer) => {
      if (lost) return Effect.succeed(answer)
      lost = true
      return Effect.fail(
        new FleetError({
          reason: "Unavailable",
          message: `the connection was lost before the answer came (FSM_FLEET_DEBUG_LOSE_ANSWER=${loseAnswer})`
        })
      )
    })
  return { ...store, [loseAnswer]: losing }
}
