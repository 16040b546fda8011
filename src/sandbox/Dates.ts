/**
 * Dates as the live service writes and reads them: zone-less wall-clock times of Brazil (UTC−3, no daylight
 * saving since 2019), `yyyy-MM-ddTHH:mm:ss` in records and `yyyy-MM-dd HH:mm:ss` in the login response.
 */

const brazilOffsetMs = -3 * 3_600_000

/** `yyyy-MM-ddTHH:mm:ss` in Brazil local time. */
export const brazilDateTime = (epochMs: number): string => new Date(epochMs + brazilOffsetMs).toISOString().slice(0, 19)

/** `yyyy-MM-dd HH:mm:ss` in Brazil local time: the login response's `created` and `expiration`. */
export const brazilLoginTime = (epochMs: number): string => brazilDateTime(epochMs).replace("T", " ")

const pattern = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,7})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i

/**
 * The canonical `yyyy-MM-ddTHH:mm:ss` of a date the API accepts (`yyyy-MM-dd`, with a time, with or without
 * fractions and zone), or undefined when it is not a real date. A zone converts the instant to Brazil time,
 * as the service stores local times.
 */
export const normalizeDate = (text: string): string | undefined => {
  const m = pattern.exec(text.trim())
  if (!m) return undefined
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4] ?? "0", m[5] ?? "0", m[6] ?? "0"].map(
    Number
  ) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const utc = Date.UTC(year, month - 1, day, hour, minute, second)
  const check = new Date(utc)
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) {
    return undefined
  }
  if (hour > 23 || minute > 59 || second > 59) return undefined
  const zone = m[7]
  if (zone === undefined) return check.toISOString().slice(0, 19)
  const offsetMs = zone.toUpperCase() === "Z" ? 0 : zoneOffsetMs(zone)
  return brazilDateTime(utc - offsetMs)
}

const zoneOffsetMs = (zone: string): number => {
  const digits = zone.replace(":", "")
  const sign = digits.startsWith("-") ? -1 : 1
  return sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5))) * 60_000
}

/** Whether a date text carries only the day (`yyyy-MM-dd`): an end-of-window day is then inclusive. */
export const isDayOnly = (text: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(text.trim())
