/**
 * A report's lines encoded once for both files (Write.ts `encodeLines`, CellBytes.js): report.csv and report.xlsx
 * are byte for byte what the writers make of the same cells given one by one (`writeAll`), on the main thread and
 * on the workbook's thread, for every kind of text the guard, the redaction, CSV quoting, XML escaping and Excel's
 * cut treat specially.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import type { Cell } from "../../src/files/Cell.js"
import { utf8Length } from "../../src/files/CellBytes.js"
import { encodeLines, openCsvWriter, openXlsxWriter } from "../../src/files/Write.js"
import { forgetSecrets, registerSecret } from "../../src/Secrets.js"
import { tempDir } from "./support.js"

const header = ["_row", "_status", "_error", "Nome", "Observação", "Valor", "Ativo", "Cidade"]

/** Text cells of a pt-BR report, each treated specially by some step. */
const texts = [
  "Padaria São João – Comércio Ltda.",
  "",
  "=1+1",
  "+55 (11) 98765-4321",
  "-12,5",
  "'=SOMA(A1)",
  "Loja;=1+1",
  "Loja, \"matriz\"; filial",
  "  espaços  ",
  "\u00A0nbsp à frente",
  "linha 1\r\nlinha 2",
  "linha 1\nlinha 2",
  "tab\tno meio",
  "controle\u0001\u0008fim",
  "texto _x0041_ literal",
  "fim com _",
  "meia \uD800 surrogate",
  "emoji \uD83D\uDE00 ok",
  "reservado \uFFFE \uFFFF",
  "a & b < c > d",
  "pediu “orçamento” de € 210,00",
  "segredo-abc-123 no meio",
  "y".repeat(40_000),
  "ção".repeat(12_000)
]

/** report.csv's cells and the workbook's (column `Valor` a number where it reads as one). */
const lineOf = (i: number): { readonly csv: ReadonlyArray<Cell>; readonly sheet: ReadonlyArray<Cell> } => {
  const text = texts[i % texts.length]!
  const valor = i % 5 === 0 ? `${i},50` : i % 7 === 0 ? "abc" : ""
  const csv: ReadonlyArray<Cell> = [
    i + 2,
    ["valid", "invalid", "skipped"][i % 3]!,
    i % 3 === 1 ? `Linha ${i + 2}: campo "Valor" inválido <${i}> & mais` : null,
    text,
    texts[(i * 7) % texts.length]!.slice(0, 50),
    valor,
    i % 4 === 0 ? true : i % 4 === 1 ? false : undefined,
    i % 11 === 0 ? Number.NaN : i % 13 === 0 ? -0 : "Campinas"
  ]
  const sheet = i % 5 === 0 ? csv.map((cell, c) => (c === 5 ? i + 0.5 : cell)) : csv
  return { csv, sheet }
}

const lines = (count: number) => Array.from({ length: count }, (_, i) => lineOf(i))

const now = Date.UTC(2026, 10, 29, 7, 0, 0)

const xlsxOptions = {
  statusColumn: 1,
  sheetName: "report",
  frontSheet: "Summary",
  wholeTextIn: "report.csv",
  wrapColumns: [2],
  guard: true,
  now
}

const front = [{ cells: ["Resumo"], heading: true }, { cells: ["valid", 10, "=2+2"], status: true }]

/** Both files written from the cells given one by one (`writeAll`), in batches of `batch` lines. */
const writeCells = (
  dir: string,
  prefix: string,
  all: ReturnType<typeof lines>,
  batch: number,
  options: object = {}
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const csv = yield* openCsvWriter(Path.join(dir, `${prefix}.csv`), header, { bom: true, guard: true })
      const xlsx = yield* openXlsxWriter(Path.join(dir, `${prefix}.xlsx`), header, { ...xlsxOptions, ...options })
      for (let i = 0; i < all.length; i += batch) {
        const part = all.slice(i, i + batch)
        yield* csv.writeAll(part.map((l) => l.csv))
        yield* xlsx.writeAll(part.map((l) => l.sheet))
      }
      yield* csv.close
      yield* xlsx.closeWith(front)
    })
  )

/** Both files written from lines encoded once (`encodeLines`, `writeEncoded`), in batches of `batch` lines. */
const writeEncoded = (
  dir: string,
  prefix: string,
  all: ReturnType<typeof lines>,
  batch: number,
  options: object = {}
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const csv = yield* openCsvWriter(Path.join(dir, `${prefix}.csv`), header, { bom: true, guard: true })
      const xlsx = yield* openXlsxWriter(Path.join(dir, `${prefix}.xlsx`), header, { ...xlsxOptions, ...options })
      for (let i = 0; i < all.length; i += batch) {
        const part = all.slice(i, i + batch)
        const encoded = encodeLines(part.map((l) => l.csv), part.map((l) => l.sheet), {
          guard: true,
          wholeTextIn: "report.csv"
        })
        yield* Effect.all([csv.writeEncoded(encoded), xlsx.writeEncoded(encoded)], { concurrency: 2, discard: true })
      }
      yield* csv.close
      yield* xlsx.closeWith(front)
    })
  )

describe("report lines encoded once for report.csv and report.xlsx", () => {
  it("counts UTF-8 bytes as Buffer encodes them (pairs, lone surrogates, two- and three-byte characters)", () => {
    for (const text of [...texts, "\uDC00\uD800", "\uD83D", "a\uDE00", "\u07FF\u0800\uFFFF", "\uD83D\uDE00\uD83D"]) {
      assert.strictEqual(utf8Length(text), Buffer.byteLength(text, "utf8"), JSON.stringify(text.slice(0, 20)))
    }
  })

  it.scoped(
    "are byte for byte the files written from the cells one by one, on either thread, across sheets",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        registerSecret("segredo-abc-123")
        yield* Effect.addFinalizer(() => Effect.sync(forgetSecrets))
        const all = lines(3000)
        // Several sheets by rows and by bytes; the first lines before the workbook's thread starts (2,000 by
        // default), or none; batches smaller than the rows sampled for the widths (100), so that encoded rows
        // reach the thread before its first sheet opens.
        const cases = [
          ["default", 256, { maxSheetRows: 1200 }],
          ["thread-at-once", 40, { threadAfterRows: 0, maxSheetRows: 1200 }],
          ["by-bytes", 300, { threadAfterRows: 0, maxSheetBytes: 2_000_000 }],
          ["main-thread", 300, { threadAfterRows: Number.POSITIVE_INFINITY }]
        ] as const
        for (const [name, batch, options] of cases) {
          yield* writeCells(dir, `${name}-cells`, all, batch, options)
          yield* writeEncoded(dir, `${name}-encoded`, all, batch, options)
          for (const ext of ["csv", "xlsx"]) {
            const cells = readFileSync(Path.join(dir, `${name}-cells.${ext}`))
            const encoded = readFileSync(Path.join(dir, `${name}-encoded.${ext}`))
            assert.isTrue(cells.equals(encoded), `${name}.${ext}: encoded once, the file differs`)
            assert.notInclude(encoded.toString("latin1"), "segredo-abc-123", `${name}.${ext}`)
          }
        }
        // The CSV holds what the guard and quoting made of the text.
        const csv = readFileSync(Path.join(dir, "default-encoded.csv"), "utf8")
        assert.include(csv, ",Loja;'=1+1,")
        assert.include(csv, "\"Loja, \"\"matriz\"\"; filial\"")
        assert.include(csv, "\"\u00A0nbsp à frente\"")
      }),
    180_000
  )
})
