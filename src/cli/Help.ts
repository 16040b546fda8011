/**
 * Help, read from the parser itself: the command tree of @effect/cli (src/Cli.ts) is walked once into a plain
 * model (commands, their arguments and flags with type, choices, default and environment variable), and the help
 * pages, the argument check (Suggest.ts) and the shell completions (Completion.ts) are all drawn from that model,
 * so none can list a flag the parser does not know. What the tree cannot say (examples, values an argument
 * completes to) comes from the table in src/Cli.ts; the environment variables not tied to a flag are listed here.
 *
 * Pages follow gh's layout (description, USAGE with a synopsis starting with `fsm-bulk`, ARGUMENTS, FLAGS,
 * EXAMPLES, ENVIRONMENT, LEARN MORE), wrapped to the terminal's width, bold headings only when colour is on.
 */
import { bold, wrap } from "../console/Terminal.js"

// --- the model ----------------------------------------------------------------------------------------------------

export interface FlagInfo {
  /** `--mode` */
  readonly name: string
  /** `-h` */
  readonly aliases: ReadonlyArray<string>
  /** A flag that takes no value (`--dry-run`; `--dry-run=false` also parses). */
  readonly boolean: boolean
  /** What the value is called in help: the flag's pseudo-name, else the last word of its name. */
  readonly placeholder: string
  readonly choices?: ReadonlyArray<string> | undefined
  /** The value names a file or folder (completion offers paths): a path option, or one called FILE or DIR. */
  readonly path?: "file" | "directory" | "either" | undefined
  readonly description: string
  readonly default?: string | undefined
  /** The environment variable read when the flag is not given. */
  readonly env?: string | undefined
  readonly repeatable: boolean
  readonly required: boolean
}

export interface ArgInfo {
  /** `RESOURCE`, as the synopsis writes it. */
  readonly name: string
  readonly description: string
  readonly repeated: boolean
  readonly optional: boolean
  readonly choices?: ReadonlyArray<string> | undefined
  readonly path?: "file" | "directory" | "either" | undefined
}

interface CommandInfo {
  /** `import`; a nested command by its whole path: `fleet init`. */
  readonly name: string
  readonly description: string
  readonly args: ReadonlyArray<ArgInfo>
  readonly flags: ReadonlyArray<FlagInfo>
  /** The whole names of its own subcommands (`fleet init` …), when it has some. */
  readonly subcommands: ReadonlyArray<string>
}

/** What help adds to a command beyond its parser: 2–4 example command lines, and the values its arguments take. */
export interface CommandExtras {
  readonly examples: ReadonlyArray<string>
  /** Completion words of an argument (by its synopsis name), e.g. the resource names. */
  readonly values?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  /** The guide in docs/ that tells more. */
  readonly doc?: string | undefined
}

