/**
 * How often an .xlsx source is read, counted by the kernel as test/validate/Passes.test.ts counts a CSV's reads:
 * the bytes this process's read calls returned (`rchar` of /proc/self/io, every thread) while the steps of a
 * command run, against the workbook's size. Linux only; elsewhere these tests are skipped.
 */
import "../../src/files/ExcelSax.js" // before exceljs: mends its UTF-8 decoding
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import ExcelJS from "exceljs"
import { createHash } from "node:crypto"
import { existsSync, readFileSync, statSync } from "node:fs"
import * as Path from "node:path"
import { openInput, planInput } from "../../src/import/Input.js"
import { resource } from "../../src/Resources.js"
import { makeValidator, settleFormats } from "../../src/validate/Validate.js"
import { temporaryDir } from "../support.js"

const counted = existsSync("/proc/self/io")
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))![1])

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

const read = { encoding: "auto", delimiter: "auto" } as const
const settings = { dateFormat: "auto", decimal: "auto", mode: "upsert" } as const

/** `validate`'s steps up to the report (ValidateRun): open, plan, formats settled on the first rows, every row. */
const validateSteps = (file: string) =>
  Effect.scoped(Effect.gen(function*() {
    const input = yield* openInput(file, read, "customers")
    const { columns, parse } = yield* planInput(resource("customers"), input, settings, () => Effect.void)
    const { formats, rows } = yield* settleFormats(columns, input.rows, parse)
    const validator = makeValidator(columns, formats, parse)
    let valid = 0
    yield* Stream.runForEach(
      rows,
      (row) => Effect.map(validator.validate(row), (r) => void (valid += r._tag === "Valid" ? 1 : 0))
    )
    return { input, valid }
  }))

describe("passes over an .xlsx source", () => {
  it.scoped.skipIf(!counted)(
    "validate's reading reads its workbook once: the directory, the header and the hash ride on the rows' read",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        // A first run loads the modules the steps use (exceljs among them): their reading is not counted.
        yield* validateSteps(yield* customersWorkbook(dir, "small.xlsx", 2))
        const file = yield* customersWorkbook(dir, "customers.xlsx", 20_000)
        const size = statSync(file).size
        const before = bytesRead()
        const { input, valid } = yield* validateSteps(file)
        const ratio = (bytesRead() - before) / size
        assert.strictEqual(valid, 20_000)
        assert.isAtMost(ratio, 1.2, `read ${ratio.toFixed(2)} times the workbook's size`)
        // The import's sha256 (the journal's) is the one that read computed: asking reads nothing.
        const asked = bytesRead()
        const sha256 = yield* input.sha256
        assert.isBelow(bytesRead() - asked, 4096)
        assert.strictEqual(sha256, createHash("sha256").update(readFileSync(file)).digest("hex"))
      })
  )

  it.scoped.skipIf(!counted)(
    "an import's two reads (formats and lookups, then the sending) read the workbook about twice",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        yield* validateSteps(yield* customersWorkbook(dir, "small.xlsx", 2))
        const file = yield* customersWorkbook(dir, "customers.xlsx", 20_000)
        const size = statSync(file).size
        const before = bytesRead()
        const { input } = yield* validateSteps(file)
        const sha256 = yield* input.sha256
        let rows = 0
        yield* Stream.runForEach(input.rows, () => Effect.sync(() => void (rows += 1)))
        const ratio = (bytesRead() - before) / size
        assert.strictEqual(rows, 20_000)
        assert.strictEqual(sha256, createHash("sha256").update(readFileSync(file)).digest("hex"))
        assert.isAtMost(ratio, 2.2, `read ${ratio.toFixed(2)} times the workbook's size`)
      })
  )
})
