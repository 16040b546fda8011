import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import ExcelJS from "exceljs"
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { openSource } from "../../src/files/Read.js"
import { type Cell, openXlsxWriter } from "../../src/files/Write.js"
import { auto, put, readAll, readError, tempDir } from "./support.js"

/** Builds a workbook with exceljs (as Excel or another tool would write it) and saves it in `dir`. */
const workbook = (dir: string, name: string, build: (wb: ExcelJS.Workbook) => void, creator = "Microsoft Excel") =>
  Effect.promise(async () => {
    const wb = new ExcelJS.Workbook()
    wb.creator = creator
    build(wb)
    const path = Path.join(dir, name)
    await wb.xlsx.writeFile(path)
    return path
  })

/** A table written by this tool's own XLSX writer (creator `fsm-bulk`). */
const writeTable = (
  path: string,
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<Cell>>,
  options: Parameters<typeof openXlsxWriter>[2]
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* openXlsxWriter(path, header, options)
      for (const row of rows) yield* writer.write(row)
      yield* writer.close
      return path
    })
  )

describe("XLSX reader", () => {
  it.scoped("keeps multi-byte UTF-8 characters whole across the chunks a sheet is inflated in", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // 300 KB of 2- and 3-byte characters: the sheet's XML is inflated in chunks of a few KB, and exceljs on its
      // own decodes each chunk apart, turning a character split across two chunks into "\uFFFD\uFFFD".
      const long = "não é ação €".repeat(12_000)
      const names = Array.from({ length: 2_000 }, (_, i) => `Padaria São João nº ${i} — não`)
      const file = yield* workbook(dir, "utf8.xlsx", (wb) => {
        const ws = wb.addWorksheet("customers")
        ws.addRow(["name", "note"])
        ws.addRow(["Longa", long])
        for (const name of names) ws.addRow([name, "ação"])
      })
      const read = yield* readAll(file)
      assert.strictEqual(read.rows.length, names.length + 1)
      assert.strictEqual(read.rows[0]!.cells[1], long)
      const damaged = read.rows.filter((r) => r.cells.some((c) => c.includes("\uFFFD")))
      assert.deepStrictEqual(damaged.map((r) => r.row), [], "rows with a broken character")
      assert.deepStrictEqual(read.rows.slice(1).map((r) => r.cells[0]), names)
    }))

  it.scoped("turns dates, serials, numbers, booleans, rich text, hyperlinks and formula results into cell text", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* workbook(dir, "values.xlsx", (wb) => {
        const ws = wb.addWorksheet("tasks")
        ws.addRow([
          "date",
          "midnight",
          "serial",
          "time",
          "number",
          "noise",
          "big",
          "bool",
          "rich",
          "link",
          "formula",
          "dateFormula",
          "textFormula"
        ])
        ws.addRow([
          new Date(Date.UTC(2026, 11, 1, 9, 30, 0)),
          new Date(Date.UTC(2026, 11, 1)),
          46000,
          0.375,
          -12.5,
          0.1 + 0.2,
          1e21,
          true,
          { richText: [{ text: "Padaria " }, { text: "Pão", font: { bold: true } }] },
          { text: "site", hyperlink: "https://example.com.br" },
          { formula: "A5*2", result: 0.30000000000000004 },
          { formula: "C2+1", result: 46001 },
          { formula: "I2&\"!\"", result: "Padaria Pão!" }
        ])
        ws.getCell("C2").numFmt = "dd/mm/yyyy"
        ws.getCell("D2").numFmt = "hh:mm:ss"
        ws.getCell("L2").numFmt = "dd/mm/yyyy"
        ws.addRow([null, null, 12345678901, null, 0, 1e-7, 123456789012345, false])
      })
      const { rows, source } = yield* readAll(file, { resource: "tasks" })
      assert.strictEqual(source.format, "xlsx")
      assert.strictEqual(source.sheet, "tasks")
      assert.strictEqual(source.writtenByTool, false)
      assert.deepStrictEqual(rows[0], {
        row: 2,
        cells: [
          "2026-12-01T09:30:00",
          "2026-12-01",
          "2025-12-09",
          "09:00:00",
          "-12.5",
          "0.3",
          "1000000000000000000000",
          "true",
          "Padaria Pão",
          "site",
          "0.3",
          "2025-12-10",
          "Padaria Pão!"
        ],
        // Number values (not the date-formatted ones) are marked: their "." is the reader's, not the user's.
        numbers: new Set([4, 5, 6, 10])
      })
      assert.deepStrictEqual(rows[1], {
        row: 3,
        cells: ["", "", "12345678901", "", "0", "0.0000001", "123456789012345", "false", "", "", "", "", ""],
        numbers: new Set([2, 4, 5, 6])
      })
    }))

  it.scoped("marks a formula without a saved result on its row, naming the column; the other rows read on", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* workbook(dir, "formula.xlsx", (wb) => {
        const ws = wb.addWorksheet("products")
        ws.addRow(["name", "price"])
        ws.addRow(["Filtro", 10])
        ws.addRow(["Bomba", { formula: "B2*2" }])
      })
      const { rows } = yield* readAll(file)
      assert.deepStrictEqual(rows.map((r) => [r.row, r.cells]), [[2, ["Filtro", "10"]], [3, ["Bomba", ""]]])
      assert.isUndefined(rows[0]!.cellProblems)
      assert.strictEqual(rows[1]!.cellProblems?.[0]?.index, 1)
      assert.include(rows[1]!.cellProblems?.[0]?.message, "formula without a saved result")
    }))

  it.scoped("skips blank rows and keeps Excel's row numbers", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* workbook(dir, "blank.xlsx", (wb) => {
        const ws = wb.addWorksheet("keywords")
        ws.getCell("A3").value = "id"
        ws.getCell("B3").value = "description"
        ws.getCell("B4").value = "Urgente"
        ws.getCell("A6").value = "  "
        ws.getCell("B7").value = "Garantia"
        ws.getCell("D7").value = "extra"
        ws.getCell("A8").value = 9
      })
      const { rows, source } = yield* readAll(file)
      assert.deepStrictEqual(source.header, ["id", "description"])
      assert.deepStrictEqual(rows, [
        { row: 4, cells: ["", "Urgente"] },
        { row: 7, cells: ["", "Garantia", "", "extra"], ragged: true },
        { row: 8, cells: ["9", ""], numbers: new Set([0]) }
      ])
    }))

  it.scoped("picks the sheet by --sheet, by resource name, else the first visible one", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* workbook(dir, "book.xlsx", (wb) => {
        const hidden = wb.addWorksheet("lists", { state: "hidden" })
        hidden.addRow(["hidden"])
        hidden.addRow(["h"])
        const readme = wb.addWorksheet("README")
        readme.addRow(["text"])
        readme.addRow(["how to fill"])
        const customers = wb.addWorksheet("Customers")
        customers.addRow(["externalId", "name"])
        customers.addRow(["CLI-1", "Padaria"])
      })
      const byResource = yield* readAll(file, { resource: "customers" })
      assert.strictEqual(byResource.source.sheet, "Customers")
      assert.deepStrictEqual(byResource.rows[0]!.cells, ["CLI-1", "Padaria"])
      const bySheet = yield* readAll(file, { sheet: "README", resource: "customers" })
      assert.deepStrictEqual(bySheet.source.header, ["text"])
      const first = yield* readAll(file, { resource: "tasks" })
      assert.strictEqual(first.source.sheet, "README")
      const missing = yield* readError(file, { sheet: "Clientes" })
      assert.include(missing.message, "no sheet named \"Clientes\"")
      assert.include(missing.message, "\"lists\", \"README\", \"Customers\"")
    }))

  it.scoped("reads workbooks streamed by exceljs's WorkbookWriter and in the 1904 date system", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const streamed = Path.join(dir, "streamed.xlsx")
      yield* Effect.promise(async () => {
        const wb = new ExcelJS.stream.xlsx.WorkbookWriter({
          filename: streamed,
          useStyles: true,
          useSharedStrings: false
        })
        const ws = wb.addWorksheet("expenses")
        ws.addRow(["date", "amount", "description"]).commit()
        ws.addRow([new Date(Date.UTC(2026, 10, 20)), 42.5, "Almoço"]).commit()
        ws.commit()
        await wb.commit()
      })
      const read = yield* readAll(streamed)
      assert.deepStrictEqual(read.rows, [{ row: 2, cells: ["2026-11-20", "42.5", "Almoço"], numbers: new Set([1]) }])
      const mac = yield* workbook(dir, "mac.xlsx", (wb) => {
        wb.properties.date1904 = true
        const ws = wb.addWorksheet("expenses")
        ws.addRow(["date", "next"])
        ws.addRow([new Date(Date.UTC(2026, 10, 20, 8, 0, 0)), { formula: "A2+1", result: 45250 }])
        ws.getCell("B2").numFmt = "yyyy-mm-dd"
      })
      const fromMac = yield* readAll(mac)
      // 45250 days after 1904-01-01 is 2027-11-21.
      assert.deepStrictEqual(fromMac.rows[0]!.cells, ["2026-11-20T08:00:00", "2027-11-21"])
    }))

  it.scoped("knows the files this tool wrote by the workbook's creator", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const ours = yield* workbook(
        dir,
        "ours.xlsx",
        (wb) => {
          const ws = wb.addWorksheet("customers")
          ws.addRow(["'=header"])
          ws.addRow(["'=HYPERLINK(\"http://x\",\"y\")"])
        },
        "fsm-bulk"
      )
      const read = yield* readAll(ours)
      assert.strictEqual(read.source.writtenByTool, true)
      // The header is unguarded by the reader; cells are left for the importer to restore.
      assert.deepStrictEqual(read.source.header, ["=header"])
      assert.deepStrictEqual(read.rows[0]!.cells, ["'=HYPERLINK(\"http://x\",\"y\")"])
    }))

  it.scoped("reads a table this tool went on with in `name (2)`, `name (3)` … whole, numbering rows as its CSV would", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const rows = Array.from({ length: 8 }, (_, i) => [`CLI-${i + 1}`, `Cliente ${i + 1}`])
      // 4 rows a sheet: the header and 3 data rows, so "customers", "customers (2)" and "customers (3)".
      const file = yield* writeTable(Path.join(dir, "customers.xlsx"), ["externalId", "name"], rows, {
        sheetName: "customers",
        maxSheetRows: 4
      })
      const whole = yield* readAll(file, { resource: "customers" })
      assert.strictEqual(whole.source.writtenByTool, true)
      assert.strictEqual(whole.source.sheet, "customers")
      assert.deepStrictEqual(whole.source.header, ["externalId", "name"])
      assert.deepStrictEqual(
        whole.rows,
        rows.map((cells, i) => ({ row: i + 2, cells }))
      )
      // The read hashed the workbook (an import's sha256), though each sheet's header was read before the rows.
      assert.strictEqual(whole.source.sha256?.(), createHash("sha256").update(readFileSync(file)).digest("hex"))
      // Read twice (the pipelines do): the numbering starts afresh.
      assert.deepStrictEqual((yield* readAll(file)).rows, whole.rows)
      // --sheet naming the first sheet reads the table; naming a continuation, that sheet alone, in its own rows.
      assert.deepStrictEqual((yield* readAll(file, { sheet: "customers" })).rows, whole.rows)
      const second = yield* readAll(file, { sheet: "customers (2)" })
      assert.strictEqual(second.source.sheet, "customers (2)")
      assert.deepStrictEqual(
        second.rows,
        rows.slice(3, 6).map((cells, i) => ({ row: i + 2, cells }))
      )

      // A 31-character name is cut to make room for the suffix (the writer's rule), and a blank row that ends a
      // sheet still counts, as it does in the CSV: "d" is row 5 (header, a, b, blank, d).
      const long = "technicians_and_their_skills_01"
      const blank = yield* writeTable(Path.join(dir, "long.xlsx"), ["name"], [["a"], ["b"], [""], ["d"], ["e"], ["f"], [
        "g"
      ]], { sheetName: long, maxSheetRows: 4 })
      const book = new ExcelJS.Workbook()
      yield* Effect.promise(() => book.xlsx.readFile(blank))
      assert.deepStrictEqual(
        book.worksheets.map((s) => s.name),
        [long, "technicians_and_their_skill (2)", "technicians_and_their_skill (3)"]
      )
      assert.deepStrictEqual((yield* readAll(blank)).rows, [
        { row: 2, cells: ["a"] },
        { row: 3, cells: ["b"] },
        { row: 5, cells: ["d"] },
        { row: 6, cells: ["e"] },
        { row: 7, cells: ["f"] },
        { row: 8, cells: ["g"] }
      ])
      // That continuation's own name is 31 characters: its "(2)" is itself, and it is still read alone.
      assert.deepStrictEqual((yield* readAll(blank, { sheet: "technicians_and_their_skill (2)" })).rows, [
        { row: 2, cells: ["d"] },
        { row: 3, cells: ["e"] },
        { row: 4, cells: ["f"] }
      ])
    }))

  it.scoped("reads a user's `customers (2)` sheet only when asked: continuations are the tool's own", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const build = (wb: ExcelJS.Workbook) => {
        const first = wb.addWorksheet("customers")
        first.addRow(["externalId", "name"])
        first.addRow(["CLI-1", "Padaria"])
        const copy = wb.addWorksheet("customers (2)")
        copy.addRow(["externalId", "name"])
        copy.addRow(["CLI-2", "Mercado"])
      }
      const theirs = yield* workbook(dir, "theirs.xlsx", build)
      const read = yield* readAll(theirs, { resource: "customers" })
      assert.strictEqual(read.source.writtenByTool, false)
      assert.deepStrictEqual(read.rows, [{ row: 2, cells: ["CLI-1", "Padaria"] }])
      assert.deepStrictEqual((yield* readAll(theirs, { sheet: "customers" })).rows, read.rows)
      // The same sheets in a workbook this tool wrote are one table.
      const ours = yield* workbook(dir, "ours.xlsx", build, "fsm-bulk")
      assert.deepStrictEqual((yield* readAll(ours, { resource: "customers" })).rows, [
        { row: 2, cells: ["CLI-1", "Padaria"] },
        { row: 3, cells: ["CLI-2", "Mercado"] }
      ])
    }))

  it.scoped("refuses a continuation sheet that does not repeat the table's header", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = yield* workbook(
        dir,
        "changed.xlsx",
        (wb) => {
          const first = wb.addWorksheet("customers")
          first.addRow(["externalId", "name"])
          first.addRow(["CLI-1", "Padaria"])
          const second = wb.addWorksheet("customers (2)")
          second.addRow(["externalId", "nome"])
          second.addRow(["CLI-2", "Mercado"])
        },
        "fsm-bulk"
      )
      const error = yield* readError(file, { resource: "customers" })
      assert.include(error.message, "sheet \"customers (2)\" does not repeat the header of \"customers\"")
      // Alone, the sheet is a table of its own.
      assert.deepStrictEqual((yield* readAll(file, { sheet: "customers (2)" })).source.header, ["externalId", "nome"])
    }))

  it.scoped("refuses empty sheets and bad headers", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const empty = yield* workbook(dir, "empty.xlsx", (wb) => void wb.addWorksheet("segments"))
      assert.include((yield* readError(empty)).message, "sheet \"segments\" is empty: no header row")
      const headerOnly = yield* workbook(dir, "header.xlsx", (wb) =>
        void wb.addWorksheet("segments").addRow(["id", "description"]))
      assert.deepStrictEqual((yield* readAll(headerOnly)).rows, [])
      const duplicate = yield* workbook(dir, "dup.xlsx", (wb) =>
        void wb.addWorksheet("segments").addRow(["description", "Description"]))
      assert.include((yield* readError(duplicate)).message, "duplicate column names: \"description\" (columns A, B)")
    }))

  it.scoped("refuses files that are not workbooks, or are cut short", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const good = yield* workbook(dir, "good.xlsx", (wb) => {
        const ws = wb.addWorksheet("segments")
        ws.addRow(["description"])
        for (let i = 0; i < 200; i++) ws.addRow([`Segmento ${i}`])
      })
      const bytes = readFileSync(good)
      const truncated = put(dir, "truncated.xlsx", bytes.subarray(0, Math.floor(bytes.length / 2)))
      assert.include((yield* readError(truncated)).message, "truncated.xlsx: not a valid .xlsx workbook")
      const zipped = put(dir, "other.xlsx", Buffer.from("PK\u0003\u0004 not really a zip"))
      assert.include((yield* readError(zipped)).message, "not a valid .xlsx workbook")
      // Cut short between opening and reading (the file changed under the import): a clear error, not a hang.
      const changing = put(dir, "changing.xlsx", bytes)
      const opened = yield* openSource(changing, auto)
      writeFileSync(changing, bytes.subarray(0, Math.floor(bytes.length * 0.6)))
      const late = yield* Effect.flip(Stream.runDrain(opened.rows))
      assert.include(late.message, "changing.xlsx: not a valid .xlsx workbook")
      const corrupt = Buffer.from(bytes)
      // Damage the compressed data of every entry while keeping the ZIP directory intact.
      for (let i = 200; i < corrupt.length - 400; i += 97) corrupt[i] = corrupt[i]! ^ 0xff
      writeFileSync(Path.join(dir, "corrupt.xlsx"), corrupt)
      assert.include((yield* readError(Path.join(dir, "corrupt.xlsx"))).message, "corrupt.xlsx: damaged .xlsx: ")
    }))
})