export interface CliModel {
  readonly name: string
  readonly description: string
  readonly examples: ReadonlyArray<string>
  readonly commands: ReadonlyArray<CommandInfo & CommandExtras>
  /** Flags shown apart on a command's page, by the shared option set they come from. */
  readonly groups: ReadonlyArray<FlagGroup>
}

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
export const langFlag: FlagInfo = {
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

// The parts of @effect/cli's descriptors the walk reads (its internal, tagged data).
interface Node {
  readonly _tag: string
  readonly [key: string]: unknown
}
const node = (value: unknown): Node => value as Node

/** The text of a HelpDoc or Span (descriptions, @effect/cli's messages), paragraphs joined by a space. */
export const docText = (doc: unknown): string => textOf(doc)

const textOf = (doc: unknown): string => {
  const d = node(doc)
  switch (d._tag) {
    case "Text":
    case "Code":
    case "URI":
      return String(d["value"])
    case "Error":
    case "Weak":
    case "Strong":
    case "Header":
    case "Paragraph":
      return textOf(d["value"])
    case "Sequence":
      return [textOf(d["left"]), textOf(d["right"])].filter((t) => t !== "").join(
        node(d["left"])._tag === "Paragraph" || node(d["right"])._tag === "Paragraph" ? " " : ""
      )
    case "Enumeration":
      return (d["elements"] as ReadonlyArray<unknown>).map(textOf).join(" ")
    case "DescriptionList":
      return (d["definitions"] as ReadonlyArray<readonly [unknown, unknown]>)
        .map(([term, body]) => `${textOf(term)}: ${textOf(body)}`)
        .join(" ")
    default:
      return ""
  }
}

const pathKind = (primitive: Node): FlagInfo["path"] =>
  primitive._tag !== "Path" ? undefined : primitive["pathType"] as FlagInfo["path"]

/** A text value whose pseudo-name says it is a path (`Options.withPseudoName("DIR")`). */
const pathNamed = (placeholder: string): FlagInfo["path"] =>
  placeholder === "DIR" ? "directory" : placeholder === "FILE" ? "file" : undefined

const choicesOf = (primitive: Node): ReadonlyArray<string> | undefined =>
  primitive._tag === "Choice"
    ? (primitive["alternatives"] as ReadonlyArray<readonly [string, unknown]>).map(([name]) => name)
    : undefined

/** The default a `withDefault` shows: none for `optional` (Option.none) and for a boolean's `false`. */
const shownDefault = (fallback: unknown): string | undefined => {
  if (fallback === undefined || fallback === null || fallback === false) return undefined
  if (typeof fallback === "object" && "_tag" in fallback) {
    const tagged = fallback as { readonly _tag: string; readonly value?: unknown }
    return tagged._tag === "Some" ? shownDefault(tagged.value) : undefined
  }
  if (Array.isArray(fallback)) return fallback.length === 0 ? undefined : fallback.join(",")
  return String(fallback)
}

/** The name of the environment variable a `Config` reads (`Config.string("FSM_RATE")`), if it is that simple. */
const envOf = (config: unknown): string | undefined => {
  const c = node(config)
  if (c._tag === "Nested" && typeof c["name"] === "string") return c["name"]
  if (c._tag === "MapOrFail" || c._tag === "Described" || c._tag === "WithDefault") return envOf(c["original"])
  return undefined
}

interface Context {
  readonly required: boolean
  readonly default?: string | undefined
  readonly env?: string | undefined
  readonly repeatable: boolean
}

const placeholderOf = (name: string, pseudo: unknown, primitive: Node): string => {
  const given = node(pseudo)
  if (given._tag === "Some") return String(given["value"])
  if (primitive._tag === "Path") return primitive["pathType"] === "directory" ? "DIR" : "FILE"
  if (primitive._tag === "Integer" || primitive._tag === "Float") return "N"
  return (name.split("-").at(-1) ?? name).toUpperCase()
}

const flagsOf = (options: unknown, context: Context): ReadonlyArray<FlagInfo> => {
  const o = node(options)
  switch (o._tag) {
    case "Single": {
      const primitive = node(o["primitiveType"])
      const name = String(o["name"])
      const description = textOf(o["description"])
      const boolean = primitive._tag === "Bool"
      return [{
        name: `--${name}`,
        aliases: (o["aliases"] as ReadonlyArray<string>).map((a) => (a.length === 1 ? `-${a}` : `--${a}`)),
        boolean,
        placeholder: boolean ? "" : placeholderOf(name, o["pseudoName"], primitive),
        choices: choicesOf(primitive),
        path: pathKind(primitive) ?? pathNamed(placeholderOf(name, o["pseudoName"], primitive)),
        description,
        default: boolean ? undefined : context.default,
        env: context.env,
        repeatable: context.repeatable,
        required: context.required && !boolean
      }]
    }
    case "Map":
      return flagsOf(o["options"], context)
    case "Both":
    case "OrElse":
      return [...flagsOf(o["left"], context), ...flagsOf(o["right"], context)]
    case "WithDefault":
      return flagsOf(o["options"], { ...context, required: false, default: shownDefault(o["fallback"]) })
    case "WithFallback":
      return flagsOf(o["options"], { ...context, required: false, env: envOf(o["effect"]) })
    case "Variadic":
    case "KeyValueMap":
      return flagsOf(o["argumentOption"], { ...context, repeatable: true, required: false })
    default:
      return []
  }
}

const argName = (name: string): string => (/^[a-z-]+$/.test(name) ? name.toUpperCase().replaceAll("-", "_") : name)

const argsOf = (args: unknown, optional: boolean, repeated: boolean): ReadonlyArray<ArgInfo> => {
  const a = node(args)
  switch (a._tag) {
    case "Single": {
      const primitive = node(a["primitiveType"])
      const pseudo = node(a["pseudoName"])
      return [{
        name: argName(pseudo._tag === "Some" ? String(pseudo["value"]) : String(a["name"])),
        description: textOf(a["description"]),
        repeated,
        optional,
        choices: choicesOf(primitive),
        path: pathKind(primitive)
      }]
    }
    case "Map":
      return argsOf(a["args"], optional, repeated)
    case "Both":
      return [...argsOf(a["left"], optional, repeated), ...argsOf(a["right"], optional, repeated)]
    case "Variadic": {
      const min = node(a["min"])
      return argsOf(a["args"], optional || min._tag !== "Some" || Number(min["value"]) === 0, true)
    }
    case "WithDefault":
    case "WithFallbackConfig":
      return argsOf(a["args"], true, repeated)
    default:
      return []
  }
}

/** The flags of an `Options` value (e.g. the shared connection flags), by name. */
export const flagNames = (options: unknown): ReadonlyArray<string> =>
  flagsOf(options, { required: true, repeatable: false }).map((f) => f.name)

const standard = (descriptor: unknown): Node => {
  const d = node(descriptor)
  return d._tag === "Map" ? standard(d["command"]) : d._tag === "Subcommands" ? standard(d["parent"]) : d
}

const commandInfo = (descriptor: unknown, prefix = ""): CommandInfo => {
  const d = standard(descriptor)
  const name = `${prefix}${String(d["name"])}`
  return {
    name,
    description: textOf(d["description"]),
    args: argsOf(d["args"], false, false),
    flags: flagsOf(d["options"], { required: true, repeatable: false }),
    subcommands: childrenOf(descriptor).map((child) => `${name} ${String(standard(child)["name"])}`)
  }
}

/** Every command under `descriptor`, each followed by its own subcommands, by whole name. */
const commandsUnder = (descriptor: unknown, prefix: string): ReadonlyArray<CommandInfo> =>
  childrenOf(descriptor).flatMap((child) => {
    const info = commandInfo(child, prefix)
    return [info, ...commandsUnder(child, `${info.name} `)]
  })

const childrenOf = (descriptor: unknown): ReadonlyArray<unknown> => {
  const d = node(descriptor)
  if (d._tag === "Map") return childrenOf(d["command"])
  return d._tag === "Subcommands" ? (d["children"] as ReadonlyArray<unknown>) : []
}

/** The model of `root` (its commands at every level), with the extras of each command by whole name. */
export const cliModel = (
  root: { readonly descriptor: unknown },
  extras: {
    readonly examples: ReadonlyArray<string>
    readonly commands: Readonly<Record<string, CommandExtras>>
    readonly groups: ReadonlyArray<FlagGroup>
  }
): CliModel => {
  const top = commandInfo(root.descriptor)
  return {
    name: top.name,
    description: top.description,
    examples: extras.examples,
    groups: extras.groups,
    commands: commandsUnder(root.descriptor, "").map((info) => {
      const more = extras.commands[info.name]
      return { ...info, ...more, examples: more?.examples ?? [] }
    })
  }
}

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

/** Flag groups of a command's page, by the names of the shared option sets they come from. */
interface FlagGroup {
  readonly title: string
  readonly names: ReadonlyArray<string>
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
