/**
 * A mapping profile applied to a source: the header row found (title rows and merged cells above it skipped), the
 * profile compiled once into a plan per output column (a cell copied by index, a value map, a composition, a
 * constant), and the source's rows rewritten into rows of the resource's own columns. Rows that are not data
 * (footers) are skipped and remembered, never handed on. Each rewritten row keeps the row as the file has it, so
 * the report repeats the customer's own columns and row numbers. Sits between the readers and the row validator.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { InputError } from "../Errors.js"
import { checkHeader, isBlank } from "../files/Header.js"
import type { Source, SourceRow } from "../files/Source.js"
import { howMapped, t } from "../Messages.js"
import type { Resource } from "../Resources.js"
import { templateColumns } from "../Resources.js"
import { normal, type Profile, type ProfileRecord } from "./Profile.js"

/** How many rows from the top are looked at for the header. */
const headerSearchRows = 30

const defaultFooters = ["total", "subtotal"]

/** One line of the column plan: a source column and what became of it. */
export interface PlanLine {
  /** The source column (or, for a composed or constant field, its rule). */
  readonly source: string
  /** The field or column the values go to; undefined: ignored. */
  readonly target: string | undefined
  readonly how: "same name" | "renamed" | "composed" | "constant" | "sent as given" | "ignored" | "tool column"
  readonly valueMap?: boolean
}

export interface MappingInfo {
  readonly record: ProfileRecord
  /** The spreadsheet row the header was found on. */
  readonly headerRow: number
  /** The header as the file has it: the report's columns. */
  readonly sourceHeader: ReadonlyArray<string>
  readonly plan: ReadonlyArray<PlanLine>
  /** Source columns whose values are not sent. */
  readonly ignored: ReadonlyArray<string>
  /** Columns sent as given (the profile's `send`). */
  readonly send: ReadonlyArray<string>
  /** The profile's alternate keys, by the fields' own names. */
  readonly alternateKeys: Readonly<Record<string, "invalid" | "warning">>
  /** Rows that are not data, by row number, with why (filled as the rows are read; a row read twice counts once). */
  readonly skipped: Map<number, string>
}

interface OutColumn {
  readonly name: string
  readonly get: (cells: ReadonlyArray<string>) => string
  /** The source index a cell is copied from unchanged (a workbook's number cell stays a number). */
  readonly copyOf: number
}

const fail = (file: string, detail: string, at: { readonly row?: number; readonly column?: string } = {}) =>
  new InputError({ file, detail, ...at })

const trimmedHeader = (cells: ReadonlyArray<string>): Array<string> => {
  const names = cells.map((c) => c.replace(/^\uFEFF/, "").trim())
  while (names.length > 0 && names[names.length - 1] === "") names.pop()
  return names
}

/** The placeholders of a composition: `"{Rua}, {Número}"` → literal and column parts. */
const parseCompose = (pattern: string): Array<{ readonly text: string } | { readonly column: string }> => {
  const parts: Array<{ readonly text: string } | { readonly column: string }> = []
  const re = /\{([^{}]+)\}/g
  let at = 0
  for (let m = re.exec(pattern); m !== null; m = re.exec(pattern)) {
    if (m.index > at) parts.push({ text: pattern.slice(at, m.index) })
    parts.push({ column: m[1]!.trim() })
    at = m.index + m[0].length
  }
  if (at < pattern.length) parts.push({ text: pattern.slice(at) })
  return parts
}

/** Header names a profile refers to (to recognise the header row among the rows above it). */
const namesOf = (profile: Profile, resource: Resource): Set<string> => {
  const names = new Set<string>()
  for (const k of Object.keys(profile.columns ?? {})) names.add(normal(k))
  for (const rule of Object.values(profile.fields ?? {})) {
    if (rule.compose !== undefined) {
      for (const p of parseCompose(rule.compose)) if ("column" in p) names.add(normal(p.column))
    }
  }
  for (const s of profile.send ?? []) names.add(normal(s))
  for (const c of templateColumns(resource)) names.add(normal(c.name))
  return names
}

