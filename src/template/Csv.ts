/**
 * The CSV template of a resource: the header and one example row, UTF-8 with a BOM (so Excel reads the accents),
 * written exactly as the importer expects the cells (no formula guard: the example is what a user would type).
 */
import { csvBom, csvRecord } from "../files/Write.js"
import type { Resource } from "../Resources.js"
import { describeResource } from "../validate/Describe.js"

/** The bytes of the CSV template of `r`, as text. */
export const csvTemplate = (r: Resource): string => {
  const docs = describeResource(r)
  return `${csvBom}${csvRecord(docs.map((d) => d.name), { guard: false })}${
    csvRecord(docs.map((d) => d.example), { guard: false })
  }`
}
