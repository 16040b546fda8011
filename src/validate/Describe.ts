/**
 * What a user needs to know to fill one template column, derived from the resource table: requiredness, type,
 * allowed values, the cell syntax of lists, JSON objects and reference columns, and an example. The XLSX notes,
 * the README sheet and templates/README.md all print these.
 */
import {
  type Column,
  type Field,
  type FieldType,
  listSeparator,
  refKey,
  type Resource,
  resource,
  templateColumns
} from "../Resources.js"

interface AllowedValue {
  /** What goes in the cell. */
  readonly value: string
  /** What it means (enumerations: the value is the number, the label only explains it). */
  readonly meaning?: string
}

export interface ColumnDoc {
  readonly name: string
  /** `either`: a required reference, given by its id column or by its key column. */
  readonly required: "yes" | "either" | "no"
  readonly type: string
  readonly description: string
  readonly example: string
  /** Values a drop-down offers (enumerations and booleans of single-value cells). */
  readonly allowed: ReadonlyArray<AllowedValue>
  /** How to write a list, JSON or reference cell; empty for plain cells. */
  readonly syntax: string
  readonly field: Field
  readonly role: Column["role"]
}

/** Spellings of true and false the importer accepts besides `true`/`false`. */
export const booleanSpellings = "sim/não, yes/no, 1/0; x means true"

const range = (t: { readonly min?: number; readonly max?: number }) =>
  t.min !== undefined && t.max !== undefined
    ? ` from ${t.min} to ${t.max}`
    : t.min !== undefined
    ? ` of at least ${t.min}`
    : t.max !== undefined
    ? ` up to ${t.max}`
    : ""

const typeText = (type: FieldType): string => {
  switch (type._tag) {
    case "string":
      return type.maxLength !== undefined ? `text (at most ${type.maxLength} characters)` : "text"
    case "integer":
      return `whole number${range(type)}`
    case "number":
      return `number${range(type)}; decimal mark "." or ","`
    case "boolean":
      return `true or false (also ${booleanSpellings})`
    case "date":
      return "date: yyyy-mm-dd, or yyyy-mm-ddThh:mm:ss with a time (dd/mm/yyyy also read; an Excel date cell works too)"
    case "time":
      return "time of day: hh:mm:ss"
    case "email":
      return "e-mail address"
    case "cpfCnpj":
      return "CPF (11 digits) or CNPJ (14 digits); dots, dashes and slash are accepted"
    case "guid":
      return "GUID, such as 3f2504e0-4f89-11d3-9a0c-0305e82c3301"
    case "enum":
      return "one of the listed numbers"
    case "object":
      return "JSON"
    case "file":
      return "path of a local file, relative to this file"
  }
}

/** "Product categories" → "product category", "Services (catalog)" → "service". */
const singular = (r: Resource) =>
  r.title
    .toLowerCase()
    .replace(/ \(.*\)$/, "")
    .replace(/ies$/, "y")
    .replace(/s$/, "")

const listSyntax = (field: Field): string => {
  if (field.type._tag === "object") {
    const keys = field.type.shape.join(", ")
    return field.list
      ? `a JSON list of objects with the keys ${keys}: [{"${field.type.shape[0]}":"…"}]`
      : `a JSON object with the keys ${keys}`
  }
  return field.list
    ? `a list: separate the items with ${listSeparator} (for example 2${listSeparator}3${listSeparator}4)`
    : ""
}

const refSyntax = (column: Column): string => {
  const ref = column.field.ref!
  const target = resource(ref.resource)
  const several = column.field.list ? `; several: separate them with ${listSeparator}` : ""
  return column.role === "ref"
    ? `names the ${singular(target)} record by its ${refKey(ref)}${several}; fill either this or ${column.field.name}`
    : `the server id of the ${singular(target)} record${several}; or name it by its ${
      refKey(ref)
    } in ${ref.column} instead`
}

/** The example of a reference column: the referenced resource's own example of its key. */
const refExample = (column: Column): string => {
  const ref = column.field.ref!
  const key = refKey(ref)
  return resource(ref.resource).fields.find((x) => x.name === key)?.example ?? ""
}

/**
 * Enumerations a template offers by name: those whose codes changed (a number would be ambiguous in files written
 * for the former codes) and those the API writes by name (webhooks).
 */
const byLabel = (field: Field): boolean =>
  field.type._tag === "enum" && (field.type.formerly !== undefined || field.sendLabel === true)

const allowedValues = (field: Field): ReadonlyArray<AllowedValue> => {
  if (field.list) return []
  if (field.type._tag === "enum" && byLabel(field)) {
    return field.type.values.map((v) => ({ value: v.label, meaning: `API code ${v.value}` }))
  }
  if (field.type._tag === "enum") return field.type.values.map((v) => ({ value: String(v.value), meaning: v.label }))
  if (field.type._tag === "boolean") return [{ value: "true" }, { value: "false" }]
  return []
}

const describeColumn = (column: Column): ColumnDoc => {
  const { field, role } = column
  const isRef = field.ref !== undefined
  return {
    name: column.name,
    required: field.required ? (isRef ? "either" : "yes") : "no",
    type: `${role === "ref" ? "text" : byLabel(field) ? "one of the listed names" : typeText(field.type)}${
      field.list && field.type._tag !== "object" ? " (a list)" : ""
    }`,
    description: role === "ref"
      ? `${field.doc.replace(/ \([^)]*\bids?\b[^)]*\)$/, "").replace(/^Server id of the /, "The ")}, by ${
        refKey(field.ref!)
      }`
      : field.doc,
    example: role === "ref" ? refExample(column) : isRef ? "" : (field.example ?? ""),
    allowed: role === "ref" ? [] : allowedValues(field),
    syntax: isRef ? refSyntax(column) : listSyntax(field),
    field,
    role
  }
}

export const describeResource = (r: Resource): ReadonlyArray<ColumnDoc> => templateColumns(r).map(describeColumn)

export const requiredText = (doc: ColumnDoc): string =>
  doc.required === "yes"
    ? "Required when a record is created"
    : doc.required === "either"
    ? `Required when a record is created: fill this or ${doc.role === "ref" ? doc.field.name : doc.field.ref!.column}`
    : "Optional"

export const allowedText = (doc: ColumnDoc): string =>
  doc.allowed.map((a) => (a.meaning !== undefined ? `${a.value} = ${a.meaning}` : a.value)).join(", ")
