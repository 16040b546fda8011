/**
 * `fsm-bulk docs [TOPIC] [--path] [--man]`: the user guides that ship with the tool, readable from an installed
 * copy where no repository is at hand. Without a topic it lists them; with one it prints the guide (Markdown, as
 * it is in the repository) or, with `--path`, where the file is, to open it in an editor or a Markdown viewer.
 * `--man` prints the manual page drawn from the help (src/cli/Man.ts). The command is listed in src/Cli.ts, which
 * hands it the model of the command tree.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { readFileSync } from "node:fs"
import { manPage } from "../cli/Man.js"
import type { CliModel } from "../cli/Model.js"
import type { CommandDocs } from "../cli/Model.js"
import { UsageError } from "../Errors.js"
import { version } from "../Version.js"
import { didYouMean } from "../Words.js"
import { findTopic, topics } from "./Topics.js"

const topicArg = Args.text({ name: "TOPIC" }).pipe(
  Args.withDescription("The guide to print: readme, importing, mapping, runs, export, fleet… (default: list them)"),
  Args.optional
)
const pathOption = Options.boolean("path").pipe(
  Options.withDescription("Print where the guide's file is instead of its text")
)
const manOption = Options.boolean("man").pipe(
  Options.withDescription("Print the manual page (roff), drawn from the same text as --help")
)

const listing = () => {
  const all = topics()
  const width = Math.max(...all.map((t) => t.name.length))
  return [
    ...all.map((t) => `  ${t.name.padEnd(width)}  ${t.title}`),
    "",
    "Print one with `fsm-bulk docs TOPIC`; `--path` says where its file is."
  ].join("\n")
}

export const makeDocsCommand = (model: () => CliModel) =>
  Command.make(
    "docs",
    { topic: topicArg, path: pathOption, man: manOption },
    ({ man, path, topic }) =>
      Effect.gen(function*() {
        if (man) return yield* Console.log(manPage(model(), version).trimEnd())
        if (Option.isNone(topic)) return yield* Console.log(listing())
        const found = findTopic(topic.value)
        if (found === undefined) {
          const names = topics().map((t) => t.name)
          return yield* new UsageError({
            message: `no guide "${topic.value}"${didYouMean(topic.value, names)}; the guides: ${names.join(", ")}`
          })
        }
        if (path) return yield* Console.log(found.path)
        return yield* Effect.sync(() => process.stdout.write(readFileSync(found.path, "utf8")))
      })
  ).pipe(
    Command.withDescription("Print the user guides that ship with fsm-bulk (or the manual page), from any folder")
  )

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const guideDocs: CommandDocs = {
  docs: {
    examples: [
      "fsm-bulk docs",
      "fsm-bulk docs importing",
      "fsm-bulk docs mapping --path",
      "fsm-bulk docs --man > fsm-bulk.1"
    ]
  }
}
