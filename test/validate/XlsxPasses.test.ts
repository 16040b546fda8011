/**
 * How often an .xlsx source is read, counted by the kernel as test/validate/Passes.test.ts counts a CSV's reads:
 * the bytes this process's read calls returned (`rchar` of /proc/self/io, every thread) while the steps of a
 * command run, against the workbook's size. Linux only; elsewhere these tests are skipped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import ExcelJS from "exceljs"
import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"
import * as Path from "node:path"
import { oncePerFile, temporaryDir } from "../support.js"
import { bytesRead, readsCounted, validateSource } from "./support.js"

const tempDir = temporaryDir("fsm-xlsx-passes-")

/**
 * A customers workbook of about half a megabyte laid out as Excel lays it out: the sheet first, the shared strings
 * and styles after it (exceljs must read them before the sheet).
 */
const customersWorkbook = (dir: string, name: string, rows: number) =>
  Effect.promise(async () => {
    const workbook = new ExcelJS.Workbook()
    const sheet = workbook.addWorksheet("customers")
    sheet.addRow(["externalId", "name", "latitude", "active"])
    for (let i = 0; i < rows; i++) {
      // The latitude as Brazilian text ("-23,5123"): it settles the decimal mark at once. (Number cells alone
      // never settle it, and past settleFormats' look-ahead the rows are read again.)
      sheet.addRow([
        `CLI-${String(i).padStart(7, "0")}`,
        `Padaria ${i} da Esquina Ltda`,
        `-23,${5000 + (i % 999)}`,
        "sim"
      ])
    }
    const file = Path.join(dir, name)
    await workbook.xlsx.writeFile(file)
    return file
  })

const sha256Of = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

/**
 * The workbooks, written once for the file (the tests only read them; exceljs took about 3 s to write the large one):
 * a small one and one of 20,000 rows.
 */
const workbooks = oncePerFile(Effect.gen(function*() {
  const dir = yield* tempDir
  return {
    small: yield* customersWorkbook(dir, "small.xlsx", 2),
    file: yield* customersWorkbook(dir, "customers.xlsx", 20_000)
  }
}))

/**
 * The 20,000-row workbook and `steps` run on it, with the times the steps read its size. A first run of validate's
 * steps on the small workbook loads the modules they use (exceljs among them): their reading is not counted.
 */
const measured = <A>(steps: (file: string) => Effect.Effect<A, unknown>) =>
  Effect.gen(function*() {
    const { file, small } = yield* workbooks
    yield* validateSource(small)
    const before = bytesRead()
    const result = yield* steps(file)
    return { file, result, ratio: (bytesRead() - before) / statSync(file).size }
  })

describe("passes over an .xlsx source", () => {
  it.scoped.skipIf(!readsCounted)(
    "validate's reading reads its workbook once: the directory, the header and the hash ride on the rows' read",
    () =>
      Effect.gen(function*() {
        const { file, ratio, result: { input, valid } } = yield* measured(validateSource)
        assert.strictEqual(valid, 20_000)
        assert.isAtMost(ratio, 1.2, `read ${ratio.toFixed(2)} times the workbook's size`)
        // The import's sha256 (the journal's) is the one that read computed: asking reads nothing.
        const asked = bytesRead()
        const sha256 = yield* input.sha256
        assert.isBelow(bytesRead() - asked, 4096)
        assert.strictEqual(sha256, sha256Of(file))
      })
  )

  it.scoped.skipIf(!readsCounted)(
    "an import's two reads (formats and lookups, then the sending) read the workbook about twice",
    () =>
      Effect.gen(function*() {
        const { file, ratio, result } = yield* measured((file) =>
          Effect.gen(function*() {
            const { input } = yield* validateSource(file)
            const sha256 = yield* input.sha256
            let rows = 0
            yield* Stream.runForEach(input.rows, () => Effect.sync(() => void (rows += 1)))
            return { sha256, rows }
          })
        )
        assert.strictEqual(result.rows, 20_000)
        assert.strictEqual(result.sha256, sha256Of(file))
        assert.isAtMost(ratio, 2.2, `read ${ratio.toFixed(2)} times the workbook's size`)
      })
  )
})
