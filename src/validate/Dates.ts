/**
 * Dates and times in cells: what spreadsheet users write (ISO, dd/mm/yyyy, mm/dd/yyyy, with or without a time)
 * turned into the API's `yyyy-MM-ddTHH:mm:ss` (api-notes: no zone, no fractions), real calendar dates only,
 * and what one cell says about a file's day/month order (`dateShape`, used by format inference).
 */
import { type MessageKey, t } from "../Messages.js"
import { Invalid, quote } from "./Invalid.js"
import type { Formats } from "./Model.js"

type DateFormat = Formats["dateFormat"]

// Year first: ISO (fractions are dropped). A zone (`Z`, `+01:00`, `-0300`) is captured, to be refused: the API
// stores local time without a zone, so dropping it would shift the moment by the zone's offset.
const yearFirst =
  /^(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?:(?:T|\s+)(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i

/**
 * Why a date-time with a zone is refused, with the same moment in Brasília time as a suggestion (the API reads
 * every date-time as the account's local time, with no zone: api-notes).
 */
const zoned = (text: string, iso: string, zone: string): Invalid => {
  const at = new Date(
    `${iso}${
      zone.toUpperCase() === "Z"
        ? "Z"
        : zone.length === 3
        ? `${zone}:00`
        : zone.replace(/^([+-]\d{2})(\d{2})$/, "$1:$2")
    }`
  )
  const brasilia = Number.isNaN(at.getTime())
    ? undefined
    : new Intl.DateTimeFormat("sv-SE", {
      timeZone: "America/Sao_Paulo",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23"
    }).format(at).replace(" ", "T")
  return new Invalid(
    t("date.zone", {
      value: quote(text),
      zone,
      how: zone.toUpperCase() === "Z" ? t("date.zoneAsLocal") : t("date.zoneHoursOff"),
      brasilia: brasilia !== undefined ? t("date.inBrasilia", { time: brasilia }) : ""
    })
  )
}
const yearLast = /^(\d{1,2})([-/.])(\d{1,2})\2(\d{4})(?:(?:T|\s+)(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/
const shortYear = /^\d{1,2}([-/.])\d{1,2}\1\d{2}(?:\s|$)/
const excelSerial = /^\d{5}(?:[.,]\d+)?$/
const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/
// A time-only XLSX cell arrives as a date-time on Excel's day zero (1899-12-30, or 1899-12-31 in 1900 mode).
const excelClock = /^1899-12-3[01](?:T|\s+)(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?Z?$/

const examples: Record<DateFormat, MessageKey & `date.examples${string}`> = {
  "yyyy-mm-dd": "date.examplesYearFirst",
  "dd/mm/yyyy": "date.examplesDayFirst",
  "mm/dd/yyyy": "date.examplesMonthFirst"
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0

const daysIn = (
  y: number,
  m: number
) => (m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31)

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`)

const num = (s: string | undefined) => (s === undefined ? 0 : Number(s))

const build = (text: string, y: number, mo: number, d: number, h: number, mi: number, s: number): string | Invalid => {
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) {
    return new Invalid(t("date.notReal", { value: quote(text) }))
  }
  if (h > 23 || mi > 59 || s > 59) return new Invalid(t("time.notReal", { value: quote(text) }))
  return `${y}-${pad2(mo)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}`
}

/**
 * A date cell → `yyyy-MM-ddTHH:mm:ss` (date-only → `T00:00:00`). Year-first dates are read in every format;
 * year-last ones (`25/12/2026`, `12-25-2026`, `25.12.2026`) by the file's day/month order.
 */
export const parseDate = (text: string, format: DateFormat): string | Invalid => {
  let m = yearFirst.exec(text)
  if (m !== null) {
    const built = build(text, Number(m[1]), Number(m[3]), Number(m[4]), num(m[5]), num(m[6]), num(m[7]))
    return m[8] !== undefined && typeof built === "string" ? zoned(text, built, m[8]) : built
  }
  m = yearLast.exec(text)
  if (m !== null) {
    if (format === "yyyy-mm-dd") {
      return new Invalid(t("date.notYearFirst", { value: quote(text) }))
    }
    const dayFirst = format === "dd/mm/yyyy"
    const day = Number(dayFirst ? m[1] : m[3])
    const month = Number(dayFirst ? m[3] : m[1])
    return build(text, Number(m[4]), month, day, num(m[5]), num(m[6]), num(m[7]))
  }
  if (shortYear.test(text)) return new Invalid(t("date.shortYear", { value: quote(text) }))
  if (excelSerial.test(text)) {
    return new Invalid(t("date.excelNumber", { value: quote(text) }))
  }
  return new Invalid(t("date.notDate", { value: quote(text), examples: t(examples[format]) }))
}

/** A time cell (`8:00`, `08:00`, `08:00:30`) → `HH:mm:ss`. */
export const parseTime = (text: string): string | Invalid => {
  const m = clock.exec(text) ?? excelClock.exec(text)
  if (m === null) return new Invalid(t("time.notTime", { value: quote(text) }))
  const h = Number(m[1])
  const mi = Number(m[2])
  const s = num(m[3])
  if (h > 23 || mi > 59 || s > 59) return new Invalid(t("time.notReal", { value: quote(text) }))
  return `${pad2(h)}:${pad2(mi)}:${pad2(s)}`
}

/**
 * What a date cell tells about the file's day/month order: `dayFirst` (`25/12/2026`), `monthFirst`
 * (`12/25/2026`), `either` (`03/04/2026`), `neutral` (year-first, or both readings equal: `05/05/2026`), or
 * `none` (not a date at all; the row's validation reports it).
 */
type DateShape = "dayFirst" | "monthFirst" | "either" | "neutral" | "none"

export const dateShape = (text: string): DateShape => {
  const m = yearLast.exec(text)
  if (m === null) return yearFirst.test(text) ? "neutral" : "none"
  const a = Number(m[1])
  const b = Number(m[3])
  if (a < 1 || b < 1 || a > 31 || b > 31) return "none"
  if (a <= 12 && b <= 12) return a === b ? "neutral" : "either"
  if (a > 12 && b <= 12) return "dayFirst"
  if (b > 12 && a <= 12) return "monthFirst"
  return "none"
}

/** `"03/04/2026" could be 3 April or 4 March` — for messages about an ambiguous date. */
export const readings = (text: string): string => {
  const m = yearLast.exec(text)
  if (m === null) return quote(text)
  const a = Number(m[1])
  const b = Number(m[3])
  const months = t("formats.months").split(",")
  return t("formats.dateReadings", {
    value: quote(text),
    first: `${a} ${months[b - 1]}`,
    second: `${b} ${months[a - 1]}`
  })
}
