import { assert, describe, it } from "@effect/vitest"
import { parse } from "csv-parse"
import { Chunk, Effect, Stream } from "effect"
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { inThreadBytes } from "../../src/files/Csv.js"
import { openSource } from "../../src/files/Read.js"
import { auto, cp1252, put, readAll, readError, tempDir } from "./support.js"

/**
 * What the parser thread (src/files/CsvParseWorker.js) takes from csv-parse beyond its documented API: the parser
 * object's internal `.api`, fed chunk by chunk (`api.parse(buffer, end, push, close)`, returning the error
 * rather than throwing it), and `api.state.quoting`. A csv-parse update that drops or changes them must fail here,
 * not in a user's import.
 */
describe("csv-parse's internal API, as the parser thread uses it", () => {
  it("is still there and behaves as the parser thread expects", () => {
    const parser = parse({
      delimiter: ",",
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
      max_record_size: 64
    })
    const api = (parser as unknown as { api?: Record<string, unknown> }).api
    const gone = (what: string) =>
      `csv-parse no longer has ${what}, which src/files/CsvParseWorker.js relies on: adapt the worker before updating csv-parse`
    assert.isObject(api, gone("a parser's `.api`"))
    assert.isFunction(api!["parse"], gone("`.api.parse`"))
    assert.isObject(api!["state"], gone("`.api.state`"))
    const run = api as unknown as {
      parse: (
        buffer: Buffer | undefined,
        end: boolean,
        push: (record: Array<string>) => void,
        close: () => void
      ) => (Error & { code?: string; records?: number; index?: number }) | undefined
      state: { quoting: unknown }
    }
    const records: Array<Array<string>> = []
    const push = (record: Array<string>) => void records.push(record)
    // Records split across chunks come out whole; a chunk ending inside a quoted cell leaves `quoting` set.
    assert.isUndefined(
      run.parse(Buffer.from("name,note\nPadaria,\"São"), false, push, () => {}),
      gone("a chunk parsed without error")
    )
    assert.strictEqual(run.state.quoting, true, gone("`.api.state.quoting` set inside a quoted cell"))
    assert.isUndefined(run.parse(Buffer.from(" Paulo\"\nCafé,ok\n"), false, push, () => {}))
    assert.strictEqual(run.state.quoting, false, gone("`.api.state.quoting` cleared after the quote closes"))
    // (The end of a chunk is kept back until the next one shows how the line ends.)
    assert.deepStrictEqual(
      records,
      [["name", "note"], ["Padaria", "São Paulo"]],
      gone("records handed to `push` as arrays of cells")
    )
    // Errors are returned with their code, the records emitted before them and the cells of the failing one.
    const error = run.parse(Buffer.from(`a,b,${"x".repeat(100)}`), true, push, () => {})
    assert.strictEqual(error?.code, "CSV_MAX_RECORD_SIZE", gone("errors returned by `.api.parse` with their code"))
    assert.strictEqual(error?.records, 3, gone("`records` on a returned error"))
    assert.strictEqual(error?.index, 2, gone("`index` (cells of the failing record) on a returned error"))
  })
})

