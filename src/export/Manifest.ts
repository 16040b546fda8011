/**
 * The export directory's `manifest.json` (the contract's shape, plus `format`, `bytes` and `derivedFrom`):
 * written last and atomically by `export`, read by `verify` and by the file reader (a CSV listed in it was
 * written by this tool, so its formula guard is reversed on import).
 */
import * as Schema from "effect/Schema"

export const manifestFile = "manifest.json"

export const ExportFormat = Schema.Literal("csv", "xlsx")
export type ExportFormat = typeof ExportFormat.Type

/**
 * How the export's CSV files are written: the delimiter and the decimal mark of number cells (`--delimiter`,
 * `--decimal`, `--excel-br`). Absent: commas and decimal points.
 */
export const CsvDialect = Schema.Struct({
  delimiter: Schema.Literal(",", ";", "\t"),
  decimal: Schema.Literal(".", ",")
})
export type CsvDialect = typeof CsvDialect.Type

export const defaultCsvDialect: CsvDialect = { delimiter: ",", decimal: "." }

export const ManifestEntry = Schema.Struct({
  name: Schema.String,
  /** File name inside the export directory. */
  file: Schema.String,
  /** Data rows (the header not counted). */
  rows: Schema.Number,
  sha256: Schema.String,
  bytes: Schema.optional(Schema.Number),
  /** Set for files that are not a list endpoint of their own but read from another resource's records. */
  derivedFrom: Schema.optional(Schema.String),
  /** The file's per-record fingerprints (`Fingerprint.ts`), for stale-edit checks when it is imported again. */
  fingerprints: Schema.optional(Schema.String)
})
export type ManifestEntry = typeof ManifestEntry.Type

const RedactedField = Schema.Struct({
  resource: Schema.String,
  field: Schema.String,
  /** The kind of fake (`name`, `email`, `phone`, `cpfCnpj`, `address`, `text`), or `members` for nested contacts. */
  fake: Schema.String
})

/** What the manifest says about a redacted export: the fields and how; never the key (only a hash naming it). */
export const Redaction = Schema.Struct({
  method: Schema.Literal("hmac-sha256"),
  /** The first 16 hex digits of the key's sha256: which key made the fakes (exports with one key line up). */
  keyId: Schema.String,
  fields: Schema.Array(RedactedField)
})
export type Redaction = typeof Redaction.Type

export const Manifest = Schema.Struct({
  tool: Schema.Literal("fsm-bulk"),
  version: Schema.String,
  baseUrl: Schema.String,
  /** Which account of that service the export read: a hash of the credentials' apiKey (`accountOf`), never the key. */
  account: Schema.optional(Schema.String),
  started: Schema.String,
  finished: Schema.String,
  /** The date range walked for date-windowed resources (`yyyy-MM-dd`, inclusive). */
  since: Schema.NullOr(Schema.String),
  until: Schema.NullOr(Schema.String),
  format: Schema.optional(ExportFormat),
  csv: Schema.optional(CsvDialect),
  /** Set when personal data was replaced with fakes (`--redact`, `Redact.ts`). */
  redaction: Schema.optional(Redaction),
  resources: Schema.Array(ManifestEntry)
})
export type Manifest = typeof Manifest.Type

export const ManifestJson = Schema.parseJson(Manifest)
