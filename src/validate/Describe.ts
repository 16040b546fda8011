/**
 * What a user needs to know to fill one template column, derived from the resource table: requiredness, type,
 * allowed values, the cell syntax of lists, JSON objects and reference columns, and an example. The XLSX notes,
 * the README sheet and templates/README.md all print these.
 */
import { tableText } from "../FieldDocs.js"
import { t } from "../Messages.js"
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
export const booleanSpellings = (): string => t("template.booleanSpellings")

const range = (r: { readonly min?: number; readonly max?: number }) =>
  r.min !== undefined && r.max !== undefined
    ? t("template.rangeFromTo", { min: r.min, max: r.max })
    : r.min !== undefined
    ? t("template.rangeAtLeast", { min: r.min })
    : r.max !== undefined
    ? t("template.rangeUpTo", { max: r.max })
    : ""

const typeText = (type: FieldType): string => {
  switch (type._tag) {
    case "string":
      return type.maxLength !== undefined ? t("template.textMax", { max: type.maxLength }) : t("template.text")
    case "integer":
      return t("template.wholeNumber", { range: range(type) })
    case "number":
      return t("template.number", { range: range(type) })
    case "boolean":
      return t("template.boolean", { spellings: booleanSpellings() })
    case "date":
      return t("template.date")
    case "time":
      return t("template.time")
    case "email":
      return t("template.email")
    case "cpfCnpj":
      return t("template.cpfCnpj")
    case "guid":
      return t("template.guid")
    case "enum":
      return t("template.enum")
    case "object":
      return t("template.json")
    case "file":
      return t("template.file")
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
      ? t("template.jsonListSyntax", { keys, sample: `{"${field.type.shape[0]}":"…"}` })
      : t("template.jsonObjectSyntax", { keys })
  }
  return field.list
    ? t("template.listSyntax", { separator: listSeparator, example: `2${listSeparator}3${listSeparator}4` })
    : ""
}

const refSyntax = (column: Column): string => {
  const ref = column.field.ref!
  const target = resource(ref.resource)
  const several = column.field.list ? t("template.several", { separator: listSeparator }) : ""
  return column.role === "ref"
    ? t("template.refByKey", { target: singular(target), key: refKey(ref), several, column: column.field.name })
    : t("template.refById", { target: singular(target), key: refKey(ref), several, column: ref.column })
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
    return field.type.values.map((v) => ({ value: v.label, meaning: t("template.apiCode", { code: v.value }) }))
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
    type: `${role === "ref" ? t("template.text") : byLabel(field) ? t("template.byName") : typeText(field.type)}${
      field.list && field.type._tag !== "object" ? t("template.aList") : ""
    }`,
    description: role === "ref"
      ? t("template.refDescription", {
        description: tableText(
          field.doc.replace(/ \([^)]*\bids?\b[^)]*\)$/, "").replace(/^Server id of the /, "The ")
        ),
        key: refKey(field.ref!)
      })
      : tableText(field.doc),
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
    ? t("template.required")
    : doc.required === "either"
    ? t("template.requiredEither", { column: doc.role === "ref" ? doc.field.name : doc.field.ref!.column })
    : t("template.optional")

export const allowedText = (doc: ColumnDoc): string =>
  doc.allowed.map((a) => (a.meaning !== undefined ? `${a.value} = ${a.meaning}` : a.value)).join(", ")
