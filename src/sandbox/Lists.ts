/**
 * List calls as the live service answers them (api-notes "Query parameters of list calls", api-reference §1.7):
 * `paramFilter` (URL-encoded JSON with the table's filter keys; also encoded twice, as some clients send it, or
 * empty), `page` (1-based), `pageSize` (default 10; tasks at most 100, 400 above), `order` (asc/desc or 0/1, by id), `selectfields`;
 * parameter names in any case (`ParamFilter`, `PageSize`); date-windowed resources need `startDate` and
 * `endDate`; users and webhooks need `paramFilter`; the envelope `{entityList, pagedSearchReturnData, links}`; and 404 on an empty result unless the
 * switch says 200. Besides the table's filter keys, every list honours its id under any of its names (`id`,
 * `userId`/`userID`, `taskID`), the record dates (`creationDate`, `dateLastUpdate`: on or after), and the filters
 * whose meaning is not a property test (tasks' `status` category, `customerGroupId`, `tags`; tickets' `ids`).
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type { Field, Resource } from "../Resources.js"
import { idReadName } from "../Resources.js"
import type { Call } from "./Call.js"
import { isDayOnly, normalizeDate } from "./Dates.js"
import type { ReadContext } from "./ReadBack.js"
import { readBackWith, selectFields } from "./ReadBack.js"
import type { Rec } from "./Store.js"
import { idKey, sameText } from "./Store.js"
import type { Outcome } from "./Wire.js"
import { reject, result, show } from "./Wire.js"

interface ListQuery {
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

/**
 * The JSON of a `paramFilter` value: as sent, or still percent-encoded once or twice more (an n8n node encodes the
 * JSON itself and then its query builder encodes it again: `%257B…`). Undefined when it is not JSON in any of
 * these forms; null for JSON `null`.
 */
export const parseFilter = (text: string): unknown => {
  let candidate = text.trim()
  for (let round = 0; round < 3; round++) {
    try {
      return JSON.parse(candidate) as unknown
    } catch {
      if (!/%[0-9a-f]{2}/i.test(candidate)) return undefined
      try {
        candidate = decodeURIComponent(candidate).trim()
      } catch {
        return undefined
      }
    }
  }
  return undefined
}

