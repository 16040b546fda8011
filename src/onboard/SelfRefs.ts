/**
 * References among the rows of one sheet (an equipment whose `parentEquipmentExternalId` names another row of the
 * same sheet). The import pipeline sends a row after the row it names, whatever their order in the sheet; rows
 * that name each other in a cycle can never be sent in any order, so onboarding refuses them up front, naming the
 * rows. The scan also returns the values the sheet's rows write, which a dry run treats as "would be created".
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { InputError } from "../Errors.js"
import { restore } from "../files/Guard.js"
import type { Source } from "../files/Source.js"
import { KeyMap, normalKey } from "../Identity.js"
import { listSeparator, refKey, type Resource, writableFields } from "../Resources.js"

export interface SelfReferences {
  /** Data rows of the sheet. */
  readonly rows: number
  /** Per property other rows name (`externalId`): each value a row writes (a key: any case) → the first such row. */
  readonly produced: ReadonlyMap<string, KeyMap<number>>
  /** The first row (in file order) that names another row of the sheet: that row, the row it names, the column. */
  readonly firstLink: { readonly row: number; readonly names: number; readonly column: string } | undefined
}

interface Link {
  readonly by: string
  readonly column: string
  readonly byIndex: number
  readonly refIndex: number
  readonly list: boolean
}

/** Header names compare without regard to case. */
const norm = (text: string) => text.trim().toLowerCase()

/** The first cycle through each strongly connected group of rows, as row numbers (first = last). */
const cyclesOf = (edges: ReadonlyMap<number, ReadonlyArray<number>>): ReadonlyArray<ReadonlyArray<number>> => {
  const state = new Map<number, "open" | "done">()
  const cycles: Array<Array<number>> = []
  const inCycle = new Set<number>()
  for (const start of [...edges.keys()].sort((a, b) => a - b)) {
    if (state.has(start)) continue
    // Iterative depth-first walk; `path` is the current chain of rows.
    const path: Array<number> = [start]
    const next: Array<number> = [0]
    state.set(start, "open")
    while (path.length > 0) {
      const node = path[path.length - 1]!
      const targets = edges.get(node) ?? []
      const i = next[next.length - 1]!
      if (i >= targets.length) {
        state.set(node, "done")
        path.pop()
        next.pop()
        continue
      }
      next[next.length - 1] = i + 1
      const target = targets[i]!
      const s = state.get(target)
      if (s === "open") {
        const cycle = [...path.slice(path.indexOf(target)), target]
        if (!cycle.some((row) => inCycle.has(row))) {
          cycles.push(cycle)
          for (const row of cycle) inCycle.add(row)
        }
      } else if (s === undefined) {
        state.set(target, "open")
        path.push(target)
        next.push(0)
      }
    }
  }
  return cycles
}

/** Scans `source` (rows of resource `r`) for references among its rows, counting them; refuses cycles. */
export const scanSelfReferences = Effect.fn("Onboard.scanSelfReferences")(function*(r: Resource, source: Source) {
  const header = source.header.map(norm)
  const links: Array<Link> = writableFields(r)
    .filter((f) => f.ref?.resource === r.name)
    .map((f) => ({
      by: refKey(f.ref!),
      column: f.ref!.column,
      byIndex: header.indexOf(norm(refKey(f.ref!))),
      refIndex: header.indexOf(norm(f.ref!.column)),
      list: f.list === true
    }))
    .filter((l) => l.byIndex >= 0 && l.refIndex >= 0)
  const produced = new Map<string, KeyMap<number>>()
  let rows = 0

  const cell = (cells: ReadonlyArray<string>, index: number) => {
    const text = cells[index] ?? ""
    return restore(text)
  }
  const wants: Array<{ readonly row: number; readonly link: Link; readonly value: string }> = []
  yield* Stream.runForEach(source.rows, (row) =>
    Effect.sync(() => {
      rows += 1
      for (const link of links) {
        const own = cell(row.cells, link.byIndex)
        if (normalKey(own) !== "") {
          let values = produced.get(link.by)
          if (values === undefined) produced.set(link.by, values = new KeyMap())
          if (!values.has(own)) values.set(own, row.row)
        }
        const named = cell(row.cells, link.refIndex)
        for (const value of link.list ? named.split(listSeparator) : [named]) {
          if (normalKey(value) !== "") wants.push({ row: row.row, link, value })
        }
      }
    }))

  const edges = new Map<number, Array<number>>()
  const columnOf = new Map<string, string>()
  let firstLink: SelfReferences["firstLink"]
  for (const w of wants) {
    const target = produced.get(w.link.by)?.get(w.value)
    if (target === undefined) continue
    firstLink ??= { row: w.row, names: target, column: w.link.column }
    const list = edges.get(w.row)
    if (list === undefined) edges.set(w.row, [target])
    else if (!list.includes(target)) list.push(target)
    columnOf.set(`${w.row}>${target}`, w.link.column)
  }
  const cycles = cyclesOf(edges)
  if (cycles.length > 0) {
    const first = cycles[0]!
    const columns = [...new Set(cycles.flatMap((c) => c.slice(1).map((to, i) => columnOf.get(`${c[i]}>${to}`)!)))]
    const shown = cycles.slice(0, 3).map((c) => (c.length === 2 ? `row ${c[0]} names itself` : `rows ${c.join(" → ")}`))
    return yield* new InputError({
      file: source.file,
      row: first[0]!,
      column: columns[0]!,
      detail:
        `${shown.join("; ")}${cycles.length > 3 ? ` (and ${cycles.length - 3} more cycles)` : ""} through ${
          columns.join(", ")
        }: ` +
        `rows that name each other as parent in a cycle can never be created one after the other; leave one of these references empty`
    })
  }
  return { rows, produced, firstLink } satisfies SelfReferences as SelfReferences
})
