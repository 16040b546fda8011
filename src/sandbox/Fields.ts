/**
 * Validation of request bodies against the resource table, in the order the live service answers:
 * wrong JSON types → 400 (`coerce`), then missing required fields, values outside an enumeration or a range,
 * invalid CPF/CNPJ → 422 (`checkValues`), then references to records that do not exist → 422 (`checkRefs`).
 * Types are lenient the way the service is: numbers accept numeric strings, text accepts numbers.
 * Unknown properties are accepted and stored (the spec does not show every field).
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type { Field, FieldType } from "../Resources.js"
import { normalizeDate } from "./Dates.js"
import type { Account, Rec } from "./Store.js"
import { idKey } from "./Store.js"
import { reject, show } from "./Wire.js"

type Coerced = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string }

const ok = (value: unknown): Coerced => ({ ok: true, value })
const bad = (problem: string): Coerced => ({ ok: false, problem })

const guidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const coerceScalar = (type: FieldType, value: unknown): Coerced => {
  switch (type._tag) {
    case "string":
    case "email":
    case "file":
      return typeof value === "string"
        ? ok(value)
        : typeof value === "number"
        ? ok(String(value))
        : bad(`${show(value)} is not text`)
    case "cpfCnpj":
      if (typeof value === "number") return ok(String(value))
      if (typeof value !== "string") return bad(`${show(value)} is not text`)
      return ok(/^[\d.\-/\s]*$/.test(value) ? value.replace(/\D/g, "") : value)
    case "integer":
    case "enum":
      if (typeof value === "number" && Number.isInteger(value)) return ok(value)
      if (typeof value === "string" && /^\s*-?\d+\s*$/.test(value)) return ok(Number(value))
      return bad(`${show(value)} is not an integer`)
    case "number":
      if (typeof value === "number" && Number.isFinite(value)) return ok(value)
      if (typeof value === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return ok(Number(value))
      return bad(`${show(value)} is not a number`)
    case "boolean":
      if (typeof value === "boolean") return ok(value)
      if (typeof value === "string" && /^\s*(true|false)\s*$/i.test(value)) {
        return ok(value.trim().toLowerCase() === "true")
      }
      return bad(`${show(value)} is not true or false`)
    case "date": {
      if (typeof value !== "string") return bad(`${show(value)} is not a date`)
      if (value.trim() === "") return ok("")
      const date = normalizeDate(value)
      return date === undefined ? bad(`${show(value)} is not a date (yyyy-MM-dd or yyyy-MM-ddTHH:mm:ss)`) : ok(date)
    }
    case "time": {
      const m = typeof value === "string" ? /^\s*(\d{2}):(\d{2})(?::(\d{2}))?\s*$/.exec(value) : null
      if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) {
        return bad(`${show(value)} is not a time (HH:mm:ss)`)
      }
      return ok(`${m[1]}:${m[2]}:${m[3] ?? "00"}`)
    }
    case "guid":
      return typeof value === "string" && guidPattern.test(value.trim())
        ? ok(value.trim().toLowerCase())
        : bad(`${show(value)} is not a GUID`)
    case "object":
      return Predicate.isRecord(value)
        ? ok(value)
        : bad(`${show(value)} is not an object`)
  }
}

/** Money the API writes as pt-BR decimal text (products' `unitaryValue` `"12,00"`): the comma is the decimal mark. */
const ptBrDecimal = /^\s*-?\d+,\d+\s*$/

/** An enumeration written by its label (webhooks' `"Task"`, `"Inclusao"`, any case) as its number. */
const labelCode = (type: FieldType, value: unknown): unknown => {
  if (type._tag !== "enum" || typeof value !== "string") return value
  const code = type.values.find((v) => v.label.toLowerCase() === value.trim().toLowerCase())?.value
  return code ?? value
}

const coerceField = (field: Field, value: unknown): Coerced => {
  if (value === null || value === undefined) return ok(null)
  if (field.readFormat === "ptBrMoney" && typeof value === "string" && ptBrDecimal.test(value)) {
    return coerceScalar(field.type, value.replace(",", "."))
  }
  if (field.sendLabel === true) {
    value = Array.isArray(value)
      ? value.map((v) => labelCode(field.type, v))
      : labelCode(field.type, value)
  }
  if (!field.list) return coerceScalar(field.type, value)
  if (!Array.isArray(value)) return bad(`${show(value)} is not a list`)
  const out: Array<unknown> = []
  for (const item of value) {
    if (item === null || item === undefined) return bad("a list must not hold null")
    const c = coerceScalar(field.type, item)
    if (!c.ok) return c
    out.push(c.value)
  }
  return ok(out)
}

