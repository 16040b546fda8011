/**
 * Turns one read-back record into one export row, in the import template's cell syntax, so an export file is a
 * valid import file: read-back names mapped back to write names (`readAs`), money strings to plain numbers,
 * unset dates to empty cells, lists joined with `|`, nested values as JSON, and every reference column filled
 * with the referenced record's key. Pure: the caller supplies the id → key lookups.
 *
 * Every form the live service (or its Blueprint) reads a value back in is accepted: property names in any case
 * (`userId`/`userID`, `AdressComplement`), an enumeration as its number, its label (`"Task"`, `"Inclusao"`) or an
 * object holding the number (`userType: {userTypeId, description}`), `""`/`null`/`0` for an unset reference, and
 * `""`/`0001-01-01T00:00:00` for an unset date. A `0` where the service reads an unset number as `0` (users'
 * `hourValue`: `zeroWhenUnset`) is an empty cell.
 */
import { writeForm } from "../client/Body.js"
import type { Cell } from "../files/Write.js"
import { recordProperty } from "../Identity.js"
import type { Column, Field, Resource, ResourceName } from "../Resources.js"
import { exportColumns, idReadName, listSeparator, readName, refKey } from "../Resources.js"

/** The key (`key`: `externalId`, `login`, `description` …) of a referenced record, by its server id. */
export type KeyLookup = (resource: ResourceName, key: string, id: string) => string | undefined

/** The live service sends unset dates as `""` or `0001-01-01T00:00:00` (api-notes B, Values). */
const unsetDate = /^0001-01-01/

/**
 * A money string as a plain number: pt-BR `"1.234,56"` / `"12,00"` (product prices, task expense) or dot
 * `"12.34"` (service price). A comma always marks pt-BR; without one the dot is the decimal mark. Text that is
 * not money is kept as it is rather than lost.
 */
