/**
 * The example row the templates ship (row 2 of each): a template filled below it would import a made-up record,
 * so validation reports it instead. A row is taken for the example only in a file with every column of the
 * template (as shipped: a file of the user's own, with the columns it needs, may well hold the same values as an
 * example, as the example company does), when each cell holds the template's example for its column (empty where
 * the example is empty), as the CSV template writes it or as the .xlsx one does (an enumeration's name, a number
 * cell), and at least two of those examples are not empty.
 */
import { t } from "../Messages.js"
import type { Resource } from "../Resources.js"
import { type ColumnDoc, describeResource } from "./Describe.js"

export const exampleRowMessage = (): string => t("row.example")

/** Examples a file must repeat before its row is taken for the template's. */
const minimumExamples = 2

/**
 * For a file of `r` with `header`: the column to report the example row under, and a test of a row's trimmed cells (`cellAt(i)` for the i-th column), or undefined
 * when the file lacks some of the template's columns (no row of it is taken for the example).
 */
export const exampleRowTest = (
  r: Resource,
  header: ReadonlyArray<string>
): { readonly column: string; readonly test: (cellAt: (index: number) => string) => boolean } | undefined => {
  const docs = new Map(describeResource(r).map((d) => [d.name.toLowerCase(), d]))
  const checks: Array<{ readonly index: number; readonly accepted: ReadonlySet<string> }> = []
  let examples = 0
  let column: string | undefined
  header.forEach((name, index) => {
    const doc = docs.get(name.trim().toLowerCase())
    if (doc === undefined) return
    const accepted = new Set([doc.example.toLowerCase()])
    const typed = exampleValue(doc)
    if (typed !== null) accepted.add(String(typed).toLowerCase())
    if (doc.example !== "") {
      examples += 1
      column ??= name
    }
    checks.push({ index, accepted })
  })
  if (checks.length < docs.size || examples < minimumExamples || column === undefined) return undefined
  return {
    // The message names the first column the example fills.
    column,
    test: (cellAt) => checks.every(({ accepted, index }) => accepted.has(cellAt(index).toLowerCase()))
  }
}

/**
 * The example as a typed cell: an enumeration by the name its drop-down shows, numbers as numbers, the rest as
 * text.
 */
export const exampleValue = (doc: ColumnDoc): string | number | null => {
  if (doc.example === "") return null
  const type = doc.field.type
  if (doc.role === "value" && !doc.field.list && type._tag === "enum") {
    return type.values.find((v) => String(v.value) === doc.example)?.label ?? doc.example
  }
  const numeric = doc.role === "value" && !doc.field.list && ["integer", "number"].includes(type._tag)
  return numeric && Number.isFinite(Number(doc.example)) ? Number(doc.example) : doc.example
}
