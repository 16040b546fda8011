/**
 * Export fingerprints: per exported record, a short hash of each field's value as exported (in `Compare`'s normal
 * form) and the server's `dateLastUpdate` when the record has one. They are written beside the export's file, in
 * `FILE.fingerprints.ndjson` (one JSON line per record, named in `manifest.json` as the entry's `fingerprints`),
 * and read back when that file is imported with update or upsert: a record whose server values no longer match
 * its fingerprint was edited on the server since the export (see `import/Stale.ts`).
 *
 * The sidecar is appended page by page, like the export's CSV; a continued export writes the pages it fetches
 * again a second time, and the reader keeps the last line per record (a crash's cut last line is skipped).
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as NodePath from "node:path"
import { writeForm } from "../client/Body.js"
import { UsageError } from "../Errors.js"
import { keyProperty, normalKey, recordKey, recordProperty } from "../Identity.js"
import { type Field, idReadName, readName, type Resource } from "../Resources.js"
import { valueText } from "../validate/Compare.js"
import { Manifest, manifestFile } from "./Manifest.js"

export const fingerprintsName = (file: string): string => `${file}.fingerprints.ndjson`

export const Fingerprint = Schema.Struct({
  /** The record: its key as the service compares keys (`normalKey`), or `#` and its id when it has no key. */
  k: Schema.String,
  /** The server's `dateLastUpdate` at the export, when the record has one. */
  d: Schema.optional(Schema.String),
  /** Per field (write names), the hash of its exported value's normal text. */
  f: Schema.Record({ key: Schema.String, value: Schema.String })
})
export type Fingerprint = typeof Fingerprint.Type

const decodeLine = Schema.decodeUnknownOption(Schema.parseJson(Fingerprint))

/** The short hash of a normal text (an empty value hashes like any other). */
export const hashText = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 16)

/**
 * The fields a fingerprint covers: every field the server lists back, nested objects and lists of them included
 * (contacts, equipment specifications, in `valueText`'s canonical form); not passwords and files, which it never
 * lists.
 */
const covered = (f: Field): boolean => f.writeOnly !== true && f.type._tag !== "file" && f.resolves === undefined

/** A field's value on a listed record, in the form writes use. */
export const recordValue = (f: Field, record: Readonly<Record<string, unknown>>): unknown =>
  writeForm(f, recordProperty(record, readName(f)) ?? recordProperty(record, f.name))

/** The hash of each covered field of a listed record. */
export const fieldHashes = (listed: Resource, record: Readonly<Record<string, unknown>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const f of listed.fields) {
    if (!covered(f) || (listed.id !== undefined && f.name === listed.id.name)) continue
    const text = valueText(f, recordValue(f, record))
    // The key is compared as the service compares keys (`CLI-9` and `cli-9` name one record).
    out[f.name] = hashText(f.name === listed.key ? normalKey(text) : text)
  }
  return out
}

/** How a row or a record names its fingerprint: by key when the resource has one, else by id. */
export const fingerprintKey = (key: string | undefined, id: unknown): string | undefined =>
  key !== undefined && normalKey(key) !== ""
    ? normalKey(key)
    : id !== undefined && id !== null && String(id) !== ""
    ? `#${String(id)}`
    : undefined

export const dateLastUpdate = (record: Readonly<Record<string, unknown>>): string | undefined => {
  const d = recordProperty(record, "dateLastUpdate")
  return typeof d === "string" && d !== "" ? d : undefined
}

/** The fingerprint of a listed record, or undefined when it has neither key nor id. */
export const fingerprintOf = (
  listed: Resource,
  record: Readonly<Record<string, unknown>>
): Fingerprint | undefined => {
  const key = listed.key !== undefined ? recordKey(record, keyProperty(listed, listed.key)) : undefined
  const idName = idReadName(listed)
  const k = fingerprintKey(key, idName !== undefined ? recordProperty(record, idName) : undefined)
  if (k === undefined) return undefined
  const d = dateLastUpdate(record)
  return { k, ...(d !== undefined ? { d } : {}), f: fieldHashes(listed, record) }
}

