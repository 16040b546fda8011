/**
 * Where an import's file came from, when an export wrote it (its `manifest.json` lists it): the server and account
 * the export read. Ids are the server's own numbers, so ids read from an export of another server or account are
 * never keys here: a row that would find (or refer to) a record by such an id is refused, naming the column,
 * instead of overwriting whatever record has that number in this account. Keys (`externalId`, logins,
 * descriptions) still work across accounts, as they are meant to.
 */
import * as Schema from "effect/Schema"
import type { Field, Resource } from "../Resources.js"

export const ExportOrigin = Schema.Struct({
  /** The export's `manifest.json` (absolute path). */
  manifest: Schema.String,
  baseUrl: Schema.String,
  /** `accountOf` the export's apiKey; absent in manifests written before it was recorded. */
  account: Schema.optional(Schema.String)
})
export type ExportOrigin = typeof ExportOrigin.Type

/** The target an import writes to. */
export interface Target {
  readonly baseUrl: string
  readonly account?: string | undefined
}

/**
 * Why the export's ids mean nothing against `target` (another server, or another account of it), or undefined
 * when they name the same records. A manifest that records no account is taken as the same account of its server.
 */
export const foreignOrigin = (origin: ExportOrigin | undefined, target: Target): string | undefined => {
  if (origin === undefined) return undefined
  if (origin.baseUrl !== target.baseUrl) return `exported from ${origin.baseUrl}, not ${target.baseUrl}`
  if (origin.account !== undefined && target.account !== undefined && origin.account !== target.account) {
    return `exported from another account of ${origin.baseUrl}`
  }
  return undefined
}

/** A valid row as far as ids go: its key, its own id, its payload and the references resolved by key. */
interface IdRow {
  readonly key: string | undefined
  readonly id: unknown
  readonly payload: Readonly<Record<string, unknown>>
  readonly refs: ReadonlyArray<{ readonly field: string }>
}

const given = (v: unknown) => v !== undefined && v !== null && v !== ""

/**
 * The columns through which a row of a file from a foreign export would use that export's ids (its own id as the
 * key in update, upsert and delete; a reference given by id, not by key), each with its value.
 */
export const foreignIds = (
  r: Resource,
  row: IdRow,
  usesIdAsKey: boolean
): ReadonlyArray<{ readonly field: Field | undefined; readonly name: string; readonly value: unknown }> => {
  const out: Array<{ field: Field | undefined; name: string; value: unknown }> = []
  if (usesIdAsKey && row.key === undefined && given(row.id) && r.id !== undefined) {
    out.push({ field: r.fields.find((f) => f.name === r.id!.name), name: r.id.name, value: row.id })
  }
  const byKey = new Set(row.refs.map((x) => x.field))
  for (const f of r.fields) {
    if (f.ref === undefined || byKey.has(f.name) || f.name === r.id?.name) continue
    const v = row.payload[f.name]
    if (Array.isArray(v) ? v.length > 0 : given(v)) out.push({ field: f, name: f.name, value: v })
  }
  return out
}

/** The row's `_error` when it uses foreign ids. */
export const foreignIdsMessage = (
  r: Resource,
  why: string,
  manifest: string,
  ids: ReturnType<typeof foreignIds>
): string => {
  const named = ids.map((x) => `${x.name} ${Array.isArray(x.value) ? x.value.join("|") : String(x.value)}`).join(", ")
  const keys = ids.map((x) =>
    x.name === r.id?.name
      ? (r.key !== undefined
        ? `fill ${r.key}, or empty ${x.name} to create the record`
        : `empty ${x.name} to create the record`)
      : `give the record by its key column instead`
  )
  return `${named}: ids of the export this file came from (${manifest}, ${why}), which name other records here; not sent: ${
    [...new Set(keys)].join("; ")
  }`
}
