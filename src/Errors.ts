/**
 * Failures of a whole command (not of a row). Each one knows the contract's exit code it ends the process with
 * (`exitCode`), so the edge asks the error instead of matching names: 2 bad usage, unreadable input or a run
 * directory that cannot be used (nothing was sent), 3 a run stopped after requests were sent (the journal is
 * kept for `resume`). Row-level problems are never errors: they are report lines.
 */
import * as Schema from "effect/Schema"
import { t } from "./Messages.js"

/** Bad flags, arguments or configuration. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {
  get reason(): "BadUsage" {
    return "BadUsage"
  }
  get exitCode(): 2 {
    return 2
  }
}

/** An input file that cannot be read as a whole (binary, truncated, empty, no header, duplicate headers …). */
export class InputError extends Schema.TaggedError<InputError>()("InputError", {
  file: Schema.String,
  detail: Schema.String,
  row: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect)
}) {
  get reason(): "UnreadableInput" {
    return "UnreadableInput"
  }
  get exitCode(): 2 {
    return 2
  }
  override get message(): string {
    const at = [
      this.row !== undefined ? t("at.row", { row: this.row }) : undefined,
      this.column !== undefined ? t("at.column", { column: `"${this.column}"` }) : undefined
    ]
      .filter((x) => x !== undefined)
      .join(", ")
    return `${this.file}${at ? ` (${at})` : ""}: ${this.detail}`
  }
}

/**
 * A run directory, report or journal that cannot be used (for `resume`, `rerun`, `verify`): `Unusable`; or one
 * that another process is writing (its lock is held): `Locked`.
 */
export class RunError extends Schema.TaggedError<RunError>()("RunError", {
  reason: Schema.optionalWith(Schema.Literal("Unusable", "Locked"), { default: () => "Unusable" as const }),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  get exitCode(): 2 {
    return 2
  }
}

/**
 * A run that had sent requests when it could not go on: its journal, a report or its summary could not be
 * written (disk full, read-only, permission). What is on disk stays consistent; `resume` continues the run once
 * the cause is fixed, so the message ends with the command to run.
 */
export class RunStopped extends Schema.TaggedError<RunStopped>()("RunStopped", {
  reason: Schema.Literal("WriteFailed"),
  message: Schema.String,
  /** The command that continues the run, e.g. `fsm-bulk resume runs/…`. */
  resume: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  get exitCode(): 3 {
    return 3
  }
}

/** The contract's exit codes: 0 all rows ended well, 1 some did not, 2 bad usage or input, 3 aborted. */
export type ExitCode = 0 | 1 | 2 | 3
