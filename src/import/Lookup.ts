/**
 * Finding existing records by a property (a key such as `externalId`, `login`, `description`, or the id) with list
 * calls, never one GET per row: filtered calls (a chunk of values per call where the filter takes a comma-separated
 * list, else one value per call) or one walk of the whole list, whichever costs fewer requests (`chooseLookup`). Matches are checked
 * on our side too (a filter may match substrings), and only matching records are kept in memory. Values match as
 * the service matches keys, trimmed and without regard to case; which property and filter are used is `Identity`'s.
 *
 * A lookup decides between create and update, so a list it cannot read never reads as "no such record": a 404 is
 * the end only once confirmed (`Api.pages`); filtered calls that fail (a 500 to an empty filtered list, as the live
 * service gives under load) are answered by one walk of the whole list instead (not for date-windowed lists, whose
 * whole history is too long); a list that changed while it was walked (`ListFailed` `Shifted`) is walked again, up
 * to `shiftedWalks` times; otherwise the lookup fails with `ListFailed` and its rows are not written.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Api, type ApiAborted, type ListFailed } from "../client/Api.js"
import { writeForm } from "../client/Body.js"
import {
  distinctKeys,
  keyFilter,
  KeyMap,
  keyProperty,
  keyText,
  listedAs,
  normalKey,
  recordKey,
  recordProperty
} from "../Identity.js"
import type { Resource } from "../Resources.js"

export { listedAs, recordId } from "../Identity.js"

/**
 * Records found per looked-up value (several when the server holds duplicates). Values are keys: `get("cli-9")`
 * finds what was looked up as `CLI-9` (see `Identity`).
 */
export type Found = KeyMap<ReadonlyArray<Record<string, unknown>>>

/** Values per call when a filter takes a comma-separated list. */
const chunkSize = 50
/** Without an estimate of the list's length, at most this many values are looked up one filtered call each. */
const fewValues = 10
/** Walks of a lookup whose list keeps changing under it, before it fails. */
export const shiftedWalks = 3

/** What a lookup knows before choosing how to read: the values wanted, the filter the API offers, the list's size. */
interface LookupCosts {
  /** Distinct values to find. */
  readonly values: number
  /** The filter on the property: one taking a comma-separated list, one value per call, or none. */
  readonly filter: "list" | "each" | undefined
  /** Records in the whole list, as its first page's `totalItems` says, when that was read. */
  readonly total: number | undefined
  /** Records per page of a walk. */
  readonly pageSize: number
}

type LookupChoice =
  | { readonly _tag: "Filter"; readonly requests: number; readonly perRequest: number }
  | { readonly _tag: "Walk"; readonly requests: number | undefined }

/**
 * Filtered calls or one walk of the whole list, whichever costs fewer requests: `values / perRequest` filtered
 * calls against `total / pageSize` pages. Without the list's size a list filter wins (it never reads more than the
 * values wanted), and single-value filters only for a few values.
 */
export const chooseLookup = (c: LookupCosts): LookupChoice => {
  const pages = c.total === undefined ? undefined : Math.max(1, Math.ceil(c.total / Math.max(1, c.pageSize)))
  if (c.filter === undefined) return { _tag: "Walk", requests: pages }
  const perRequest = c.filter === "list" ? chunkSize : 1
  const requests = Math.ceil(c.values / perRequest)
  if (pages === undefined) {
    return c.filter === "list" || c.values <= fewValues
      ? { _tag: "Filter", requests, perRequest }
      : { _tag: "Walk", requests: undefined }
  }
  return requests <= pages ? { _tag: "Filter", requests, perRequest } : { _tag: "Walk", requests: pages }
}

const chunks = <A>(xs: ReadonlyArray<A>, n: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n))
  return out
}

/**
 * Records of `resource` whose `by` property is one of `values`. `resource` is the one the rows belong to; its
 * records are listed through `listedAs`. Fails with `ListFailed` when the list cannot be read.
 */
export const findRecords = Effect.fn("Lookup.findRecords")(function*(
  resource: Resource,
  by: string,
  values: Iterable<string>
): Effect.fn.Return<Found, ApiAborted | ListFailed, Api> {
  const all = distinctKeys(values)
  for (let walk = 1;; walk++) {
    const found = yield* Effect.either(findOnce(resource, by, all))
    if (found._tag === "Right") return found.right
    const failed = found.left
    if (failed._tag !== "ListFailed" || failed.reason !== "Shifted" || walk >= shiftedWalks) return yield* failed
    yield* Effect.logDebug(`lookup of ${resource.name} by ${by}: ${failed.message} (walk ${walk + 1})`)
  }
})

