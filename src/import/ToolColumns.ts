/**
 * The report's own columns (contract, "Report columns"), in order, each named once beside the cell it holds for a
 * row's outcome; a dry run adds `_changes` after them and shows its statuses planned (`would-create`). The source's columns follow them in a report.
 */
import type { Cell } from "../files/Cell.js"
import { type Outcome, shownStatus } from "../Status.js"

type ToolColumn = readonly [name: string, cell: (row: number, outcome: Outcome) => Cell]

const toolColumnsOf = (dryRun: boolean): ReadonlyArray<ToolColumn> => [
  ["_row", (row) => row],
  // A dry run's rows say what they would get (`would-create`), never what happened; rerun reads both forms.
  ["_status", (_, o) => shownStatus(o.status, dryRun)],
  ["_http_status", (_, o) => o.http ?? ""],
  ["_request_id", (_, o) => o.requestId ?? ""],
  ["_attempts", (_, o) => o.attempts ?? ""],
  ["_retry_outcomes", (_, o) => (o.retryOutcomes ?? []).join(";")],
  ["_record_id", (_, o) => o.recordId ?? ""],
  ["_error", (_, o) => o.error ?? ""]
]

const changesColumn: ToolColumn = ["_changes", (_, o) => o.changes ?? ""]

/** The tool's columns of a report: `_changes` only in a dry run. */
export const reportColumns = (dryRun: boolean): ReadonlyArray<ToolColumn> =>
  dryRun ? [...toolColumnsOf(true), changesColumn] : toolColumnsOf(false)

const toolSet: ReadonlySet<string> = new Set(reportColumns(true).map(([name]) => name))

/** A column of an earlier report (repeated by the tool, not the user's data). */
export const isToolColumn = (name: string): boolean => toolSet.has(name.trim().toLowerCase())
