/**
 * The help pages, drawn from the model of the command line (Model.ts: read from @effect/cli's public API and each
 * command module's docs), so they cannot list a flag the parser does not know. The flags every command takes
 * besides its own and the environment variables not tied to a flag are listed here.
 *
 * Pages follow gh's layout (description, USAGE with a synopsis starting with `fsm-bulk`, ARGUMENTS, FLAGS,
 * EXAMPLES, ENVIRONMENT, LEARN MORE), wrapped to the terminal's width, bold headings only when colour is on.
 */
import { bold, wrap } from "../console/Terminal.js"
import type { CliModel, CommandInfo, FlagInfo } from "./Model.js"

/** The flags every command takes besides its own (handled before or by @effect/cli). */
export const helpFlag: FlagInfo = {
  name: "--help",
  aliases: ["-h"],
  boolean: true,
  placeholder: "",
  description: "Show help for the command",
  repeatable: false,
  required: false
}
export const versionFlag: FlagInfo = {
  name: "--version",
  aliases: [],
  boolean: true,
  placeholder: "",
  description: "Show fsm-bulk's version",
  repeatable: false,
  required: false
}
/** `--lang`, taken out of the command line by the edge (cli/Language.ts) before a command parses it. */
const langFlag: FlagInfo = {
  name: "--lang",
  aliases: [],
  boolean: false,
  placeholder: "pt-BR|en",
  description:
    "Language of messages, reports' labels and templates' notes (default: FSM_LANG, LC_ALL, LC_MESSAGES or LANG; pt_BR… is pt-BR, anything else English)",
  repeatable: false,
  required: false
}

/** The environment variables that are not the fallback of a flag. */
const otherEnvironment: ReadonlyArray<{ readonly name: string; readonly about: string; readonly api: boolean }> = [
  { name: "FSM_API_KEY", about: "API key, when --credentials is not given", api: true },
  { name: "FSM_API_TOKEN", about: "API token, when --credentials is not given", api: true },
  {
    name: "FSM_LANG",
    about: "Language of messages when --lang is not given: pt-BR or en (before LC_ALL/LANG)",
    api: false
  },
  {
    name: "NO_COLOR",
    about: "Set to anything to turn colour off (it is off anyway when not on a terminal)",
    api: false
  },
  { name: "COLUMNS", about: "Width help is wrapped to (default: the terminal's, else 80)", api: false }
]

// --- the pages -----------------------------------------------------------------------------------------------------

export interface Page {
  readonly width: number
  readonly colour: boolean
}

/** Lines of `term  text` pairs, the terms in one column (at most a third of the width), the text wrapped. */
const table = (
  rows: ReadonlyArray<readonly [string, string]>,
  page: Page,
  terms: ReadonlyArray<string> = rows.map(([term]) => term)
): Array<string> => {
  const indent = 2
  const widest = Math.max(0, ...terms.map((term) => term.length))
  const column = Math.min(widest, Math.floor(page.width / 3))
  const textAt = indent + column + 3
  const lines: Array<string> = []
  for (const [term, text] of rows) {
    if (text === "") lines.push(`${" ".repeat(indent)}${term}`)
    else if (term.length <= column) {
      const wrapped = wrap(text, page.width, textAt, textAt)
      lines.push(`${" ".repeat(indent)}${term.padEnd(column)}   ${wrapped[0]}`, ...wrapped.slice(1))
    } else {
      lines.push(
        `${" ".repeat(indent)}${term}`,
        ...wrap(text, page.width, textAt, textAt).map((l, i) => i === 0 ? `${" ".repeat(textAt)}${l}` : l)
      )
    }
  }
  return lines.map((l) => l.trimEnd())
}

const section = (page: Page, title: string, body: ReadonlyArray<string>): Array<string> =>
  body.length === 0 ? [] : ["", bold(page.colour, title), ...body]

const paragraph = (text: string, page: Page, indent = 0): Array<string> =>
  [...wrap(text, page.width, indent, indent)].map((l, i) => (i === 0 ? `${" ".repeat(indent)}${l}` : l))

const examples = (lines: ReadonlyArray<string>, page: Page): Array<string> =>
  lines.flatMap((l) => paragraph(`$ ${l}`, { ...page, width: page.width }, 2).map((x, i) => (i === 0 ? x : `  ${x}`)))

const flagTerm = (f: FlagInfo): string =>
  `${f.aliases.length > 0 ? `${f.aliases.join(", ")}, ` : "    "}${f.name}${f.boolean ? "" : ` ${f.placeholder}`}`

const flagText = (f: FlagInfo): string => {
  const parts = [f.description]
  if (f.choices !== undefined) parts.push(`{${f.choices.join("|")}}`)
  if (f.repeatable && !/\brepeatable\b/.test(f.description)) parts.push("(repeatable)")
  if (f.default !== undefined && !/\bdefault\b/i.test(f.description)) parts.push(`(default ${f.default})`)
  if (f.required) parts.push("(required)")
  return parts.filter((p) => p !== "").join(" ")
}

