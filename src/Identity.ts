/**
 * Record identity: the one rule for finding a record again by a key.
 *
 * The service compares keys — `externalId`, `externalCode`, logins, descriptions used as keys — trimmed and without
 * regard to case (its collation; the sandbox does the same): `CLI-9` and `cli-9` name one record, and a second
 * record with `cli-9` is refused as a duplicate. Everything that matches one key value against another goes
 * through here: lookups of existing records, reference resolution, the reconciliation of a POST whose answer was
 * lost, the dry-run plan, onboarding's resolver across sheets and validation's duplicate check within a file.
 *
 * Identity is not value equality. Whether a stored value equals the file's (the row is `unchanged`) is
 * `validate/Compare`'s question: there `CLI-9` against `cli-9` in a field that is not the key is a change; in the key
 * itself it is the same record.
 *
 * Also here: which property of a listed record carries a key (write and read names differ), and which list and
 * `paramFilter` key find records by it.
 */
import { idReadName, readName, type Resource, resource as resourceOf } from "./Resources.js"

/**
 * A property of a read-back record by its exact name, else by the same name in another case: the live service
 * and its Blueprint disagree on case (`userID`/`userId`, `adressComplement`/`AdressComplement`, `basePoint`/`BasePoint`).
 */
export const recordProperty = (record: Readonly<Record<string, unknown>>, name: string): unknown => {
  if (name in record) return record[name]
  const lower = name.toLowerCase()
  const found = Object.keys(record).find((k) => k.toLowerCase() === lower)
  return found === undefined ? undefined : record[found]
}

/** A key value as the service compares it: trimmed, case-insensitive. Blank stays "" (names no record). */
export const normalKey = (value: string): string => value.trim().toLowerCase()

/** The text of a key held in a cell, a payload or a record (numbers as written, absent as ""). */
export const keyText = (v: unknown): string =>
  v === undefined || v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v).trim()

/** Whether two key values name the same record. */
export const sameKey = (a: unknown, b: unknown): boolean => normalKey(keyText(a)) === normalKey(keyText(b))

/**
 * A map from key values to `V` in which values naming one record share one entry: `get("cli-9")` finds what was
 * set as `CLI-9`. It holds the normal forms only (`normalKey`), which are what `keys()` and iteration give back.
 */
export class KeyMap<V> implements Iterable<[string, V]> {
  private readonly entries = new Map<string, V>()

  get size(): number {
    return this.entries.size
  }

  get(key: string): V | undefined {
    return this.entries.get(normalKey(key))
  }

  has(key: string): boolean {
    return this.entries.has(normalKey(key))
  }

  set(key: string, value: V): this {
    this.entries.set(normalKey(key), value)
    return this
  }

  keys(): IterableIterator<string> {
    return this.entries.keys()
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries.entries()
  }
}

/** The distinct non-blank key values of `values`, each as first written (trimmed): what a filter is sent. */
export const distinctKeys = (values: Iterable<string>): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const out: Array<string> = []
  for (const v of values) {
    const k = normalKey(v)
    if (k === "" || seen.has(k)) continue
    seen.add(k)
    out.push(v.trim())
  }
  return out
}

// --- where a key is found ----------------------------------------------------------------------------------------

/** The resource whose list holds this resource's records (`customers-complete` writes customers). */
export const listedAs = (r: Resource): Resource | undefined => {
  const via = r.readVia !== undefined ? resourceOf(r.readVia) : r
  return via.ops.includes("list") ? via : undefined
}

/** The property of a listed record of `listed` that carries `by` (a write name, or the id's name). */
export const keyProperty = (listed: Resource, by: string): string => {
  if (listed.id !== undefined && by === listed.id.name) return idReadName(listed)!
  const field = listed.fields.find((x) => x.name === by)
  return field !== undefined ? readName(field) : by
}

/** The key a record's `property` holds, as text ("" when absent). */
export const recordKey = (record: Readonly<Record<string, unknown>>, property: string): string =>
  keyText(recordProperty(record, property))

/**
 * The `paramFilter` key of `listed` that tests `by`, if the API has one, and whether it takes a comma-separated
 * list of alternatives. The filter compares as the service does (case-insensitively, sometimes by substring), so
 * what it answers is matched again with `sameKey`.
 */
export const keyFilter = (
  listed: Resource,
  by: string
): { readonly key: string; readonly takesList: boolean } | undefined => {
  const filters = listed.filters ?? {}
  const key = Object.keys(filters).find((k) => filters[k] === by && k !== "startDate" && k !== "endDate")
  return key === undefined ? undefined : { key, takesList: (listed.listFilters ?? []).includes(key) }
}

/** The records among `records` whose `property` names the same record as `value`. */
export const withKey = <R extends Readonly<Record<string, unknown>>>(
  records: ReadonlyArray<R>,
  property: string,
  value: string
): ReadonlyArray<R> => {
  const wanted = normalKey(value)
  return wanted === "" ? [] : records.filter((r) => normalKey(recordKey(r, property)) === wanted)
}

/** The server id of a listed record of `resource` (read through `listedAs`). */
export const recordId = (
  resource: Resource,
  record: Readonly<Record<string, unknown>>
): string | number | undefined => {
  const listed = listedAs(resource) ?? resource
  const name = idReadName(listed)
  const v = name === undefined
    ? undefined
    : recordProperty(record, name) ?? (listed.id !== undefined ? record[listed.id.name] : undefined)
  return typeof v === "string" || typeof v === "number" ? v : undefined
}
