/**
 * A mapping profile: the small, hand-editable JSON file that says how a customer's own spreadsheet becomes rows of
 * one resource (which column is which field, which are ignored, where the header is, which rows are not data,
 * value maps, composed fields, constants). Decoded by Schema, so a mistake names the file and the property; its
 * published JSON Schema is `schemas/mapping-profile.schema.json`. No scripting: every rule is data.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as Path from "node:path"
import { InputError } from "../Errors.js"
import { decodeJsonText, JsonFileError } from "../files/JsonFile.js"

/** What a cell may be mapped to: its text after the map (`"Sim": "true"`, `"Alta": "high"`, `"Ana": "ana.souza"`). */
export const ValueMap = Schema.Record({ key: Schema.String, value: Schema.String })

export const FieldRule = Schema.Struct({
  /** Several source columns into one field: `"{Rua}, {Número} - {Bairro}"`. */
  compose: Schema.optional(Schema.String),
  /** Every row gets this value (the field needs no column). */
  constant: Schema.optional(Schema.String),
  /** The value of a row whose cell (or composition) is empty. */
  default: Schema.optional(Schema.String),
  /** Cell text → what is sent; compared without regard to case, accents and surrounding spaces. */
  values: Schema.optional(ValueMap)
})
export type FieldRule = typeof FieldRule.Type

export const Severity = Schema.Literal("invalid", "warning")

export const Profile = Schema.Struct({
  $schema: Schema.optional(Schema.String),
  /** The resource the rows are (`customers`, `users` …). */
  resource: Schema.String,
  /** For a workbook: the sheet that holds this resource. */
  sheet: Schema.optional(Schema.String),
  /** The spreadsheet row of the header (1 = the first); found automatically when absent. */
  headerRow: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  /** Source column (as its header reads) → field or reference column of the resource, or `"ignore"`. */
  columns: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  /** Per field: composition, constant, default, value map. */
  fields: Schema.optional(Schema.Record({ key: Schema.String, value: FieldRule })),
  /** Columns that are no field of the resource and are to be sent anyway, as text under their own names. */
  send: Schema.optional(Schema.Array(Schema.String)),
  /**
   * Words a row that is not data begins with (a footer: `Total de clientes: 5`); default `total`, `subtotal`.
   * Such a row is skipped only when it fills at most half of the columns (a customer called "Total Ltda" is data).
   */
  footers: Schema.optional(Schema.Array(Schema.String)),
  /**
   * Fields that identify a record besides its key (a CPF/CNPJ): two rows sharing a value, or a row whose value a
   * server record with another key already has, are reported before anything is sent, as invalid or as a warning.
   */
  alternateKeys: Schema.optional(Schema.Record({ key: Schema.String, value: Severity }))
})
export type Profile = typeof Profile.Type

/** A profile as a run records it (journal and summary): where it came from, its bytes' sha256 and its content. */
export const ProfileRecord = Schema.Struct({
  file: Schema.String,
  sha256: Schema.String,
  profile: Profile
})
export type ProfileRecord = typeof ProfileRecord.Type

/** Reads and decodes the profile at `file`; a failure names the file and the property that is wrong. */
export const readProfile = Effect.fn("Mapping.readProfile")(function*(file: string) {
  const path = Path.resolve(file)
  const bytes = yield* Effect.tryPromise({
    try: () => readFile(path),
    catch: (e) =>
      new InputError({
        file: path,
        detail: `cannot read the mapping profile (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
        cause: e
      })
  })
  const profile = yield* decodeJsonText(path, bytes.toString("utf8"), Profile).pipe(
    Effect.mapError((e: JsonFileError) =>
      new InputError({ file: path, detail: `not a valid mapping profile: ${e.detail}`, cause: e })
    )
  )
  const record: ProfileRecord = { file: path, sha256: createHash("sha256").update(bytes).digest("hex"), profile }
  return record
})

/** How headers and values are compared: case, accents, spaces and punctuation around words do not count. */
export const normal = (text: string): string =>
  text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, " ").trim()

/** The empty profile of `resource` (`template --profile`, and what `map` starts from). */
export const emptyProfile = (resource: string): Profile => ({
  $schema: "https://raw.githubusercontent.com/fsm-bulk/fsm-bulk/main/schemas/mapping-profile.schema.json",
  resource,
  columns: {},
  fields: {},
  send: []
})

export { JsonFileError }
