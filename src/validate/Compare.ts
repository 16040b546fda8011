/**
 * What a row would change on an existing record: the payload (write names, values as the validator built them)
 * against the record as the server lists it (read names, values as the live service writes them back).
 *
 * api-notes B: money comes back as pt-BR strings ("12,00"), unset dates as "" or 0001-01-01T00:00:00, an unset
 * `hourValue` as 0 (`zeroWhenUnset`, read as empty), customers' name as `description`; write-only fields (passwords, files, upsert flags) never come back, so they never count.
 *
 * These are value comparisons (is the stored value the file's?), not identity: `CLI-9` against `cli-9` in a name or
 * a login is a change. The one exception is the record's key, which found the record: `cli-9` for a record keyed
 * `CLI-9` names that record (`Identity`), so the key never counts as changed by its case alone.
 */
import * as Predicate from "effect/Predicate"
import { writeForm } from "../client/Body.js"
import { recordProperty, sameKey } from "../Identity.js"
import type { Field, Resource } from "../Resources.js"
import { readName, resource as resourceOf } from "../Resources.js"

export interface Change {
  readonly field: string
  readonly from: unknown
  readonly to: unknown
}

export const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null ||
  (typeof v === "string" && (v.trim() === "" || /^0001-01-01(T00:00:00)?$/.test(v.trim()))) ||
  (Array.isArray(v) && v.length === 0)

/** "1.234,56" (pt-BR) or "1234.56" → 1234.56; numbers unchanged; anything else NaN. */
const toNumber = (v: unknown): number => {
  if (typeof v === "number") return v
  if (typeof v === "boolean") return v ? 1 : 0
  if (typeof v !== "string") return NaN
  const s = v.trim()
  if (/^-?[\d.]*,\d+$/.test(s)) return Number(s.replace(/\./g, "").replace(",", "."))
  return s === "" ? NaN : Number(s)
}

const toBoolean = (v: unknown): boolean | undefined => {
  if (typeof v === "boolean") return v
  if (typeof v === "number") return v !== 0
  if (typeof v === "string") {
    const s = v.trim().toLowerCase()
    if (s === "true" || s === "1") return true
    if (s === "false" || s === "0") return false
  }
  return undefined
}

/** `yyyy-MM-dd` or `yyyy-MM-ddTHH:mm[:ss[.fff]]` → `yyyy-MM-ddTHH:mm:ss`. */
const toDateTime = (v: unknown): string => {
  const s = String(v).trim()
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(s)
  return m ? `${m[1]}T${m[2] ?? "00"}:${m[3] ?? "00"}:${m[4] ?? "00"}` : s
}

const scalarText = (field: Field | undefined, v: unknown): string => {
  if (isEmpty(v)) return ""
  switch (field?.type._tag) {
    case "integer":
    case "number":
    case "enum": {
      // An integer beyond 2^53 is compared by its digits (a number would round two ids into one).
      if (typeof v === "string" && /^\s*-?\d{16,}\s*$/.test(v)) return v.trim().replace(/^(-?)0+(?=\d)/, "$1")
      const n = toNumber(v)
      return Number.isNaN(n) ? String(v) : String(n)
    }
    case "boolean": {
      const b = toBoolean(v)
      return b === undefined ? String(v) : String(b)
    }
    case "date":
      return toDateTime(v)
    case "guid":
      return String(v).trim().toLowerCase()
    case "cpfCnpj":
      return String(v).replace(/\D/g, "")
    case "email":
      return String(v).trim().toLowerCase()
    default:
      return typeof v === "object" ? stableJson(v) : String(v).trim()
  }
}

