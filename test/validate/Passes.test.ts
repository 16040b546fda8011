/**
 * How often the source is read, counted by the kernel: the bytes this process's read calls returned
 * (`rchar` of /proc/self/io, every thread, the CSV parser's included) while a command runs, against the file's
 * size. Linux only; elsewhere these tests are skipped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { createHash } from "node:crypto"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { openInput } from "../../src/import/Input.js"
import { temporaryDir } from "../support.js"
import { bytesRead, readsCounted as counted, validateSource as validate } from "./support.js"

const tempDir = temporaryDir("fsm-passes-")

/** A customers CSV of about 3 MB: a date-free file whose numbers (latitude) settle the decimal mark at once. */
const customersFile = (dir: string) => {
  const lines = ["externalId,name,cpfCnpj,latitude,active"]
  for (let i = 0; i < 40_000; i++) {
    lines.push(`CLI-${String(i).padStart(7, "0")},Padaria ${i} da Esquina Ltda,,-23.${5000 + (i % 999)},sim`)
  }
  const file = Path.join(dir, "customers.csv")
  writeFileSync(file, lines.join("\n") + "\n")
  return file
}

const read = { encoding: "auto", delimiter: "auto" } as const

describe("passes over the source", () => {
  it.scoped.skipIf(!counted)(
    "validate's reading reads its CSV once (and 64 KiB more to open it)",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        // A first run loads the modules the steps use: their reading is not counted.
        const small = Path.join(dir, "small.csv")
        writeFileSync(small, "externalId,name,latitude\nCLI-1,Padaria,-23.5\n")
        yield* validate(small)
        const file = customersFile(dir)
        const size = statSync(file).size
        const before = bytesRead()
        const { valid } = yield* validate(file)
        const ratio = (bytesRead() - before) / size
        assert.strictEqual(valid, 40_000)
        assert.isAtMost(ratio, 1.1, `read ${ratio.toFixed(2)} times the file's size`)
      })
  )

  it.scoped.skipIf(!counted)(
    "an import's sha256 of a CSV is the one its pass computed: asking reads nothing",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = customersFile(dir)
        const input = yield* openInput(file, read, "customers")
        yield* Stream.runDrain(input.rows)
        const before = bytesRead()
        const sha256 = yield* input.sha256
        assert.isBelow(bytesRead() - before, 64 * 1024)
        assert.strictEqual(sha256, createHash("sha256").update(readFileSync(file)).digest("hex"))
      })
  )
})
