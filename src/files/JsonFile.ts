/**
 * Reading back a small JSON file (credentials, a run's summary, an export's manifest, provenance): read whole,
 * parsed, and decoded through a Schema, so a damaged file is a failure that names it and what is wrong, never a
 * cast that lets `undefined` through. Schemas of files read back accept properties they do not know (newer
 * versions add them). A UTF-8 byte-order mark (Notepad writes one) is not part of the JSON.
 */
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { readFile } from "node:fs/promises"

/** What is wrong with one property: `path` (`steps.0.runDir`, empty for the whole file) and whether it is absent. */
interface JsonIssue {
  readonly path: string
  readonly missing: boolean
  /** The schema's own words; they may quote the value, so never show them for a file that holds secrets. */
  readonly message: string
}

export class JsonFileError extends Schema.TaggedError<JsonFileError>()("JsonFileError", {
  file: Schema.String,
  reason: Schema.Literal("Missing", "Unreadable", "NotJson", "Invalid"),
  detail: Schema.String,
  issues: Schema.Array(Schema.Struct({ path: Schema.String, missing: Schema.Boolean, message: Schema.String }))
}) {
  override get message(): string {
    return `${this.file}: ${this.detail}`
  }
}

const issuesOf = (error: ParseResult.ParseError): ReadonlyArray<JsonIssue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map(String).join("."),
    missing: issue._tag === "Missing",
    message: issue.message
  }))

const describe = (issues: ReadonlyArray<JsonIssue>): string =>
  issues.map((i) => (i.path === "" ? i.message : `${i.path}: ${i.missing ? "missing" : i.message}`)).join("; ")

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())

/** The JSON in `text` decoded as `schema`; `file` only names it in the error. */
export const decodeJsonText = <A, I>(
  file: string,
  text: string,
  schema: Schema.Schema<A, I>,
  /** A hand-written file (a mapping profile) refuses properties it does not know: a typo must not be ignored. */
  excess: "ignore" | "error" = "ignore"
): Effect.Effect<A, JsonFileError> => {
  const json = parseJson(text.replace(/^\uFEFF/, ""))
  if (json._tag === "Left") {
    return new JsonFileError({ file, reason: "NotJson", detail: "not valid JSON", issues: [] })
  }
  return Effect.mapError(
    Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: excess })(json.right),
    (error) => {
      const issues = issuesOf(error)
      return new JsonFileError({ file, reason: "Invalid", detail: describe(issues), issues })
    }
  )
}

/** Reads `file` and decodes it as `schema`. */
export const readJsonFile = Effect.fn("JsonFile.read")(
  function*<A, I>(file: string, schema: Schema.Schema<A, I>) {
    const text = yield* Effect.tryPromise({
      try: () => readFile(file, "utf8"),
      catch: (e) => {
        const code = (e as NodeJS.ErrnoException).code
        return new JsonFileError({
          file,
          reason: code === "ENOENT" ? "Missing" : "Unreadable",
          detail: `cannot read the file (${code ?? String(e)})`,
          issues: []
        })
      }
    })
    return yield* decodeJsonText(file, text, schema)
  }
)
