/**
 * What rides on the CSV reader's one read of a file (the parser thread, 64 KiB reads): the encoding decision and
 * its checks, and the file's sha256. Each is compared with a reading of the whole file by itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { isUtf8 } from "node:buffer"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { openSource } from "../../src/files/Read.js"
import { auto, cp1252, put, readAll, readError, tempDir } from "./support.js"

const read = 64 * 1024

/** ASCII lines (`CLI-…,Cliente …`, 32 bytes each with the newline, then one of x) filling `bytes` (≥ 64) exactly. */
const asciiLines = (bytes: number) => {
  let text = ""
  for (let i = 0; text.length + 64 <= bytes; i++) {
    text += `CLI-${String(i).padStart(8, "0")},Cliente ${String(i).padStart(10, "0")}\n`
  }
  return text + "x".repeat(bytes - text.length - 1) + "\n"
}

describe("what rides on the CSV reader's pass", () => {
  it.scoped("the pass that reads the file to its end hashes it: its sha256 is the file's", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "hash.csv", cp1252(`externalId,name\n${asciiLines(5 * read)}CLI-X,Café\n`))
      const source = yield* openSource(file, auto)
      assert.isUndefined(source.sha256?.(), "no pass has read the whole file yet")
      const rows = Chunk.toReadonlyArray(yield* Stream.runCollect(source.rows))
      assert.deepStrictEqual(rows.at(-1)!.cells, ["CLI-X", "Café"])
      assert.strictEqual(source.sha256?.(), createHash("sha256").update(readFileSync(file)).digest("hex"))
      // A pass stopped early (the header's, a failed run) says nothing of the whole file.
      const other = yield* openSource(file, auto)
      yield* Stream.runDrain(Stream.take(other.rows, 10))
      assert.isUndefined(other.sha256?.())
    }))

  it.scoped("decides the encoding as a reading of the whole file does, wherever the first non-ASCII character falls", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const characters: ReadonlyArray<{ readonly bytes: ReadonlyArray<number>; readonly text: string }> = [
        { bytes: [0xc3, 0xa7], text: "ç" },
        { bytes: [0xe2, 0x82, 0xac], text: "€" },
        { bytes: [0xf0, 0x9f, 0x98, 0x80], text: "😀" },
        { bytes: [0xe7], text: "ç" }, // Windows-1252
        { bytes: [0x80], text: "€" }, // Windows-1252
        { bytes: [0xc3, 0x41], text: "ÃA" } // a UTF-8 lead byte not followed by a continuation: Windows-1252
      ]
      const header = "externalId,name\n"
      for (const [n, c] of characters.entries()) {
        // The character starts 3 or 1 bytes before the end of a read (cut by it when longer), or right after it.
        for (const before of [-3, -1, 0]) {
          const lead = Buffer.from(`${header}${asciiLines(2 * read + before - header.length - 2)}X,`)
          const bytes = Buffer.concat([lead, Buffer.from(c.bytes), Buffer.from(`\n${asciiLines(640)}`)])
          const file = put(dir, `enc-${n}-${before + 3}.csv`, bytes)
          const { rows, source } = yield* readAll(file)
          const expected = isUtf8(bytes) ? "utf-8" : "windows-1252"
          assert.strictEqual(source.encoding, expected, `${c.text} at ${lead.length}`)
          const row = rows.find((r) => r.cells[0] === "X")
          assert.deepStrictEqual(row?.cells, ["X", c.text], `${c.text} at ${lead.length}`)
        }
      }
    }))

  it.scoped("refuses a file that goes on in Windows-1252 after UTF-8 text, naming the byte and the line", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const head = Buffer.from(`externalId,name\nCLI-A,São Paulo\n${asciiLines(3 * read)}`)
      const file = put(dir, "mixed.csv", Buffer.concat([head, cp1252("CLI-B,Açougue\n")]))
      const error = yield* readError(file)
      const line = head.toString("latin1").split("\n").length
      // 0xE7 ("ç") leads a 3-byte character in UTF-8: the "o" after it is the byte that breaks it.
      assert.include(error.message, `not valid UTF-8 (byte ${head.length + 8}, line ${line})`)
      assert.include(error.message, "mixes two encodings")
      assert.include(error.message, "mixed.csv")
      assert.strictEqual(error.row, line)
      // Named, it reads.
      const forced = yield* readAll(file, { encoding: "windows-1252" })
      assert.deepStrictEqual(forced.rows.at(-1)!.cells, ["CLI-B", "Açougue"])
    }))

  it.scoped("a NUL byte or bytes that are not UTF-8 past the first bytes stop the pass where it meets them", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const head = `externalId,name\n${asciiLines(3 * read)}`
      const nul = yield* readError(put(dir, "nul.csv", Buffer.concat([Buffer.from(head), Buffer.from([0x41, 0])])))
      assert.include(nul.message, `binary content (a NUL byte at byte ${head.length + 1})`)
      const latin = put(dir, "latin.csv", Buffer.concat([Buffer.from(head), cp1252("CLI-B,Açougue\n")]))
      const refused = yield* readError(latin, { encoding: "utf-8" })
      assert.include(refused.message, `not valid UTF-8 (byte ${head.length + 8}`)
      assert.include(refused.message, "--encoding windows-1252")
      assert.strictEqual((yield* readAll(latin)).source.encoding, "windows-1252")
    }))
})
