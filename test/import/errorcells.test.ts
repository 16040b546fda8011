/**
 * A spreadsheet's error value (`#DIV/0!`, `#N/A` …, typed or a formula's saved result; or saved as text in a CSV)
 * makes only its own row invalid, naming the row, the column and the error; every other row goes on, in validate
 * and import alike, and no error code is ever sent as text.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Path from "node:path"
import { cp1252, importInto, put, readReport, rowStatuses, startTestSandbox, tempDir, validateFile } from "./support.js"

const errorWorkbook = (dir: string) =>
  Effect.promise(async () => {
    const wb = new ExcelJS.Workbook()
    wb.creator = "Microsoft Excel"
    const ws = wb.addWorksheet("clientes")
    ws.addRow(["externalId", "name", "note", "Comissão"])
    ws.addRow(["C-1", "Padaria São João", "ok", 1])
    ws.addRow(["C-2", "Mercado", { error: "#DIV/0!" } as ExcelJS.CellErrorValue, 2])
    ws.addRow(["C-3", { formula: "PROCV(A4;Z:Z;2;0)", result: { error: "#N/A" } } as ExcelJS.CellFormulaValue, "x", 3])
    ws.addRow(["C-4", "Açougue", "ok", { error: "#REF!" } as ExcelJS.CellErrorValue])
    const path = Path.join(dir, "clientes.xlsx")
    await wb.xlsx.writeFile(path)
    return path
  })

describe("error cells", () => {
  it.scopedLive(
    "make only their row invalid, naming column and error; the other rows are validated and imported",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = yield* errorWorkbook(dir)

        const checked = yield* validateFile({ resource: "customers", file, runDir: Path.join(dir, "validate") })
        assert.strictEqual(checked.exitCode, 1)
        // An error in a column that is not sent ("Comissão") harms nothing.
        assert.deepStrictEqual(rowStatuses(readReport(checked.runDir)), [
          "2:valid",
          "3:invalid",
          "4:invalid",
          "5:valid"
        ])

        const runDir = Path.join(dir, "run")
        const result = yield* importInto(sandbox, { resource: "customers", file, runDir })
        assert.strictEqual(result.exitCode, 1)
        const report = readReport(runDir)
        assert.deepStrictEqual(rowStatuses(report), ["2:created", "3:invalid", "4:invalid", "5:created"])
        const typed = report.find((r) => r._row === "3")!
        assert.strictEqual(typed._error, "note: the error value #DIV/0!, not data: correct the cell in the sheet")
        assert.strictEqual(typed.note, "#DIV/0!", "the report shows the cell as the sheet does")
        const formula = report.find((r) => r._row === "4")!
        assert.match(formula._error!, /^name: a formula whose saved result is the error #N\/A: correct the formula/)
        const stored = yield* sandbox.control.records("sandbox-key", "customers")
        assert.deepStrictEqual(stored.map((c) => c.externalId).sort(), ["C-1", "C-4"])
      }),
    120_000
  )

  it.scopedLive("an error value a spreadsheet saved as text in a CSV is not sent either", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        cp1252("externalId;name;note\r\nC-1;Padaria São João;ok\r\nC-2;#N/A;x\r\nC-3;Mercado;#DIV/0!\r\n")
      )
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, { resource: "customers", file, runDir })
      const report = readReport(runDir)
      assert.deepStrictEqual(rowStatuses(report), ["2:created", "3:invalid", "4:invalid"])
      assert.match(report[1]!._error!, /^name: the error value #N\/A, not data/)
      assert.match(report[2]!._error!, /^note: the error value #DIV\/0!, not data/)
      const stored = yield* sandbox.control.records("sandbox-key", "customers")
      assert.deepStrictEqual(stored.map((c) => c.externalId), ["C-1"])
    }), 120_000)
})
