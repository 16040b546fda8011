/**
 * A run's reports: `report.csv` and `report.xlsx` (one line per input row, in input order, the tool's columns
 * first and then the source's columns unchanged) and `summary.json`. Each file is renamed into place only when
 * complete. `validate` streams each line as its row is validated, an import as its row's outcome comes out of
 * the sending, in source order (`openReports`); an import whose outcomes come in later passes writes them at the
 * end, from the source read once more joined with each row's final outcome (`writeReports`).
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import type { RunTraffic } from "../client/Api.js"
import { type ErrorKind, ErrorTally } from "../console/ErrorKinds.js"
import type { SourceRow } from "../files/Source.js"
import type { Cell, FrontRow, WriteError } from "../files/Write.js"
import { openCsvWriter, openXlsxWriter, writeFileAtomic } from "../files/Write.js"
import { summarySheetName } from "../files/XlsxWriter.js"
import type { PlanLine } from "../mapping/Apply.js"
import { t } from "../Messages.js"
import { refreshRunReport } from "../report/Html.js"
import { resource, type ResourceName, templateColumns } from "../Resources.js"
import { countStatuses, type Outcome, shownCounts, type Status } from "../Status.js"
import type { Formats } from "../validate/Model.js"
import { parseNumber } from "../validate/Numbers.js"
import type { Input } from "./Input.js"
import type { AppliedPlan, ParentRun } from "./Journal.js"
import { reportCsv, reportXlsx, summaryFile } from "./RunDir.js"
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
  /**
   * A dry run only: `counts` as its reports show them, planned (`{"would-create": 5, "unchanged": 2}`, zeros left
   * out). `counts` keeps the contract's statuses, so scripts read a dry run and a real run the same way.
   */
  readonly planned?: Record<string, number>
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
  /** How the source was read: what `auto` settled (or what was given). */
  readonly formats?: SettledFormats
  /** Source columns whose values were not sent (no field of the resource, or ignored by the profile). */
  readonly ignoredColumns?: ReadonlyArray<string>
  /**
   * XLSX: the rows the sheet hides (by hand or by a filter), reported `skipped` and not sent (without
   * `--include-hidden`): how many, and the first of them.
   */
  readonly hiddenRows?: HiddenRows
  /** XLSX: the columns the sheet hides, not sent (without `--include-hidden`); also in `ignoredColumns`. */
  readonly hiddenColumns?: ReadonlyArray<string>
  /** The mapping profile the run read the file through (`--map`), and the rows it skipped as not data. */
  readonly mapping?: {
    readonly file: string
    readonly sha256: string
    readonly headerRow: number
    readonly skippedRows: ReadonlyArray<{ readonly row: number; readonly why: string }>
    /** The column plan: each source column (or rule) and the field it went to, or none (ignored). */
    readonly plan: ReadonlyArray<PlanLine>
    readonly profile: unknown
  }
  /** The plan the run applied (`fsm-bulk apply`): its file, sha256, approver and the target it was made against. */
  readonly plan?: AppliedPlan
}

/** The encoding and delimiter of a CSV source (absent for a workbook), its decimal mark and date order. */
export interface SettledFormats extends Formats {
  readonly encoding?: string
  readonly delimiter?: string
}

export const settledFormats = (
  source: { readonly encoding?: string | undefined; readonly delimiter?: string | undefined },
  formats: Formats
): SettledFormats => ({
  ...(source.encoding !== undefined ? { encoding: source.encoding } : {}),
  ...(source.delimiter !== undefined ? { delimiter: source.delimiter } : {}),
  decimal: formats.decimal,
  dateFormat: formats.dateFormat
})

/** Error kinds a summary keeps. */
const errorKindsKept = 20

export interface ReportTarget {
  readonly runDir: string
  readonly input: Pick<Input, "columns" | "cellsOf">
  readonly dryRun: boolean
  /** The decimal mark the rows were read with: a workbook's number cells are repeated with it. */
  readonly decimal: "." | ","
  /** The rows' resource: report.xlsx gives its number columns as number cells. */
  readonly resource?: ResourceName
  /** The formats settled for the file, shown on report.xlsx's Summary sheet. */
  readonly formats?: Formats
  /** False: report.csv alone, no report.xlsx (a fleet's `submit` reads the verdicts and shows no report). */
  readonly workbook?: boolean
}

interface ReportInput extends ReportTarget {
  readonly input: Input
  /** The final outcome of a row (rows the run never reached get one from `missing`). */
  readonly outcomeOf: (row: number) => Outcome
}

