/**
 * `verify EXPORT_DIR`: recomputes every listed file's sha256 and data-row count and compares them with
 * `manifest.json`, and reads each file's ids and keys: two rows of one record (the same id, or the same key of a
 * resource with one) are a file that cannot be imported back as it was exported. Every problem is named (missing
 * manifest, missing file, changed bytes, a different row count, an unreadable file, duplicates with their rows);
 * the caller turns "any problem" into exit code 1.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { RunError } from "../Errors.js"
import { checkExportSignature, type Expected, type SignatureReport } from "../evidence/Seal.js"
import { openSource, type Source } from "../files/Read.js"
import { sha256File } from "../files/Write.js"
import { normalKey } from "../Identity.js"
import { isResourceName, resource as resourceOf } from "../Resources.js"
import { checkpointFile } from "./Checkpoint.js"
import type { ManifestEntry } from "./Manifest.js"
import { manifestFile, ManifestJson } from "./Manifest.js"

type FileStatus = "ok" | "missing" | "changed" | "unreadable" | "duplicates"

interface FileCheck {
  readonly name: string
  readonly file: string
  readonly status: FileStatus
  readonly expectedRows: number
  readonly expectedSha256: string
  readonly rows?: number
  readonly sha256?: string
  /** Values of the id (or key) column that more than one row holds, with their rows (the first few of each). */
  readonly duplicates?: ReadonlyArray<Duplicate>
  /** What is wrong, for a human; absent when the file matches. */
  readonly problem?: string
}

export interface Duplicate {
  readonly column: string
  readonly value: string
  /** The first rows that hold it, and how many do. */
  readonly rows: ReadonlyArray<number>
  readonly count: number
}

/** How many duplicated values a result names, and how many rows of each. */
const duplicatesKept = 10
const rowsKept = 5

/**
 * The columns that identify a record of `name` in its export (its id, its key), with the parent's column when
 * the resource lives under a parent (an item's id or key is its parent's own). Keys compare as the service does.
 */
const identityColumns = (name: string, header: ReadonlyArray<string>) => {
  if (!isResourceName(name)) return []
  const r = resourceOf(name)
  const at = (column: string | undefined) =>
    column === undefined ? -1 : header.findIndex((h) => h.trim().toLowerCase() === column.toLowerCase())
  const parent = at(r.parent?.field)
  return [
    { column: r.id?.name, normal: (v: string) => v.trim() },
    { column: r.key, normal: normalKey }
  ].flatMap(({ column, normal }) => {
    const index = at(column)
    return index < 0 || column === undefined || index === parent ? [] : [{ column, index, parent, normal }]
  })
}

/** Reads `rows` once: how many there are, and the id or key values that more than one of them holds. */
const countAndDuplicates = (name: string, source: Source) => {
  const columns = identityColumns(name, source.header).map((c) => ({
    ...c,
    seen: new Map<string, { readonly value: string; readonly rows: Array<number>; total: number }>()
  }))
  return Stream.runFold(source.rows, 0, (n, row) => {
    for (const c of columns) {
      const value = (row.cells[c.index] ?? "").trim()
      if (value === "") continue
      const key = `${c.parent < 0 ? "" : `${(row.cells[c.parent] ?? "").trim()}\u0000`}${c.normal(value)}`
      const first = c.seen.get(key)
      if (first === undefined) c.seen.set(key, { value, rows: [row.row], total: 1 })
      else if (++first.total <= rowsKept) first.rows.push(row.row)
    }
    return n + 1
  }).pipe(
    Effect.map((rows) => {
      const duplicates: Array<Duplicate> = []
      let count = 0
      for (const c of columns) {
        for (const seen of c.seen.values()) {
          if (seen.total < 2) continue
          count += 1
          if (duplicates.length < duplicatesKept) {
            duplicates.push({ column: c.column, value: seen.value, rows: seen.rows, count: seen.total })
          }
        }
      }
      return { rows, duplicates, count }
    })
  )
}

const duplicatesProblem = (
  file: string,
  found: { readonly duplicates: ReadonlyArray<Duplicate>; readonly count: number }
) =>
  `${file} holds ${found.count === 1 ? "a record" : `${found.count} records`} more than once: ${
    found.duplicates.map((d) =>
      `${d.column} ${JSON.stringify(d.value)} on rows ${d.rows.join(", ")}${
        d.count > d.rows.length ? ` and ${d.count - d.rows.length} more` : ""
      }`
    ).join("; ")
  }${found.count > found.duplicates.length ? "; …" : ""} (an id rounded past 2^53, or a hand edit: export again)`

export interface VerifyResult {
  readonly dir: string
  /** The directory has a readable manifest. */
  readonly manifest: boolean
  readonly ok: boolean
  readonly files: ReadonlyArray<FileCheck>
  /** The manifest's signature (`manifest.sig`, from `export --sign`): unsigned, valid, or refused. */
  readonly signature?: SignatureReport
  /** Every problem found, one sentence each. */
  readonly problems: ReadonlyArray<string>
}

