/**
 * What each column of a file is, read from its header against the resource table: a field, a reference column,
 * a report's tool column (`_status` …), a read-only export column, or a column the table does not know. Also
 * refuses, before any row is read, a header that cannot work for the mode (a required column missing for
 * create/upsert, nothing to find records by — or a misspelt key — for upsert/update/delete, two columns naming one
 * field).
 */
import * as Effect from "effect/Effect"
import { columnByAlias } from "../Aliases.js"
import { InputError } from "../Errors.js"
import { t } from "../Messages.js"
import type { Column, Resource } from "../Resources.js"
import { exportColumns, templateColumns, writableFields } from "../Resources.js"
import type { ColumnPlan, ParseOptions, PlannedColumn } from "./Model.js"

const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]!
}

/** The template column a misspelt header most likely meant, if one is close. */
const closest = (name: string, known: ReadonlyArray<Column>): string | undefined => {
  const lower = name.toLowerCase()
  let best: string | undefined
  let bestDistance = Math.max(1, Math.min(3, Math.floor(lower.length / 4)))
  for (const c of known) {
    const d = distance(lower, c.name.toLowerCase())
    if (d <= bestDistance) {
      best = c.name
      bestDistance = d - 1
    }
  }
  return best
}

/**
 * The columns that find an existing record: the id, the key (or its reference column), and the parent; `keyColumns`
 * are the key's alone.
 */
const identityColumns = (resource: Resource) => {
  const field = (
    name: string | undefined
  ) => (name === undefined ? undefined : resource.fields.find((x) => x.name === name))
  const columnsOf = (name: string | undefined): ReadonlyArray<string> => {
    const x = field(name)
    return x === undefined ? [] : x.ref ? [x.name, x.ref.column] : [x.name]
  }
  const keyColumns = columnsOf(resource.key)
  const recordColumns = [...columnsOf(resource.id?.name), ...keyColumns]
  const parentColumns = resource.parent && resource.parent.field !== resource.id?.name
    ? columnsOf(resource.parent.field)
    : []
  return { recordColumns, keyColumns, parentColumns }
}

/**
 * Whether `mode` finds existing records by the key or id: update and delete always; upsert when the resource has
 * a key, or is a plain record whose only identity is its id (expenses, tickets …). Sub-collection items and
 * actions without a key are written under their parent, whose column is required anyway.
 */
const findsRecords = (resource: Resource, mode: ParseOptions["mode"]): boolean =>
  mode === "update" || mode === "delete" ||
  (mode === "upsert" && (resource.key !== undefined || (resource.kind === "record" && resource.id !== undefined)))

/** Whether `--mode create` is a way out for a file that cannot be upserted (the API creates records one by one). */
const creatable = (resource: Resource): boolean =>
  resource.ops.includes("create") && resource.kind !== "subcollection" &&
  !(resource.kind === "action" && resource.path.includes("{id}"))

const either = (names: ReadonlyArray<string>) => names.map((n) => `"${n}"`).join(t("columns.or"))

