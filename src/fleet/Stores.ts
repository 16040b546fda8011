/**
 * The fleet's store a URL names (checked by `fleetUrl`): `postgres://` opens PgStore.ts, `redis://` RedisStore.ts.
 * Each backend, and its client package (pg, ioredis), loads only when its URL is used.
 */
import type { Scope } from "effect"
import * as Effect from "effect/Effect"
import type { FleetError } from "./Errors.js"
import { isRedisUrl } from "./Queue.js"
import type { FleetStore } from "./Store.js"

/** The fleet's store at `url`, for the scope. */
export const openStore = (url: string): Effect.Effect<FleetStore, FleetError, Scope.Scope> =>
  isRedisUrl(url)
    ? Effect.flatMap(Effect.promise(() => import("./RedisStore.js")), (m) => m.openRedisStore(url))
    : Effect.flatMap(Effect.promise(() => import("./PgStore.js")), (m) => m.openPgStore(url))
