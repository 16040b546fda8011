/**
 * The facts of an .xlsx read from its ZIP directory before any row is streamed: the sheets in workbook order
 * (name, visibility, the part that holds them), the date system, and the creator that marks the tool's files.
 */
import type { XlsxBytes } from "./XlsxBytes.js"
import { NotAZip, openZip, type ZipEntry } from "./Zip.js"

export interface SheetInfo {
  readonly name: string
  readonly hidden: boolean
  /** The archive path of the sheet's part (`xl/worksheets/sheet1.xml`). */
  readonly target: string
}

export interface WorkbookInfo {
  readonly sheets: ReadonlyArray<SheetInfo>
  readonly date1904: boolean
  readonly creator: string | undefined
  /** The archive's entries (its central directory), by path. */
  readonly entries: ReadonlyMap<string, ZipEntry>
  /** Archive paths of the workbook-wide parts a sheet needs, when the workbook has them. */
  readonly styles: string | undefined
  readonly sharedStrings: string | undefined
}

/** Why a file is not a workbook the reader can use. */
export class NotAWorkbook extends Error {}

const decodeXml = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, entity: string) => {
    const e = entity.toLowerCase()
    if (e.startsWith("#x")) return String.fromCodePoint(parseInt(e.slice(2), 16))
    if (e.startsWith("#")) return String.fromCodePoint(parseInt(e.slice(1), 10))
    return ({ amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" } as Record<string, string>)[e] ?? whole
  })

/** The attributes of every `<tag …>` element in `xml` (namespace prefixes on the tag name ignored). */
const elements = (xml: string, tag: string): Array<Record<string, string>> =>
  [...xml.matchAll(new RegExp(`<(?:\\w+:)?${tag}\\b([^>]*)>`, "g"))].map((m) => {
    const attributes: Record<string, string> = {}
    for (const a of m[1]!.matchAll(/([\w:]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
      attributes[a[1]!] = decodeXml(a[2] ?? a[3] ?? "")
    }
    return attributes
  })

/** A relationship target as a path inside the archive (relative to `xl/`, or absolute from the root). */
const partPath = (
  target: string
): string => (target.startsWith("/") ? target.slice(1) : `xl/${target.replace(/^\.\//, "")}`)

/** The workbook's facts; through `bytes`, what the reads took is kept for the passes over its rows. */
export const inspectWorkbook = async (path: string, bytes?: XlsxBytes): Promise<WorkbookInfo> => {
  const zip = await openZip(path, bytes)
  try {
    const workbook = await zip.read("xl/workbook.xml")
    if (workbook === undefined) {
      const mimetype = (await zip.read("mimetype", 1024))?.toString("utf8") ?? ""
      throw new NotAWorkbook(
        mimetype.includes("opendocument")
          ? "an OpenDocument spreadsheet (.ods), not an .xlsx workbook: save it as .xlsx or CSV"
          : "a ZIP archive without xl/workbook.xml"
      )
    }
    const rels = (await zip.read("xl/_rels/workbook.xml.rels"))?.toString("utf8") ?? ""
    const relationships = elements(rels, "Relationship")
    const targets = new Map(relationships.map((r) => [r["Id"] ?? "", partPath(r["Target"] ?? "")]))
    const partOfType = (type: string) => {
      const target = relationships.find((r) => (r["Type"] ?? "").endsWith(`/${type}`))?.["Target"]
      return target !== undefined && zip.entries.has(partPath(target)) ? partPath(target) : undefined
    }
    const xml = workbook.toString("utf8")
    const sheets = elements(xml, "sheet").map((s): SheetInfo => {
      const rid = Object.entries(s).find(([k]) => /(^|:)id$/.test(k) && k !== "sheetId")?.[1] ?? ""
      const target = targets.get(rid) ?? ""
      return { name: s["name"] ?? "", hidden: s["state"] === "hidden" || s["state"] === "veryHidden", target }
    })
    const properties = elements(xml, "workbookPr")[0] ?? {}
    const date1904 = properties["date1904"] === "1" || properties["date1904"] === "true"
    const core = (await zip.read("docProps/core.xml"))?.toString("utf8") ?? ""
    const creator = /<(?:\w+:)?creator>([^<]*)<\/(?:\w+:)?creator>/.exec(core)?.[1]
    return {
      sheets,
      date1904,
      creator: creator === undefined ? undefined : decodeXml(creator),
      entries: zip.entries,
      styles: partOfType("styles"),
      sharedStrings: partOfType("sharedStrings")
    }
  } finally {
    zip.close()
  }
}

export { NotAZip }
