/**
 * List calls as the live service answers them (api-notes "Query parameters of list calls"): `paramFilter`
 * (URL-encoded JSON with the table's filter keys), `page` (1-based), `pageSize` (default 10, no cap), `order`
 * (asc/desc or 0/1, by id), `selectfields`; date-windowed resources need `startDate` and `endDate`; the envelope
 * `{entityList, pagedSearchReturnData, links}`; and 404 on an empty result unless the switch says 200.
 */
import { Effect } from "effect"
import type { Field, Resource } from "../Resources.js"
import type { Call } from "./Call.js"
import { isDayOnly, normalizeDate } from "./Dates.js"
import { readBack, selectFields } from "./ReadBack.js"
import type { Rec } from "./Store.js"
import { sameText } from "./Store.js"
import type { Outcome } from "./Wire.js"
import { isObject, reject, result, show } from "./Wire.js"

export interface ListQuery {
  readonly page: number
  readonly pageSize: number
  /** 0 ascending, 1 descending: the envelope reports the order as this number. */
  readonly order: 0 | 1
  readonly selectFields: ReadonlyArray<string> | undefined
  /** `paramFilter` entries by lower-cased key. */
  readonly filter: ReadonlyMap<string, unknown>
}

const positive = (call: Call, name: string, fallback: number) => {
  const text = call.query.get(name)
  if (text === undefined || text.trim() === "") return Effect.succeed(fallback)
  return /^\s*\d+\s*$/.test(text) && Number(text) >= 1
    ? Effect.succeed(Number(text))
    : reject(400, `query parameter "${name}": ${show(text)} is not a whole number from 1`)
}

export const parseListQuery = Effect.fn("Lists.parseListQuery")(function* (call: Call) {
  const page = yield* positive(call, "page", 1)
  const pageSize = yield* positive(call, "pagesize", 10)
  const orderText = (call.query.get("order") ?? "asc").trim().toLowerCase()
  const order = orderText === "" || orderText === "asc" || orderText === "0" ? 0 : orderText === "desc" || orderText === "1" ? 1 : undefined
  if (order === undefined) return yield* reject(400, `query parameter "order": ${show(orderText)} is not asc, desc, 0 or 1`)
  const select = call.query.get("selectfields")
  const selected = select === undefined || select.trim() === "" ? undefined : select.split(",").map((s) => s.trim()).filter((s) => s !== "")
  const filterText = call.query.get("paramfilter")
  let filter = new Map<string, unknown>()
  if (filterText !== undefined && filterText.trim() !== "") {
    let parsed: unknown
    try {
      parsed = JSON.parse(filterText)
    } catch {
      return yield* reject(400, `query parameter "paramFilter" is not valid JSON`)
    }
    if (!isObject(parsed)) return yield* reject(400, `query parameter "paramFilter" must be a JSON object`)
    filter = new Map(Object.entries(parsed).map(([k, v]) => [k.toLowerCase(), v]))
  }
  return { page, pageSize, order, selectFields: selected, filter } satisfies ListQuery as ListQuery
})

const scalarMatches = (field: Field | undefined, stored: unknown, wanted: unknown): boolean => {
  if (stored === undefined || stored === null) return false
  switch (field?.type._tag) {
    case "integer":
    case "number":
    case "enum":
      return Number(stored) === Number(wanted)
    case "cpfCnpj":
      return String(stored).replace(/\D/g, "") === String(wanted).replace(/\D/g, "")
    default:
      return sameText(stored, wanted)
  }
}

/** The predicate of the table's filters present in `paramFilter`; unknown keys are ignored, as the service does. */
const filterPredicate = (r: Resource, filter: ReadonlyMap<string, unknown>): ((rec: Rec) => boolean) => {
  const tests: Array<(rec: Rec) => boolean> = []
  for (const [key, property] of Object.entries(r.filters ?? {})) {
    if (property === "") continue // startDate / endDate: the date window
    const wanted = filter.get(key.toLowerCase())
    if (wanted === undefined || wanted === null || wanted === "") continue
    const field = r.fields.find((f) => f.name === property)
    const alternatives = r.listFilters?.includes(key) ? String(wanted).split(",").map((s) => s.trim()).filter((s) => s !== "") : [wanted]
    tests.push((rec) => {
      const stored = rec[property]
      const values = Array.isArray(stored) ? stored : [stored]
      return values.some((v) => alternatives.some((w) => scalarMatches(field, v, w)))
    })
  }
  return (rec) => tests.every((t) => t(rec))
}

/** The inclusive date window of a date-windowed list; 400 "Invalid Date" when it is missing or unreadable. */
const dateWindow = Effect.fn("Lists.dateWindow")(function* (r: Resource, filter: ReadonlyMap<string, unknown>) {
  if (r.dateWindow === undefined) return undefined
  const startText = filter.get("startdate")
  const endText = filter.get("enddate")
  if (typeof startText !== "string" || typeof endText !== "string") return yield* reject(400, "Invalid Date")
  const start = normalizeDate(startText)
  const end = normalizeDate(endText)
  if (start === undefined || end === undefined) return yield* reject(400, "Invalid Date")
  return { field: r.dateWindow.field, start, end: isDayOnly(endText) ? `${end.slice(0, 10)}T23:59:59` : end }
})

/** Filters, orders and pages `rows` (stored records) and answers with the list envelope. */
export const listRows = Effect.fn("Lists.listRows")(function* (
  r: Resource,
  rows: ReadonlyArray<Rec>,
  call: Call,
  toWire: (rec: Rec) => Rec = (rec) => readBack(r, rec)
) {
  const q = yield* parseListQuery(call)
  const window = yield* dateWindow(r, q.filter)
  const matches = filterPredicate(r, q.filter)
  const selected = rows.filter((rec) => {
    if (window !== undefined) {
      const at = rec[window.field]
      if (typeof at !== "string" || at === "" || at < window.start || at > window.end) return false
    }
    return matches(rec)
  })
  if (q.order === 1) selected.reverse()
  const pageRows = selected.slice((q.page - 1) * q.pageSize, q.page * q.pageSize)
  if (pageRows.length === 0 && call.settings.emptyListStatus === 404) return yield* reject(404, "No records found")
  const entityList = pageRows.map((rec) => {
    const wire = toWire(rec)
    return q.selectFields === undefined ? wire : selectFields(wire, q.selectFields)
  })
  const links = [{ href: call.url.href, rel: "self", method: "GET" }]
  if (q.page * q.pageSize < selected.length) links.push({ href: pageUrl(call.url, q.page + 1), rel: "nextPage", method: "GET" })
  return result(
    200,
    { entityList, pagedSearchReturnData: { order: q.order, pageSize: q.pageSize, page: q.page, totalItems: selected.length }, links },
    false
  ) satisfies Outcome as Outcome
})

const pageUrl = (url: URL, page: number): string => {
  const next = new URL(url.href)
  for (const name of [...next.searchParams.keys()]) if (name.toLowerCase() === "page") next.searchParams.delete(name)
  next.searchParams.set("page", String(page))
  return next.href
}
