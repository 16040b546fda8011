/**
 * The CSV template of a resource: the header and one example row, UTF-8 with a BOM (so Excel reads the accents),
 * written exactly as the importer expects the cells (no formula guard: the example is what a user would type).
 */
import { Effect } from "effect"
import { openCsvWriter } from "../files/Write.js"
import type { Resource } from "../Resources.js"
import { describeResource } from "./Describe.js"

export const writeCsvTemplate = Effect.fn("Template.writeCsv")(function*(r: Resource, path: string) {
  const docs = describeResource(r)
  return yield* Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* openCsvWriter(
        path,
        docs.map((d) => d.name),
        { guard: false }
      )
      yield* writer.write(docs.map((d) => d.example))
      return yield* writer.close
    })
  )
})