export const planColumns = Effect.fn("Validate.planColumns")(function*(
  resource: Resource,
  file: string,
  header: ReadonlyArray<string>,
  options: ParseOptions
) {
  const template = templateColumns(resource)
  const byName = new Map(template.map((c) => [c.name.toLowerCase(), c]))
  const readOnly = new Map(
    exportColumns(resource)
      .filter((c) => !byName.has(c.name.toLowerCase()))
      .map((c) => [c.name.toLowerCase(), c])
  )
  const warnings: Array<string> = []
  const seen = new Map<string, string>()
  const columns: Array<PlannedColumn> = []
  const hidden = new Set(options.hiddenColumns ?? [])

  for (const [index, raw] of header.entries()) {
    const name = raw.trim()
    const lower = name.toLowerCase()
    if (name === "") {
      warnings.push(t("columns.noName", { file, index: index + 1 }))
      columns.push({ index, name, kind: "ignored" })
      continue
    }
    if (name.startsWith("_")) {
      columns.push({ index, name, kind: "tool" })
      continue
    }
    // What the sheet hides is not what the user sees: never sent unless asked (`--include-hidden`).
    if (hidden.has(index)) {
      warnings.push(t("columns.hidden", { file, column: `"${name}"` }))
      columns.push({ index, name, kind: "unknown" })
      continue
    }
    const retired = Object.entries(resource.retiredColumns ?? {}).find(([n]) => n.toLowerCase() === lower)
    if (retired !== undefined && !byName.has(lower)) {
      warnings.push(t("columns.retired", { file, column: `"${name}"`, why: retired[1] }))
      columns.push({ index, name, kind: "ignored" })
      continue
    }
    // A Portuguese header (`Nome`, `E-mail`) is the column it names, in every language (src/Aliases.ts).
    const aliased = byName.has(lower) || readOnly.has(lower) ? undefined : columnByAlias(name, template)
    const column = byName.get(lower) ?? readOnly.get(lower) ?? aliased
    if (column !== undefined) {
      const earlier = seen.get(column.name)
      if (earlier !== undefined) {
        return yield* new InputError({
          file,
          column: name,
          detail: t("columns.twice", { first: `"${earlier}"`, second: `"${name}"`, field: column.name })
        })
      }
      seen.set(column.name, name)
      const kind = byName.has(lower) || aliased !== undefined ? (column.role === "ref" ? "ref" : "field") : "ignored"
      columns.push({ index, name, kind, column })
      continue
    }
    // Only a column a mapping profile names in `send` goes to the server under its own name: anything else the
    // table does not know (a salesperson, a credit limit, an internal note) stays in the customer's file.
    if (options.send?.some((s) => s.trim().toLowerCase() === lower) === true) {
      columns.push({ index, name, kind: "extra" })
      continue
    }
    const guess = closest(name, template)
    const hint = guess !== undefined ? t("columns.didYouMean", { name: `"${guess}"` }) : ""
    warnings.push(t("columns.unknown", { file, column: `"${name}"`, resource: resource.name, hint }))
    columns.push({ index, name, kind: "unknown" })
  }

  const present = new Set(columns.filter((c) => c.kind === "field" || c.kind === "ref").map((c) => c.column!.name))
  // Unknown columns whose name is a near miss of a known one: [the column as written, the one it resembles].
  const misspelt = columns.flatMap((c) => {
    if (c.kind !== "unknown" || hidden.has(c.index)) return []
    const guess = closest(c.name, template)
    return guess === undefined ? [] : [[c.name, guess] as const]
  })
  const misspellingOf = (names: ReadonlyArray<string>) => misspelt.find(([, guess]) => names.includes(guess))
  const hiddenNames = columns.filter((c) => hidden.has(c.index)).map((c) => c.name)
  const hint = (names: ReadonlyArray<string>) => {
    const shut = hiddenNames.find((h) => names.some((n) => n.toLowerCase() === h.toLowerCase()))
    if (shut !== undefined) return t("columns.hiddenHint", { column: `"${shut}"` })
    const near = misspellingOf(names)
    return near === undefined ? "" : t("columns.misspelling", { column: `"${near[0]}"`, name: `"${near[1]}"` })
  }

  if (options.mode === "create" || options.mode === "upsert") {
    const missing = writableFields(resource).filter((x) =>
      x.required && !present.has(x.name) && !(x.ref && present.has(x.ref.column))
    )
    if (missing.length > 0) {
      const names = missing.map((x) => (x.ref ? `${x.name} (${t("columns.or").trim()} ${x.ref.column})` : x.name))
      return yield* new InputError({
        file,
        column: missing[0]!.name,
        detail: t(missing.length > 1 ? "columns.requiredMissingMany" : "columns.requiredMissing", {
          mode: options.mode,
          names: names.join(", "),
          hint: hint(missing.flatMap((x) => (x.ref ? [x.name, x.ref.column] : [x.name])))
        })
      })
    }
  }
  if (findsRecords(resource, options.mode)) {
    const mode = options.mode
    const { keyColumns, parentColumns, recordColumns } = identityColumns(resource)
    const createInstead = mode === "upsert" && creatable(resource)
      ? t("columns.createInstead")
      : ""
    if (recordColumns.length === 0) {
      return yield* new InputError({
        file,
        detail: t("columns.noIdentity", { resource: resource.name, mode })
      })
    }
    // A misspelt key would leave every row without one: upsert would create the records again on each import,
    // update and delete would find nothing (or, with an id column, write the key's values as an unknown field).
    // Beside the key itself, a similar name is another field (`internalId`), and only warned about.
    const near = keyColumns.some((c) => present.has(c)) ? undefined : misspellingOf(keyColumns)
    if (near !== undefined) {
      return yield* new InputError({
        file,
        column: near[0],
        detail: t("columns.misspeltKey", {
          column: `"${near[0]}"`,
          resource: resource.name,
          name: `"${near[1]}"`,
          mode,
          columns: either(recordColumns),
          instead: createInstead
        })
      })
    }
    if (!recordColumns.some((c) => present.has(c))) {
      if (mode === "upsert" && keyColumns.length === 0) {
        return yield* new InputError({
          file,
          column: recordColumns[0]!,
          detail: t("columns.noKeyUpsert", {
            resource: resource.name,
            columns: either(recordColumns),
            hint: hint(recordColumns),
            first: `"${recordColumns[0]}"`
          })
        })
      }
      const why = mode === "upsert" ? t("columns.upsertWhy") : ""
      return yield* new InputError({
        file,
        column: mode === "upsert" ? keyColumns[0]! : recordColumns[0]!,
        detail: t("columns.needsRecord", {
          mode,
          columns: either(recordColumns),
          hint: hint(recordColumns),
          why,
          instead: createInstead ? t("columns.addColumn", { instead: createInstead }) : ""
        })
      })
    }
    if (mode !== "upsert" && parentColumns.length > 0 && !parentColumns.some((c) => present.has(c))) {
      return yield* new InputError({
        file,
        column: parentColumns[0]!,
        detail: t("columns.needsParent", { mode, columns: either(parentColumns), hint: hint(parentColumns) })
      })
    }
  }

  const plan: ColumnPlan = { resource, file, header, columns, warnings }
  return plan
})
