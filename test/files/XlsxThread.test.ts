/**
 * A large workbook is written on a thread of its own (XlsxThread.ts, XlsxWorker.js): the same bytes as written on
 * the main thread, the file complete or absent, and a thread that fails is a WriteError, never a hang.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import type { Cell } from "../../src/files/Cell.js"
import { openXlsxWriter } from "../../src/files/Write.js"
import { openZip } from "../../src/files/Zip.js"
import { forgetSecrets, registerSecret } from "../../src/Secrets.js"
import { tempDir } from "./support.js"

const header = ["_row", "_status", "_error", "Nome", "Cidade", "Valor", "Ativo", "=SOMA(A1)"]

/** Rows like a pt-BR report's, with every kind of text the writer treats specially. */
const variedRows = (count: number): ReadonlyArray<ReadonlyArray<Cell>> =>
  Array.from({ length: count }, (_, i) => {
    const kind = i % 12
    const text = [
      "São Paulo – Ação Rápida Ltda.",
      "",
      "=1+1",
      "+55 (11) 98765-4321",
      "controle\u0001\u0008fim",
      "linha 1\r\nlinha 2",
      "  espaços  ",
      "texto _x0041_ literal",
      "meia \uD800 surrogate",
      "x".repeat(40_000),
      "@cmd|' /C calc'!A0",
      "segredo-abc-123 no meio"
    ][kind]!
    return [
      i + 2,
      ["valid", "invalid", "skipped", "failed"][i % 4]!,
      i % 4 === 1 ? `Linha ${i + 2}: campo "Valor" inválido <${i}> & mais` : null,
      text,
      // The widest cell of its column among the first rows, and far shorter once its secret is redacted: the
      // column is as wide as the text as given, written here or on the thread.
      i === 3 ? "segredo-abc-123 segredo-abc-123 x" : i % 5 === 0 ? undefined : "Campinas",
      i % 7 === 0 ? Number.NaN : i % 11 === 0 ? 1234.5 : `${i},50`,
      i % 3 === 0,
      "\t"
    ]
  })

const front = [
  { cells: ["Resumo"], heading: true },
  { cells: ["valid", 10, "=2+2"], status: true },
  { cells: ["Arquivo", "clientes;ção.csv"] }
]

/** Writes `rows` to `name` (a batch of 300 at a time, as a run's reports are fed) and returns the file's bytes. */
const write = (
  dir: string,
  name: string,
  rows: ReadonlyArray<ReadonlyArray<Cell>>,
  options: { readonly threadAfterRows?: number; readonly threadScript?: URL } = {}
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const path = Path.join(dir, name)
      const writer = yield* openXlsxWriter(path, header, {
        statusColumn: 1,
        sheetName: "report",
        frontSheet: "Summary",
        wholeTextIn: "report.csv",
        wrapColumns: [2],
        maxSheetRows: 2500,
        now: Date.UTC(2026, 10, 28, 12, 0, 0),
        ...options
      })
      for (let i = 0; i < rows.length; i += 300) yield* writer.writeAll(rows.slice(i, i + 300))
      yield* writer.closeWith(front)
      return readFileSync(path)
    })
  )

