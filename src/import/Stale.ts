/**
 * Stale-edit protection: a row of a file that came from an export, written with update or upsert, is checked
 * against the record's fingerprint from that export (`export/Fingerprint.ts`) and the record as read now. Three
 * versions of each field: the export's (the base, as hashes), the server's now, the file's.
 *
 * - The server's record still matches the base (every fingerprinted field equal): the row is written as usual.
 *   `dateLastUpdate` never settles it: it counts whole seconds, so an edit made in the second of the export keeps
 *   the same date; a later date with equal fields is an edit of fields the export did not write.
 * - The server changed since the export: the row is a `conflict`, not sent, naming the fields changed on the
 *   server and in the file; with `merge` the file's changed fields are sent alone when the server changed other
 *   fields (a field-level three-way merge) and a field changed on both sides is still a conflict; `overwrite`
 *   writes the row as usual whatever the server holds.
 */
import { fieldHashes, type Fingerprint, hashText } from "../export/Fingerprint.js"
import type { Resource } from "../Resources.js"
import { valueText } from "../validate/Compare.js"
import type { OnConflict } from "./Journal.js"
import { listedAs } from "./Lookup.js"

export type { OnConflict } from "./Journal.js"

type Staleness =
  /** No fingerprint, the server's record is as exported, or `overwrite`. */
  | { readonly _tag: "Clear" }
  | { readonly _tag: "Conflict"; readonly error: string }
  /** `merge`: the file's changes to `fields` are written; the server's values of `kept` (its changes) stay. */
  | { readonly _tag: "Merge"; readonly fields: ReadonlyArray<string>; readonly kept: ReadonlyArray<string> }

const quoted = (names: ReadonlyArray<string>) => `"${names.join(", ")}"`

/** The fields of the file's row whose values differ from the export's (fingerprinted fields only). */
const changedInFile = (
  resource: Resource,
  payload: Readonly<Record<string, unknown>>,
  base: Fingerprint
): ReadonlyArray<string> => {
  const listed = listedAs(resource) ?? resource
  return Object.entries(payload).flatMap(([name, v]) => {
    const was = base.f[name]
    if (v === undefined || was === undefined || name === resource.key) return []
    const field = listed.fields.find((f) => f.name === name) ?? resource.fields.find((f) => f.name === name)
    return hashText(valueText(field, v)) === was ? [] : [name]
  })
}

/** The fingerprinted fields whose server values differ from the export's. */
const changedOnServer = (
  resource: Resource,
  record: Readonly<Record<string, unknown>>,
  base: Fingerprint
): ReadonlyArray<string> => {
  const listed = listedAs(resource) ?? resource
  const hashes = fieldHashes(listed, record)
  return Object.keys(base.f).filter((name) => hashes[name] !== undefined && hashes[name] !== base.f[name])
}

export const staleness = (
  resource: Resource,
  payload: Readonly<Record<string, unknown>>,
  record: Readonly<Record<string, unknown>>,
  base: Fingerprint | undefined,
  onConflict: OnConflict
): Staleness => {
  if (base === undefined || onConflict === "overwrite") return { _tag: "Clear" }
  const server = changedOnServer(resource, record, base)
  if (server.length === 0) return { _tag: "Clear" }
  const file = changedInFile(resource, payload, base)
  if (onConflict === "merge") {
    const both = file.filter((f) => server.includes(f))
    if (both.length === 0) return { _tag: "Merge", fields: file, kept: server }
    return {
      _tag: "Conflict",
      error: `changed on the server and in the file since the export: ${
        quoted(both)
      }; nothing was sent (--overwrite sends the file's values)`
    }
  }
  return {
    _tag: "Conflict",
    error: `changed on the server since the export: ${quoted(server)}; changed in the file: ${
      file.length > 0 ? quoted(file) : "nothing"
    }; nothing was sent (--merge applies the file's changes to other fields, --overwrite sends the file's values)`
  }
}
