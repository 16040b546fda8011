/**
 * Helpers of the file-layer tests: a temporary directory per test, files written byte for byte, and a source
 * opened and read whole (or its InputError).
 */
import { Chunk, Effect, Either, Stream } from "effect"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { InputError } from "../../src/Errors.js"
import { openSource, type ReadOptions, type Source, type SourceRow } from "../../src/files/Read.js"
import { temporaryDir } from "../support.js"

export const root = fileURLToPath(new URL("../..", import.meta.url))
export const bin = Path.join(root, "dist/bin.js")

/** A temporary directory removed with the test's scope. */
export const tempDir = temporaryDir("fsm-files-")

export const auto: ReadOptions = { encoding: "auto", delimiter: "auto" }

/** Writes `content` (a string is written as UTF-8, without BOM) at `dir/name`; returns the path. */
export const put = (dir: string, name: string, content: string | Uint8Array): string => {
  const path = Path.join(dir, name)
  writeFileSync(path, content)
  return path
}

/** Windows-1252 bytes of a string (every character used in the tests exists in Windows-1252 and Latin-1 alike). */
export const cp1252 = (text: string): Uint8Array => Buffer.from(text, "latin1")

export interface Read {
  readonly source: Source
  readonly rows: ReadonlyArray<SourceRow>
}

export const readAll = (file: string, options: Partial<ReadOptions> = {}): Effect.Effect<Read, InputError> =>
  Effect.gen(function* () {
    const source = yield* openSource(file, { ...auto, ...options })
    const rows = Chunk.toReadonlyArray(yield* Stream.runCollect(source.rows))
    return { source, rows }
  })

/** The InputError a read ends with; fails the test when the file reads fine. */
export const readError = (file: string, options: Partial<ReadOptions> = {}): Effect.Effect<InputError> =>
  Effect.either(readAll(file, options)).pipe(
    Effect.flatMap((result) =>
      Either.isLeft(result) ? Effect.succeed(result.left) : Effect.dieMessage(`expected ${file} to be refused, but it read ${result.right.rows.length} rows`)
    )
  )