describe("a workbook written on a thread of its own", () => {
  it.scoped(
    "is byte for byte the workbook written on the main thread (pt-BR text, empty cells, long text, formulas, control characters, several sheets)",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        registerSecret("segredo-abc-123")
        yield* Effect.addFinalizer(() => Effect.sync(forgetSecrets))
        const rows = variedRows(6000)
        const here = yield* write(dir, "here.xlsx", rows, { threadAfterRows: Number.POSITIVE_INFINITY })
        const thread = yield* write(dir, "thread.xlsx", rows, { threadAfterRows: 0 })
        const byDefault = yield* write(dir, "default.xlsx", rows)
        assert.isTrue(here.equals(thread), "written on a thread, the workbook differs from the one written here")
        assert.isTrue(here.equals(byDefault), "past the default number of rows, the workbook differs")
        // The thread's workbook is a real one: three sheets of the table and the summary, no secret in any entry.
        const zip = yield* Effect.promise(() => openZip(Path.join(dir, "thread.xlsx")))
        const names = [...zip.entries.keys()]
        assert.includeMembers(names, [
          "xl/worksheets/sheet1.xml",
          "xl/worksheets/sheet3.xml",
          "xl/worksheets/sheet4.xml"
        ])
        for (const name of names) {
          const text = (yield* Effect.promise(() => zip.read(name, 64 * 1024 * 1024)))?.toString("utf8") ?? ""
          assert.notInclude(text, "segredo-abc-123", name)
        }
        const sheet = (yield* Effect.promise(() =>
          zip.read("xl/worksheets/sheet1.xml", 64 * 1024 * 1024)
        ))?.toString("utf8") ?? ""
        assert.include(sheet, "São Paulo – Ação Rápida Ltda.")
        assert.include(sheet, "controle_x0001__x0008_fim")
        yield* Effect.sync(() => zip.close())
        // A small table (under the default) stays on the main thread: the same bytes as forced here.
        const few = variedRows(40)
        assert.isTrue(
          (yield* write(dir, "few-here.xlsx", few, { threadAfterRows: Number.POSITIVE_INFINITY })).equals(
            yield* write(dir, "few-thread.xlsx", few, { threadAfterRows: 0 })
          )
        )
      }),
    120_000
  )

  it.scoped(
    "a thread that fails is a WriteError naming the file, and no workbook is left, whole or in part",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const rows = variedRows(500)
        // A thread that throws on its second batch, and one that stops the process it runs in.
        const throwing = Path.join(dir, "throwing.mjs")
        writeFileSync(
          throwing,
          "import { parentPort } from \"node:worker_threads\"\nlet n = 0\nparentPort.on(\"message\", () => {\n" +
            "  if (++n === 2) throw new Error(\"disk on fire\")\n" +
            "  const bytes = new Uint8Array(4)\n  parentPort.postMessage({ bytes, closed: false }, [bytes.buffer])\n})\n"
        )
        const exiting = Path.join(dir, "exiting.mjs")
        writeFileSync(exiting, "process.exit(7)\n")
        const failing = Path.join(dir, "failing.mjs")
        writeFileSync(
          failing,
          "import { parentPort } from \"node:worker_threads\"\n" +
            "parentPort.on(\"message\", () => parentPort.postMessage({ error: { message: \"the workbook would pass 4 GiB\", tooLarge: true } }))\n"
        )
        const cases = [
          ["throwing.xlsx", throwing, /cannot write .*throwing\.xlsx: the workbook's thread failed: disk on fire/],
          ["exiting.xlsx", exiting, /cannot write .*exiting\.xlsx: the workbook's thread stopped \(exit code 7\)/],
          [
            "failing.xlsx",
            failing,
            /cannot write .*failing\.xlsx: the workbook would pass 4 GiB; use CSV for a table this large/
          ]
        ] as const
        for (const [name, script, message] of cases) {
          const exit = yield* Effect.exit(
            write(dir, name, rows, { threadAfterRows: 0, threadScript: pathToFileURL(script) })
          )
          assert.isTrue(Exit.isFailure(exit), name)
          if (Exit.isFailure(exit)) {
            const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
            assert.strictEqual((error as { _tag?: string } | undefined)?._tag, "WriteError", name)
            assert.match((error as Error).message, message)
          }
          assert.isFalse(existsSync(Path.join(dir, name)), name)
        }
        assert.deepStrictEqual(readdirSync(dir).filter((f) => f.endsWith(".tmp")), [])
      }),
    120_000
  )

  it.scoped("the thread ends with its scope when the run stops before the table closes", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const scope = yield* Scope.make()
      const path = Path.join(dir, "stopped.xlsx")
      const writer = yield* openXlsxWriter(path, header, { threadAfterRows: 0 }).pipe(Scope.extend(scope))
      yield* writer.writeAll(variedRows(3000))
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(existsSync(path))
      assert.deepStrictEqual(readdirSync(dir), [])
    }), 120_000)
})
