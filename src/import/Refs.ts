/**
 * Reference resolution: turning the cells that name other records by their key (`customerExternalId`,
 * `userToLogin` …) into server ids. `RefResolver` is the pluggable part: the pipeline tells it up front every value
 * a file refers to (`prepare`), asks per row (`resolve`) and reports every record the run writes (`learn`), so
 * self-references and onboarding's later steps find records created moments before.
 *
 * `serverResolver` looks the values up on the server with list calls, one walk per referenced resource and
 * property (see `Lookup`), and caches the answers for the whole run.
 *
 * Values are keys (see `Identity`): a cell `cli-9` names the record whose `externalId` is `CLI-9`, and a record this
 * run wrote as `CLI-9` answers a later cell `cli-9`.
 *
 * A reference that does not resolve says what becomes of its row (`Unresolved`): `failed` when the cell is wrong
 * as written (no such record, several, the lookup failed), `skipped` when the record it names belongs to a row
 * that did not end well (contract: skipped = not attempted because a parent row failed).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Api, ApiAborted } from "../client/Api.js"
import { distinctKeys, KeyMap, keyText, listedAs, recordId } from "../Identity.js"
import { t } from "../Messages.js"
import { resource as resourceOf, type ResourceName } from "../Resources.js"
import type { PendingRef } from "../validate/Validate.js"
import { findRecords } from "./Lookup.js"

export type ServerId = string | number

/** Every value a file refers to in one resource by one property. */
export interface RefDemand {
  readonly resource: ResourceName
  readonly by: string
  readonly values: ReadonlySet<string>
}

/** Why a reference cell names no usable record, and the status its row ends with (`error` is the row's `_error`). */
export interface Unresolved {
  readonly status: "failed" | "skipped"
  readonly error: string
}

/** The row is wrong as written: it fails. */
/**
 * The stand-in id a dry run of an onboarding gives a record an earlier step's row would create (`Resolver.ts`):
 * a plan keeps it as "the record row R of RESOURCE creates", and `apply` checks it against what that row created.
 */
export const wouldBeCreated = (resource: string, row: number): ServerId => `(new: row ${row} of ${resource})`

/** The row a stand-in id names, or undefined for a real id. */
export const plannedRow = (id: unknown): { readonly resource: string; readonly row: number } | undefined => {
  const m = typeof id === "string" ? /^\(new: row (\d+) of ([a-z-]+)\)$/.exec(id) : null
  return m !== null ? { resource: m[2]!, row: Number(m[1]) } : undefined
}

export const refFailed = (error: string): Unresolved => ({ status: "failed", error })

/** The row names a record whose own row did not end well: it is not attempted. */
export const refSkipped = (error: string): Unresolved => ({ status: "skipped", error })

/** The id (or, for list fields, the ids) one reference cell names, or why it names none. */
export type Resolution = Either.Either<ServerId | ReadonlyArray<ServerId>, Unresolved>

export interface RefResolver {
  /** Called once before any row is sent, with every value the rows refer to, so lookups can be batched. */
  readonly prepare: (demands: ReadonlyArray<RefDemand>) => Effect.Effect<void, ApiAborted>
  /** The id (or, for list fields, the ids) one reference cell names, or why it cannot be resolved. */
  readonly resolve: (ref: PendingRef) => Effect.Effect<Resolution>
  /** A record this run created or found: `fields` are its write names and values, `id` its server id. */
  readonly learn: (
    resource: ResourceName,
    fields: Readonly<Record<string, unknown>>,
    id: ServerId
  ) => Effect.Effect<void>
}

const cacheKey = (resource: ResourceName, by: string) => `${resource}\u0000${by}`

type Entry =
  | { readonly _tag: "Found"; readonly ids: ReadonlyArray<ServerId> }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unavailable"; readonly message: string }

/** The message of a value that resolves to nothing, or to several records. */
const describe = (resource: ResourceName, by: string, value: string, entry: Entry | undefined): string | undefined => {
  if (entry === undefined || entry._tag === "Missing") return t("ref.missing", { resource, by, value: `"${value}"` })
  if (entry._tag === "Unavailable") return `could not look ${resource} up: ${entry.message}`
  if (entry.ids.length > 1) {
    return `${entry.ids.length} ${resource} records have ${by} "${value}": make it unique or give the id`
  }
  return undefined
}

/**
 * Whether an error (or its kind, values left out) says a reference names no record: the row fails the same way
 * until the record exists or the reference is corrected. Matches `describe`'s first message, in either language (a
 * run's errors are read back by a later command that may run in the other).
 */
const isMissingReference = (error: string): boolean =>
  /(^|: )(no \S+ record with|nenhum registro de \S+ com) \S+ /.test(error)

