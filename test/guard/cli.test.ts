/**
 * The formula guard is not data (issue 28, item 10): what the tool wrote, and what a spreadsheet made of it, reads
 * back without the guard's apostrophes. A copy of report.csv corrected for `rerun --fixed`, and an export saved
 * as .xlsx by a spreadsheet (which keeps the guard as text), send the values, not `'+55…` or `'=…`.
 */
import { assert, describe, it } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { copyFileSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { put, readReport, runCli, startTestSandbox, tempDir } from "../import/support.js"

const phone = "+55 11 3333-4444"
const note = "=conferir endereço"

describe("the guard read back", () => {
  it.scopedLive("a copy of report.csv corrected and given to rerun --fixed sends the values, not the guard", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        `externalId;name;phoneNumber;note;email\nC-1;Loja;${phone};${note};sem-arroba\n`
      )
      const first = yield* runCli(["import", "customers", file, "--out", Path.join(dir, "first")], sandbox, dir)
      assert.strictEqual(first.code, 1, first.stderr)
      const report = readFileSync(Path.join(dir, "first", "report.csv"), "utf8")
      assert.include(report, `'${phone}`)
      assert.include(report, `'${note}`)
      // The user copies the report elsewhere and corrects the e-mail, keeping the other cells as they are.
      const fixed = Path.join(dir, "correcoes.csv")
      writeFileSync(fixed, report.replace(/([,;])sem-arroba(\r?\n)/, "$1loja@x.com.br$2"))
      const again = yield* runCli(
        ["rerun", Path.join(dir, "first"), "--fixed", fixed, "--out", Path.join(dir, "again")],
        sandbox,
        dir
      )
      assert.strictEqual(again.code, 0, again.stderr)
      const [stored] = yield* sandbox.control.records("sandbox-key", "customers")
      assert.deepStrictEqual(stored!.phoneNumber, [phone])
      assert.strictEqual(stored!.note, note)
    }))

  it.scopedLive("an export saved as .xlsx by a spreadsheet re-imports unchanged, the guard's apostrophes kept as text", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", `externalId,name,phoneNumber,note\nC-1,Loja,${phone},"Loja;${note}"\n`)
      const seeded = yield* runCli(["import", "customers", file, "--out", Path.join(dir, "seed")], sandbox, dir)
      assert.strictEqual(seeded.code, 0, seeded.stderr)
      const exported = yield* runCli(["export", "customers", "--out", Path.join(dir, "export")], sandbox, dir)
      assert.strictEqual(exported.code, 0, exported.stderr)
      const csv = readFileSync(Path.join(dir, "export", "customers.csv"), "utf8").replace(/^\uFEFF/, "")
      assert.include(csv, `'${phone}`)
      // The `;` split guard too: a spreadsheet splitting on `;` would otherwise run `=conferir…`.
      assert.include(csv, `Loja;'${note}`)
      // Opened in a spreadsheet and saved as .xlsx: every cell is the CSV's text, apostrophes included.
      const rows = parse(csv) as Array<Array<string>>
      const book = new ExcelJS.Workbook()
      book.creator = "LibreOffice"
      const sheet = book.addWorksheet("customers")
      for (const row of rows) sheet.addRow(row)
      const saved = Path.join(dir, "clientes-salvos.xlsx")
      yield* Effect.promise(() => book.xlsx.writeFile(saved))
      copyFileSync(saved, Path.join(dir, "copia.xlsx"))
      const again = yield* runCli(["import", "customers", saved, "--out", Path.join(dir, "again")], sandbox, dir)
      assert.strictEqual(again.code, 0, again.stderr)
      assert.deepStrictEqual(readReport(Path.join(dir, "again")).map((r) => r._status), ["unchanged"])
      const [stored] = yield* sandbox.control.records("sandbox-key", "customers")
      assert.deepStrictEqual(stored!.phoneNumber, [phone])
      assert.strictEqual(stored!.note, `Loja;${note}`)
    }))
})
