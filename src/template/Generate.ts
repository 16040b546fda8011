/**
 * Writing the templates of a set of resources into a directory: `<resource>.csv`, `<resource>.xlsx` and a
 * README.md that lists them, each file written atomically.
 */
import { Effect } from "effect"
import * as Path from "node:path"
import { WriteError, writeFileAtomic } from "../files/Write.js"
import type { Resource } from "../Resources.js"
import { writeCsvTemplate } from "./Csv.js"
import { type TemplateFormat, templatesReadme } from "./Readme.js"
import { xlsxTemplate } from "./Xlsx.js"

export interface TemplateRequest {
  readonly resources: ReadonlyArray<Resource>
  readonly formats: ReadonlyArray<TemplateFormat>
  readonly out: string
}

const writeXlsxTemplate = Effect.fn("Template.writeXlsx")(function*(r: Resource, path: string) {
  const bytes = yield* Effect.tryPromise({
    try: () => xlsxTemplate(r),
    catch: (cause) =>
      new WriteError({
        path,
        message: `cannot build ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  })
  yield* writeFileAtomic(path, bytes)
})

/** Writes the templates and the README; returns the paths written, in order. */
export const writeTemplates = Effect.fn("Template.writeAll")(function*(request: TemplateRequest) {
  const written: Array<string> = []
  for (const r of request.resources) {
    for (const format of request.formats) {
      const path = Path.join(request.out, `${r.name}.${format}`)
      if (format === "csv") yield* writeCsvTemplate(r, path)
      else yield* writeXlsxTemplate(r, path)
      written.push(path)
    }
  }
  const readme = Path.join(request.out, "README.md")
  yield* writeFileAtomic(readme, `${templatesReadme(request.resources, request.formats)}\n`)
  written.push(readme)
  return written as ReadonlyArray<string>
})
