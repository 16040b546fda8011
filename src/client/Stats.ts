/**
 * The process's request counters (`Api.stats`): requests sent, rate-limit answers, resends and logins; and the
 * requests sent in the budget's last window, counted the way the budget counts them (a sliding window of its
 * length, on the same monotonic clock), so a rate shown from it can never exceed the budget.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { ApiStats } from "./Api.js"
import { monotonicMillis } from "./Budget.js"

export interface Counters {
  readonly add: (key: keyof ApiStats) => Effect.Effect<void>
  readonly get: Effect.Effect<ApiStats>
  /** Requests sent in the last `windowMs` (the budget's window). */
  readonly inWindow: Effect.Effect<number>
}

export const makeCounters = (windowMs: number): Effect.Effect<Counters> =>
  Effect.map(
    Ref.make<ApiStats>({ requests: 0, rateLimited: 0, retries: 0, logins: 0 }),
    (ref) => {
      /** When each request of the last window was sent, oldest first. */
      let sent: Array<number> = []
      const prune = (now: number) => {
        let drop = 0
        while (drop < sent.length && sent[drop]! <= now - windowMs) drop++
        if (drop > 0) sent = sent.slice(drop)
      }
      return {
        add: (key) =>
          Effect.zipRight(
            key === "requests"
              ? Effect.map(monotonicMillis, (now) => {
                prune(now)
                sent.push(now)
              })
              : Effect.void,
            Ref.update(ref, (s) => ({ ...s, [key]: s[key] + 1 }))
          ),
        get: Ref.get(ref),
        inWindow: Effect.map(monotonicMillis, (now) => {
          prune(now)
          return sent.length
        })
      }
    }
  )