/** The row most of whose cells are names the profile knows, among the first rows (ties: the first of them). */
export const findHeader = (
  candidates: ReadonlyArray<{ readonly row: number; readonly cells: ReadonlyArray<string> }>,
  known: ReadonlySet<string>
) => {
  let best = candidates[0]!
  let bestScore = 0
  for (const c of candidates) {
    const score = c.cells.filter((x) => x.trim() !== "" && known.has(normal(x))).length
    if (score > bestScore) {
      best = c
      bestScore = score
    }
  }
  return best
}

/**
 * How many distinct cell texts a value map remembers the answer for. A column of labels (`Sim`, `Não`) holds a
 * handful, each normalised once instead of once a row; a column of free text stops being remembered here, so
 * what is kept stays the same size however long the file.
 */
export const valueMapMemory = 1024

export interface ValueMap {
  /** The value sent for a cell's (trimmed) text: the map's value for its normal form, else the text unchanged. */
  readonly apply: (text: string) => string
  /** Cell texts whose answers are remembered (at most `valueMapMemory`). */
  readonly remembered: () => number
}

/** A value map compiled: normalised cell text → the value sent; other values pass unchanged. */
export const compileValueMap = (values: Readonly<Record<string, string>>): ValueMap => {
  const map = new Map(Object.entries(values).map(([k, v]) => [normal(k), v]))
  const answers = new Map<string, string>()
  return {
    apply: (text) => {
      if (text === "") return text
      const known = answers.get(text)
      if (known !== undefined) return known
      const value = map.get(normal(text)) ?? text
      if (answers.size < valueMapMemory) answers.set(text, value)
      return value
    },
    remembered: () => answers.size
  }
}

const valueMapOf = (values: Readonly<Record<string, string>> | undefined) =>
  values === undefined ? undefined : compileValueMap(values).apply

/**
 * `source` read through the profile: a source whose header is the resource's columns and whose rows are rewritten
 * (each keeping the row as written), with what the mapping did. `ownRows`: the source is a file of this tool's in
 * the customer's columns (a rerun's rows), whose header is its first row whatever the profile's `headerRow` says.
 */
