/**
 * A run's reports: `report.csv` and `report.xlsx` (one line per input row, in input order, the tool's columns
 * first and then the source's columns unchanged) and `summary.json`. Written at the end, atomically, from the
 * source read once more and joined with each row's final outcome.
 */
import * as Path from "node:path"
import { Effect, Stream } from "effect"
import type { Cell } from "../files/Write.js"
import { openCsvWriter, openXlsxWriter, writeFileAtomic } from "../files/Write.js"
import { changesColumn, type Input, toolColumns } from "./Input.js"
import type { ParentRun } from "./Journal.js"
import { reportCsv, reportXlsx, summaryFile } from "./RunDir.js"
import { countStatuses, type Outcome, type Status } from "./Status.js"

export interface Summary {
  readonly tool: "fsm-bulk"
  readonly command: string
  readonly resource: string
  readonly mode: string
  /** Absolute path of the source file. */
  readonly source: string
  readonly runDir: string
  readonly started: string
  readonly finished: string
  readonly rows: number
  readonly counts: Record<Status, number>
  readonly requests: number
  readonly rateLimited: number
  readonly retries: number
  readonly exitCode: number
  readonly dryRun: boolean
  /** The run a rerun took its rows from, or null. */
  readonly parent: ParentRun | null
  /** The run stopped before every row was sent (interrupted or aborted). */
  readonly interrupted: boolean
  /** Why the run was aborted (credentials rejected, a token refused twice …), or null. */
  readonly aborted: string | null
}

const toolCells = (row: number, o: Outcome, dryRun: boolean): Array<Cell> => {
  const cells: Array<Cell> = [
    row,
    o.status,
    o.http ?? "",
    o.requestId ?? "",
    o.attempts ?? "",
    (o.retryOutcomes ?? []).join(";"),
    o.recordId ?? "",
    o.error ?? ""
  ]
  if (dryRun) cells.push(o.changes ?? "")
  return cells
}

export interface ReportInput {
  readonly runDir: string
  readonly input: Input
  readonly dryRun: boolean
  /** The decimal mark the rows were read with: a workbook's number cells are repeated with it. */
  readonly decimal: "." | ","
  /** The final outcome of a row (rows the run never reached get one from `missing`). */
  readonly outcomeOf: (row: number) => Outcome
}

/** Writes report.csv and report.xlsx; returns the number of rows and the counts per status. */
export const writeReports = Effect.fn("Report.write")(function*(report: ReportInput) {
  const header = [...toolColumns, ...(report.dryRun ? [changesColumn] : []), ...report.input.columns]
  const statusColumn = toolColumns.indexOf("_status")
  const counts = countStatuses([])
  let rows = 0
  yield* Effect.scoped(
    Effect.gen(function*() {
      const csv = yield* openCsvWriter(Path.join(report.runDir, reportCsv), header, { bom: true, guard: true })
      const xlsx = yield* openXlsxWriter(Path.join(report.runDir, reportXlsx), header, {
        statusColumn,
        freezeHeader: true,
        autoFilter: true,
        sheetName: "report",
        guard: true
      })
      yield* Stream.runForEach(report.input.rows, (row) => {
        const outcome = report.outcomeOf(row.row)
        counts[outcome.status] += 1
        rows += 1
        const cells = [...toolCells(row.row, outcome, report.dryRun), ...report.input.cellsOf(row, report.decimal)]
        return Effect.zipRight(csv.write(cells), xlsx.write(cells))
      })
      yield* csv.close
      yield* xlsx.close
    })
  )
  return { rows, counts }
})

export const writeSummary = (runDir: string, summary: Summary) =>
  writeFileAtomic(Path.join(runDir, summaryFile), `${JSON.stringify(summary, null, 2)}\n`)