/** The synopsis: `fsm-bulk import RESOURCE FILE [flags]`. */
export const synopsis = (model: CliModel, command: CommandInfo): string => {
  if (command.subcommands.length > 0 && command.args.length === 0) {
    return [model.name, command.name, "<command>", "[flags]"].join(" ")
  }
  const required = command.flags.filter((f) => f.required).map((f) => `${f.name} ${f.placeholder}`)
  const args = command.args.map((a) => {
    const name = `${a.name}${a.repeated ? "..." : ""}`
    return a.optional ? `[${name}]` : name
  })
  return [model.name, command.name, ...required, ...args, "[flags]"].join(" ")
}

const environmentOf = (flags: ReadonlyArray<FlagInfo>, others = true): Array<readonly [string, string]> => {
  const fromFlags = flags.filter((f) => f.env !== undefined).map((f) =>
    [f.env!, `Used when ${f.name} is not given`] as const
  )
  const api = flags.some((f) => f.name === "--credentials")
  return [
    ...fromFlags,
    ...(others ? otherEnvironment.filter((e) => !e.api || api).map((e) => [e.name, e.about] as const) : [])
  ]
}

/** A guide's topic for `fsm-bulk docs`: its file name without `.md`. */
const guideName = (doc: string) => doc.replace(/^.*\//, "").replace(/\.md$/, "")

const learnMore = (model: CliModel, page: Page, doc?: string) =>
  section(page, "LEARN MORE", [
    ...paragraph(`Use \`${model.name} <command> --help\` for more about a command.`, page, 2),
    ...paragraph(
      `Shell completion: \`${model.name} completion bash|zsh|fish\` (\`${model.name} docs terminal\`).`,
      page,
      2
    ),
    ...(doc === undefined ? [] : paragraph(`Guide: \`${model.name} docs ${guideName(doc)}\` (${doc})`, page, 2))
  ])

/** The page of one command. */
export const commandHelp = (
  model: CliModel,
  command: CliModel["commands"][number],
  page: Page
): string => {
  const groups = model.groups
  const grouped = new Set(groups.flatMap((g) => g.names))
  const own = command.flags.filter((f) => !grouped.has(f.name))
  const terms = [...command.flags, helpFlag].map(flagTerm)
  return [
    ...paragraph(command.description, page),
    ...section(page, "USAGE", paragraph(synopsis(model, command), page, 2)),
    ...section(page, "COMMANDS", table(subcommandRows(model, command.subcommands), page)),
    ...section(
      page,
      "ARGUMENTS",
      table(command.args.map((a) => [a.name, a.description]), page)
    ),
    ...section(page, "FLAGS", table([...own, helpFlag].map((f) => [flagTerm(f), flagText(f)]), page, terms)),
    ...groups.flatMap((g) => {
      const flags = command.flags.filter((f) => g.names.includes(f.name))
      return section(page, g.title, table(flags.map((f) => [flagTerm(f), flagText(f)]), page, terms))
    }),
    ...section(page, "EXAMPLES", examples(command.examples, page)),
    ...section(page, "ENVIRONMENT", table(environmentOf(command.flags), page)),
    ...learnMore(model, page, command.doc)
  ].join("\n") + "\n"
}

const subcommandRows = (model: CliModel, names: ReadonlyArray<string>) =>
  model.commands.filter((c) => names.includes(c.name)).map((c) =>
    [`${c.name.split(" ").at(-1)}:`, c.description] as const
  )

/** The page of `fsm-bulk` itself: the commands, the global flags, examples and every environment variable. */
export const rootHelp = (model: CliModel, page: Page): string => {
  const envs = new Map<string, string>()
  for (const c of model.commands) for (const [name, about] of environmentOf(c.flags, false)) envs.set(name, about)
  for (const e of otherEnvironment) envs.set(e.name, e.about)
  return [
    ...paragraph(model.description, page),
    ...section(page, "USAGE", paragraph(`${model.name} <command> [arguments] [flags]`, page, 2)),
    ...section(
      page,
      "COMMANDS",
      table(subcommandRows(model, model.commands.filter((c) => !c.name.includes(" ")).map((c) => c.name)), page)
    ),
    ...section(
      page,
      "FLAGS",
      table([helpFlag, { ...versionFlag, aliases: ["-v"] }, langFlag].map((f) => [flagTerm(f), flagText(f)]), page)
    ),
    ...section(page, "EXAMPLES", examples(model.examples, page)),
    ...section(page, "ENVIRONMENT", table([...envs], page)),
    ...learnMore(model, page)
  ].join("\n") + "\n"
}
