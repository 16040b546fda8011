/**
 * The encoding pass over a whole file: UTF-8 validity checked natively chunk by chunk (256 KiB reads), so a
 * character cut by a chunk's end, or a bad byte just past it, must be judged as a byte-by-byte reading would.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { inspectText, NotText } from "../../src/files/Encoding.js"
import { tempDir } from "./support.js"

const chunk = 256 * 1024

/** `before` ASCII bytes (lines of 63 characters and a newline), then `tail`. */
const fileOf = (before: number, tail: ReadonlyArray<number>) => {
  const ascii = Buffer.alloc(before, 0x61)
  for (let i = 63; i < before; i += 64) ascii[i] = 0x0a
  return Buffer.concat([ascii, Buffer.from(tail), Buffer.from("fim\n")])
}

const refusal = (path: string) =>
  Effect.promise(() =>
    inspectText(path, "utf-8").then(
      (facts) => facts,
      (e: unknown) => e
    )
  )

describe("encoding pass", () => {
  it.scoped("reads a multi-byte character cut by every possible chunk boundary as valid UTF-8", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const characters = [[0xc3, 0xa3], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80]] // ã € 😀
      for (const bytes of characters) {
        for (let shift = 0; shift <= bytes.length; shift++) {
          const path = Path.join(dir, `ok-${bytes.length}-${shift}.csv`)
          writeFileSync(path, fileOf(chunk - shift, bytes))
          const facts = yield* Effect.promise(() => inspectText(path, "auto"))
          assert.strictEqual(
            facts.encoding,
            "utf-8",
            `${bytes.length}-byte character, ${shift} bytes before the boundary`
          )
        }
      }
    }))

  it.scoped("finds the first bad byte wherever it falls around a boundary, with its offset and line", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // A lone continuation byte, a character whose continuation is replaced by a new lead byte, Latin-1 "ç".
      const cases: ReadonlyArray<{ readonly tail: ReadonlyArray<number>; readonly bad: number }> = [
        { tail: [0x80], bad: 0 },
        { tail: [0xe2, 0x82, 0xc3, 0xa3], bad: 2 },
        { tail: [0x61, 0xe7, 0x61], bad: 2 } // 0xE7 leads a 3-byte character: the "a" after it is what fails
      ]
      for (const { bad, tail } of cases) {
        for (let shift = 0; shift <= tail.length + 1; shift++) {
          const before = chunk - shift
          const path = Path.join(dir, `bad-${bad}-${shift}.csv`)
          writeFileSync(path, fileOf(before, tail))
          assert.strictEqual((yield* Effect.promise(() => inspectText(path, "auto"))).encoding, "windows-1252")
          const error = yield* refusal(path)
          assert.instanceOf(error, NotText)
          const line = Math.floor(before / 64) + 1
          assert.include(
            (error as NotText).message,
            `not valid UTF-8 (byte ${before + bad}, line ${line})`,
            `case ${tail} shifted ${shift}`
          )
        }
      }
    }))

  it.scoped("a character cut short by the end of the file is not valid UTF-8", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "cut.csv")
      writeFileSync(path, Buffer.concat([Buffer.from("name\nJos"), Buffer.from([0xc3])]))
      const error = yield* refusal(path)
      assert.instanceOf(error, NotText)
      assert.include((error as NotText).message, "not valid UTF-8 (byte 8, line 2)")
    }))
})