const describe = (
  cause: unknown
): string => (Predicate.hasProperty(cause, "message") ? String(cause.message) : String(cause))

const checkFile = Effect.fn("Verify.checkFile")(function*(
  dir: string,
  entry: ManifestEntry,
  delimiter: "," | ";" | "\t"
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const base = { name: entry.name, file: entry.file, expectedRows: entry.rows, expectedSha256: entry.sha256 }
  const target = path.resolve(dir, entry.file)
  if (path.relative(path.resolve(dir), target).startsWith("..") || path.isAbsolute(entry.file)) {
    return {
      ...base,
      status: "unreadable",
      problem: `${entry.file}: the manifest names a file outside the export directory`
    } satisfies FileCheck as FileCheck
  }
  if (!(yield* fs.exists(target))) {
    return {
      ...base,
      status: "missing",
      problem: `${entry.file} is missing (the manifest lists ${entry.rows} rows of ${entry.name})`
    } satisfies FileCheck as FileCheck
  }
  const sha256 = yield* Effect.either(sha256File(target))
  if (Either.isLeft(sha256)) {
    return {
      ...base,
      status: "unreadable",
      problem: `${entry.file} cannot be read: ${describe(sha256.left)}`
    } satisfies FileCheck as FileCheck
  }
  // The export writes UTF-8 CSV with the delimiter its manifest names: nothing to guess.
  const read = yield* openSource(target, { encoding: "utf-8", delimiter, resource: entry.name }).pipe(
    Effect.flatMap((source) => countAndDuplicates(entry.name, source)),
    Effect.either
  )
  const rows = Either.map(read, (r) => r.rows)
  const duplicates = Either.isRight(read) && read.right.count > 0 ? read.right : undefined
  const differs = [
    sha256.right !== entry.sha256 ? `its sha256 is ${sha256.right}, the manifest says ${entry.sha256}` : undefined,
    Either.isRight(rows) && rows.right !== entry.rows
      ? `it has ${rows.right} data rows, the manifest says ${entry.rows}`
      : undefined,
    Either.isLeft(rows) ? `its rows cannot be read (${describe(rows.left)})` : undefined
  ].filter((p) => p !== undefined)
  const problems = [
    ...(differs.length > 0 ? [`${entry.file} differs from the manifest: ${differs.join("; ")}`] : []),
    ...(duplicates !== undefined ? [duplicatesProblem(entry.file, duplicates)] : [])
  ]
  return {
    ...base,
    sha256: sha256.right,
    ...(Either.isRight(rows) ? { rows: rows.right } : {}),
    status: differs.length === 0
      ? duplicates === undefined ? "ok" : "duplicates"
      : Either.isLeft(rows) && sha256.right === entry.sha256
      ? "unreadable"
      : "changed",
    ...(duplicates !== undefined ? { duplicates: duplicates.duplicates } : {}),
    ...(problems.length > 0 ? { problem: problems.join("; ") } : {})
  } satisfies FileCheck as FileCheck
})

export const runVerify = Effect.fn("Verify.run")(function*(dir: string, expected?: Expected) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const isDirectory = yield* fs.stat(dir).pipe(
    Effect.map((info) => info.type === "Directory"),
    Effect.orElseSucceed(() => false)
  )
  if (!isDirectory) {
    return yield* new RunError({ message: `${dir} is not a directory (give the --out directory of an export)` })
  }

  const manifestPath = path.join(dir, manifestFile)
  const fail = (problem: string): VerifyResult => ({ dir, manifest: false, ok: false, files: [], problems: [problem] })
  if (!(yield* fs.exists(manifestPath))) {
    const interrupted = yield* fs.exists(path.join(dir, checkpointFile))
    return fail(
      interrupted
        ? `${manifestPath} is missing: the export in ${dir} was interrupted and is incomplete (run the same "fsm-bulk export … --out ${dir}" again to finish it)`
        : `${manifestPath} is missing: ${dir} is not a finished export (the manifest is written last, so an export without it is incomplete)`
    )
  }
  const text = yield* fs.readFileString(manifestPath).pipe(Effect.either)
  if (Either.isLeft(text)) return fail(`${manifestPath} cannot be read: ${describe(text.left)}`)
  const manifest = Schema.decodeUnknownEither(ManifestJson)(text.right)
  if (Either.isLeft(manifest)) return fail(`${manifestPath} is not a valid export manifest: ${manifest.left.message}`)

  const delimiter = manifest.right.csv?.delimiter ?? ","
  const files = yield* Effect.forEach(
    manifest.right.resources,
    (entry) => checkFile(dir, entry, delimiter)
  )
  const signed = yield* checkExportSignature(dir, expected)
  const problems = [...signed.problems, ...files.flatMap((f) => (f.problem !== undefined ? [f.problem] : []))]
  return {
    dir,
    manifest: true,
    ok: problems.length === 0,
    files,
    signature: signed.report,
    problems
  } satisfies VerifyResult as VerifyResult
})