const parseListQuery = Effect.fnUntraced(function*(call: Call) {
  const page = yield* positive(call, "page", 1)
  const pageSize = yield* positive(call, "pagesize", 10)
  const orderText = (call.query.get("order") ?? "asc").trim().toLowerCase()
  const order = orderText === "" || orderText === "asc" || orderText === "0"
    ? 0
    : orderText === "desc" || orderText === "1"
    ? 1
    : undefined
  if (order === undefined) {
    return yield* reject(400, `query parameter "order": ${show(orderText)} is not asc, desc, 0 or 1`)
  }
  const select = call.query.get("selectfields")
  const selected = select === undefined || select.trim() === ""
    ? undefined
    : select.split(",").map((s) => s.trim()).filter((s) => s !== "")
  const filterText = call.query.get("paramfilter")
  let filter = new Map<string, unknown>()
  if (filterText !== undefined && filterText.trim() !== "") {
    const parsed = parseFilter(filterText)
    if (parsed === undefined) return yield* reject(400, `query parameter "paramFilter" is not valid JSON`)
    if (parsed !== null) {
      if (!Predicate.isRecord(parsed)) return yield* reject(400, `query parameter "paramFilter" must be a JSON object`)
      filter = new Map(Object.entries(parsed).map(([k, v]) => [k.toLowerCase(), v]))
    }
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

/** The alternatives a filter value stands for: a JSON array, or for list filters a comma-separated text. */
const alternativesOf = (wanted: unknown, commaList: boolean): ReadonlyArray<unknown> =>
  Array.isArray(wanted)
    ? wanted
    : commaList
    ? String(wanted)
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "")
    : [wanted]

const finished = (task: Rec) => Number(task["taskStatus"]) === 5

/**
 * The tasks list's `status`: a category of tasks (api-reference §2.2), not a `taskStatus` value. The category is
 * given by its code (0–6, as a number or a string) or by its name.
 */
const taskCategories: ReadonlyArray<{ readonly name: string; readonly test: (task: Rec) => boolean }> = [
  { name: "unfinished", test: (t) => !finished(t) },
  // The sandbox has no automatic finishing: a task finished after an automatic check-in counts as automatic.
  { name: "finalizedAutomatically", test: (t) => finished(t) && Number(t["checkinType"]) === 2 },
  { name: "finalizedManually", test: (t) => finished(t) && Number(t["checkinType"]) !== 2 },
  { name: "finalizedAutomaticallyOrManually", test: finished },
  { name: "all", test: () => true },
  { name: "withPendency", test: (t) => typeof t["pendency"] === "string" && t["pendency"].trim() !== "" },
  { name: "startedOrEnded", test: (t) => Number(t["taskStatus"] ?? 1) !== 1 }
]

const taskCategory = (wanted: unknown) => {
  const text = String(wanted).trim()
  const byCode = /^\d+$/.test(text) ? taskCategories[Number(text)] : undefined
  return byCode ?? taskCategories.find((c) => c.name.toLowerCase() === text.toLowerCase())
}

type Test = (rec: Rec) => boolean

/**
 * Filters whose meaning is not "the property equals the value", by resource; they take precedence over the
 * table's `filters` entry of the same key. Undefined from a rule: the value is not one the filter knows (400).
 */
const specialFilters: Partial<Record<string, Record<string, (wanted: unknown, call: Call) => Test | undefined>>> = {
  tasks: {
    status: (wanted) => {
      const category = taskCategory(wanted)
      return category === undefined ? undefined : category.test
    },
    customergroupid: (wanted, call) => {
      const group = call.account.table("customer-groups").get(wanted)
      const listed = new Set(((group?.["clientsId"] as Array<unknown> | undefined) ?? []).map(idKey))
      return (task) => {
        if (task["customerId"] === undefined || task["customerId"] === null) return false
        const customer = call.account.table("customers").get(task["customerId"])
        const groups = ((customer?.["groupsId"] as Array<unknown> | undefined) ?? []).map(idKey)
        return listed.has(idKey(task["customerId"])) || groups.includes(idKey(wanted))
      }
    },
    tags: (wanted) => {
      const tags = new Set(alternativesOf(wanted, true).map(idKey))
      return (task) => ((task["keyWords"] as Array<unknown> | undefined) ?? []).some((k) => tags.has(idKey(k)))
    },
    orientation: (wanted) => (task) =>
      String(task["orientation"] ?? "").toLowerCase().includes(String(wanted).trim().toLowerCase())
  },
  questionnaires: {
    // The questionnaires attached to these tasks.
    taskids: (wanted, call) => {
      const tasks = alternativesOf(wanted, true).map((id) => call.account.table("tasks").get(id))
      const used = new Set(tasks.map((t) => idKey(t?.["questionnaireId"] ?? "")).filter((k) => k !== ""))
      return (q) => used.has(idKey(q["id"]))
    }
  },
  "satisfaction-surveys": {
    taskid: (wanted) => {
      const tasks = new Set(alternativesOf(wanted, true).map(idKey))
      return (answer) => tasks.has(idKey(answer["taskID"]))
    }
  },
  quotations: {
    currentstage: (wanted) => (q) => sameText((q["CurrentStage"] as Rec | undefined)?.["description"] ?? "", wanted)
  },
  tickets: {
    ids: (wanted) => {
      const ids = new Set(alternativesOf(wanted, true).map(idKey))
      return (ticket) => ids.has(idKey(ticket["id"]))
    }
  }
}

/** The server-kept dates a list filter tests "on or after" (api-reference §4.1 leaves the comparison open). */
const recordDates = ["creationDate", "dateLastUpdate"]

/** The predicate of the filters present in `paramFilter`; unknown keys are ignored, as the service does. */
const filterPredicate = Effect.fnUntraced(
  function*(r: Resource, filter: ReadonlyMap<string, unknown>, call: Call) {
    const tests: Array<Test> = []
    const given = (key: string) => {
      const wanted = filter.get(key.toLowerCase())
      return wanted === undefined || wanted === null || wanted === "" || (Array.isArray(wanted) && wanted.length === 0)
        ? undefined
        : wanted
    }
    const special = specialFilters[r.name] ?? {}
    for (const [key, rule] of Object.entries(special)) {
      const wanted = given(key)
      if (wanted === undefined) continue
      const test = rule(wanted, call)
      if (test === undefined) {
        return yield* reject(400, `paramFilter "${key}": ${show(wanted)} is not a value this filter knows`)
      }
      tests.push(test)
    }
    // The record's id under any of its names: `id`, its read-back name (`userID`, `taskID`; `userId` is the same key
    // in any case), a single value, a comma-separated text or a JSON array.
    if (r.id !== undefined) {
      const names = new Set([r.id.name, idReadName(r)!].map((n) => n.toLowerCase()))
      for (const name of names) {
        const wanted = special[name] === undefined ? given(name) : undefined
        if (wanted === undefined) continue
        const ids = new Set(alternativesOf(wanted, true).map(idKey))
        tests.push((rec) => ids.has(idKey(rec[r.id!.name])))
      }
    }
    for (const name of recordDates) {
      const wanted = given(name)
      if (wanted === undefined || r.filters?.[name] !== undefined) continue
      const since = typeof wanted === "string" ? normalizeDate(wanted) : undefined
      if (since === undefined) return yield* reject(400, `paramFilter "${name}": ${show(wanted)} is not a date`)
      tests.push((rec) => typeof rec[name] === "string" && (rec[name] as string) >= since)
    }
    for (const [key, property] of Object.entries(r.filters ?? {})) {
      if (property === "" || special[key.toLowerCase()] !== undefined) continue // startDate / endDate: the date window
      const wanted = given(key)
      if (wanted === undefined) continue
      const field = r.fields.find((f) => f.name === property)
      const alternatives = alternativesOf(wanted, r.listFilters?.includes(key) === true)
      tests.push((rec) => {
        const stored = rec[property]
        const values = Array.isArray(stored) ? stored : [stored]
        return values.some((v) => alternatives.some((w) => scalarMatches(field, v, w)))
      })
    }
    return (rec: Rec) => tests.every((t) => t(rec))
  }
)

/** The inclusive date window of a date-windowed list; 400 "Invalid Date" when it is missing or unreadable. */
const dateWindow = Effect.fnUntraced(function*(r: Resource, filter: ReadonlyMap<string, unknown>) {
  if (r.dateWindow === undefined) return undefined
  // GPS positions are asked for one day at a time (`date`, api-reference §2.13).
  const day = r.name === "gps-positions" ? filter.get("date") : undefined
  if (typeof day === "string" && normalizeDate(day) !== undefined) {
    const start = normalizeDate(day)!.slice(0, 10)
    return { field: r.dateWindow.field, start: `${start}T00:00:00`, end: `${start}T23:59:59` }
  }
  const startText = filter.get("startdate")
  const endText = filter.get("enddate")
  if (typeof startText !== "string" || typeof endText !== "string") return yield* reject(400, "Invalid Date")
  const start = normalizeDate(startText)
  const end = normalizeDate(endText)
  if (start === undefined || end === undefined) return yield* reject(400, "Invalid Date")
  return { field: r.dateWindow.field, start, end: isDayOnly(endText) ? `${end.slice(0, 10)}T23:59:59` : end }
})

/** What read-backs of this call derive their properties from. */
export const readContext = (call: Call): ReadContext => ({
  account: call.account,
  settings: call.settings,
  origin: call.url.origin
})

/**
 * Lists that answer 400 without a `paramFilter` (the Blueprint: "The paramFilter is required as ParamUserFilter
 * string json."), with the type name the message gives.
 */
const paramFilterRequired: Partial<Record<string, string>> = {
  users: "ParamUserFilter",
  webhooks: "ParamWebhookFilter"
}

/** Filters, orders and pages `rows` (stored records) and answers with the list envelope. */
export const listRows = Effect.fnUntraced(function*(
  r: Resource,
  rows: ReadonlyArray<Rec>,
  call: Call,
  toWire: (rec: Rec) => Rec = (rec) => readBackWith(r, rec, readContext(call))
) {
  const q = yield* parseListQuery(call)
  const required = paramFilterRequired[r.name]
  if (required !== undefined && (call.query.get("paramfilter") ?? "").trim() === "") {
    return yield* reject(400, `The paramFilter is required as ${required} string json.`)
  }
  const cap = call.settings.pageCapOf.get(r.name) ?? (call.settings.pageCaps ? r.maxPageSize : undefined)
  if (cap !== undefined && q.pageSize > cap) {
    return yield* reject(400, `You cannot request more than ${cap} ${r.name} per page.`)
  }
  const window = yield* dateWindow(r, q.filter)
  const matches = yield* filterPredicate(r, q.filter, call)
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
  const links = [{ href: pageUrl(call.url, q, q.page), rel: "self", method: "GET" }]
  // One author saw `/taskTypes` answer a total of 0 and no next link with records on the page.
  const quirk = call.settings.taskTypesQuirk && r.name === "task-types"
  if (q.page * q.pageSize < selected.length && !quirk) {
    links.push({ href: pageUrl(call.url, q, q.page + 1), rel: "nextPage", method: "GET" })
  }
  return result(
    200,
    {
      entityList,
      pagedSearchReturnData: {
        order: q.order,
        pageSize: q.pageSize,
        page: q.page,
        totalItems: quirk ? 0 : selected.length
      },
      links
    },
    false
  ) satisfies Outcome as Outcome
})

/**
 * A link of the list envelope as the live service writes it (api-reference §1.8): the same path, then
 * `ParamFilter` (when the call had one), `Page`, `PageSize` and `Order=Asc|Desc` in PascalCase; `selectfields`
 * is kept so that a followed link answers in the same shape.
 */
const pageUrl = (url: URL, q: ListQuery, page: number): string => {
  const link = new URL(url.origin + url.pathname)
  if (q.filter.size > 0) {
    const given = [...url.searchParams].find(([name]) => name.toLowerCase() === "paramfilter")?.[1]
    const parsed = given === undefined ? undefined : parseFilter(given)
    if (parsed !== undefined && parsed !== null) link.searchParams.set("ParamFilter", JSON.stringify(parsed))
  }
  link.searchParams.set("Page", String(page))
  link.searchParams.set("PageSize", String(q.pageSize))
  link.searchParams.set("Order", q.order === 0 ? "Asc" : "Desc")
  if (q.selectFields !== undefined) link.searchParams.set("selectfields", q.selectFields.join(","))
  return link.href
}
