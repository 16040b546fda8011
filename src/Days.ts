/**
 * Calendar days as numbers (days since 1970-01-01, UTC) and as `yyyy-MM-dd` text: the `--since`/`--until` of an
 * export and the date windows a list of a date-windowed resource is walked in.
 */
const dayMs = 86_400_000
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/

/** Days since 1970-01-01 of a `yyyy-MM-dd` date, undefined when it is not one. */
export const dayOf = (text: string): number | undefined => {
  const m = datePattern.exec(text)
  if (!m) return undefined
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  const day = ms / dayMs
  return formatDay(day) === text ? day : undefined
}

export const formatDay = (day: number): string => new Date(day * dayMs).toISOString().slice(0, 10)

export const defaultSince = "2000-01-01"

/** Today plus two years (UTC), the default end of a date-windowed walk. */
export const defaultUntil = (nowMs: number): string => {
  const d = new Date(nowMs)
  return formatDay(Date.UTC(d.getUTCFullYear() + 2, d.getUTCMonth(), d.getUTCDate()) / dayMs)
}