interface ReportWriter {
  /** Appends the line of one input row (rows must come in input order); waits while the disk is behind. */
  readonly write: (row: SourceRow, outcome: Outcome) => Effect.Effect<void, WriteError>
  /** Appends the lines of consecutive input rows in one go. */
  readonly writeAll: (lines: ReadonlyArray<readonly [SourceRow, Outcome]>) => Effect.Effect<void, WriteError>
  /**
   * Finishes both files (each renamed into place only now). `summarize` turns the rows, the counts per status and
   * the error kinds into the run's summary, which report.xlsx shows on its first sheet; it runs after the last line.
   */
  readonly close: <S extends Summary, E>(summarize: (tally: ReportTally) => Effect.Effect<S, E>) => Effect.Effect<
    ReportTally & { readonly summary: S },
    WriteError | E
  >
}

/** Rows a summary names by number: how many, and the first `hiddenRowsKept`. */
interface HiddenRows {
  readonly count: number
  readonly rows: ReadonlyArray<number>
}
const hiddenRowsKept = 20

export interface ReportTally {
  readonly rows: number
  /** The rows the sheet hides (`SourceRow.hidden`): `skipped`, but by the file's own choice, not a failure. */
  readonly hidden: HiddenRows
  readonly counts: Record<Status, number>
  readonly errors: ReadonlyArray<ErrorKind>
}

const yesNo = (b: boolean) => (b ? t("report.yes") : t("report.no"))

/**
 * report.xlsx's first sheet: the rows by status, the errors by kind, the run's settings and its traffic. Counts
 * are number cells; a section with nothing to show says so.
 */
const summarySheet = (summary: Summary, formats: Formats | undefined): ReadonlyArray<FrontRow> => {
  const statuses = Object.entries(shownCounts(summary.counts, summary.dryRun))
  const errors = summary.errors ?? []
  const setting = (label: string, value: Cell): ReadonlyArray<FrontRow> =>
    value === undefined || value === null || value === "" ? [] : [{ cells: [label, value] }]
  return [
    {
      cells: [`fsm-bulk ${summary.command} ${summary.resource}`, summary.dryRun ? t("report.xlsxDryRun") : ""],
      heading: true
    },
    { cells: [] },
    {
      cells: [summary.dryRun ? t("report.rowsByPlannedStatus") : t("report.rowsByStatus"), t("report.label.rows")],
      heading: true
    },
    ...statuses.map(([status, n]): FrontRow => ({ cells: [status, n], status: true })),
    { cells: [t("report.label.total"), summary.rows] },
    { cells: [] },
    { cells: [t("report.errorsByKind"), ...t("report.exampleHeadings").split("|")], heading: true },
    ...(errors.length === 0
      ? [{ cells: [t("report.noErrors")] }]
      : errors.map((e): FrontRow => ({
        cells: [
          e.kind,
          e.examples[0] !== undefined
            ? t("report.rowExample", { row: e.examples[0].row, error: e.examples[0].error })
            : "",
          e.count
        ]
      }))),
    { cells: [] },
    { cells: [t("report.settings"), ""], heading: true },
    ...setting(t("report.label.command"), summary.command),
    ...setting(t("report.label.resource"), summary.resource),
    ...setting(t("report.label.mode"), summary.mode),
    ...setting(t("report.label.dryRun"), yesNo(summary.dryRun)),
    ...setting(t("report.label.source"), summary.source),
    ...setting(t("report.label.runDir"), summary.runDir),
    ...setting(t("report.label.rerunOf"), summary.parent?.runDir),
    ...setting(
      t("report.label.appliedPlan"),
      summary.plan !== undefined ? `${summary.plan.file} (sha256 ${summary.plan.sha256})` : undefined
    ),
    ...setting(t("report.label.approvedBy"), summary.plan?.approvedBy),
    ...setting(t("report.label.baseUrl"), summary.baseUrl),
    ...setting(
      t("report.label.requestBudget"),
      summary.budget !== undefined
        ? t("report.budget", { limit: summary.budget.limit, window: `${summary.budget.windowMs / 1000} s` })
        : undefined
    ),
    ...setting(t("report.label.dateFormat"), formats?.dateFormat),
    ...setting(
      t("report.label.decimalMark"),
      formats === undefined ? undefined : formats.decimal === "," ? t("report.comma") : t("report.point")
    ),
    ...setting(t("report.label.version"), summary.version),
    { cells: [] },
    { cells: [t("report.run"), ""], heading: true },
    ...setting(t("report.label.started"), summary.started),
    ...setting(t("report.label.finished"), summary.finished),
    { cells: [t("report.label.requests"), summary.requests] },
    { cells: [t("report.label.retries"), summary.retries] },
    { cells: [t("report.label.rateLimited"), summary.rateLimited] },
    { cells: [t("report.label.interrupted"), yesNo(summary.interrupted)] },
    ...setting(t("report.label.aborted"), summary.aborted),
    { cells: [t("report.label.exitCode"), summary.exitCode] }
  ]
}

