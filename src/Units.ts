/**
 * Parsing of the human-written quantities the CLI and sandbox take: durations (`150ms`, `5m`), request budgets
 * (`400/60s`) and probabilities. Pure functions returning `Either` so both the CLI and the sandbox can report
 * a bad value with the flag's name.
 */
import * as Either from "effect/Either"

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** Milliseconds of `"150ms"`, `"2s"`, `"30m"`, `"1h"`, or a bare number of milliseconds. */
export const parseDuration = (text: string): Either.Either<number, string> => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text)
  if (!m) return Either.left(`"${text}" is not a duration (examples: 150ms, 2s, 5m, 1h)`)
  return Either.right(Math.round(Number(m[1]) * units[(m[2] ?? "ms").toLowerCase()]!))
}

export interface Rate {
  readonly limit: number
  readonly windowMs: number
}

/** `"400/60s"` → at most 400 requests in any 60-second window. */
export const parseRate = (text: string): Either.Either<Rate, string> => {
  const m = /^\s*(\d+)\s*\/\s*(.+)$/.exec(text)
  if (!m || Number(m[1]) < 1) return Either.left(`"${text}" is not a rate (examples: 400/60s, 50/5s)`)
  return Either.map(parseDuration(m[2]!), (windowMs) => ({ limit: Number(m[1]), windowMs })).pipe(
    Either.filterOrLeft((r) => r.windowMs > 0, () => `"${text}": the window must be longer than 0`)
  )
}

export const formatRate = (r: Rate): string =>
  `${r.limit}/${r.windowMs % 1000 === 0 ? `${r.windowMs / 1000}s` : `${r.windowMs}ms`}`

/** A probability between 0 and 1 (`0.1`, or `10%`). */
export const parseProbability = (text: string): Either.Either<number, string> => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%)?\s*$/.exec(text)
  const p = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN
  return Number.isFinite(p) && p >= 0 && p <= 1
    ? Either.right(p)
    : Either.left(`"${text}" is not a probability between 0 and 1`)
}