const findOnce = Effect.fn("Lookup.findOnce")(function*(
  resource: Resource,
  by: string,
  all: ReadonlyArray<string>
): Effect.fn.Return<Found, ApiAborted | ListFailed, Api> {
  const api = yield* Api
  const wanted = new Set(all.map(normalKey))
  let found = new KeyMap<Array<Record<string, unknown>>>()
  const listed = listedAs(resource)
  if (all.length === 0 || listed === undefined) return found
  const property = keyProperty(listed, by)
  // An enumeration is looked up by its number, and may be listed by its label (webhooks' entity `"Task"`).
  const field = listed.fields.find((f) => f.name === by)
  const keyOf = field?.type._tag === "enum"
    ? (record: Record<string, unknown>) => keyText(writeForm(field, recordProperty(record, property)))
    : (record: Record<string, unknown>) => recordKey(record, property)

  const keep = (records: ReadonlyArray<Record<string, unknown>>) => {
    for (const record of records) {
      const text = keyOf(record)
      if (!wanted.has(normalKey(text))) continue
      const list = found.get(text)
      if (list === undefined) found.set(text, [record])
      else if (!list.includes(record)) list.push(record)
    }
  }
  const walk = (filter?: Record<string, string>) =>
    Stream.runForEach(
      api.pages(listed.path, filter === undefined ? { resource: listed } : { resource: listed, filter }),
      (page) => Effect.sync(() => keep(page.records))
    )

  const filter = keyFilter(listed, by)
  const kind = filter === undefined
    ? undefined
    : filter.takesList && !all.some((v) => v.includes(","))
    ? "list" as const
    : "each" as const
  const costs = { values: all.length, filter: kind, pageSize: 1, total: undefined }
  let choice = chooseLookup(costs)
  // More than one filtered call: the list's first page says how long a walk would be (`totalItems`). The page is
  // not wasted when the walk wins; date-windowed lists are walked per window and always filtered.
  if (choice._tag === "Filter" && choice.requests > 1 && listed.dateWindow === undefined) {
    const first = yield* Stream.runHead(api.pages(listed.path, { resource: listed }))
    if (first._tag === "None") return found
    const page = first.value
    const pageSize = page.records.length
    const total = page.total !== undefined && page.total >= pageSize ? page.total : undefined
    choice = chooseLookup({ ...costs, pageSize, total })
    yield* Effect.logDebug(
      `lookup of ${all.length} ${listed.name} by ${by}: ${
        choice._tag === "Filter" ? `${choice.requests} filtered calls` : `a walk of ${choice.requests ?? "?"} pages`
      } (list of ${total ?? "unknown"} records, ${pageSize} a page)`
    )
    if (choice._tag === "Walk") {
      keep(page.records)
      if (total === undefined || total > pageSize) {
        yield* Stream.runForEach(
          api.pages(listed.path, { resource: listed, fromPage: 2 }),
          (p) => Effect.sync(() => keep(p.records))
        )
      }
      return found
    }
  } else {
    yield* Effect.logDebug(
      `lookup of ${all.length} ${listed.name} by ${by}: ${
        choice._tag === "Filter" ? `${choice.requests} filtered calls` : "a walk of the list"
      }`
    )
  }
  if (choice._tag === "Filter" && filter !== undefined) {
    const filtered = yield* Effect.either(Effect.forEach(
      chunks(all, choice.perRequest),
      (chunk) => walk({ [filter.key]: chunk.join(",") }),
      { concurrency: 4, discard: true }
    ))
    if (filtered._tag === "Left") {
      const failed = filtered.left
      if (failed._tag !== "ListFailed" || failed.reason === "Shifted" || listed.dateWindow !== undefined) {
        return yield* failed
      }
      // Another way to the same answer: the whole list, matched on our side.
      yield* Effect.logDebug(`lookup of ${listed.name} by ${by}: ${failed.message}; walking the whole list instead`)
      found = new KeyMap<Array<Record<string, unknown>>>()
      yield* walk()
    }
  } else {
    yield* walk()
  }
  return found
})