/** Indices (in a report line) of the source columns that hold numbers of the resource, given as number cells. */
const numberColumns = (target: ReportTarget, before: number): ReadonlySet<number> => {
  if (target.resource === undefined) return new Set()
  const numeric = new Set(
    templateColumns(resource(target.resource))
      .filter((c) =>
        c.role === "value" && c.field.list !== true &&
        (c.field.type._tag === "integer" || c.field.type._tag === "number")
      )
      .map((c) => c.name.toLowerCase())
  )
  const indices = new Set<number>()
  target.input.columns.forEach((name, i) => {
    if (numeric.has(name.trim().toLowerCase())) indices.add(before + i)
  })
  return indices
}

/** Opens report.csv and report.xlsx for lines written as the rows' outcomes become known; nothing is kept per row. */
export const openReports = Effect.fn("Report.open")(function*(target: ReportTarget) {
  const columns = reportColumns(target.dryRun)
  const header = [...columns.map(([name]) => name), ...target.input.columns]
  const statusColumn = columns.findIndex(([name]) => name === "_status")
  const counts = countStatuses([])
  let rows = 0
  const hidden = { count: 0, rows: new Array<number>() }
  const errors = new ErrorTally()
  // Each writer applies its own formula guard: the CSV's (a spreadsheet would run such a cell) and the workbook's
  // (inline strings never run: only an ambiguous leading `'` is doubled, so no `'` shows in Excel).
  const csv = yield* openCsvWriter(Path.join(target.runDir, reportCsv), header, { bom: true, guard: true })
  const xlsx = target.workbook === false ?
    undefined :
    yield* openXlsxWriter(Path.join(target.runDir, reportXlsx), header, {
      statusColumn,
      freezeHeader: true,
      autoFilter: true,
      sheetName: "report",
      frontSheet: summarySheetName,
      guard: true,
      wholeTextIn: reportCsv,
      wrapColumns: [columns.findIndex(([name]) => name === "_error")]
    })
  const numbers = numberColumns(target, header.length - target.input.columns.length)
  // The workbook's line: a number column's cell that reads as a number (with the file's decimal mark) is one.
  const workbookCells = (cells: ReadonlyArray<Cell>): ReadonlyArray<Cell> => {
    if (numbers.size === 0) return cells
    const out = cells.slice()
    for (const i of numbers) {
      const text = out[i]
      if (typeof text !== "string" || text === "") continue
      const n = parseNumber(text.trim(), target.decimal)
      if (typeof n === "number") out[i] = n
    }
    return out
  }
  const writeAll = (lines: ReadonlyArray<readonly [SourceRow, Outcome]>) =>
    Effect.suspend(() => {
      const table = lines.map(([row, outcome]) => {
        counts[outcome.status] += 1
        if (row.hidden === true && outcome.status === "skipped") {
          hidden.count += 1
          if (hidden.rows.length < hiddenRowsKept) hidden.rows.push(row.row)
        }
        if (outcome.error !== undefined && outcome.error !== "") errors.add(row.row, outcome.error)
        const cells = columns.map(([, cell]) => cell(row.row, outcome))
        for (const cell of target.input.cellsOf(row, target.decimal)) cells.push(cell)
        return cells
      })
      rows += lines.length
      // Side by side: while one file waits for the disk (or deflate), the other's lines are built.
      if (xlsx === undefined) return csv.writeAll(table)
      return Effect.all([csv.writeAll(table), xlsx.writeAll(numbers.size === 0 ? table : table.map(workbookCells))], {
        concurrency: 2,
        discard: true
      })
    })
  const writer: ReportWriter = {
    write: (row, outcome) => writeAll([[row, outcome]]),
    writeAll,
    close: (summarize) =>
      Effect.gen(function*() {
        const tally: ReportTally = { rows, counts, hidden, errors: errors.top(errorKindsKept) }
        yield* csv.close
        const summary = yield* summarize(tally)
        if (xlsx !== undefined) yield* xlsx.closeWith(summarySheet(summary, target.formats))
        return { ...tally, summary }
      })
  }
  return writer
})

/**
 * Writes report.csv and report.xlsx from the source read once more; returns the number of rows, the counts per
 * status and the summary `summarize` made of them.
 */
export const writeReports = <E>(
  report: ReportInput,
  summarize: (tally: ReportTally) => Effect.Effect<Summary, E>
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* openReports(report)
      yield* Stream.runForEachChunk(
        report.input.rows,
        (chunk) => writer.writeAll(Array.from(chunk, (row) => [row, report.outcomeOf(row.row)] as const))
      )
      return yield* writer.close(summarize)
    })
  ).pipe(Effect.withSpan("Report.write"))

/** Writes `summary.json` alone. */
export const writeSummaryFile = (runDir: string, summary: Summary) =>
  writeFileAtomic(Path.join(runDir, summaryFile), `${JSON.stringify(summary, null, 2)}\n`)

/** Writes `summary.json`, then the run's `report.html` from it and the journal (see report/Html.ts). */
export const writeSummary = (runDir: string, summary: Summary) =>
  writeSummaryFile(runDir, summary).pipe(Effect.zipRight(refreshRunReport(runDir)))
