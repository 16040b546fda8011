/**
 * Reads an export back as records (`fsm-bulk sandbox --seed EXPORT_DIR`): the export is verified against its
 * manifest first (a changed, missing or unreadable file is refused, naming it), then every listed file's rows are
 * turned back into records in the API's write names — the reverse of `Cells.ts`: ids and reference ids from their
 * columns (the key columns beside them are the same references by key, and are not needed), labels of
 * enumerations as their codes, lists split on `|`, nested values parsed from JSON, the decimal mark of the
 * manifest's CSV dialect, the formula guard undone. The server's `dateLastUpdate` of each record comes from the
 * file's fingerprints, so stale-edit checks against the copy see what they would see against the account.
 *
 * A cell that is not a value of its column's type (a number column holding text) fails, naming the file, row and
 * column: the files are the tool's own and verified, so it means the export is not one this version can read.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as NodePath from "node:path"
import { UsageError } from "../Errors.js"
import type { Expected, SignatureReport } from "../evidence/Seal.js"
import { restore } from "../files/Guard.js"
import { readJsonFile } from "../files/JsonFile.js"
import { openSource } from "../files/Read.js"
import { recordKey } from "../Identity.js"
import type { Field, ResourceName } from "../Resources.js"
import { exportColumns, isResourceName, listSeparator, resource } from "../Resources.js"
import type { AccountCopy } from "../sandbox/Copy.js"
import { fingerprintKey, readFingerprints } from "./Fingerprint.js"
import { Manifest, manifestFile } from "./Manifest.js"
import { runVerify } from "./Verify.js"

/** The copy, and what its export's signature is (`manifest.sig`: unsigned, or by which key). */
type SeededCopy = AccountCopy & { readonly signature?: SignatureReport }

type Rec = Record<string, unknown>

/** Why a cell cannot be read back: undefined when it can. */
type Decoded = { readonly value: unknown } | { readonly problem: string }

const bigOrNumber = (text: string): unknown => (Number.isSafeInteger(Number(text)) ? Number(text) : text)

/** One item of a cell, in the form the sandbox keeps (what a write of that value would store). */
const scalar = (field: Field, text: string, decimal: "." | ","): Decoded => {
  const type = field.type
  switch (type._tag) {
    case "enum": {
      const byLabel = [...type.values, ...(type.formerly ?? [])].find((v) =>
        v.label.toLowerCase() === text.toLowerCase()
      )
      if (byLabel !== undefined) return { value: byLabel.value }
      return /^-?\d+$/.test(text) ? { value: Number(text) } : { problem: `${text} is not one of its values` }
    }
    case "integer":
      return /^-?\d+$/.test(text) ? { value: bigOrNumber(text) } : { problem: `${text} is not a whole number` }
    case "number": {
      const plain = decimal === "," ? text.replace(",", ".") : text
      return /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(plain)
        ? { value: Number(plain) }
        : { problem: `${text} is not a number` }
    }
    case "boolean":
      return /^(true|false)$/i.test(text)
        ? { value: text.toLowerCase() === "true" }
        : { problem: `${text} is not true or false` }
    case "cpfCnpj":
      // As a write stores it: the digits, when the text is a punctuated number.
      return { value: /^[\d.\-/\s]*$/.test(text) ? text.replace(/\D/g, "") : text }
    case "guid":
      return { value: text.toLowerCase() }
    case "object":
      try {
        return { value: JSON.parse(text) }
      } catch {
        return { problem: "it is not valid JSON" }
      }
    default:
      return { value: text }
  }
}

/** A cell of an export file as the value stored; undefined for an empty cell (the field is unset). */
const cellValue = (field: Field, text: string, decimal: "." | ","): Decoded | undefined => {
  if (text === "") return undefined
  if (field.type._tag === "object" || field.list !== true) {
    // Money the service keeps as text (`expense`) is read back from the number the export wrote.
    if (field.type._tag === "string" && field.readFormat !== undefined && decimal === ",") {
      return { value: text.replace(",", ".") }
    }
    return scalar(field, text, decimal)
  }
  const values: Array<unknown> = []
  for (const item of text.split(listSeparator).map((s) => s.trim()).filter((s) => s !== "")) {
    const decoded = scalar(field, item, decimal)
    if ("problem" in decoded) return decoded
    values.push(decoded.value)
  }
  return { value: values }
}