/** Of a run's `failed` rows, how many failed on a missing reference (from the run's error kinds). */
export const missingReferenceRows = (
  failed: number,
  errors: ReadonlyArray<{ readonly kind: string; readonly count: number }> | undefined
): number =>
  Math.min(failed, (errors ?? []).filter((k) => isMissingReference(k.kind)).reduce((total, k) => total + k.count, 0))

/**
 * A resolver over a cache of `(resource, by) → value → ids`, filled by `fill` for the values `prepare` is given.
 * Onboarding builds its own from earlier steps' journals and falls back to the server for the rest.
 */
const makeResolver = (
  fill: (
    resource: ResourceName,
    by: string,
    values: ReadonlyArray<string>
  ) => Effect.Effect<Either.Either<KeyMap<ReadonlyArray<ServerId>>, string>, ApiAborted>
): RefResolver => {
  const cache = new Map<string, KeyMap<Entry>>()
  const table = (resource: ResourceName, by: string) => {
    const k = cacheKey(resource, by)
    let t = cache.get(k)
    if (t === undefined) cache.set(k, t = new KeyMap())
    return t
  }

  const prepare = (demands: ReadonlyArray<RefDemand>) =>
    Effect.forEach(
      demands,
      (d) => {
        const t = table(d.resource, d.by)
        const missing = distinctKeys([...d.values].filter((v) => !t.has(v)))
        if (missing.length === 0) return Effect.void
        return fill(d.resource, d.by, missing).pipe(
          Effect.map((result) => {
            for (const v of missing) {
              const entry: Entry = Either.isLeft(result)
                ? { _tag: "Unavailable", message: result.left }
                : (() => {
                  const ids = result.right.get(v)
                  return ids === undefined || ids.length === 0 ? { _tag: "Missing" } : { _tag: "Found", ids }
                })()
              if (!(t.get(v)?._tag === "Found")) t.set(v, entry)
            }
          })
        )
      },
      { concurrency: 2, discard: true }
    )

  const resolve = (ref: PendingRef) =>
    Effect.sync((): Resolution => {
      const t = table(ref.resource, ref.by)
      const ids: Array<ServerId> = []
      for (const raw of ref.values) {
        const value = raw.trim()
        if (value === "") continue
        const entry = t.get(value)
        const problem = describe(ref.resource, ref.by, value, entry)
        if (problem !== undefined) return Either.left(refFailed(`${ref.column}: ${problem}`))
        ids.push((entry as Extract<Entry, { _tag: "Found" }>).ids[0]!)
      }
      if (ref.list) return Either.right(ids)
      return ids.length === 1
        ? Either.right(ids[0]!)
        : Either.left(refFailed(`${ref.column}: names ${ids.length} records where one is expected`))
    })

  const learn = (resource: ResourceName, fields: Readonly<Record<string, unknown>>, id: ServerId) =>
    Effect.sync(() => {
      const r = resourceOf(resource)
      for (const [k, t] of cache) {
        const [name, by] = k.split("\u0000") as [ResourceName, string]
        if (name !== resource) continue
        const value = by === r.id?.name ? String(id) : keyText(fields[by])
        if (value === "") continue
        const entry = t.get(value)
        if (entry?._tag === "Found" && entry.ids.some((x) => String(x) === String(id))) continue
        t.set(
          value,
          entry?._tag === "Found" ? { _tag: "Found", ids: [...entry.ids, id] } : { _tag: "Found", ids: [id] }
        )
      }
    })

  return { prepare, resolve, learn }
}

/** Looks values up on the server (one walk per resource and property), for the current `Api`. */
const serverLookup = Effect.fn("Refs.serverLookup")(function*() {
  const context = yield* Effect.context<Api>()
  return (resource: ResourceName, by: string, values: ReadonlyArray<string>) => {
    const r = resourceOf(resource)
    const listed = listedAs(r)
    if (listed === undefined) {
      return Effect.succeed(Either.left(`the API cannot list ${resource}: give the id instead`))
    }
    return findRecords(r, by, values).pipe(
      Effect.map((found) => {
        const ids = new KeyMap<ReadonlyArray<ServerId>>()
        for (const [value, records] of found) {
          const list = records.map((rec) => recordId(r, rec)).filter((x): x is ServerId => x !== undefined)
          if (list.length > 0) ids.set(value, list)
        }
        return Either.right(ids) as Either.Either<KeyMap<ReadonlyArray<ServerId>>, string>
      }),
      Effect.catchTag("ListFailed", (e) => Effect.succeed(Either.left(e.message))),
      Effect.provide(context)
    )
  }
})

/** The default resolver: every reference looked up on the server, cached for the run. */
export const serverResolver: Effect.Effect<RefResolver, never, Api> = Effect.map(serverLookup(), makeResolver)
