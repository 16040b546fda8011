/**
 * Did this tool write an input file? Then its cells carry the formula guard, which the importer reverses. The
 * rule lives here only: an .xlsx whose workbook creator is `fsm-bulk` (exports, reports, templates); a .csv that
 * this tool's export manifest lists in the same directory, or a `report.csv` inside one of its run directories.
 */
import { Predicate } from "effect"
import { readFile } from "node:fs/promises"
import * as Path from "node:path"

/** The tool's name as it signs its files: the XLSX creator and the export manifest's `tool`. */
export const toolName = "fsm-bulk"

const readJson = async (path: string): Promise<unknown> => {
  try {
    return JSON.parse(await readFile(path, "utf8"))
  } catch {
    return undefined
  }
}

/** A manifest written by `export` that lists `file`. */
const listedInManifest = async (file: string): Promise<boolean> => {
  const dir = Path.dirname(file)
  const manifest = await readJson(Path.join(dir, "manifest.json"))
  if (!Predicate.isRecord(manifest) || manifest["tool"] !== toolName || !Array.isArray(manifest["resources"])) {
    return false
  }
  return manifest["resources"].some((r) =>
    Predicate.isRecord(r) && typeof r["file"] === "string" && Path.resolve(dir, r["file"]) === file
  )
}

/** The `summary.json` of a run directory (or of an onboarding run, one level up). */
const isRunSummary = (v: unknown): boolean =>
  Predicate.isRecord(v) &&
  (v["tool"] === toolName ||
    (typeof v["command"] === "string" && "runDir" in v &&
      (Predicate.isRecord(v["counts"]) || Array.isArray(v["steps"]))))

const isReportInRun = async (file: string): Promise<boolean> => {
  if (Path.basename(file).toLowerCase() !== "report.csv") return false
  const dir = Path.dirname(file)
  return isRunSummary(await readJson(Path.join(dir, "summary.json"))) ||
    isRunSummary(await readJson(Path.join(Path.dirname(dir), "summary.json")))
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
