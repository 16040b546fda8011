/**
 * What the client checks before it resends a write whose answer was lost (timeout, reset, 5xx): how a POST's
 * record is looked up by its correlation key, and whether a PATCH is already visible on the re-read record.
 * Pure functions over the resource table; `HttpAdapter` runs the lookups.
 */
import * as Predicate from "effect/Predicate"
import { keyFilter, keyProperty, withKey } from "../Identity.js"
import { recordProperty } from "../Identity.js"
import { readName, type Resource, resources } from "../Resources.js"

export interface Lookup {
  /** The `paramFilter` key to send, when the resource has one for this key (otherwise the list is walked). */
  readonly filterKey: string | undefined
  /** The property of a read-back record that holds the key. */
  readonly property: string
}

/**
 * How to find a record of `resource` (the one that lists it) by `key`: its filter key, and the property a
 * read-back record carries it in — the same rule every lookup follows (`Identity`).
 */
export const lookupFor = (resource: Resource, key: string): Lookup => ({
  filterKey: keyFilter(resource, key)?.key,
  property: keyProperty(resource, key)
})

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (a === undefined || a === null || b === undefined || b === null) return (a ?? "") === (b ?? "")
  if (typeof a === "object" || typeof b === "object") return JSON.stringify(a) === JSON.stringify(b)
  const sa = String(a).trim()
  const sb = String(b).trim()
  if (sa === sb) return true
  if (sa.toLowerCase() === sb.toLowerCase() && (sa === "true" || sa === "false" || sb === "true" || sb === "false")) {
    return true
  }
  // Money comes back as pt-BR strings ("12,00") for a number written as 12 (api-notes B).
  const na = Number(sa.replace(",", "."))
  const nb = Number(sb.replace(",", "."))
  return sa !== "" && sb !== "" && Number.isFinite(na) && Number.isFinite(nb) && na === nb
}

/** The first record whose key property names the same record as `value` (`Identity`: the service's collation). */
export const findByKey = (
  records: ReadonlyArray<Record<string, unknown>>,
  lookup: Lookup,
  value: string
): Record<string, unknown> | undefined => withKey(records, lookup.property, value)[0]

/** The resource whose collection path is the first segment of `path` (paths are case-insensitive, api-notes B). */
export const resourceOfPath = (path: string): Resource | undefined => {
  const collection = `/${path.split("?")[0]!.split("/").filter((s) => s !== "")[0] ?? ""}`.toLowerCase()
  for (const r of resources.values()) if (r.kind === "record" && r.path.toLowerCase() === collection) return r
  return undefined
}

const readProperty = (record: Record<string, unknown>, name: string, resource: Resource | undefined): unknown => {
  const field = resource?.fields.find((f) => f.name === name)
  const read = field ? readName(field) : name
  return recordProperty(record, read) ?? recordProperty(record, name)
}

/**
 * Whether every change of a PATCH body (a JSON Patch array, or a plain object of properties) is already on the
 * re-read `record`. Undefined when it cannot be told (operations other than add/replace/remove, nested paths).
 */
export const patchApplied = (
  body: unknown,
  record: Record<string, unknown>,
  resource: Resource | undefined
): boolean | undefined => {
  if (Predicate.isRecord(body)) {
    return Object.entries(body).every(([k, v]) => sameValue(readProperty(record, k, resource), v))
  }
  if (!Array.isArray(body)) return undefined
  let applied = true
  for (const op of body) {
    if (!Predicate.isRecord(op) || typeof op.op !== "string" || typeof op.path !== "string") return undefined
    // The live service takes `path` with or without a leading "/" (api-notes B).
    const name = op.path.replace(/^\//, "")
    if (name === "" || name.includes("/")) return undefined
    const current = readProperty(record, name, resource)
    switch (op.op.toLowerCase()) {
      case "add":
      case "replace":
        applied &&= sameValue(current, op.value)
        break
      case "remove":
        applied &&= current === undefined || current === null || current === ""
        break
      default:
        return undefined
    }
  }
  return applied
}
