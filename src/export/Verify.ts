/**
 * `verify EXPORT_DIR`: recomputes every listed file's sha256 and data-row count and compares them with
 * `manifest.json`. Every problem is named (missing manifest, missing file, changed bytes, a different row
 * count, an unreadable file); the caller turns "any problem" into exit code 1.
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
import { openSource } from "../files/Read.js"
import { sha256File } from "../files/Write.js"
import { checkpointFile } from "./Checkpoint.js"
import type { ManifestEntry } from "./Manifest.js"
import { manifestFile, ManifestJson } from "./Manifest.js"

type FileStatus = "ok" | "missing" | "changed" | "unreadable"

interface FileCheck {
  readonly name: string
  readonly file: string
  readonly status: FileStatus
  readonly expectedRows: number
  readonly expectedSha256: string
  readonly rows?: number
  readonly sha256?: string
  /** What is wrong, for a human; absent when the file matches. */
  readonly problem?: string
}

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
  const rows = yield* openSource(target, { encoding: "utf-8", delimiter, resource: entry.name }).pipe(
    Effect.flatMap((source) => Stream.runCount(source.rows)),
    Effect.either
  )
  const problems = [
    sha256.right !== entry.sha256 ? `its sha256 is ${sha256.right}, the manifest says ${entry.sha256}` : undefined,
    Either.isRight(rows) && rows.right !== entry.rows
      ? `it has ${rows.right} data rows, the manifest says ${entry.rows}`
      : undefined,
    Either.isLeft(rows) ? `its rows cannot be read (${describe(rows.left)})` : undefined
  ].filter((p) => p !== undefined)
  return {
    ...base,
    sha256: sha256.right,
    ...(Either.isRight(rows) ? { rows: rows.right } : {}),
    status: problems.length === 0
      ? "ok"
      : Either.isLeft(rows) && sha256.right === entry.sha256
      ? "unreadable"
      : "changed",
    ...(problems.length > 0 ? { problem: `${entry.file} differs from the manifest: ${problems.join("; ")}` } : {})
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
