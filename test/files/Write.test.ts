import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import ExcelJS from "exceljs"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { restore } from "../../src/files/Guard.js"
import {
  type Cell,
  openCsvWriter,
  openXlsxWriter,
  sha256File,
  type TableWriter,
  writeFileAtomic
} from "../../src/files/Write.js"
import { openZip } from "../../src/files/Zip.js"
import { readAll, tempDir } from "./support.js"

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex")

const tricky: ReadonlyArray<ReadonlyArray<Cell>> = [
  ["=HYPERLINK(\"http://x\",\"y\")", "-12,5", "+55 11 3333-4444", "@SUM(A1)", -12.5, true],
  ["Padaria Pão Quente", "line 1\nline 2", " padded ", "a,b;c", 0.25, false],
  ["'=already quoted", "", null, undefined, 1e21, 0]
]
const header = ["name", "amount", "phone", "note", "value", "active"]

/** What the importer sees after reversing the guard. */
const asText = (
  cell: Cell
): string => (cell === null || cell === undefined
  ? ""
  : typeof cell === "number"
  ? (cell === 1e21 ? "1000000000000000000000" : String(cell))
  : String(cell))

const writeAll = (open: Effect.Effect<TableWriter, unknown, Scope.Scope>, rows: ReadonlyArray<ReadonlyArray<Cell>>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* open
      for (const row of rows) yield* writer.write(row)
      return yield* writer.close
    })
  )

