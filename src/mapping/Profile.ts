/**
 * A mapping profile: the small, hand-editable JSON file that says how a customer's own spreadsheet becomes rows of
 * one resource (which column is which field, which are ignored, where the header is, which rows are not data,
 * value maps, composed fields, constants). Decoded by Schema, so a mistake names the file and the property; its
 * published JSON Schema is `schemas/mapping-profile.schema.json`. No scripting: every rule is data.
 */
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { InputError, UsageError } from "../Errors.js"
import { decodeJsonText, JsonFileError } from "../files/JsonFile.js"
import { t } from "../Messages.js"

const described = <S extends Schema.Schema.Any>(schema: S, description: string) =>
  schema.annotations({ description }) as S

/** What a cell may be mapped to: its text after the map (`"Sim": "true"`, `"Alta": "high"`, `"Ana": "ana.souza"`). */
const ValueMap = Schema.Record({ key: Schema.String, value: Schema.String })

const FieldRule = Schema.Struct({
  compose: Schema.optional(described(
    Schema.String,
    "Several source columns into one field: \"{Rua}, {Número} - {Bairro}\" (an empty cell drops the text before it)"
  )),
  constant: Schema.optional(described(Schema.String, "Every row gets this value (the field needs no column)")),
  default: Schema.optional(described(Schema.String, "The value of a row whose cell (or composition) is empty")),
  values: Schema.optional(described(
    ValueMap,
    "Cell text → what is sent (\"Sim\": \"true\", \"Alta\": \"high\"); case, accents and spaces around do not count; other values pass as they are"
  ))
})
type FieldRule = typeof FieldRule.Type

const Severity = Schema.Literal("invalid", "warning")

export const Profile = Schema.Struct({
  $schema: Schema.optional(Schema.String),
  resource: described(Schema.String, "The resource the rows are: customers, users, tasks …"),
  sheet: Schema.optional(described(Schema.String, "For a workbook: the sheet that holds this resource")),
  headerRow: Schema.optional(described(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
    "The spreadsheet row of the header (1 = the first); found automatically when absent"
  )),
  columns: Schema.optional(described(
    Schema.Record({ key: Schema.String, value: Schema.String }),
    "Source column (as its header reads; case and accents do not count) → a column of the resource (externalId, name …) or \"ignore\""
  )),
  fields: Schema.optional(described(
    Schema.Record({ key: Schema.String, value: FieldRule }),
    "Per column of the resource: a composition, a constant, a default, a value map"
  )),
  send: Schema.optional(described(
    Schema.Array(Schema.String),
    "Source columns that are no field of the resource and are to be sent anyway, as text under their own names"
  )),
  footers: Schema.optional(described(
    Schema.Array(Schema.String),
    "Words a row that is not data begins with (default: total, subtotal); such a row is skipped when it fills at most half of the columns"
  )),
  alternateKeys: Schema.optional(described(
    Schema.Record({ key: Schema.String, value: Severity }),
    "Fields that identify a record besides its key (cpfCnpj): a value two rows share, or that a server record with another key has, makes the row invalid or warns"
  ))
}).annotations({
  title: "fsm-bulk mapping profile",
  description: "How a customer's own spreadsheet becomes rows of one resource (docs/mapping.md)"
})
export type Profile = typeof Profile.Type

/** The published JSON Schema of profiles (`schemas/mapping-profile.schema.json`; a test keeps it in step). */
export const profileJsonSchema = () => JSONSchema.make(Profile)

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
        detail: t("mapping.cannotRead", { code: (e as NodeJS.ErrnoException).code ?? String(e) }),
        cause: e
      })
  })
  const profile = yield* decodeJsonText(path, bytes.toString("utf8"), Profile, "error").pipe(
    Effect.mapError((e: JsonFileError) =>
      new InputError({ file: path, detail: t("mapping.invalid", { detail: e.detail }), cause: e })
    )
  )
  const record: ProfileRecord = { file: path, sha256: createHash("sha256").update(bytes).digest("hex"), profile }
  return record
})

/**
 * A plan's profile is applied as the plan recorded it: its file must still be that profile (same sha256), or nothing
 * is sent (`apply` of an import's or an onboarding's plan).
 */
export const ensurePlannedProfile = Effect.fn("Mapping.ensurePlannedProfile")(
  function*(planned: { readonly file: string; readonly sha256: string }, planFile: string) {
    if ((yield* readProfile(planned.file)).sha256 === planned.sha256) return
    return yield* new UsageError({
      message: t("mapping.changedSincePlan", { file: planned.file, plan: planFile })
    })
  }
)

/** How headers and values are compared: case, accents, spaces and punctuation around words do not count. */
export const normal = (text: string): string =>
  text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, " ").trim()

/** The published JSON Schema of profiles, shipped with the tool. */
export const profileSchemaPath = fileURLToPath(new URL("../../schemas/mapping-profile.schema.json", import.meta.url))

/** `$schema` of a profile written at `file`: the schema's path relative to it, so an editor finds and completes it. */
export const schemaRef = (file: string): string =>
  Path.relative(Path.dirname(Path.resolve(file)), profileSchemaPath).split(Path.sep).join("/")

/** The empty profile of `resource`, to be written at `file` (`template --profile`). */
export const emptyProfile = (resource: string, file: string): Profile => ({
  $schema: schemaRef(file),
  resource,
  columns: {},
  fields: {},
  send: []
})

export { JsonFileError }
