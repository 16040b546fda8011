/**
 * CPF/CNPJ and CSV (issue 27): a CSV export of a resource with CPF/CNPJ says once, on stderr, that a spreadsheet
 * opens those digits as numbers and drops leading zeros, and points at `--format xlsx`, whose cells keep them as text.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Path from "node:path"
import { put, runCli, startTestSandbox, tempDir } from "../import/support.js"

describe("export of CPF/CNPJ", () => {
  it.scopedLive(
    "CSV: one note with the xlsx alternative; XLSX: the zero-led CNPJ is a text cell, no note",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", "externalId;name;cpfCnpj\r\nZ-1;Padaria Zero;01.234.567/0001-95\r\n")
        const seeded = yield* runCli(["import", "customers", file, "--out", Path.join(dir, "seed")], sandbox, dir)
        assert.strictEqual(seeded.code, 0, seeded.stderr)

        const csv = yield* runCli(["export", "customers", "segments", "--out", Path.join(dir, "csv")], sandbox, dir)
        assert.strictEqual(csv.code, 0, csv.stderr)
        const notes = csv.stderr.split("\n").filter((l) => l.startsWith("note:"))
        assert.deepStrictEqual(notes, [
          "note: customers.csv holds CPF/CNPJ: Excel and LibreOffice Calc open a CSV's digits as numbers and drop leading zeros; for files people open, export with --format xlsx (text cells)"
        ])

        const xlsx = yield* runCli(
          ["export", "customers", "--format", "xlsx", "--out", Path.join(dir, "xlsx")],
          sandbox,
          dir
        )
        assert.strictEqual(xlsx.code, 0, xlsx.stderr)
        assert.notInclude(xlsx.stderr, "note:")
        const book = new ExcelJS.Workbook()
        yield* Effect.promise(() => book.xlsx.readFile(Path.join(dir, "xlsx", "customers.xlsx")))
        const sheet = book.worksheets[0]!
        const at = (sheet.getRow(1).values as Array<unknown>).indexOf("cpfCnpj")
        assert.strictEqual(sheet.getRow(2).getCell(at).value, "01234567000195")
      }),
    120_000
  )
})