describe("table writers", () => {
  it.scoped("CSV: UTF-8 with BOM, CRLF, quoted where needed, formulas neutralised", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "customers.csv")
      const result = yield* writeAll(openCsvWriter(path, header), tricky)
      const text = readFileSync(path, "utf8")
      assert.isTrue(text.startsWith("\uFEFFname,amount,phone,note,value,active\r\n"))
      assert.include(text, `"'=HYPERLINK(""http://x"",""y"")","-12,5",'+55 11 3333-4444,'@SUM(A1),-12.5,true\r\n`)
      assert.include(text, "Padaria Pão Quente,\"line 1\nline 2\",\" padded \",\"a,b;c\",0.25,false\r\n")
      assert.include(text, "''=already quoted,,,,1000000000000000000000,0\r\n")
      assert.deepStrictEqual(result, { rows: 3, sha256: sha256(path), bytes: readFileSync(path).length })
      assert.deepStrictEqual(readdirSync(dir), ["customers.csv"])
    }))

  it.scoped("CSV: the reader knows an exported file by its manifest and gets every value back", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "customers.csv")
      const result = yield* writeAll(openCsvWriter(path, header), tricky)
      const unlisted = yield* readAll(path)
      assert.strictEqual(unlisted.source.writtenByTool, false)
      writeFileSync(
        Path.join(dir, "manifest.json"),
        JSON.stringify({
          tool: "fsm-bulk",
          resources: [{ name: "customers", file: "customers.csv", rows: 3, sha256: result.sha256 }]
        })
      )
      const { rows, source } = yield* readAll(path)
      assert.strictEqual(source.writtenByTool, true)
      assert.deepStrictEqual(source.header, header)
      assert.deepStrictEqual(
        rows.map((r) => r.cells.map(restore)),
        tricky.map((r) => r.map(asText))
      )
      assert.deepStrictEqual(
        rows.map((r) => r.row),
        [2, 3, 4]
      )
      writeFileSync(
        Path.join(dir, "manifest.json"),
        JSON.stringify({ tool: "other", resources: [{ file: "customers.csv" }] })
      )
      assert.strictEqual((yield* readAll(path)).source.writtenByTool, false)
    }))

  it.scoped("CSV: a report inside a run directory counts as the tool's", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const run = Path.join(dir, "runs", "20260101T000000Z-customers")
      const report = Path.join(run, "report.csv")
      yield* writeAll(openCsvWriter(report, ["_row", "_status", "name"]), [[2, "failed", "=1+1"]])
      assert.strictEqual((yield* readAll(report)).source.writtenByTool, false)
      writeFileSync(
        Path.join(run, "summary.json"),
        JSON.stringify({ command: "import", runDir: run, counts: { failed: 1 } })
      )
      const { rows, source } = yield* readAll(report)
      assert.strictEqual(source.writtenByTool, true)
      assert.deepStrictEqual(rows[0]!.cells.map(restore), ["2", "failed", "=1+1"])
    }))

  it.scoped("XLSX: creator, frozen header, filter, coloured statuses, and a faithful read-back", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "report.xlsx")
      const rows: ReadonlyArray<ReadonlyArray<Cell>> = [
        [2, "created", "=HYPERLINK(\"http://x\",\"y\")", -12.5],
        [3, "in-doubt", "+55 11 3333-4444", "-12,5"],
        [4, "failed", "line 1\nline 2", null],
        [5, "whatever", " padded ", 0.1],
        [6, "valid", "ok", 1]
      ]
      const result = yield* writeAll(
        openXlsxWriter(path, ["_row", "_status", "name", "amount"], { statusColumn: 1, sheetName: "customers" }),
        rows
      )
      assert.deepStrictEqual(result, { rows: 5, sha256: sha256(path), bytes: readFileSync(path).length })
      const read = yield* readAll(path)
      assert.strictEqual(read.source.writtenByTool, true)
      assert.strictEqual(read.source.sheet, "customers")
      assert.deepStrictEqual(
        read.rows.map((r) => r.cells.map(restore)),
        [
          ["2", "created", "=HYPERLINK(\"http://x\",\"y\")", "-12.5"],
          ["3", "in-doubt", "+55 11 3333-4444", "-12,5"],
          ["4", "failed", "line 1\nline 2", ""],
          ["5", "whatever", " padded ", "0.1"],
          ["6", "valid", "ok", "1"]
        ]
      )
      // A workbook's inline string is never run as a formula: it is written as it is (no `'` shows), as text.
      assert.strictEqual(read.rows[0]!.cells[2], `=HYPERLINK("http://x","y")`)
      const wb = new ExcelJS.Workbook()
      yield* Effect.promise(() => wb.xlsx.readFile(path))
      assert.strictEqual(wb.creator, "fsm-bulk")
      const sheet = wb.getWorksheet("customers")!
      assert.strictEqual(sheet.getRow(2).getCell(3).type, ExcelJS.ValueType.String, "text, not a formula")
      const view = sheet.views[0] as ExcelJS.WorksheetViewFrozen
      assert.strictEqual(view.state, "frozen")
      assert.strictEqual(view.ySplit, 1)
      assert.isDefined(sheet.autoFilter)
      const fillOf = (address: string) =>
        (sheet.getCell(address).fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb
      assert.strictEqual(fillOf("B2"), "FFC6EFCE")
      assert.strictEqual(fillOf("B3"), "FFFFEB9C")
      assert.strictEqual(fillOf("B4"), "FFFFC7CE")
      assert.isUndefined(fillOf("B5"))
      // `validate` reports: a row that passed every check is green.
      assert.strictEqual(fillOf("B6"), "FFC6EFCE")
      assert.isUndefined(fillOf("C2"))
      assert.strictEqual(sheet.getCell("A1").font?.bold, true)
    }))

  it.scoped("XLSX: awkward text reads back through our reader, and the archive passes `unzip -t`", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "awkward.xlsx")
      // The longest text a cell holds, in two-byte characters: it spans deflate's and the reader's chunks.
      const longest = "é".repeat(32_767)
      const exact = [
        "_x0041_ is not an escape here",
        "emoji 😀 and 👍🏽 in pairs",
        "  leading and trailing  ",
        "CRLF\r\nLF\nCR\rend",
        "\nstarts and ends with a line break\n",
        "tab\tinside",
        `a & b <c> "d" 'e' ]]>`,
        longest
      ]
      // XML cannot carry these: they go as Excel's `_xHHHH_`, which Excel and our reader decode (exceljs alone does
      // not).
      const escaped: ReadonlyArray<readonly [string, string]> = [
        ["bell \u0007, NUL \u0000, US \u001F", "bell _x0007_, NUL _x0000_, US _x001F_"],
        ["lone \uD83D high surrogate", "lone _xD83D_ high surrogate"],
        ["lone \uDE00 low surrogate", "lone _xDE00_ low surrogate"],
        ["not characters: \uFFFE\uFFFF", "not characters: _xFFFE__xFFFF_"]
      ]
      const texts = [...exact, ...escaped.map(([text]) => text)]
      yield* writeAll(
        openXlsxWriter(path, ["n", "text"]),
        texts.map((text, i) => [i, text])
      )
      const read = yield* readAll(path)
      assert.deepStrictEqual(
        read.rows.map((r) => r.cells[1]),
        texts
      )
      const wb = new ExcelJS.Workbook()
      yield* Effect.promise(() => wb.xlsx.readFile(path))
      // exceljs on its own decodes no escape: the literal `_x0041_` (written `_x005F_x0041_`, as Excel writes it, so
      // that Excel shows it as typed) is left out of its comparison.
      assert.deepStrictEqual(
        exact.map((_, i) => wb.getWorksheet("awkward")!.getCell(`B${i + 2}`).value).slice(1),
        exact.slice(1)
      )
      // Excel trims a text's leading and trailing spaces and line breaks unless its element says to keep them; our
      // reader and exceljs keep them either way, so only the sheet's XML shows the marker is there.
      const zip = yield* Effect.promise(() => openZip(path))
      const sheet = (yield* Effect.promise(() => zip.read("xl/worksheets/sheet1.xml", 1024 * 1024)))!.toString("utf8")
      zip.close()
      const textOf = (row: number) => new RegExp(`<c r="B${row}"[^>]*><is>(<t[^>]*>)`).exec(sheet)?.[1]
      assert.deepStrictEqual(
        exact.slice(0, 6).map((_, i) => textOf(i + 2)),
        ["<t>", "<t>", ...Array(4).fill("<t xml:space=\"preserve\">")]
      )
      if (spawnSync("unzip", ["-v"]).status === 0) {
        const test = spawnSync("unzip", ["-t", path], { encoding: "utf8" })
        assert.strictEqual(test.status, 0, test.stdout + test.stderr)
        assert.include(test.stdout, "No errors detected")
      }
    }))

  it.scoped("XLSX: columns fitted to their content (capped), the error column wide and wrapped", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "report.xlsx")
      const header = ["_row", "_status", "_error", "a_rather_long_column_name", "code", "notes"]
      const longError =
        "email: \"not-an-address\" is not an e-mail address; cpfCnpj: 11 or 14 digits expected, got 9 digits"
      const rows = Array.from(
        { length: 150 },
        (
          _,
          i
        ): ReadonlyArray<Cell> => [
          i + 2,
          "invalid",
          i === 120 ? longError : "name: required",
          "x",
          `C-${i}`,
          "n".repeat(i === 3 ? 300 : 5)
        ]
      )
      yield* writeAll(openXlsxWriter(path, header, { statusColumn: 1, sheetName: "report", wrapColumns: [2] }), rows)
      const wb = new ExcelJS.Workbook()
      yield* Effect.promise(() => wb.xlsx.readFile(path))
      const sheet = wb.getWorksheet("report")!
      const width = (column: number) => sheet.getColumn(column).width!
      assert.isAtLeast(width(3), 30, "the error column is wide")
      assert.isAtMost(width(3), 80)
      assert.isTrue(sheet.getCell("C2").alignment?.wrapText, "and wrapped")
      assert.isAtLeast(width(4), "a_rather_long_column_name".length, "a header is never cut")
      assert.isAtMost(width(5), 12, "a short column stays narrow")
      assert.strictEqual(width(6), 50, "a long cell in the first rows widens its column up to the cap")
      // Widths come from the first 100 rows: the long error of row 122 does not change them, and every row is there.
      assert.strictEqual(sheet.rowCount, 151)
      assert.strictEqual(sheet.getCell("C122").value, longError)
    }))

  it.scoped("XLSX: rows past a sheet's limit go on in `report (2)`, `report (3)`, each under the header", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "report.xlsx")
      const top = ["_row", "_status", "name"]
      const rows = Array.from(
        { length: 7 },
        (_, i): ReadonlyArray<Cell> => [i + 2, i % 2 === 0 ? "created" : "failed", `'=name ${i}`]
      )
      // Excel's limit counts the header: 4 rows a sheet are the header and 3 data rows.
      const result = yield* writeAll(
        openXlsxWriter(path, top, { statusColumn: 1, sheetName: "report", maxSheetRows: 4 }),
        rows
      )
      assert.deepStrictEqual(result, { rows: 7, sha256: sha256(path), bytes: readFileSync(path).length })
      const sheets = [
        ["report", rows.slice(0, 3)],
        ["report (2)", rows.slice(3, 6)],
        ["report (3)", rows.slice(6)]
      ] as const
      const wb = new ExcelJS.Workbook()
      yield* Effect.promise(() => wb.xlsx.readFile(path))
      assert.strictEqual(wb.creator, "fsm-bulk")
      assert.deepStrictEqual(
        wb.worksheets.map((s) => s.name),
        sheets.map(([name]) => name)
      )
      for (const [name, part] of sheets) {
        const sheet = wb.getWorksheet(name)!
        assert.deepStrictEqual(
          sheet.getSheetValues().slice(1).map((values) => (values as Array<ExcelJS.CellValue>).slice(1)),
          [top, ...part.map((r) => [r[0], r[1], `'${r[2]}`])]
        )
        assert.strictEqual((sheet.views[0] as ExcelJS.WorksheetViewFrozen).state, "frozen")
        assert.isDefined(sheet.autoFilter)
        assert.strictEqual(
          (sheet.getCell("B2").fill as ExcelJS.FillPattern).fgColor?.argb,
          part[0]![1] === "created" ? "FFC6EFCE" : "FFFFC7CE"
        )
        // A continuation named by --sheet is read alone; the first sheet, as the whole table (Xlsx.test.ts).
        const read = yield* readAll(path, { sheet: name })
        assert.strictEqual(read.source.writtenByTool, true)
        assert.deepStrictEqual(read.source.header, top)
        assert.deepStrictEqual(
          read.rows.map((r) => r.cells.map(restore)),
          (name === "report" ? rows : part).map((r) => r.map(asText))
        )
      }
      // Read whole, rows are numbered as in the report's CSV, which `_row` holds here.
      const whole = yield* readAll(path)
      assert.deepStrictEqual(
        whole.rows.map((r) => String(r.row)),
        rows.map((r) => String(r[0]))
      )

      // A sheet's XML can also end it: past the limit, the next row starts a new sheet.
      const bySize = Path.join(dir, "by-size.xlsx")
      yield* writeAll(openXlsxWriter(bySize, top, { maxSheetBytes: 1 }), rows.slice(0, 3))
      const small = new ExcelJS.Workbook()
      yield* Effect.promise(() => small.xlsx.readFile(bySize))
      assert.deepStrictEqual(
        small.worksheets.map((s) => [s.name, s.rowCount]),
        [["by-size", 2], ["by-size (2)", 2], ["by-size (3)", 2]]
      )
    }))

  it.scopedLive("a scope closed before `close` leaves neither the file nor its .tmp, and keeps an older file intact", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      for (
        const [name, open] of [
          ["a.csv", (p: string) => openCsvWriter(p, header)],
          ["a.xlsx", (p: string) => openXlsxWriter(p, header)]
        ] as const
      ) {
        const path = Path.join(dir, name)
        const scope = yield* Scope.make()
        const writer = yield* Scope.extend(open(path), scope)
        for (let i = 0; i < 200; i++) yield* writer.write(tricky[i % 3]!)
        assert.isTrue(existsSync(`${path}.tmp`))
        assert.isFalse(existsSync(path))
        yield* Scope.close(scope, Exit.void)
        assert.isFalse(existsSync(path), `${name} must not exist`)
        assert.isFalse(existsSync(`${path}.tmp`), `${name}.tmp must be removed`)

        writeFileSync(path, "previous complete file")
        const interrupted = yield* Effect.fork(
          Effect.scoped(
            Effect.gen(function*() {
              const w = yield* open(path)
              for (let i = 0;; i++) yield* w.write(tricky[i % 3]!)
            })
          )
        )
        yield* Effect.sleep("50 millis")
        yield* Fiber.interrupt(interrupted)
        assert.strictEqual(readFileSync(path, "utf8"), "previous complete file")
        assert.isFalse(existsSync(`${path}.tmp`))
      }
    }))

  it.scoped("refuses writes after close, and reports a path it cannot write", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "once.csv")
      const writer = yield* openCsvWriter(path, header)
      yield* writer.write(tricky[0]!)
      yield* writer.close
      const late = yield* Effect.flip(writer.write(tricky[1]!))
      assert.strictEqual(late._tag, "WriteError")
      assert.include(late.message, "already closed")
      assert.strictEqual(readFileSync(path, "utf8").split("\r\n").length, 3)

      writeFileSync(Path.join(dir, "plain-file"), "x")
      const blocked = yield* Effect.flip(Effect.scoped(openCsvWriter(Path.join(dir, "plain-file", "out.csv"), header)))
      assert.strictEqual(blocked.path, Path.join(dir, "plain-file", "out.csv"))
      assert.include(blocked.message, "plain-file")
    }))

  // More rows than the workbook's thread starts at (2,000, Write.ts' threadAfterRows): both the calling thread's and
  // the thread's writing are read back. 5,000, not the 20,000 of before: nothing here turns on the count (no check of
  // memory), and writing and reading back 20,000 rows cost about 10 s of the file's time.
  it.scoped("streams many rows through the writers and back", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const many = 5_000
      const rows = Array.from(
        { length: many },
        (_, i): ReadonlyArray<Cell> => [`CLI-${i}`, i * 1.5, i % 2 === 0, `nota ${i}`]
      )
      const csv = yield* writeAll(
        openCsvWriter(Path.join(dir, "many.csv"), ["externalId", "value", "flag", "note"]),
        rows
      )
      const xlsx = yield* writeAll(
        openXlsxWriter(Path.join(dir, "many.xlsx"), ["externalId", "value", "flag", "note"]),
        rows
      )
      assert.strictEqual(csv.rows, many)
      assert.strictEqual(xlsx.rows, many)
      for (const file of ["many.csv", "many.xlsx"]) {
        const read = yield* readAll(Path.join(dir, file))
        assert.strictEqual(read.rows.length, many)
        const last = {
          row: many + 1,
          cells: [`CLI-${many - 1}`, String((many - 1) * 1.5), "false", `nota ${many - 1}`]
        }
        // The workbook's value is a number cell, which the reader marks.
        assert.deepStrictEqual(read.rows[many - 1], file.endsWith(".xlsx") ? { ...last, numbers: new Set([1]) } : last)
      }
    }))

  it.scoped("writeFileAtomic replaces a file whole; sha256File streams the hash", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "nested", "manifest.json")
      yield* writeFileAtomic(path, "{\"a\":1}")
      yield* writeFileAtomic(path, new Uint8Array(Buffer.from("{\"a\":2}")))
      assert.strictEqual(readFileSync(path, "utf8"), "{\"a\":2}")
      assert.deepStrictEqual(readdirSync(Path.dirname(path)), ["manifest.json"])
      assert.strictEqual(yield* sha256File(path), sha256(path))
      mkdirSync(Path.join(dir, "taken"))
      const error = yield* Effect.flip(writeFileAtomic(Path.join(dir, "taken"), "x"))
      assert.strictEqual(error._tag, "WriteError")
      assert.isFalse(existsSync(Path.join(dir, "taken.tmp")))
      assert.strictEqual((yield* Effect.flip(sha256File(Path.join(dir, "missing")))).path, Path.join(dir, "missing"))
    }))

  // A run's reports are hashed when they close: chunks allocated per read stay in memory until the next collection,
  // and hashing the reports was the peak RSS of a 1M-row validate. The buffers held after hashing a 48 MiB file must
  // stay far below its size.
  it.scoped("sha256File hashes a large file without keeping its chunks in memory", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "large.csv")
      const block = Buffer.alloc(1024 * 1024, "0123456789abcdef,")
      writeFileSync(path, block)
      for (let i = 1; i < 48; i++) appendFileSync(path, block)
      const before = process.memoryUsage().arrayBuffers
      const hash = yield* sha256File(path)
      const held = process.memoryUsage().arrayBuffers - before
      assert.strictEqual(hash, sha256(path))
      assert.isBelow(held, 8 * 1024 * 1024, `${(held / 1024 / 1024).toFixed(1)} MiB of buffers held after hashing`)
    }))
})
