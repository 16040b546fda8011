/**
 * Did this tool write an input file? Then its cells carry the formula guard, which the importer reverses. The
 * rule lives here only: an .xlsx whose workbook creator is `fsm-bulk` (exports, reports, templates); a .csv that
 * this tool's export manifest lists in the same directory, or a `report.csv` inside one of its run directories.
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { readFile } from "node:fs/promises"
import * as Path from "node:path"

/** The tool's name as it signs its files: the XLSX creator and the export manifest's `tool`. */
export const toolName = "fsm-bulk"

/** The text of a file beside the one read; undefined when there is none or it cannot be read. */
const readText = (path: string): Promise<string | undefined> => readFile(path, "utf8").catch(() => undefined)

/** What an export manifest says about provenance: it is this tool's, and the files it lists. */
const ExportManifest = Schema.Struct({
  tool: Schema.Literal(toolName),
  resources: Schema.Array(Schema.Struct({ file: Schema.String }))
})

/**
 * The `summary.json` of a run directory (or of an onboarding run, one level up): this tool's `tool` mark, or for
 * summaries older than the mark, a command, a run directory, and counts (a run) or steps (an onboarding).
 */
const RunSummary = Schema.Union(
  Schema.Struct({ tool: Schema.Literal(toolName) }),
  Schema.Struct({
    command: Schema.String,
    runDir: Schema.Unknown,
    counts: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  }),
  Schema.Struct({ command: Schema.String, runDir: Schema.Unknown, steps: Schema.Array(Schema.Unknown) })
)

/** The JSON file `path` decoded as `schema`; none when it is missing, not JSON, or not that (then it is not ours). */
const readAs = async <A, I>(path: string, schema: Schema.Schema<A, I>): Promise<Option.Option<A>> => {
  const text = await readText(path)
  return text === undefined
    ? Option.none()
    : Schema.decodeUnknownOption(Schema.parseJson(schema), { exact: true })(text.replace(/^\uFEFF/, ""))
}

/** A manifest written by `export` that lists `file`. */
const listedInManifest = async (file: string): Promise<boolean> => {
  const dir = Path.dirname(file)
  const manifest = await readAs(Path.join(dir, "manifest.json"), ExportManifest)
  return Option.exists(manifest, (m) => m.resources.some((r) => Path.resolve(dir, r.file) === file))
}

const isRunSummary = async (path: string): Promise<boolean> => Option.isSome(await readAs(path, RunSummary))

const isReportInRun = async (file: string): Promise<boolean> => {
  if (Path.basename(file).toLowerCase() !== "report.csv") return false
  const dir = Path.dirname(file)
  return (await isRunSummary(Path.join(dir, "summary.json"))) ||
    (await isRunSummary(Path.join(Path.dirname(dir), "summary.json")))
}

export interface Provenance {
  readonly file: string
  readonly format: "csv" | "xlsx"
  /** The XLSX workbook's creator (docProps/core.xml). */
  readonly creator?: string | undefined
}

/** The one rule for "this tool wrote the file". */
export const writtenByTool = async ({ creator, file, format }: Provenance): Promise<boolean> => {
  if (format === "xlsx") return creator === toolName
  const absolute = Path.resolve(file)
  return (await listedInManifest(absolute)) || (await isReportInRun(absolute))
}