const stableJson = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`
  if (Predicate.isRecord(v)) {
    return `{${
      Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(
        ","
      )
    }}`
  }
  return JSON.stringify(v)
}

/** An object cell against the server's: only the properties the row gives are compared. */
const objectText = (shapeOf: unknown, v: unknown): string => {
  if (typeof v !== "object" || v === null || typeof shapeOf !== "object" || shapeOf === null) {
    return scalarText(undefined, v)
  }
  const keys = Object.keys(shapeOf).sort()
  return keys.map((k) => `${k}=${scalarText(undefined, (v as Record<string, unknown>)[k])}`).join(";")
}

const listOf = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : isEmpty(v) ? [] : [v])

/**
 * Empty, or a `0` where the service reads an unset value as `0` (users' `hourValue`): the two cannot be told apart on
 * the server, so a file's empty cell never differs from the server's `0`.
 */
const unset = (field: Field | undefined, v: unknown): boolean =>
  isEmpty(v) || (field?.zeroWhenUnset === true && !Array.isArray(v) && toNumber(v) === 0)

const same = (field: Field | undefined, wanted: unknown, current: unknown): boolean => {
  if (unset(field, wanted) && unset(field, current)) return true
  if (field?.list === true || Array.isArray(wanted)) {
    const w = listOf(wanted)
    const c = listOf(current)
    if (w.length !== c.length) return false
    if (field?.type._tag === "object") {
      // Lists of objects keep their order; each item compared on the properties the row gives.
      return w.every((item, i) => objectText(item, item) === objectText(item, c[i]))
    }
    const a = w.map((x) => scalarText(field, x)).sort()
    const b = c.map((x) => scalarText(field, Predicate.hasProperty(x, "id") ? x.id : x)).sort()
    return a.every((x, i) => x === b[i])
  }
  return scalarText(field, wanted) === scalarText(field, current)
}

/** A nested value's canonical text: objects by their properties sorted, lists of them in any order. */
const canonical = (v: unknown): string => {
  if (isEmpty(v)) return ""
  if (Array.isArray(v)) return `[${v.map(canonical).sort().join(",")}]`
  if (Predicate.isRecord(v)) {
    return `{${
      Object.keys(v).filter((k) => !isEmpty(v[k])).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(
        ","
      )
    }}`
  }
  return scalarText(undefined, v)
}

/**
 * An object field's normal text (contacts, equipment specifications): each item on the properties of its shape
 * (found without regard to case; the server may add others, such as its own ids), empty ones left out, and a list's
 * items in any order, since the API keeps no meaningful order for them.
 */
const objectValueText = (shape: ReadonlyArray<string>, v: unknown): string => {
  const item = (x: unknown): string => {
    if (!Predicate.isRecord(x)) return canonical(x)
    const own: Record<string, unknown> = {}
    for (const k of shape) own[k] = recordProperty(x, k)
    return canonical(own)
  }
  return listOf(v).map(item).sort().join("\u0000")
}

/**
 * A value's normal text, the form in which `changes` finds two values equal (money, dates, enumerations, lists in
 * any order, references by id): what an export's fingerprint hashes, so a record read later and a file's cell can
 * be told apart from what was exported.
 */
export const valueText = (field: Field | undefined, v: unknown): string => {
  if (unset(field, v)) return ""
  if (field?.type._tag === "object") return objectValueText(field.type.shape, v)
  if (field?.list === true || Array.isArray(v)) {
    return listOf(v)
      .map((x) => scalarText(field, typeof x === "object" && x !== null && "id" in x ? (x as { id: unknown }).id : x))
      .sort()
      .join("\u0000")
  }
  return scalarText(field, v)
}

/**
 * Fields of `payload` that differ on `record`; the id, write-only and file fields are left out, and so are fields
 * whose names the server resolves itself (`/customers/complete`'s `groups`). A resource written through another's
 * records (`readVia`) is compared on that resource's read names; a field that one does not list and the record
 * does not carry cannot be compared and is left out too.
 */
export const changes = (
  resource: Resource,
  payload: Readonly<Record<string, unknown>>,
  record: Readonly<Record<string, unknown>>
): ReadonlyArray<Change> => {
  const listed = resource.readVia !== undefined ? resourceOf(resource.readVia) : resource
  const out: Array<Change> = []
  for (const [name, wanted] of Object.entries(payload)) {
    if (wanted === undefined) continue
    if (resource.id !== undefined && name === resource.id.name) continue
    const field = resource.fields.find((x) => x.name === name)
    if (
      field?.writeOnly === true || field?.readOnly === true || field?.type._tag === "file" ||
      field?.resolves !== undefined
    ) continue
    const readField = listed.fields.find((x) => x.name === name) ?? field
    const property = readField !== undefined ? readName(readField) : name
    if (listed !== resource && readField === field && !(property in record)) continue
    const current = writeForm(readField, recordProperty(record, property) ?? recordProperty(record, name))
    if (!(name === resource.key ? sameKey(wanted, current) : same(field, wanted, current))) {
      out.push({ field: name, from: current, to: wanted })
    }
  }
  return out
}

/**
 * The fields `payload` gives a value that `changes` cannot compare because the server never lists them back
 * (write-only fields such as passwords, files): only a write can tell whether they are already set.
 */
export const unreadable = (resource: Resource, payload: Readonly<Record<string, unknown>>): ReadonlyArray<string> =>
  Object.entries(payload).filter(([name, v]) => {
    if (isEmpty(v)) return false
    const field = resource.fields.find((x) => x.name === name)
    return field?.writeOnly === true || field?.type._tag === "file"
  }).map(([name]) => name)

const show = (v: unknown): string => {
  if (isEmpty(v)) return "(empty)"
  if (typeof v === "string") return JSON.stringify(v)
  return typeof v === "object" ? JSON.stringify(v) : String(v)
}

/** `name: "Ana" → "Ana Souza"; userType: 1 → 2` (the report's `_changes`). */
export const formatChanges = (list: ReadonlyArray<Change>): string =>
  list.map((c) => `${c.field}: ${show(c.from)} → ${show(c.to)}`).join("; ")

/**
 * Every field that differs between two images of one record (read names, as the API lists records): every field
 * of the resource either image has, not only those a write sent, each compared both ways with its field's rules
 * (money, dates, lists in any order), so a field one side lacks and the other holds a value in counts too.
 * Properties the server works out from other records (a task's `summary` of its items, a product's employee
 * stock) are no field of the table and are left out, as are the properties named in `ignore`.
 */
export const recordDifferences = (
  resource: Resource,
  left: Readonly<Record<string, unknown>>,
  right: Readonly<Record<string, unknown>>,
  ignore: ReadonlySet<string> = new Set()
): ReadonlyArray<Change> => {
  const listed = resource.readVia !== undefined ? resourceOf(resource.readVia) : resource
  const out: Array<Change> = []
  for (const property of new Set([...Object.keys(left), ...Object.keys(right)])) {
    if (ignore.has(property)) continue
    const field = listed.fields.find((f) => readName(f) === property || f.name === property)
    if (field === undefined || field.writeOnly === true) continue
    const a = left[property]
    const b = right[property]
    if (!(same(field, a, b) && same(field, b, a))) out.push({ field: property, from: b, to: a })
  }
  return out
}
