/**
 * A run's reports: `report.csv` and `report.xlsx` (one line per input row, in input order, the tool's columns
 * first and then the source's columns unchanged) and `summary.json`. Each file is renamed into place only when
 * complete. `validate` streams each line as its row is validated, an import as its row's outcome comes out of
 * the sending, in source order (`openReports`); an import whose outcomes come in later passes writes them at the
 * end, from the source read once more joined with each row's final outcome (`writeReports`).
 */
import { Effect, Stream } from "effect"
import * as Path from "node:path"
import type { RunTraffic } from "../client/Api.js"
import type { SourceRow } from "../files/Source.js"
import type { WriteError } from "../files/Write.js"
import { openCsvWriter, openXlsxWriter, writeFileAtomic } from "../files/Write.js"
import { type ErrorKind, ErrorTally } from "../report/ErrorKinds.js"
import { refreshRunReport } from "../report/Html.js"
import type { Input } from "./Input.js"
import type { ParentRun } from "./Journal.js"
import { reportCsv, reportXlsx, summaryFile } from "./RunDir.js"
import { countStatuses, type Outcome, type Status } from "./Status.js"
import { reportColumns } from "./ToolColumns.js"

export interface Summary extends RunTraffic {
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
  readonly exitCode: number
  readonly dryRun: boolean
  /** The run a rerun took its rows from, or null. */
  readonly parent: ParentRun | null
  /** The run stopped before every row was sent (interrupted or aborted). */
  readonly interrupted: boolean
  /** Why the run was aborted (credentials rejected, a token refused twice …), or null. */
  readonly aborted: string | null
  /** The tool's version, the API it talked to, and the request budget it kept to (absent for `validate`). */
  readonly version?: string
  readonly baseUrl?: string
  readonly budget?: { readonly limit: number; readonly windowMs: number }
  /** Rows that did not end well, grouped by error (the message without its values), most rows first. */
  readonly errors?: ReadonlyArray<ErrorKind>
}

/** Error kinds a summary keeps. */
const errorKindsKept = 20

export interface ReportTarget {
  readonly runDir: string
  readonly input: Pick<Input, "columns" | "cellsOf">
  readonly dryRun: boolean
  /** The decimal mark the rows were read with: a workbook's number cells are repeated with it. */
  readonly decimal: "." | ","
}

export interface ReportInput extends ReportTarget {
  readonly input: Input
  /** The final outcome of a row (rows the run never reached get one from `missing`). */
  readonly outcomeOf: (row: number) => Outcome
}

export interface ReportWriter {
  /** Appends the line of one input row (rows must come in input order); waits while the disk is behind. */
  readonly write: (row: SourceRow, outcome: Outcome) => Effect.Effect<void, WriteError>
  /** Appends the lines of consecutive input rows in one go. */
  readonly writeAll: (lines: ReadonlyArray<readonly [SourceRow, Outcome]>) => Effect.Effect<void, WriteError>
  /** Finishes both files (each renamed into place only now); the number of rows and the counts per status. */
  readonly close: Effect.Effect<
    { readonly rows: number; readonly counts: Record<Status, number>; readonly errors: ReadonlyArray<ErrorKind> },
    WriteError
  >
}

/** Opens report.csv and report.xlsx for lines written as the rows' outcomes become known; nothing is kept per row. */
export const openReports = Effect.fn("Report.open")(function*(target: ReportTarget) {
  const columns = reportColumns(target.dryRun)
  const header = [...columns.map(([name]) => name), ...target.input.columns]
  const statusColumn = columns.findIndex(([name]) => name === "_status")
  const counts = countStatuses([])
  let rows = 0
  const errors = new ErrorTally()
  // Each writer applies its own formula guard: the CSV's (a spreadsheet would run such a cell) and the workbook's
  // (inline strings never run: only an ambiguous leading `'` is doubled, so no `'` shows in Excel).
  const csv = yield* openCsvWriter(Path.join(target.runDir, reportCsv), header, { bom: true, guard: true })
  const xlsx = yield* openXlsxWriter(Path.join(target.runDir, reportXlsx), header, {
    statusColumn,
    freezeHeader: true,
    autoFilter: true,
    sheetName: "report",
    guard: true,
    wrapColumns: [columns.findIndex(([name]) => name === "_error")]
  })
  const writeAll = (lines: ReadonlyArray<readonly [SourceRow, Outcome]>) =>
    Effect.suspend(() => {
      const table = lines.map(([row, outcome]) => {
        counts[outcome.status] += 1
        if (outcome.error !== undefined && outcome.error !== "") errors.add(row.row, outcome.error)
        const cells = columns.map(([, cell]) => cell(row.row, outcome))
        for (const cell of target.input.cellsOf(row, target.decimal)) cells.push(cell)
        return cells
      })
      rows += lines.length
      // Side by side: while one file waits for the disk (or deflate), the other's lines are built.
      return Effect.all([csv.writeAll(table), xlsx.writeAll(table)], { concurrency: 2, discard: true })
    })
  const writer: ReportWriter = {
    write: (row, outcome) => writeAll([[row, outcome]]),
    writeAll,
    close: Effect.zipRight(csv.close, xlsx.close).pipe(
      Effect.map(() => ({ rows, counts, errors: errors.top(errorKindsKept) }))
    )
  }
  return writer
})

/** Writes report.csv and report.xlsx from the source read once more; returns the number of rows and the counts per status. */
export const writeReports = Effect.fn("Report.write")(function*(report: ReportInput) {
  return yield* Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* openReports(report)
      yield* Stream.runForEachChunk(
        report.input.rows,
        (chunk) => writer.writeAll(Array.from(chunk, (row) => [row, report.outcomeOf(row.row)] as const))
      )
      return yield* writer.close
    })
  )
})

/** Writes `summary.json`, then the run's `report.html` from it and the journal (see report/Html.ts). */
export const writeSummary = (runDir: string, summary: Summary) =>
  writeFileAtomic(Path.join(runDir, summaryFile), `${JSON.stringify(summary, null, 2)}\n`).pipe(
    Effect.zipRight(refreshRunReport(runDir))
  )
