/**
 * Finding existing records by a property (a key such as `externalId`, `login`, `description`, or the id) with list
 * calls, never one GET per row: a filtered call per chunk of values where the filter takes a comma-separated list,
 * a filtered call per value when only a few are wanted, otherwise one walk of the whole list. Matches are checked
 * on our side too (a filter may match substrings), and only matching records are kept in memory. Values match as
 * the service matches keys, trimmed and without regard to case; which property and filter are used is `Identity`'s.
 */
import { Effect, Stream } from "effect"
import { Api, type ApiAborted, type ListFailed } from "../client/Api.js"
import { distinctKeys, keyFilter, KeyMap, keyProperty, listedAs, normalKey, recordKey } from "../Identity.js"
import type { Resource } from "../Resources.js"

export { listedAs, recordId } from "../Identity.js"

/**
 * Records found per looked-up value (several when the server holds duplicates). Values are keys: `get("cli-9")`
 * finds what was looked up as `CLI-9` (see `Identity`).
 */
export type Found = KeyMap<ReadonlyArray<Record<string, unknown>>>

/** At most this many values are looked up one filtered call each; more walk the list once. */
const fewValues = 10
/** Values per call when a filter takes a comma-separated list. */
const chunkSize = 50

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
  const all = distinctKeys(values)
  const wanted = new Set(all.map(normalKey))
  const found = new KeyMap<Array<Record<string, unknown>>>()
  const listed = listedAs(resource)
  if (all.length === 0 || listed === undefined) return found
  const property = keyProperty(listed, by)

  const keep = (records: ReadonlyArray<Record<string, unknown>>) => {
    for (const record of records) {
      const text = recordKey(record, property)
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
  if (filter !== undefined && filter.takesList && !all.some((v) => v.includes(","))) {
    yield* Effect.forEach(chunks(all, chunkSize), (chunk) => walk({ [filter.key]: chunk.join(",") }), {
      concurrency: 4,
      discard: true
    })
  } else if (filter !== undefined && all.length <= fewValues) {
    yield* Effect.forEach(all, (value) => walk({ [filter.key]: value }), { concurrency: 4, discard: true })
  } else {
    yield* walk()
  }
  return found
})
