/**
 * Stored records (write names) turned into what the live service sends back (api-notes "Identifiers and field
 * names that differ between write and read"): the id under its read-back name (`userID`, `taskID`, `code`),
 * renamed fields (customers' `name` → `description`, webhooks' `targetUrl` → `urlResponse`), money as text
 * (`"12,00"` pt-BR, `"12.34"`), `""` for unset dates, and no write-only fields (passwords, upsert flags).
 */
import type { Field, Resource } from "../Resources.js"
import { idReadName, readName } from "../Resources.js"
import type { Rec } from "./Store.js"
import { idName } from "./Store.js"

const money = (value: unknown, decimalMark: "," | "."): string => {
  const n = typeof value === "number" ? value : Number(value)
  const text = (Number.isFinite(n) ? n : 0).toFixed(2)
  return decimalMark === "," ? text.replace(".", ",") : text
}

const readValue = (field: Field, value: unknown): unknown => {
  if (field.readFormat === "ptBrMoney") return money(value ?? 0, ",")
  if (field.readFormat === "dotMoney") return money(value ?? 0, ".")
  if (value === undefined || value === null) return field.type._tag === "date" ? "" : field.list ? [] : null
  return value
}

export const readBack = (r: Resource, rec: Rec): Rec => {
  const out: Rec = {}
  const known = new Set<string>()
  if (r.id !== undefined) {
    out[idReadName(r)!] = rec[idName(r)]
    known.add(idName(r))
  }
  for (const field of r.fields) {
    known.add(field.name)
    if (field.writeOnly || (r.id !== undefined && field.name === idName(r))) continue
    out[readName(field)] = readValue(field, rec[field.name])
  }
  for (const [name, value] of Object.entries(rec)) if (!known.has(name) && !(name in out)) out[name] = value
  return out
}

/** Only the properties named in `selectfields` (compared case-insensitively), in the order asked. */
export const selectFields = (rec: Rec, names: ReadonlyArray<string>): Rec => {
  const byLower = new Map(Object.keys(rec).map((k) => [k.toLowerCase(), k]))
  const out: Rec = {}
  for (const name of names) {
    const key = byLower.get(name.toLowerCase())
    if (key !== undefined) out[key] = rec[key]
  }
  return out
}
