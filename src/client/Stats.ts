/** The process's request counters (`Api.stats`): requests sent, rate-limit answers, resends and logins. */
import { Effect, Ref } from "effect"
import type { ApiStats } from "./Api.js"

export interface Counters {
  readonly add: (key: keyof ApiStats) => Effect.Effect<void>
  readonly get: Effect.Effect<ApiStats>
}

export const makeCounters: Effect.Effect<Counters> = Effect.map(
  Ref.make<ApiStats>({ requests: 0, rateLimited: 0, retries: 0, logins: 0 }),
  (ref) => ({
    add: (key) => Ref.update(ref, (s) => ({ ...s, [key]: s[key] + 1 })),
    get: Ref.get(ref)
  })
)