interface FingerprintWriter {
  readonly write: (records: ReadonlyArray<Record<string, unknown>>) => Effect.Effect<void, PlatformError>
  readonly finish: Effect.Effect<void, PlatformError>
}

/** Opens `FILE.fingerprints.ndjson` in `dir`: anew, or appended to when the export continues its file. */
export const openFingerprints = Effect.fn("Fingerprint.open")(
  function*(dir: string, file: string, listed: Resource, continued: boolean) {
    const fs = yield* FileSystem.FileSystem
    const path = (yield* Path.Path).join(dir, fingerprintsName(file))
    const handle = yield* fs.open(path, { flag: continued ? "a" : "w" })
    return {
      write: (records) => {
        const lines = records.flatMap((r) => {
          const fp = fingerprintOf(listed, r)
          return fp === undefined ? [] : [`${JSON.stringify(fp)}\n`]
        })
        return lines.length === 0 ? Effect.void : handle.writeAll(Buffer.from(lines.join(""), "utf8"))
      },
      finish: handle.sync
    } satisfies FingerprintWriter as FingerprintWriter
  }
)

/** Where an exported file came from: the export's manifest, its fingerprints, the service and account it read. */
export interface ExportBase {
  /** Absolute path of the export's `manifest.json`. */
  readonly manifest: string
  /** Absolute path of the file's fingerprints file, when the manifest names one. */
  readonly fingerprints: string | undefined
  /** The service the export read (fingerprints and ids only mean something against the same account). */
  readonly baseUrl: string
  /** The account the export read (`accountOf`), when the manifest records it. */
  readonly account: string | undefined
}

const readJson = async (path: string): Promise<unknown> => {
  try {
    return JSON.parse(await readFile(path, "utf8"))
  } catch {
    return undefined
  }
}

/**
 * Where `file` came from, when an export's `manifest.json` beside it lists it; undefined for any other file.
 */
export const findExportBase = (file: string): Effect.Effect<ExportBase | undefined> =>
  Effect.promise(async () => {
    const absolute = NodePath.resolve(file)
    const dir = NodePath.dirname(absolute)
    const manifest = NodePath.join(dir, manifestFile)
    const decoded = Schema.decodeUnknownOption(Manifest)(await readJson(manifest))
    if (Option.isNone(decoded)) return undefined
    const entry = decoded.value.resources.find((r) => NodePath.resolve(dir, r.file) === absolute)
    if (entry === undefined) return undefined
    return {
      manifest,
      fingerprints: entry.fingerprints !== undefined ? NodePath.join(dir, entry.fingerprints) : undefined,
      baseUrl: decoded.value.baseUrl,
      account: decoded.value.account
    }
  })

/**
 * The fingerprints in `path`, by `k` (the last line per record wins; a line a crash cut is skipped). A file that
 * cannot be read is refused, naming it: without it no row could be checked, and a check skipped in silence would
 * let the file overwrite edits made on the server since the export.
 */
export const readFingerprints = (path: string): Effect.Effect<ReadonlyMap<string, Fingerprint>, UsageError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (e) =>
      new UsageError({
        message:
          `${path}: the export's fingerprints cannot be read (${
            (e as NodeJS.ErrnoException).code ?? String(e)
          }), so the rows cannot be checked for edits made on the server since the export; nothing was sent. ` +
          "Export the records again, or pass --overwrite to send the file's values whatever the server holds now"
      })
  }).pipe(Effect.map((text) => {
    const records = new Map<string, Fingerprint>()
    for (const line of text.split("\n")) {
      const fp = decodeLine(line)
      if (Option.isSome(fp)) records.set(fp.value.k, fp.value)
    }
    return records
  }))
