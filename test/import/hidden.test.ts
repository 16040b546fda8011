/**
 * What a spreadsheet hides is not what its user sees: rows hidden by hand or filtered out by an AutoFilter, and
 * hidden columns, are not sent unless `--include-hidden` asks; each hidden row is reported `skipped` under its own
 * row number, and the summary counts and names them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { filteredWorkbook } from "./hiddenBook.js"
import { importInto, readReport, readSummary, rowStatuses, startTestSandbox, tempDir, validateFile } from "./support.js"

describe("hidden rows and columns of a workbook", () => {
  it.scopedLive(
    "are not sent by default: rows skipped under their own numbers, the column listed; --include-hidden sends them",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = yield* filteredWorkbook(dir)

        const checked = yield* validateFile({ resource: "customers", file, runDir: Path.join(dir, "validate") })
        assert.strictEqual(checked.exitCode, 0)
        assert.deepStrictEqual(rowStatuses(readReport(checked.runDir)), [
          "2:valid",
          "3:skipped",
          "4:valid",
          "5:skipped",
          "6:valid"
        ])

        const first = Path.join(dir, "run-1")
        const result = yield* importInto(sandbox, { resource: "customers", file, runDir: first })
        assert.strictEqual(result.exitCode, 0)
        const report = readReport(first)
        assert.deepStrictEqual(rowStatuses(report), ["2:created", "3:skipped", "4:created", "5:skipped", "6:created"])
        const hiddenRow = report.find((r) => r._row === "3")!
        assert.include(hiddenRow._error!, "row 3 is hidden in the spreadsheet")
        assert.include(hiddenRow._error!, "--include-hidden")
        // The report still repeats every cell the user typed, the hidden column's too.
        assert.strictEqual(hiddenRow.note, "linha escondida")
        const summary = readSummary(first)
        assert.deepStrictEqual(summary.hiddenRows, { count: 2, rows: [3, 5] })
        assert.deepStrictEqual(summary.hiddenColumns, ["note"])
        assert.include(summary.ignoredColumns, "note")
        assert.strictEqual(summary.counts.skipped, 2)
        let stored = yield* sandbox.control.records("sandbox-key", "customers")
        assert.deepStrictEqual(stored.map((c) => c.externalId).sort(), ["C-1", "C-3", "C-5"])
        assert.isTrue(stored.every((c) => c.note === undefined || c.note === null || c.note === ""), "note not sent")

        const second = Path.join(dir, "run-2")
        const again = yield* importInto(sandbox, {
          resource: "customers",
          file,
          runDir: second,
          read: { encoding: "auto", delimiter: "auto", includeHidden: true }
        })
        assert.strictEqual(again.exitCode, 0)
        assert.deepStrictEqual(rowStatuses(readReport(second)), [
          "2:updated",
          "3:created",
          "4:updated",
          "5:created",
          "6:updated"
        ])
        assert.isUndefined(readSummary(second).hiddenRows)
        stored = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(stored.find((c) => c.externalId === "C-2")?.note, "linha escondida")
        assert.strictEqual(stored.find((c) => c.externalId === "C-1")?.note, "Inadimplente")
      }),
    120_000
  )
})
