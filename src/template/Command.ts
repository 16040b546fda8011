/**
 * `fsm-bulk template [RESOURCE...] [--format csv|xlsx] [--out DIR]`: import templates for the named resources
 * (every importable one when none is named), in both formats unless one is chosen.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { jsonOption, say, summary } from "../cli/Output.js"
import { didYouMean } from "../cli/Suggest.js"
import { UsageError } from "../Errors.js"
import { exampleOption, writeExampleTemplate } from "../onboard/TemplateExample.js"
import { importable, isResourceName, type Resource, resource } from "../Resources.js"
import { writeTemplates } from "./Generate.js"
import type { TemplateFormat } from "./Readme.js"

const resourcesArg = Args.text({ name: "RESOURCE" }).pipe(
  Args.withDescription("Resources to write templates for (default: every importable resource)"),
  Args.repeated
)
const formatOption = Options.choice("format", ["csv", "xlsx"]).pipe(
  Options.withDescription("Write only this format (default: both)"),
  Options.optional
)
const outOption = Options.text("out").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("Directory to write into (default: templates)"),
  Options.withDefault("templates")
)

const chooseResources = (names: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Resource>, UsageError> => {
  if (names.length === 0) return Effect.succeed(importable)
  const known = importable.map((r) => r.name)
  const unknown = names.filter((n) => !isResourceName(n))
  if (unknown.length > 0) {
    return Effect.fail(
      new UsageError({
        message: `unknown resource${unknown.length > 1 ? "s" : ""} ${
          unknown.map((n) => `"${n}"${didYouMean(n, known)}`).join(", ")
        }; templates exist for: ${known.join(", ")}`
      })
    )
  }
  const exportOnly = names.filter((n) => !known.includes(n as Resource["name"]))
  if (exportOnly.length > 0) {
    return Effect.fail(
      new UsageError({
        message: `${exportOnly.join(", ")} ${
          exportOnly.length > 1 ? "are" : "is"
        } export-only: no import template; templates exist for: ${known.join(", ")}`
      })
    )
  }
  return Effect.succeed([...new Set(names)].map((n) => resource(n as Resource["name"])))
}

export const templateCommand = Command.make(
  "template",
  { resources: resourcesArg, format: formatOption, out: outOption, example: exampleOption, json: jsonOption },
  Effect.fn("Template.command")(function*({ example, format, json, out, resources: names }) {
    if (example) {
      return yield* writeExampleTemplate({
        out,
        json,
        conflicting: [...names, ...Option.toArray(Option.map(format, (f) => `--format ${f}`))]
      })
    }
    const resources = yield* chooseResources(names)
    const formats: ReadonlyArray<TemplateFormat> = Option.match(format, {
      onNone: () => ["csv", "xlsx"],
      onSome: (f) => [f]
    })
    const files = yield* writeTemplates({ resources, formats, out })
    if (!json) yield* Effect.forEach(files, (f) => say(`wrote ${f}`), { discard: true })
    yield* summary(json, {
      command: "template",
      out,
      formats,
      resources: resources.map((r) => r.name),
      files,
      exitCode: 0
    }, [
      `${resources.length} resource${resources.length === 1 ? "" : "s"}, ${files.length} files in ${out}`
    ])
  })
).pipe(Command.withDescription("Write CSV and XLSX import templates (header, notes, drop-downs, one example row)"))
