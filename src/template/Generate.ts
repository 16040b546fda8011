/**
 * Writing the templates of a set of resources into a directory: `<resource>.csv`, `<resource>.xlsx` and a
 * README.md that lists them; or the onboarding workbook. Each file is built whole, then written atomically, and
 * only when its bytes changed: templates are generated deterministically, so regenerating committed ones leaves
 * them (and `git status`) untouched.
 */
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import { WriteError, writeFileIfChanged } from "../files/Write.js"
import type { Resource } from "../Resources.js"
import { csvTemplate } from "./Csv.js"
import { type TemplateFormat, templatesReadme } from "./Readme.js"
import { workbookTemplate, xlsxTemplate } from "./Xlsx.js"

interface TemplateRequest {
  readonly resources: ReadonlyArray<Resource>
  readonly formats: ReadonlyArray<TemplateFormat>
  readonly out: string
}

export interface TemplateFile {
  readonly path: string
  /** `unchanged`: the file already held these bytes and was left alone. */
  readonly state: "written" | "unchanged"
}

const build = (path: string, make: () => Promise<Uint8Array>) =>
  Effect.tryPromise({
    try: make,
    catch: (cause) =>
      new WriteError({
        path,
        message: `cannot build ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  })

const put = (path: string, content: string | Uint8Array) =>
  Effect.map(writeFileIfChanged(path, content), (state): TemplateFile => ({ path, state }))

/** Writes the templates and the README (each only when it changed); returns the files, in order. */
export const writeTemplates = Effect.fn("Template.writeAll")(function*(request: TemplateRequest) {
  const files: Array<TemplateFile> = []
  for (const r of request.resources) {
    for (const format of request.formats) {
      const path = Path.join(request.out, `${r.name}.${format}`)
      const content = format === "csv" ? csvTemplate(r) : yield* build(path, () => xlsxTemplate(r))
      files.push(yield* put(path, content))
    }
  }
  const readme = Path.join(request.out, "README.md")
  files.push(yield* put(readme, `${templatesReadme(request.resources, request.formats)}\n`))
  return files as ReadonlyArray<TemplateFile>
})

/** Writes the onboarding workbook template of `resources` at `path` (only when it changed). */
export const writeWorkbookTemplate = Effect.fn("Template.writeWorkbook")(function*(
  resources: ReadonlyArray<Resource>,
  path: string
) {
  const bytes = yield* build(path, () => workbookTemplate(resources, Path.basename(path)))
  return yield* put(path, bytes)
})