/**
 * The body with every known field type-checked and normalized (numbers, dates, digits of CPF/CNPJ …).
 * Server-assigned fields (`readOnly`) are dropped; unknown properties are kept as sent. Fails 400, naming every
 * offending field.
 */
export const coerce = Effect.fnUntraced(function*(fields: ReadonlyArray<Field>, body: Rec) {
  const out: Rec = {}
  const problems: Array<string> = []
  const byName = new Map(fields.map((f) => [f.name, f]))
  for (const [name, value] of Object.entries(body)) {
    const field = byName.get(name)
    if (field === undefined) {
      out[name] = value
      continue
    }
    if (field.readOnly) continue
    const c = coerceField(field, value)
    if (c.ok) out[name] = c.value
    else problems.push(`field "${name}": ${c.problem}`)
  }
  if (problems.length > 0) return yield* reject(400, problems.join("; "))
  return out
})

export const isUnset = (value: unknown): boolean =>
  value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)

const cpfCnpjValid = (digits: string): boolean => {
  if (!/^\d+$/.test(digits) || (digits.length !== 11 && digits.length !== 14) || /^(\d)\1+$/.test(digits)) return false
  const d = [...digits].map(Number)
  const check = (length: number, weights: ReadonlyArray<number>) => {
    const sum = weights.reduce((acc, w, i) => acc + w * d[i]!, 0)
    const r = sum % 11
    return length === 11 ? ((sum * 10) % 11) % 10 : r < 2 ? 0 : 11 - r
  }
  if (digits.length === 11) {
    return check(11, [10, 9, 8, 7, 6, 5, 4, 3, 2]) === d[9] && check(11, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]) === d[10]
  }
  return check(14, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]) === d[12] &&
    check(14, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]) === d[13]
}

const valueProblems = (field: Field, value: unknown): Array<string> => {
  const items = Array.isArray(value) ? value : [value]
  const problems: Array<string> = []
  const type = field.type
  for (const item of items) {
    if (type._tag === "enum" && !type.values.some((v) => v.value === item)) {
      problems.push(
        `field "${field.name}": ${show(item)} is not one of ${
          type.values.map((v) => `${v.value} (${v.label})`).join(", ")
        }`
      )
    }
    if ((type._tag === "integer" || type._tag === "number") && typeof item === "number") {
      if (type.min !== undefined && item < type.min) {
        problems.push(`field "${field.name}": ${item} is below the minimum ${type.min}`)
      }
      if (type.max !== undefined && item > type.max) {
        problems.push(`field "${field.name}": ${item} is above the maximum ${type.max}`)
      }
    }
    if (
      type._tag === "string" && type.maxLength !== undefined && typeof item === "string" && item.length > type.maxLength
    ) {
      problems.push(`field "${field.name}" is longer than ${type.maxLength} characters`)
    }
    if (type._tag === "cpfCnpj" && typeof item === "string" && item !== "" && !cpfCnpjValid(item)) {
      problems.push(`field "${field.name}": ${show(item)} is not a valid CPF (11 digits) or CNPJ (14 digits)`)
    }
  }
  return problems
}

/**
 * 422 for a record (as it will be stored) that lacks a required field or holds a value the service refuses:
 * outside an enumeration or a range, longer than allowed, an invalid CPF/CNPJ.
 */
export const checkValues = Effect.fnUntraced(function*(fields: ReadonlyArray<Field>, rec: Rec) {
  const problems: Array<string> = []
  for (const field of fields) {
    if (field.readOnly) continue
    const value = rec[field.name]
    if (isUnset(value)) {
      if (field.required) problems.push(`field "${field.name}" is required`)
      continue
    }
    problems.push(...valueProblems(field, value))
  }
  if (problems.length > 0) return yield* reject(422, problems.join("; "))
})

/** 422 when a reference among the `touched` fields names a record the account does not have. */
export const checkRefs = Effect.fnUntraced(function*(
  account: Account,
  fields: ReadonlyArray<Field>,
  rec: Rec,
  touched: ReadonlySet<string>
) {
  const problems: Array<string> = []
  for (const field of fields) {
    if (field.ref === undefined || !touched.has(field.name)) continue
    const value = rec[field.name]
    if (isUnset(value)) continue
    const table = account.table(field.ref.resource)
    for (const id of Array.isArray(value) ? value : [value]) {
      if (table.get(idKey(id)) === undefined) {
        problems.push(`field "${field.name}": ${field.ref.resource} ${show(id)} does not exist`)
      }
    }
  }
  if (problems.length > 0) return yield* reject(422, problems.join("; "))
})
