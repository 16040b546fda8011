/**
 * The id → key maps an export's reference columns are filled from (`customerId` 12 → `customerExternalId`
 * "CLI-0001"), each loaded when a record first refers to it. Only ids and keys are kept, never records (a record without a key is kept with ""). A map is read
 * from the resource's finished file in the export directory when there is one (no request spent), otherwise from
 * the API's list of the resource.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Api, type ApiAborted, type ListFailed } from "../client/Api.js"
import type { InputError } from "../Errors.js"
import { restore } from "../files/Guard.js"
import { openSource } from "../files/Read.js"
import { keyProperty } from "../Identity.js"
import type { Resource, ResourceName } from "../Resources.js"
import { resource } from "../Resources.js"
import type { KeyLookup, KeyNeed } from "./Cells.js"
import { propertyOf } from "./Cells.js"

/** A key the service sends as a number or text, as it is written in a reference column. */
const keyText = (value: unknown): string | undefined =>
  value === undefined || value === null || value === ""
    ? undefined
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value)

const mapName = (need: KeyNeed) => `${need.resource}.${need.key}`

export interface KeyStore {
  readonly lookup: KeyLookup
  /** Whether the map of `need` is loaded. */
  readonly has: (need: KeyNeed) => boolean
  /** Loads the map of `need` if it is not loaded yet: from `file` (a finished export file) or from the API. */
  readonly ensure: (
    need: KeyNeed,
    file: string | undefined
  ) => Effect.Effect<void, ApiAborted | ListFailed | InputError>
  /** The ids of a resource's records, in ascending order (per-parent lists walk them). */
  readonly ids: (need: KeyNeed) => ReadonlyArray<string>
}

/** Ids in ascending order: numerically when both are numbers, else as text (GUIDs). */
export const compareIds = (a: string, b: string): number => {
  if (/^-?\d+$/.test(a) && /^-?\d+$/.test(b) && (a.length > 15 || b.length > 15)) {
    const d = BigInt(a) - BigInt(b)
    return d < 0n ? -1 : d > 0n ? 1 : 0
  }
  const x = Number(a)
  const y = Number(b)
  return Number.isFinite(x) && Number.isFinite(y) ? x - y : a < b ? -1 : a > b ? 1 : 0
}

/** Reads the id and key columns of a file this export wrote (the formula guard reversed). */
const fromFile = Effect.fn("Keys.fromFile")(
  function*(r: Resource, key: string, file: string, into: Map<string, string>, delimiter: "," | ";" | "\t") {
    // The export wrote the file: UTF-8 and its delimiter, nothing to guess.
    const source = yield* openSource(file, { encoding: "utf-8", delimiter, resource: r.name })
    const idColumn = source.header.indexOf(r.id?.name ?? "id")
    const keyColumn = source.header.indexOf(key)
    yield* Stream.runForEach(source.rows, (row) =>
      Effect.sync(() => {
        const id = restore(row.cells[idColumn] ?? "")
        const value = restore(row.cells[keyColumn] ?? "")
        if (id !== "") into.set(id, value)
      }))
  }
)

/** Walks the resource's list (pages as large as the API accepts) keeping only ids and keys. */
const fromApi = (api: Api["Type"], r: Resource, key: string, pageSize: number, into: Map<string, string>) => {
  const idProperty = keyProperty(r, r.id?.name ?? "id")
  const property = keyProperty(r, key)
  return Stream.runForEach(api.pages(r.path, { pageSize, resource: r }), (page) =>
    Effect.sync(() => {
      for (const record of page.records) {
        const id = keyText(propertyOf(record, idProperty))
        const value = keyText(propertyOf(record, property))
        if (id !== undefined) into.set(id, value ?? "")
      }
    }))
}

export const makeKeyStore = Effect.fn("Keys.make")(function*(pageSize: number, delimiter: "," | ";" | "\t" = ",") {
  const api = yield* Api
  const maps = new Map<string, Map<string, string>>()

  // A record without a key ("") is kept for `ids` but names nothing in a reference column.
  const lookup: KeyLookup = (name: ResourceName, key: string, id: string) =>
    maps.get(mapName({ resource: name, key }))?.get(id) || undefined

  /** One load per map: walks run concurrently, and two of them may need the same map at once. */
  const locks = new Map<string, Effect.Semaphore>()
  const lockOf = (name: string) => {
    let lock = locks.get(name)
    if (lock === undefined) locks.set(name, lock = Effect.unsafeMakeSemaphore(1))
    return lock
  }

  const load = Effect.fn("Keys.ensure")(function*(need: KeyNeed, file: string | undefined) {
    if (maps.has(mapName(need))) return
    const r = resource(need.resource)
    const map = new Map<string, string>()
    if (file !== undefined) yield* fromFile(r, need.key, file, map, delimiter)
    else yield* fromApi(api, r, need.key, pageSize, map)
    maps.set(mapName(need), map)
  })
  const ensure = (need: KeyNeed, file: string | undefined) =>
    maps.has(mapName(need)) ? Effect.void : lockOf(mapName(need)).withPermits(1)(load(need, file))

  const ids = (need: KeyNeed): ReadonlyArray<string> => [...(maps.get(mapName(need))?.keys() ?? [])].sort(compareIds)

  const has = (need: KeyNeed) => maps.has(mapName(need))

  return { lookup, has, ensure, ids } satisfies KeyStore as KeyStore
})