describe("CSV reader", () => {
  it.scopedLive("reads no faster than its rows are taken: a slow consumer gets one read of the file at a time, not the file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const line = (i: number) =>
        `CLI-${String(i).padStart(6, "0")},Cliente ${String(i).padStart(6, "0")},"Rua ${
          String(i).padStart(6, "0")
        }, São Paulo"\r\n`
      // Larger than a file read in the calling thread: this is the parser thread's bound.
      const count = Math.ceil((2 * inThreadBytes) / Buffer.byteLength(line(0)))
      const lines = Array.from({ length: count }, (_, i) => line(i)).join("")
      // What one 64 KiB read of the file holds.
      const perRead = Math.ceil((64 * 1024) / Buffer.byteLength(line(0)))
      const { rows } = yield* openSource(put(dir, "big.csv", `externalId,name,address\r\n${lines}`), auto)
      const sizes: Array<number> = []
      // Each batch takes a while (a validation writing its reports): an unbounded read-ahead piles rows up meanwhile.
      yield* Stream.runForEachChunk(
        rows,
        (chunk) => Effect.zipRight(Effect.sleep("5 millis"), Effect.sync(() => sizes.push(chunk.length)))
      )
      assert.strictEqual(sizes.reduce((a, b) => a + b, 0), count)
      assert.isAtMost(Math.max(...sizes), 2 * perRead, `batches of ${sizes.join(",")}`)
    }))

  it.scoped("reads a small file in the calling thread and a large one on the parser thread alike", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // Multi-line quoted cells, blank lines, a quoted delimiter, and the first non-ASCII character at the very end.
      const line = (i: number) => `CLI-${i};"Cliente ${i}\r\nfilial";"12,5; x"\r\n${i % 7 === 0 ? "\r\n" : ""}`
      const file = (name: string, bytes: number, tail: string) => {
        const lines: Array<string> = []
        let size = 0
        for (let i = 0; size < bytes; i++) {
          lines.push(line(i))
          size += line(i).length
        }
        return put(dir, name, cp1252(`externalId;name;note\r\n${lines.join("")}${tail}`))
      }
      // A quarter of the in-thread bound, and a quarter past it (what decides the thread is the size, not how far).
      for (const bytes of [inThreadBytes / 4, inThreadBytes * 1.25]) {
        const path = file(`clientes-${bytes}.csv`, bytes, "CLI-X;Café;\r\n")
        const { rows, source } = yield* readAll(path)
        assert.strictEqual(source.encoding, "windows-1252", `${bytes} bytes`)
        // (The blank line after row 2 counts as row 3, and is not a row to read.)
        assert.deepStrictEqual(rows.slice(0, 2), [
          { row: 2, cells: ["CLI-0", "Cliente 0\r\nfilial", "12,5; x"] },
          { row: 4, cells: ["CLI-1", "Cliente 1\r\nfilial", "12,5; x"] }
        ], `${bytes} bytes`)
        assert.deepStrictEqual(rows.at(-1)!.cells, ["CLI-X", "Café", ""], `${bytes} bytes`)
        // The same fault is reported alike, on the same row, whichever thread parsed the file.
        const broken = file(`broken-${bytes}.csv`, bytes, "CLI-Y;\"never closed\r\n")
        const error = yield* readError(broken)
        assert.strictEqual(error.row, rows.at(-1)!.row, `${bytes} bytes`)
        assert.include(error.message, "never closed", `${bytes} bytes`)
      }
    }))

  it.scoped("the parser thread hands over every record in order: huge, very wide, multi-byte, blank", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // Past what one slot of the shared ring holds (src/files/Ring.js: 128 KiB of text, 8 Ki lengths): such a
      // record goes by message, in its place; the rest are cut at slot boundaries wherever they fall.
      const huge = "Observação longa ".repeat(20_000)
      const wide = Array.from({ length: 10_000 }, (_, i) => `c${i}`)
      const expected: Array<ReadonlyArray<string>> = []
      const lines: Array<string> = []
      let size = 0
      for (let i = 0; size < 3 * inThreadBytes; i++) {
        // UTF-16 lengths differ from UTF-8 bytes (ã: 2 bytes, 😀: 2 units and 4 bytes) and cells may be empty.
        const cells = i === 500 || i === 4_000
          ? [`CLI-${i}`, "", huge]
          : i === 2_000
          ? [`CLI-${i}`, ...wide]
          : [`CLI-${i}`, i % 3 === 0 ? "" : `São João 😀 ${i}`, `nota ${i}`]
        expected.push(cells)
        const line = `${cells.map((c) => `"${c}"`).join(",")}\r\n${i % 97 === 0 ? "\r\n" : ""}`
        lines.push(line)
        size += line.length
      }
      const path = put(dir, "ring.csv", `externalId,name,note\r\n${lines.join("")}`)
      const { rows } = yield* readAll(path)
      assert.strictEqual(rows.length, expected.length)
      // The blank lines count as rows: each row's number is its place in the file. Compared row by row in plain code
      // and asserted once (two assertions per record, tens of thousands of records, were most of the test's time).
      let row = 1
      const wanted = expected.map((cells, i) => {
        row += 1
        const at = { row, cells }
        if (i % 97 === 0) row += 1
        return at
      })
      const got = rows.map((r) => ({ row: r.row, cells: [...r.cells] }))
      const differs = wanted.findIndex((w, i) => JSON.stringify(got[i]) !== JSON.stringify(w))
      assert.deepStrictEqual(got[differs], wanted[differs], `record ${differs} differs`)
      // A reader that stops early (the header's read, a stopped command) stops the thread: nothing hangs.
      const first = yield* openSource(path, auto).pipe(Effect.flatMap((s) => Stream.runHead(s.rows)))
      assert.deepStrictEqual(first._tag === "Some" ? first.value.cells : [], expected[0])
    }))

  it.scoped("reads Windows-1252 with ; and decimal commas (Excel in Brazil)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        cp1252(
          "externalId;name;valor;observação\r\nCLI-1;Padaria Pão Quente;12,50;Café, pão\r\nCLI-2;Açougue São João;-3,2;\r\n"
        )
      )
      const { rows, source } = yield* readAll(file)
      assert.strictEqual(source.encoding, "windows-1252")
      assert.strictEqual(source.delimiter, ";")
      assert.strictEqual(source.format, "csv")
      assert.deepStrictEqual(source.header, ["externalId", "name", "valor", "observação"])
      assert.deepStrictEqual(rows, [
        { row: 2, cells: ["CLI-1", "Padaria Pão Quente", "12,50", "Café, pão"] },
        { row: 3, cells: ["CLI-2", "Açougue São João", "-3,2", ""] }
      ])
    }))

  it.scoped("reads UTF-8 with a BOM, and without one", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const withBom = yield* readAll(put(dir, "bom.csv", "\uFEFFname,city\nJosé,São Paulo\n"))
      assert.strictEqual(withBom.source.encoding, "utf-8")
      assert.deepStrictEqual(withBom.source.header, ["name", "city"])
      assert.deepStrictEqual(withBom.rows[0]!.cells, ["José", "São Paulo"])
      const without = yield* readAll(put(dir, "plain.csv", "name,city\nJosé,São Paulo\n"))
      assert.strictEqual(without.source.encoding, "utf-8")
      assert.deepStrictEqual(without.rows[0]!.cells, ["José", "São Paulo"])
    }))

  it.scoped("decides the encoding on the whole file, not its first block", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const ascii = Array.from({ length: 4000 }, (_, i) => `CLI-${i};Cliente ${i}\r\n`).join("")
      const file = put(dir, "late.csv", cp1252(`externalId;name\r\n${ascii}CLI-X;Café\r\n`))
      const { rows, source } = yield* readAll(file)
      assert.strictEqual(source.encoding, "windows-1252")
      assert.strictEqual(rows.length, 4001)
      assert.deepStrictEqual(rows[4000], { row: 4002, cells: ["CLI-X", "Café"] })
    }))

  it.scoped("honours --encoding, and refuses UTF-8 that is not", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "latin.csv", cp1252("name;city\nJosé;São Paulo\n"))
      const error = yield* readError(file, { encoding: "utf-8" })
      assert.include(error.message, "not valid UTF-8")
      assert.include(error.message, "--encoding windows-1252")
      assert.include(error.message, "latin.csv")
      const forced = yield* readAll(file, { encoding: "windows-1252" })
      assert.deepStrictEqual(forced.rows[0]!.cells, ["José", "São Paulo"])
      const bom = yield* readError(put(dir, "bom.csv", "\uFEFFname;city\nJosé;São Paulo\n"), {
        encoding: "windows-1252"
      })
      assert.include(bom.message, "byte-order mark")
    }))

  it.scoped("sniffs tab, and keeps a quoted delimiter inside its cell", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const tabs = yield* readAll(put(dir, "tabs.txt", "name\tvalue\tnote\nFiltro\t12,5\t\"a, b; c\"\n"))
      assert.strictEqual(tabs.source.delimiter, "\t")
      assert.deepStrictEqual(tabs.rows[0]!.cells, ["Filtro", "12,5", "a, b; c"])
      const commas = yield* readAll(put(dir, "commas.csv", "name,value\n\"Filtro; grande\",\"12,5\"\n"))
      assert.strictEqual(commas.source.delimiter, ",")
      assert.deepStrictEqual(commas.rows[0]!.cells, ["Filtro; grande", "12,5"])
    }))

  it.scoped("settles a header holding several candidates by the lines that follow", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { rows, source } = yield* readAll(
        put(dir, "mixed.csv", "nome;descrição, detalhes\nA;x\nB;\"y; z\"\nC;w,v\n")
      )
      assert.strictEqual(source.delimiter, ";")
      assert.deepStrictEqual(source.header, ["nome", "descrição, detalhes"])
      assert.deepStrictEqual(
        rows.map((r) => r.cells),
        [["A", "x"], ["B", "y; z"], ["C", "w,v"]]
      )
      const single = yield* readAll(put(dir, "single.csv", "description\nUrgente\nGarantia\n"))
      assert.deepStrictEqual(single.source.header, ["description"])
      assert.strictEqual(single.rows.length, 2)
      assert.include(
        (yield* readError(put(dir, "single-commas.csv", "description\nUrgente, alta\n"))).message,
        "--delimiter"
      )
    }))

  it.scoped("asks for --delimiter when the first lines do not tell", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "ambiguous.csv", "a;b,c\n1;2,3\n")
      const error = yield* readError(file)
      assert.include(error.message, "--delimiter")
      const forced = yield* readAll(file, { delimiter: ";" })
      assert.deepStrictEqual(forced.source.header, ["a", "b,c"])
      assert.deepStrictEqual(forced.rows[0]!.cells, ["1", "2,3"])
    }))

  it.scoped("numbers rows as a spreadsheet shows them: multi-line cells count once, blank lines count", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(
        dir,
        "multi.csv",
        "name,note\r\nA,\"line 1\r\nline 2\r\nline 3\"\r\n\r\nB,plain\r\n,\r\n  \r\nC,\"x\ny\"\r\nD,end"
      )
      const { rows } = yield* readAll(file)
      assert.deepStrictEqual(rows, [
        { row: 2, cells: ["A", "line 1\r\nline 2\r\nline 3"] },
        { row: 4, cells: ["B", "plain"] },
        { row: 7, cells: ["C", "x\ny"] },
        { row: 8, cells: ["D", "end"] }
      ])
    }))

  it.scoped("keeps the header's row when blank lines come first", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { rows, source } = yield* readAll(put(dir, "late-header.csv", "\n\nname,value\nA,1\n"))
      assert.deepStrictEqual(source.header, ["name", "value"])
      assert.deepStrictEqual(rows, [{ row: 4, cells: ["A", "1"] }])
    }))

  it.scoped("finds the header wherever the first bytes' pieces cut it: after many blank lines, longer than a piece, split inside a character", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // (src/files/Csv.ts feeds the header's parse 4 KiB at a time and stops at the piece that gives the header.)
      const blank = ";;\r\n".repeat(2_000)
      const late = yield* readAll(
        put(dir, "blank-first.csv", cp1252(`${blank}externalId;name;observação\r\nCLI-1;Padaria Pão Quente;ok\r\n`))
      )
      assert.deepStrictEqual(late.source.header, ["externalId", "name", "observação"])
      assert.deepStrictEqual(late.rows, [{ row: 2_002, cells: ["CLI-1", "Padaria Pão Quente", "ok"] }])
      // A header of 1,500 columns (about 18 KiB in UTF-8, "ç" and "ã" two bytes each, some split between pieces).
      const names = Array.from({ length: 1_500 }, (_, i) => `observação ${i}`)
      const wide = yield* readAll(
        put(dir, "wide-header.csv", cp1252(`${names.join(";")}\r\n${names.map((_, i) => `${i},5`).join(";")}\r\n`))
      )
      assert.deepStrictEqual(wide.source.header, names)
      assert.strictEqual(wide.rows.length, 1)
      assert.strictEqual(wide.rows[0]!.cells[1_499], "1499,5")
      // A quote never closed past the first piece, within the first bytes: refused naming its row, as before.
      const rows = Array.from({ length: 300 }, (_, i) => `CLI-${i};Cliente ${i};12,50\r\n`).join("")
      const error = yield* readError(
        put(dir, "truncated-later.csv", cp1252(`externalId;name;valor\r\n${rows}CLI-X;"nunca fechada;1\r\n`))
      )
      assert.strictEqual(error.row, 302)
      assert.include(error.message, "truncated-later.csv (row 302)")
      assert.include(error.message, "never closed")
    }))

  it.scoped("aligns ragged rows: short ones padded, extra cells carried and flagged", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { rows } = yield* readAll(put(dir, "ragged.csv", "a,b,c\n1\n1,2,3,4\n1,2,3,,\n1,2\n"))
      assert.deepStrictEqual(rows, [
        { row: 2, cells: ["1", "", ""] },
        { row: 3, cells: ["1", "2", "3", "4"], ragged: true },
        { row: 4, cells: ["1", "2", "3"] },
        { row: 5, cells: ["1", "2", ""] }
      ])
    }))

  it.scoped("trims header names and drops trailing unnamed columns", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { rows, source } = yield* readAll(put(dir, "trailing.csv", " name ; value ;;\nA;1;;\n"))
      assert.deepStrictEqual(source.header, ["name", "value"])
      assert.deepStrictEqual(rows[0], { row: 2, cells: ["A", "1"] })
    }))

  it.scoped("refuses duplicate and unnamed header columns, naming them", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const duplicate = yield* readError(put(dir, "dup.csv", "name,Email,NAME,email\n1,2,3,4\n"))
      assert.include(duplicate.message, "dup.csv")
      assert.include(duplicate.message, "duplicate column names: \"name\" (columns A, C); \"Email\" (columns B, D)")
      assert.strictEqual(duplicate.row, 1)
      const unnamed = yield* readError(put(dir, "unnamed.csv", "name,,value\n1,2,3\n"))
      assert.include(unnamed.message, "no name for column B")
      assert.strictEqual(unnamed.column, "B")
    }))

  it.scoped("refuses empty files and files without a header", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      assert.include((yield* readError(put(dir, "empty.csv", ""))).message, "empty.csv: the file is empty")
      assert.include((yield* readError(put(dir, "bom-only.csv", "\uFEFF"))).message, "the file is empty")
      assert.include((yield* readError(put(dir, "blank.csv", "\r\n\r\n  \r\n"))).message, "empty")
    }))

  it.scoped("reads a header-only file as no rows", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { rows, source } = yield* readAll(put(dir, "header.csv", "externalId,name\r\n"))
      assert.deepStrictEqual(source.header, ["externalId", "name"])
      assert.deepStrictEqual(rows, [])
    }))

  it.scoped("refuses binary content and UTF-16 text", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const png = new Uint8Array([
        0x89,
        0x50,
        0x4e,
        0x47,
        0x0d,
        0x0a,
        0x1a,
        0x0a,
        0x00,
        0x00,
        0x00,
        0x0d,
        0x49,
        0x48,
        0x44,
        0x52
      ])
      const binary = yield* readError(put(dir, "image.csv", png))
      assert.include(binary.message, "image.csv: binary content")
      const controls = yield* readError(
        put(dir, "controls.csv", new Uint8Array([0x61, 0x2c, 0x62, 0x0a, 0x01, 0x02, 0x03, 0x04, 0x2c, 0x05, 0x0a]))
      )
      assert.include(controls.message, "binary content")
      const utf16 = yield* readError(put(dir, "unicode.txt", Buffer.from("\uFEFFname\tcity\r\n", "utf16le")))
      assert.include(utf16.message, "UTF-16")
    }))

  it.scoped("refuses a truncated file (a quote never closed), naming the row", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const error = yield* readError(put(dir, "truncated.csv", "name,note\nA,ok\nB,\"multi\nline\nC,never closed\n"))
      assert.strictEqual(error.row, 3)
      assert.include(error.message, "truncated.csv (row 3)")
      assert.include(error.message, "never closed")
    }))

  it.scoped("stops a quote that swallows the rest of a long file at a bounded row size", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const rest = Array.from({ length: 120_000 }, (_, i) => `CLI-${i},Cliente ${i} com nome longo\n`).join("")
      const error = yield* readError(put(dir, "swallow.csv", `externalId,name\nCLI-A,ok\nCLI-B,"broken\n${rest}`))
      assert.strictEqual(error.row, 3)
      assert.include(
        error.message,
        "row 3 is longer than 4,194,304 characters inside a quoted cell: probably a quote that is never closed"
      )
    }))

  it.scoped("a header too long for any spreadsheet is not blamed on a quote", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const header = Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(",")
      const error = yield* readError(put(dir, "wide.csv", `${header}\n1,2\n`))
      assert.strictEqual(error.row, 1)
      assert.match(
        error.message,
        /wide\.csv \(row 1\): row 1 is longer than 4,194,304 characters, outside any quote, with [\d,]+ cells and more: no spreadsheet holds such a row \(at most 16,384 columns\)/
      )
      assert.notInclude(error.message, "quote that is never closed")
    }))

  it.scoped("refuses what is not a CSV file at all", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      assert.include((yield* readError(Path.join(dir, "missing.csv"))).message, "missing.csv: file not found")
      mkdirSync(Path.join(dir, "folder.csv"))
      assert.include((yield* readError(Path.join(dir, "folder.csv"))).message, "is a directory")
      const xls = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0])
      assert.include((yield* readError(put(dir, "old.xls", xls))).message, "Excel 97-2003")
      assert.include(
        (yield* readError(put(dir, "fake.xlsx", "name,value\n1,2\n"))).message,
        "not a valid .xlsx workbook"
      )
    }))

  it.scoped("gives a fresh stream of rows each time it is run", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const source = yield* openSource(put(dir, "twice.csv", "a,b\n1,2\n3,4\n"), auto)
      const first = Chunk.toReadonlyArray(yield* Stream.runCollect(source.rows))
      const second = Chunk.toReadonlyArray(yield* Stream.runCollect(source.rows))
      assert.strictEqual(first.length, 2)
      assert.deepStrictEqual(second, first)
    }))

  it.scoped("treats a stray quote inside a cell as text, as spreadsheets do", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { rows } = yield* readAll(put(dir, "inch.csv", "name,size\nTubo 1/2\",3\n"))
      assert.deepStrictEqual(rows[0]!.cells, ["Tubo 1/2\"", "3"])
    }))
})
