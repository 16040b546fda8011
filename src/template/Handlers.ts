/**
 * What the commands of template/Command.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { mkdir } from "node:fs/promises"
import * as Path from "node:path"
import { namesOf, resourceNamed } from "../Aliases.js"
import type { Input } from "../cli/Lazy.js"
import { say, summary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { writeFileAtomic } from "../files/Write.js"
import { emptyProfile } from "../mapping/Profile.js"
import { writeExampleTemplate } from "../onboard/TemplateExample.js"
import { importable, type Resource, resource } from "../Resources.js"
import { didYouMean } from "../Words.js"
import { type templateConfig } from "./Command.js"
import { type TemplateFile, writeTemplates, writeWorkbookTemplate } from "./Generate.js"
import type { TemplateFormat } from "./Readme.js"
import { workbookFileName } from "./Xlsx.js"
const fileLines = (files: ReadonlyArray<TemplateFile>) =>
  Effect.forEach(files, (f) => say(`${f.state === "written" ? "wrote" : "unchanged"} ${f.path}`), { discard: true })

const chooseResources = (names: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Resource>, UsageError> => {
  if (names.length === 0) return Effect.succeed(importable)
  const known = importable.map((r) => r.name)
  // English or Portuguese (`clientes`), src/Aliases.ts.
  const unknown = names.filter((n) => resourceNamed(n) === undefined)
  if (unknown.length > 0) {
    return Effect.fail(
      new UsageError({
        message: `unknown resource${unknown.length > 1 ? "s" : ""} ${
          unknown.map((n) => `"${n}"${didYouMean(n, known.flatMap(namesOf))}`).join(", ")
        }; templates exist for: ${known.join(", ")}`
      })
    )
  }
  const named = names.map((n) => resourceNamed(n)!)
  const exportOnly = named.filter((n) => !known.includes(n))
  if (exportOnly.length > 0) {
    return Effect.fail(
      new UsageError({
        message: `${exportOnly.join(", ")} ${
          exportOnly.length > 1 ? "are" : "is"
        } export-only: no import template; templates exist for: ${known.join(", ")}`
      })
    )
  }
  return Effect.succeed([...new Set(named)].map((n) => resource(n)))
}

export const handleTemplate = Effect.fn("Template.command")(function*(
  { example, format, json, out, profile, resources: names, workbook }: Input<typeof templateConfig>
) {
  if (example) {
    return yield* writeExampleTemplate({
      out,
      json,
      conflicting: [
        ...names,
        ...Option.toArray(Option.map(format, (f) => `--format ${f}`)),
        ...(workbook ? ["--workbook"] : [])
      ]
    })
  }
  const resources = yield* chooseResources(names)
  if (profile) {
    const paths = resources.map((r) => Path.join(out, `${r.name}.map.json`))
    yield* Effect.forEach(resources, (r, i) =>
      Effect.zipRight(
        Effect.promise(() => mkdir(out, { recursive: true })),
        writeFileAtomic(paths[i]!, `${JSON.stringify(emptyProfile(r.name, paths[i]!), null, 2)}\n`)
      ))
    if (!json) yield* Effect.forEach(paths, (p) => say(`wrote ${p}`), { discard: true })
    return yield* summary(json, {
      command: "template",
      profile: true,
      out,
      resources: resources.map((r) => r.name),
      files: paths,
      exitCode: 0
    }, [`${paths.length} empty mapping profile${paths.length === 1 ? "" : "s"} in ${out}`])
  }
  if (workbook) {
    if (Option.isSome(format)) {
      return yield* new UsageError({ message: "--workbook writes one .xlsx workbook: leave out --format" })
    }
    const path = /\.xlsx$/i.test(out) ? out : Path.join(out, workbookFileName)
    const file = yield* writeWorkbookTemplate(resources, path)
    if (!json) yield* fileLines([file])
    return yield* summary(json, {
      command: "template",
      workbook: true,
      out: path,
      resources: resources.map((r) => r.name),
      files: [path],
      unchanged: file.state === "unchanged" ? [path] : [],
      exitCode: 0
    }, [`onboarding workbook: ${resources.length} sheets after its README in ${path}`])
  }
  const formats: ReadonlyArray<TemplateFormat> = Option.match(format, {
    onNone: () => ["csv", "xlsx"],
    onSome: (f) => [f]
  })
  const files = yield* writeTemplates({ resources, formats, out })
  if (!json) yield* fileLines(files)
  const unchanged = files.filter((f) => f.state === "unchanged").map((f) => f.path)
  yield* summary(json, {
    command: "template",
    out,
    formats,
    resources: resources.map((r) => r.name),
    files: files.map((f) => f.path),
    unchanged,
    exitCode: 0
  }, [
    `${resources.length} resource${resources.length === 1 ? "" : "s"}, ${files.length} files in ${out}${
      unchanged.length > 0 ? ` (${unchanged.length} unchanged)` : ""
    }`
  ])
})
