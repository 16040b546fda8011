/**
 * Validation of import files, offline: a source row (strings from the CSV/XLSX readers) → a validated API payload,
 * generated from the resource table. The import pipeline and the `validate` command call, per file:
 * `planColumns` (header) → `inferFormats` (one pass, settles `auto`; `settleFormats` folds it into the validation
 * pass when the file allows) → `makeValidator` → `validate` per row.
 */
import type { RowError } from "./Model.js"

export { cellSchema } from "./Cells.js"
export { planColumns } from "./Columns.js"
export { inferFormats, settleFormats } from "./Formats.js"
export type {
  ColumnKind,
  ColumnPlan,
  FileCell,
  Formats,
  ParseOptions,
  PendingRef,
  PlannedColumn,
  RowError,
  RowResult,
  RowValidator
} from "./Model.js"
export { defaultMaxAttachmentBytes } from "./Model.js"
export { checked, makeValidator } from "./Row.js"

/** `_error` text of an invalid row: `column: message; column: message`. */
export const formatErrors = (errors: ReadonlyArray<RowError>): string =>
  errors.map((e) => `${e.column}: ${e.message}`).join("; ")
