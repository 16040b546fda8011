/**
 * The per-client-IP request budget (`--rate-limit N/WINDOW`, default 400/60s). Every request is counted,
 * logins and list pages included; a request over the budget is refused (403) and does not consume budget.
 * `sliding`: at most N admitted requests in any WINDOW interval. `fixed`: at most N per epoch-aligned window.
 */
import type { Rate } from "../Units.js"

type RateMode = "sliding" | "fixed"

export interface Budget {
  /** Counts the request and says whether it may proceed. */
  readonly admit: (client: string, now: number) => boolean
}

export const makeBudget = (rate: Rate, mode: RateMode): Budget => (mode === "sliding" ? sliding(rate) : fixed(rate))

const sliding = ({ limit, windowMs }: Rate): Budget => {
  // Times of the admitted requests still inside the window, oldest first; `head` skips the expired ones.
  const logs = new Map<string, { times: Array<number>; head: number }>()
  return {
    admit: (client, now) => {
      let log = logs.get(client)
      if (log === undefined) {
        log = { times: [], head: 0 }
        logs.set(client, log)
      }
      while (log.head < log.times.length && log.times[log.head]! <= now - windowMs) log.head++
      if (log.head > 1024 && log.head * 2 > log.times.length) {
        log.times = log.times.slice(log.head)
        log.head = 0
      }
      if (log.times.length - log.head >= limit) return false
      log.times.push(now)
      return true
    }
  }
}

const fixed = ({ limit, windowMs }: Rate): Budget => {
  const windows = new Map<string, { start: number; count: number }>()
  return {
    admit: (client, now) => {
      const start = Math.floor(now / windowMs) * windowMs
      let w = windows.get(client)
      if (w === undefined || w.start !== start) {
        w = { start, count: 0 }
        windows.set(client, w)
      }
      if (w.count >= limit) return false
      w.count++
      return true
    }
  }
}
