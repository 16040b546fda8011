/**
 * Finding existing records by a property (a key such as `externalId`, `login`, `description`, or the id) with list
 * calls, never one GET per row: a filtered call per chunk of values where the filter takes a comma-separated list,
 * a filtered call per value when only a few are wanted, otherwise one walk of the whole list. Matches are checked
 * on our side too (a filter may match substrings), and only matching records are kept in memory.
 */
import { Effect, Stream } from "effect"
import { Api, type ApiAborted, type ListFailed } from "../client/Api.js"
import { recordProperty } from "../client/Body.js"
import { idReadName, readName, resource as resourceOf, type Resource } from "../Resources.js"

/** Records found per looked-up value (several when the server holds duplicates). */
export type Found = ReadonlyMap<string, ReadonlyArray<Record<string, unknown>>>

/** At most this many values are looked up one filtered call each; more walk the list once. */
const fewValues = 10
/** Values per call when a filter takes a comma-separated list. */
const chunkSize = 50

/** The resource whose list holds this resource's records (`customers-complete` writes customers). */
export const listedAs = (r: Resource): Resource | undefined => {
  const via = r.readVia !== undefined ? resourceOf(r.readVia) : r
  return via.ops.includes("list") ? via : undefined
}

/** The property of a listed record that carries `by` (a write name, or the id's name). */
export const readProperty = (r: Resource, by: string): string => {
  if (r.id !== undefined && by === r.id.name) return idReadName(r)!
  const field = r.fields.find((x) => x.name === by)
  return field !== undefined ? readName(field) : by
}

/** The text a record's property is compared by (numbers and booleans as written, absent as ""). */
export const propertyText = (record: Record<string, unknown>, property: string): string => {
  const v = recordProperty(record, property)
  return v === undefined || v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v).trim()
}

/** The `paramFilter` key that tests `by`, if the API has one. */
const filterKeyFor = (r: Resource, by: string): string | undefined =>
  r.filters === undefined ? undefined : Object.keys(r.filters).find((k) => r.filters![k] === by && k !== "startDate" && k !== "endDate")

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
  const api = yield* Api
  const wanted = new Set([...values].map((v) => v.trim()).filter((v) => v !== ""))
  const found = new Map<string, Array<Record<string, unknown>>>()
  const listed = listedAs(resource)
  if (wanted.size === 0 || listed === undefined) return found
  const property = readProperty(listed, by)

  const keep = (records: ReadonlyArray<Record<string, unknown>>) => {
    for (const record of records) {
      const text = propertyText(record, property)
      if (!wanted.has(text)) continue
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

  const filterKey = filterKeyFor(listed, by)
  const all = [...wanted]
  if (filterKey !== undefined && (listed.listFilters ?? []).includes(filterKey) && !all.some((v) => v.includes(","))) {
    yield* Effect.forEach(chunks(all, chunkSize), (chunk) => walk({ [filterKey]: chunk.join(",") }), { concurrency: 4, discard: true })
  } else if (filterKey !== undefined && all.length <= fewValues) {
    yield* Effect.forEach(all, (value) => walk({ [filterKey]: value }), { concurrency: 4, discard: true })
  } else {
    yield* walk()
  }
  return found
})

/** The server id of a listed record. */
export const recordId = (resource: Resource, record: Record<string, unknown>): string | number | undefined => {
  const listed = listedAs(resource) ?? resource
  const name = idReadName(listed)
  const v = name === undefined ? undefined : recordProperty(record, name) ?? (listed.id !== undefined ? record[listed.id.name] : undefined)
  return typeof v === "string" || typeof v === "number" ? v : undefined
}