export const moneyToNumber = (text: string): number | string => {
  const s = text.trim()
  if (s === "") return ""
  const normalized = s.includes(",") ? s.replace(/\./g, "").replace(",", ".") : s
  return /^[-+]?\d+(\.\d+)?$/.test(normalized) ? Number(normalized) : text
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || v === ""

/** A property of a read-back record, in any case (`userId`/`userID`). */
export const propertyOf = recordProperty

/** One scalar value in the cell syntax of its field type. */
const scalar = (field: Field, read: unknown): Cell => {
  if (read === undefined || read === null) return undefined
  const v = writeForm({ ...field, list: false }, read)
  if (v === undefined || v === null) return ""
  // The service reads an unset `hourValue` as 0: the export cannot tell it from a 0 set on purpose, and writes no
  // value it cannot vouch for. The empty cell, imported again, sends nothing, so the record keeps its 0 either way.
  if (field.zeroWhenUnset === true && (v === 0 || (typeof v === "string" && moneyToNumber(v) === 0))) return ""
  switch (field.type._tag) {
    case "integer":
    case "number":
    case "enum":
      // Codes that changed (ticket priority, discount type) are written as labels, which mean one thing only.
      if (field.type._tag === "enum" && field.type.formerly !== undefined) {
        const label = field.type.values.find((x) => String(x.value) === String(v).trim())?.label
        if (label !== undefined) return label
      }
      // An integer beyond 2^53 came as its digits (`losslessJson`): kept so, a number would round it.
      if (typeof v === "string" && /^\s*-?\d+\s*$/.test(v) && !Number.isSafeInteger(Number(v))) return v.trim()
      if (typeof v === "string") {
        return field.readFormat !== undefined || v.includes(",")
          ? moneyToNumber(v)
          : v.trim() === ""
          ? ""
          : Number.isFinite(Number(v))
          ? Number(v)
          : v
      }
      return typeof v === "number" || typeof v === "boolean" ? v : JSON.stringify(v)
    case "boolean":
      if (typeof v === "boolean") return v
      if (v === "true" || v === "false") return v === "true"
      return typeof v === "string" || typeof v === "number" ? v : JSON.stringify(v)
    case "date":
      return typeof v === "string" && unsetDate.test(v)
        ? ""
        : typeof v === "string" || typeof v === "number"
        ? v
        : JSON.stringify(v)
    case "object":
      return typeof v === "string" ? v : JSON.stringify(v)
    default:
      if (typeof v === "string" && field.readFormat !== undefined) return moneyToNumber(v)
      return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : JSON.stringify(v)
  }
}

/**
 * A nested object as the template writes it: only the members of the field's shape, in any case, so what the
 * server adds to each item (`contacts[].id`) does not reach a file meant to be imported again.
 */
const inShape = (type: Field["type"], v: unknown): unknown => {
  if (type._tag !== "object" || typeof v !== "object" || v === null || Array.isArray(v)) return v
  const item = v as Record<string, unknown>
  const kept = type.shape.filter((name) => propertyOf(item, name) !== undefined)
  return Object.fromEntries(kept.map((name) => [name, propertyOf(item, name)]))
}

/** The items of a list value; the service may also send a list as one separated string. */
const items = (v: unknown): ReadonlyArray<unknown> =>
  Array.isArray(v)
    ? v
    : isEmpty(v)
    ? []
    : typeof v === "string"
    ? v.split(/[|,;]/).map((s) => s.trim()).filter((s) => s !== "")
    : [v]

const valueCell = (field: Field, v: unknown): Cell => {
  if (field.type._tag === "object") {
    // A list of objects is one JSON array, as in the template's example (`[{"name":…}]`).
    if (isEmpty(v) || (Array.isArray(v) && v.length === 0)) return ""
    return typeof v === "string"
      ? v
      : JSON.stringify(Array.isArray(v) ? v.map((x) => inShape(field.type, x)) : inShape(field.type, v))
  }
  if (field.list) {
    return items(v)
      .map((x) => scalar(field, x))
      .filter((x) => x !== undefined && x !== null && x !== "")
      .map(String)
      .join(listSeparator)
  }
  return scalar(field, v)
}

/** The reference column: the referenced records' keys, in the order of the ids (unknown ids are left out). */
const refCell = (field: Field, v: unknown, keys: KeyLookup): Cell => {
  const ref = field.ref!
  const ids = (field.list ? items(v) : [v]).filter((id) => !isEmpty(writeForm({ ...field, list: false }, id)))
  return ids
    .map((id) => keys(ref.resource, refKey(ref), String(id)))
    .filter((k): k is string => k !== undefined && k !== "")
    .join(listSeparator)
}

/** The read-back property of a column's field: the resource's id comes back under its own name (`userID`, `taskID`, `code`). */
const readProperty = (r: Resource, field: Field): string =>
  r.id !== undefined && field.name === r.id.name && field.readAs === undefined ? idReadName(r)! : readName(field)

const cell = (column: Column, property: string, record: Readonly<Record<string, unknown>>, keys: KeyLookup): Cell => {
  const v = propertyOf(record, property) ?? propertyOf(record, column.field.name)
  return column.role === "ref" ? refCell(column.field, v, keys) : valueCell(column.field, v)
}

export interface RowMapper {
  readonly header: ReadonlyArray<string>
  readonly row: (record: Readonly<Record<string, unknown>>, keys: KeyLookup) => ReadonlyArray<Cell>
}

/** The header and row mapping of a resource's export file. */
export const rowMapper = (r: Resource): RowMapper => {
  const columns = exportColumns(r).map((column) => ({ column, property: readProperty(r, column.field) }))
  return {
    header: columns.map((c) => c.column.name),
    row: (record, keys) => columns.map((c) => cell(c.column, c.property, record, keys))
  }
}

/** A set of keys an export needs: `key` of the records of `resource`, by id. */
export interface KeyNeed {
  readonly resource: ResourceName
  readonly key: string
}