/** The records of one export file. */
const readRecords = Effect.fn("Copy.readRecords")(function*(
  dir: string,
  entry: Manifest["resources"][number],
  name: ResourceName,
  manifest: Manifest
) {
  const r = resource(name)
  const file = NodePath.join(dir, entry.file)
  const decimal = manifest.csv?.decimal ?? "."
  const source = yield* openSource(file, {
    encoding: "utf-8",
    delimiter: manifest.csv?.delimiter ?? ",",
    resource: name
  })
  const byName = new Map(exportColumns(r).filter((c) => c.role === "value").map((c) => [c.name, c.field]))
  const columns = source.header.flatMap((header, index) => {
    const field = byName.get(header)
    return field === undefined ? [] : [{ header, index, field }]
  })
  const fingerprints = entry.fingerprints === undefined
    ? undefined
    : yield* readFingerprints(NodePath.join(dir, entry.fingerprints))
  const idName = r.id?.name
  const rows = yield* Stream.runCollect(source.rows)
  const records: Array<Rec> = []
  for (const row of rows) {
    const rec: Rec = {}
    for (const { field, header, index } of columns) {
      const text = restore(row.cells[index] ?? "").trim()
      const decoded = cellValue(field, text, row.numbers?.has(index) === true ? "." : decimal)
      if (decoded === undefined) continue
      if ("problem" in decoded) {
        return yield* new UsageError({
          message: `${file}, row ${row.row}, column ${header}: ${decoded.problem}; the export cannot be read back`
        })
      }
      rec[field.name] = decoded.value
    }
    if (fingerprints !== undefined) {
      const key = r.key !== undefined ? recordKey(rec, r.key) : undefined
      const k = fingerprintKey(key, idName === undefined ? undefined : rec[idName])
      const d = k === undefined ? undefined : fingerprints.get(k)?.d
      if (d !== undefined && rec["dateLastUpdate"] === undefined) rec["dateLastUpdate"] = d
      // The export has no creation date for these records: the last update is the nearest it knows.
      if (d !== undefined && rec["creationDate"] === undefined) rec["creationDate"] = d
    }
    records.push(rec)
  }
  return records
})

/**
 * The export in `dir`, verified and read back as records per resource. Refused (UsageError, nothing started)
 * when `dir` is not a finished export, a file differs from its manifest, or its `manifest.sig` does not hold (with
 * `expected`, `--public-key`: a signature by that key is required).
 */
export const readExportCopy = Effect.fn("Copy.readExport")(function*(dir: string, expected?: Expected) {
  const verified = yield* runVerify(dir, expected).pipe(
    Effect.mapError((e) => new UsageError({ message: e.message }))
  )
  if (!verified.manifest) return yield* new UsageError({ message: `--seed ${dir}: ${verified.problems.join("; ")}` })
  if (!verified.ok) {
    return yield* new UsageError({
      message: `--seed ${dir}: the export does not match its manifest, so it was not used: ${
        verified.problems.join("; ")
      } (export the account again, or run "fsm-bulk verify ${dir}")`
    })
  }
  const manifest = yield* readJsonFile(NodePath.join(dir, manifestFile), Manifest).pipe(
    Effect.mapError((e) => new UsageError({ message: e.message }))
  )
  const resources: Array<AccountCopy["resources"][number]> = []
  for (const entry of manifest.resources) {
    if (!isResourceName(entry.name)) continue
    const records = yield* readRecords(dir, entry, entry.name, manifest).pipe(
      Effect.catchTag("InputError", (e) => new UsageError({ message: e.message }))
    )
    resources.push({ name: entry.name, records })
  }
  return {
    source: dir,
    resources,
    ...(verified.signature !== undefined ? { signature: verified.signature } : {})
  } satisfies SeededCopy as SeededCopy
})
