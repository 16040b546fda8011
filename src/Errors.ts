/**
 * Failures of a whole command (not of a row), each mapped to the contract's exit code at the edge:
 * `UsageError` and `InputError` → 2 (nothing was sent), `ApiAborted` → 3 (the journal is kept for `resume`).
 * Row-level problems are never errors: they are report lines.
 */
import { Schema } from "effect"

/** Bad flags, arguments or configuration. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}

/** An input file that cannot be read as a whole (binary, truncated, empty, no header, duplicate headers …). */
export class InputError extends Schema.TaggedError<InputError>()("InputError", {
  file: Schema.String,
  detail: Schema.String,
  row: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    const at = [this.row !== undefined ? `row ${this.row}` : undefined, this.column !== undefined ? `column "${this.column}"` : undefined]
      .filter((x) => x !== undefined)
      .join(", ")
    return `${this.file}${at ? ` (${at})` : ""}: ${this.detail}`
  }
}

/** A run directory, report or journal that cannot be used (for `resume`, `rerun`, `verify`). */
export class RunError extends Schema.TaggedError<RunError>()("RunError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}