export const applyProfile = Effect.fn("Mapping.apply")(function*(
  source: Source,
  record: ProfileRecord,
  resource: Resource,
  ownRows = false
) {
  const { profile } = record
  const file = source.file
  const where = record.file
  if (profile.resource.trim().toLowerCase() !== resource.name) {
    return yield* fail(where, t("mapping.otherResource", { profile: profile.resource, resource: resource.name }), {
      column: "resource"
    })
  }

  // 1. The header: given, or the row among the first that names most of the columns the profile knows.
  const top = yield* Stream.runCollect(Stream.take(source.rows, headerSearchRows))
  const candidates = [
    { row: source.headerRow ?? 1, cells: source.header },
    ...Chunk.toReadonlyArray(top).map((r) => ({ row: r.row, cells: r.cells }))
  ]
  const chosen = ownRows
    ? candidates[0]
    : profile.headerRow !== undefined
    ? candidates.find((c) => c.row === profile.headerRow)
    : findHeader(candidates, namesOf(profile, resource))
  if (chosen === undefined) {
    return yield* fail(
      file,
      t("mapping.headerRowMissing", { row: profile.headerRow!, profile: where, count: headerSearchRows }),
      { row: profile.headerRow! }
    )
  }
  const headerRow = chosen.row
  const header = yield* Either.match(checkHeader(file, headerRow, trimmedHeader(chosen.cells), false), {
    onLeft: (e) => Effect.fail(e),
    onRight: (names) => Effect.succeed(names)
  })
  const width = header.length
  const indexOf = new Map<string, number>()
  header.forEach((h, i) => {
    if (!indexOf.has(normal(h))) indexOf.set(normal(h), i)
  })

  // 2. The profile compiled against the header: one plan per output column.
  const template = templateColumns(resource)
  const columnNamed = new Map(template.map((c) => [c.name.toLowerCase(), c.name]))
  const fieldName = (name: string, property: string) => {
    const found = columnNamed.get(name.trim().toLowerCase())
    return found !== undefined ? Effect.succeed(found) : Effect.fail(fail(
      where,
      t("mapping.notAColumn", {
        property,
        name,
        resource: resource.name,
        columns: template.map((c) => c.name).join(", ")
      }),
      { column: property }
    ))
  }
  const sourceIndex = (name: string, property: string) => {
    const at = indexOf.get(normal(name))
    return at !== undefined ? Effect.succeed(at) : Effect.fail(
      fail(
        where,
        t("mapping.noSourceColumn", { property, file, name, row: headerRow, header: header.join(", ") }),
        {
          column: property
        }
      )
    )
  }

  // Source index → target field, from the profile's `columns` and, for the rest, the resource's own column names.
  const target = new Map<number, string>()
  const explicitlyIgnored = new Set<number>()
  for (const [from, to] of Object.entries(profile.columns ?? {})) {
    const property = `columns."${from}"`
    const at = indexOf.get(normal(from))
    // A column the profile knows and this month's file lacks: nothing to read from it (a required one is refused
    // by the column check that follows, naming the field).
    if (at === undefined) continue
    if (normal(to) === "ignore") {
      explicitlyIgnored.add(at)
      continue
    }
    target.set(at, yield* fieldName(to, property))
  }
  const send = new Set((profile.send ?? []).map(normal))
  const plan: Array<PlanLine> = []
  const out: Array<OutColumn> = []
  const rules = profile.fields ?? {}
  const ruled = new Map<string, string>()
  for (const name of Object.keys(rules)) ruled.set((yield* fieldName(name, `fields."${name}"`)).toLowerCase(), name)
  const taken = new Map<string, string>()
  const take = (field: string, by: string, property: string) => {
    const earlier = taken.get(field.toLowerCase())
    if (earlier !== undefined) {
      return Effect.fail(fail(where, t("mapping.givenTwice", { property, field, first: earlier, second: by }), {
        column: property
      }))
    }
    taken.set(field.toLowerCase(), by)
    return Effect.void
  }
  const ignored: Array<string> = []

  for (const [index, name] of header.entries()) {
    if (name.startsWith("_")) {
      out.push({ name, get: (cells) => cells[index] ?? "", copyOf: index })
      plan.push({ source: name, target: name, how: "tool column" })
      continue
    }
    const mapped = target.get(index)
    const field = explicitlyIgnored.has(index) ? undefined : mapped ?? columnNamed.get(name.toLowerCase())
    if (field === undefined) {
      if (!explicitlyIgnored.has(index) && send.has(normal(name))) {
        out.push({ name, get: (cells) => (cells[index] ?? "").trim(), copyOf: index })
        plan.push({ source: name, target: name, how: "sent as given" })
        continue
      }
      ignored.push(name)
      plan.push({ source: name, target: undefined, how: "ignored" })
      continue
    }
    const rule = rules[ruled.get(field.toLowerCase()) ?? ""]
    if (rule?.compose !== undefined || rule?.constant !== undefined) {
      // The field is composed or constant: this column feeds it only through the rule.
      ignored.push(name)
      plan.push({ source: name, target: undefined, how: "ignored" })
      continue
    }
    yield* take(field, t("mapping.byColumn", { name }), mapped !== undefined ? `columns."${name}"` : name)
    const map = valueMapOf(rule?.values)
    const fallback = rule?.default
    const get = map === undefined && fallback === undefined
      ? (cells: ReadonlyArray<string>) => cells[index] ?? ""
      : (cells: ReadonlyArray<string>) => {
        const text = (cells[index] ?? "").trim()
        const value = map === undefined ? text : map(text)
        return value === "" && fallback !== undefined ? fallback : value
      }
    out.push({ name: field, get, copyOf: map === undefined ? index : -1 })
    plan.push({
      source: name,
      target: field,
      how: field === name ? "same name" : "renamed",
      ...(map !== undefined ? { valueMap: true } : {})
    })
  }
  for (const [name, rule] of Object.entries(rules)) {
    const field = yield* fieldName(name, `fields."${name}"`)
    const map = valueMapOf(rule.values)
    const finish = (value: string) => {
      const v = map === undefined ? value : map(value)
      return v === "" && rule.default !== undefined ? rule.default : v
    }
    if (rule.compose !== undefined) {
      yield* take(field, `fields."${name}".compose`, `fields."${name}".compose`)
      // Each column with the text before it; an empty cell drops its text, so a missing number leaves no ", ".
      const pieces: Array<{ readonly before: string; readonly index: number }> = []
      let pending = ""
      let prefix: string | undefined
      for (const p of parseCompose(rule.compose)) {
        if ("text" in p) {
          pending += p.text
          continue
        }
        const index = yield* sourceIndex(p.column, `fields."${name}".compose`)
        if (prefix === undefined) {
          prefix = pending
          pending = ""
        }
        pieces.push({ before: pending, index })
        pending = ""
      }
      const lead = prefix ?? ""
      const suffix = pending
      out.push({
        name: field,
        get: (cells) => {
          let text = ""
          for (const piece of pieces) {
            const value = (cells[piece.index] ?? "").trim()
            if (value === "") continue
            text += text === "" ? value : piece.before + value
          }
          return finish(text === "" ? "" : (lead + text + suffix).trim())
        },
        copyOf: -1
      })
      plan.push({ source: rule.compose, target: field, how: "composed", ...(map ? { valueMap: true } : {}) })
    } else if (rule.constant !== undefined) {
      yield* take(field, `fields."${name}".constant`, `fields."${name}".constant`)
      const value = rule.constant
      out.push({ name: field, get: () => value, copyOf: -1 })
      plan.push({ source: JSON.stringify(value), target: field, how: "constant" })
    } else if (!taken.has(field.toLowerCase()) && rule.default !== undefined) {
      // A default for a field no column gives: every row gets it.
      yield* take(field, `fields."${name}".default`, `fields."${name}".default`)
      const value = rule.default
      out.push({ name: field, get: () => value, copyOf: -1 })
      plan.push({ source: JSON.stringify(value), target: field, how: "constant" })
    }
  }

  const alternateKeys: Record<string, "invalid" | "warning"> = {}
  for (const [name, severity] of Object.entries(profile.alternateKeys ?? {})) {
    alternateKeys[yield* fieldName(name, `alternateKeys."${name}"`)] = severity
  }

  // 3. The rows: above the header and footers skipped (remembered), the rest rewritten by index.
  const footers = (profile.footers ?? defaultFooters).map(normal).filter((w) => w !== "")
  const skipped = new Map<number, string>()
  const footerOf = (cells: ReadonlyArray<string>): string | undefined => {
    let filled = 0
    let first: string | undefined
    for (let i = 0; i < cells.length; i++) {
      const c = cells[i]!.trim()
      if (c === "") continue
      filled++
      if (first === undefined) first = c
    }
    if (first === undefined || filled > Math.max(1, Math.floor(width / 2))) return undefined
    const start = normal(first)
    return footers.some((w) => start === w || start.startsWith(`${w} `)) ? first : undefined
  }
  const outNames = out.map((c) => c.name)
  const readerHeaderRow = source.headerRow ?? 1
  if (headerRow > readerHeaderRow) skipped.set(readerHeaderRow, t("mapping.aboveHeader"))
  const mapRow = (r: SourceRow): Option.Option<SourceRow> => {
    if (r.row <= headerRow) {
      if (r.row < headerRow) skipped.set(r.row, t("mapping.aboveHeader"))
      return Option.none()
    }
    const cells = r.cells
    if (isBlank(cells.length > width ? cells.slice(0, width) : cells) && !isBlank(cells)) {
      // Only cells beyond the header: not a row of this table.
      skipped.set(r.row, t("mapping.beyondHeader"))
      return Option.none()
    }
    const footer = footerOf(cells)
    if (footer !== undefined) {
      skipped.set(r.row, t("mapping.notData", { text: footer.length > 40 ? `${footer.slice(0, 40)}…` : footer }))
      return Option.none()
    }
    // A row as wide as the header (nearly every row) is read as it is: no copy of it per row.
    const aligned = cells.length === width
      ? cells
      : cells.length > width
      ? cells.slice(0, width)
      : [...cells, ...Array<string>(width - cells.length).fill("")]
    let ragged = false
    for (let i = width; i < cells.length && !ragged; i++) ragged = cells[i]!.trim() !== ""
    const mapped = new Array<string>(out.length + (ragged ? cells.length - width : 0))
    for (let i = 0; i < out.length; i++) mapped[i] = out[i]!.get(aligned)
    if (ragged) { for (let i = width; i < cells.length; i++) mapped[out.length + i - width] = cells[i]! }
    if (r.numbers === undefined && r.cellProblems === undefined && r.hidden !== true && !ragged) {
      return Option.some({ row: r.row, cells: mapped, original: { cells: aligned, numbers: undefined } })
    }
    let numbers: Set<number> | undefined
    if (r.numbers !== undefined) {
      for (let i = 0; i < out.length; i++) {
        if (out[i]!.copyOf >= 0 && r.numbers.has(out[i]!.copyOf)) (numbers ??= new Set()).add(i)
      }
    }
    // A cell without a value (an error value) goes with the columns that copy it.
    const cellProblems = r.cellProblems?.flatMap((p) =>
      out.flatMap((c, i) => (c.copyOf === p.index ? [{ index: i, message: p.message }] : []))
    )
    return Option.some({
      row: r.row,
      cells: mapped,
      ...(cellProblems !== undefined && cellProblems.length > 0 ? { cellProblems } : {}),
      ...(ragged ? { ragged: true } : {}),
      ...(numbers !== undefined ? { numbers } : {}),
      ...(r.hidden === true ? { hidden: true as const } : {}),
      original: { cells: ragged ? cells : aligned, numbers: r.numbers }
    })
  }

  // A column that copies one the sheet hides is hidden too.
  const hiddenIn = new Set(source.hiddenColumns ?? [])
  const hiddenColumns = out.flatMap((c, i) => (c.copyOf >= 0 && hiddenIn.has(c.copyOf) ? [i] : []))
  const { encoding: _encoding, hiddenColumns: _, ...rest } = source
  const base: Source = {
    ...rest,
    ...(hiddenColumns.length > 0 ? { hiddenColumns } : {}),
    header: outNames,
    headerRow,
    rows: Stream.filterMap(source.rows, mapRow)
  }
  // A CSV's encoding is asked of the source each time: it is decided by the first non-ASCII character, which a pass
  // over the rows may meet after the first bytes (a spread keeps what the first bytes said: utf-8).
  const mapped: Source = source.encoding === undefined ? base : {
    ...base,
    get encoding() {
      return source.encoding!
    }
  }
  const info: MappingInfo = {
    record,
    headerRow,
    sourceHeader: header,
    plan,
    ignored,
    alternateKeys,
    send: out.filter((_, i) => plan.some((p) => p.how === "sent as given" && p.target === outNames[i])).map((c) =>
      c.name
    ),
    skipped
  }
  return { source: mapped, mapping: info }
})

/** The plan as lines a person checks: `Nome → name`, `Vendedor → (ignored)`. */
export const planLines = (info: MappingInfo): ReadonlyArray<string> => {
  const width = Math.min(32, Math.max(...info.plan.map((p) => p.source.length)))
  return info.plan.filter((p) => p.how !== "tool column").map((p) =>
    `  ${p.source.padEnd(width)}  → ${p.target ?? t("mapping.ignored")}${
      p.how === "renamed" || p.how === "same name" || p.how === "ignored" ? "" : ` (${howMapped(p.how)})`
    }${p.valueMap === true ? t("mapping.withValueMap") : ""}`
  )
}

/** Skipped rows for a summary and a message: the first few, and how many. */
export const skippedRows = (info: MappingInfo) =>
  [...info.skipped.entries()].sort((a, b) => a[0] - b[0]).map(([row, why]) => ({ row, why }))
