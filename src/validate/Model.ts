/**
 * The shapes validation hands to the import pipeline and to the `validate` command: parsing options (and the
 * default attachment limit), the column plan of a file, the resolved formats and each row's outcome.
 * `Validate.ts` re-exports them.
 */
import type { Effect } from "effect"
import type { SourceRow } from "../files/Source.js"
import type { Column, Resource, ResourceName } from "../Resources.js"

export interface ParseOptions {
  readonly dateFormat: "auto" | "yyyy-mm-dd" | "dd/mm/yyyy" | "mm/dd/yyyy"
  readonly decimal: "auto" | "." | ","
  readonly mode: "upsert" | "create" | "update" | "delete"
  /** File columns (attachments) are relative to it. */
  readonly baseDir: string
  /** Attachments must lie inside this folder (`--attachments-root`; default `baseDir`): see `Attachment.ts`. */
  readonly attachmentsRoot?: string | undefined
  /** Default 10 MiB (`defaultMaxAttachmentBytes`). */
  readonly maxAttachmentBytes: number
  /** Undo the formula guard on every cell (every file read; false only for cells already restored). */
  readonly restoreGuard: boolean
  /**
   * A CSV file's size in bytes: the duplicate checks' tables grow straight to the size the whole file needs once
   * its first rows show how long a row is (`FirstRows`). Absent for XLSX (rows are not laid out in its bytes).
   */
  readonly sourceBytes?: number | undefined
  /** XLSX: the header's columns the sheet hides (`Source.hiddenColumns`): listed, never sent. */
  readonly hiddenColumns?: ReadonlyArray<number> | undefined
  /** Columns the table does not know that a mapping profile sends anyway, as text under their own names. */
  readonly send?: ReadonlyArray<string> | undefined
  /** Fields that identify a record besides its key (a profile's `alternateKeys`): a repeat is invalid or warned. */
  readonly alternateKeys?: Readonly<Record<string, "invalid" | "warning">> | undefined
}

export const defaultMaxAttachmentBytes = 10 * 1024 * 1024

/** `unknown`: no field of the table, never sent; `extra`: unknown too, but sent as text because a profile says so. */
export type ColumnKind = "field" | "ref" | "unknown" | "extra" | "tool" | "ignored"

export interface PlannedColumn {
  readonly index: number
  /** The header cell as written in the file (trimmed). */
  readonly name: string
  readonly kind: ColumnKind
  readonly column?: Column
}

export interface ColumnPlan {
  readonly resource: Resource
  readonly file: string
  readonly header: ReadonlyArray<string>
  readonly columns: ReadonlyArray<PlannedColumn>
  readonly warnings: ReadonlyArray<string>
}

export interface Formats {
  readonly dateFormat: "yyyy-mm-dd" | "dd/mm/yyyy" | "mm/dd/yyyy"
  readonly decimal: "." | ","
}

/** A reference given by key (`customerExternalId`, `participantsLogin` …) that the pipeline resolves to server ids. */
export interface PendingRef {
  /** The payload field that receives the id(s). */
  readonly field: string
  /** The reference column the values came from. */
  readonly column: string
  readonly resource: ResourceName
  /** The property of the referenced record the values are matched against (`externalId`, `login` …). */
  readonly by: string
  readonly values: ReadonlyArray<string>
  /** The field takes a list of ids. */
  readonly list: boolean
}

/** A local file named by a file column; the pipeline reads and base64-encodes it. */
export interface FileCell {
  readonly field: string
  /** Real absolute path (checked by `checkAttachment`; read with `readAttachment`). */
  readonly path: string
  /** The local file's base name. */
  readonly name: string
  readonly bytes: number
  /** The size limit, enforced again when the file is read. */
  readonly maxBytes: number
}

export interface RowError {
  readonly column: string
  readonly message: string
}

export type RowResult =
  | {
    readonly _tag: "Valid"
    readonly row: number
    readonly payload: Record<string, unknown>
    /** The value of the resource's key (`externalId`, `externalCode` …), from its column or its reference column. */
    readonly key: string | undefined
    /** The id cell when given and valid, even when the key won and the id was left out of the payload. */
    readonly id: string | number | undefined
    readonly refs: ReadonlyArray<PendingRef>
    readonly files: ReadonlyArray<FileCell>
    readonly warnings: ReadonlyArray<string>
  }
  | { readonly _tag: "Invalid"; readonly row: number; readonly errors: ReadonlyArray<RowError> }
  /** Not data to send: a row the spreadsheet hides (`SourceRow.hidden`); reported `skipped` with `reason`. */
  | { readonly _tag: "Skipped"; readonly row: number; readonly reason: string }

/** Stateful: remembers the keys it has seen to refuse duplicates within a file. One validator per file. */
export interface RowValidator {
  readonly validate: (row: SourceRow) => Effect.Effect<RowResult>
  /**
   * The same, with the outcome given at once unless the row names attachments (their files are checked on disk):
   * for a caller that validates a whole batch of rows without an effect per row.
   */
  readonly check: (row: SourceRow) => RowResult | Effect.Effect<RowResult>
  /** The bytes the file's duplicate checks hold (their tables of first rows): most of what a validation keeps. */
  readonly heldBytes: () => number
}
