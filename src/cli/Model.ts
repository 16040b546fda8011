/**
 * The model of the command line that help (Help.ts), the argument check (Suggest.ts), shell completion
 * (Completion.ts) and the man page (Man.ts) are drawn from, read from @effect/cli's public API only: each command's
 * `getHelp` (its description, and per argument and flag a HelpDoc whose first paragraph says the value's kind:
 * "One of the following: …", "An integer.", "A directory."…), `getUsage` (names, accepted values, what is optional
 * or repeated), `getNames` and `getSubcommands`. So none of them can list a flag the parser does not know.
 * A flag's default and environment variable are read from the paragraphs `withShownDefault` and `withEnvironment`
 * (Facts.ts) add where the flag is defined; examples, the values an argument completes to and the guide come from
 * each command module's `CommandDocs` table.
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as CommandDescriptor from "@effect/cli/CommandDescriptor"
import * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"
import type * as Usage from "@effect/cli/Usage"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Option from "effect/Option"
import { factsOf } from "./Facts.js"

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

export interface CommandInfo {
  /** `import`; a nested command by its whole path: `fleet init`. */
  readonly name: string
  readonly description: string
  readonly args: ReadonlyArray<ArgInfo>
  readonly flags: ReadonlyArray<FlagInfo>
  /** The whole names of its own subcommands (`fleet init` …), when it has some. */
  readonly subcommands: ReadonlyArray<string>
}

/** What help adds to a command beyond its parser: 2–4 example command lines, and the values its arguments take. */
interface CommandDoc {
  readonly examples: ReadonlyArray<string>
  /** Completion words of an argument (by its synopsis name), e.g. the resource names. */
  readonly values?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  /** The guide in docs/ that tells more. */
  readonly doc?: string | undefined
}

/** A command module's docs, by the command's whole name (`import`, `fleet init`), kept beside its definition. */
export type CommandDocs = Readonly<Record<string, CommandDoc>>

/** The run directory the examples name. */
export const exampleRun = "runs/20260101T120000Z-customers"

/** Flags shown apart on a command's page, by the shared option set they come from. */
interface FlagGroup {
  readonly title: string
  readonly names: ReadonlyArray<string>
}

export interface CliModel {
  readonly name: string
  readonly description: string
  readonly examples: ReadonlyArray<string>
  readonly commands: ReadonlyArray<CommandInfo & CommandDoc>
  readonly groups: ReadonlyArray<FlagGroup>
}

// --- HelpDoc and Usage, as @effect/cli documents them -----------------------------------------------------------------

type Block = Exclude<HelpDoc.HelpDoc, HelpDoc.Empty | HelpDoc.Sequence>

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
  }
}

/** The text of a HelpDoc (descriptions, @effect/cli's messages), paragraphs joined by a space. */
export const docText = (doc: HelpDoc.HelpDoc): string => {
  switch (doc._tag) {
    case "Empty":
      return ""
    case "Header":
    case "Paragraph":
      return spanText(doc.value)
    case "Sequence":
      return [docText(doc.left), docText(doc.right)].filter((t) => t !== "").join(
        doc.left._tag === "Paragraph" || doc.right._tag === "Paragraph" ? " " : ""
      )
    case "Enumeration":
      return doc.elements.map(docText).join(" ")
    case "DescriptionList":
      return doc.definitions.map(([term, body]) => `${spanText(term)}: ${docText(body)}`).join(" ")
  }
}

const blocksOf = (doc: HelpDoc.HelpDoc): ReadonlyArray<Block> =>
  doc._tag === "Empty" ? [] : doc._tag === "Sequence" ? [...blocksOf(doc.left), ...blocksOf(doc.right)] : [doc]

/** The blocks of a command's help under each level-1 heading (`DESCRIPTION`, `ARGUMENTS`, `OPTIONS`, `COMMANDS`). */
const sectionsOf = (doc: HelpDoc.HelpDoc): ReadonlyMap<string, ReadonlyArray<Block>> => {
  const sections = new Map<string, Array<Block>>()
  let current: Array<Block> | undefined
  for (const block of blocksOf(doc)) {
    if (block._tag === "Header" && block.level === 1) sections.set(spanText(block.value), current = [])
    else current?.push(block)
  }
  return sections
}

/** The entries (`[term, body]`) of the description lists of a section. */
const entriesOf = (blocks: ReadonlyArray<Block> | undefined) =>
  (blocks ?? []).flatMap((b) => b._tag === "DescriptionList" ? b.definitions : [])

/** The paragraphs of an entry's body: the value's kind first, then the description and @effect/cli's own notes. */
const paragraphsOf = (body: HelpDoc.HelpDoc): ReadonlyArray<string> =>
  blocksOf(body).flatMap((b) => b._tag === "Paragraph" ? [spanText(b.value)] : [])

/** The notes @effect/cli adds after a description ("This setting is optional.", "… may be repeated …"). */
const note =
  /^(This setting is optional\.|This (option|argument) (can be set from|may be repeated|must be repeated)|Will prompt the user|This setting is a property argument)/

interface Item {
  readonly names: ReadonlyArray<string>
  readonly accepted: Option.Option<string>
  readonly optional: boolean
  readonly repeated: boolean
}

/** The named parts of a usage, in order, each with whether it is optional or repeated. */
const itemsOf = (usage: Usage.Usage, optional = false, repeated = false): ReadonlyArray<Item> => {
  switch (usage._tag) {
    case "Named":
      return [{ names: usage.names, accepted: usage.acceptedValues, optional, repeated }]
    case "Optional":
      return itemsOf(usage.usage, true, repeated)
    case "Repeated":
      return itemsOf(usage.usage, optional, true)
    case "Concat":
    case "Alternation":
      return [...itemsOf(usage.left, optional, repeated), ...itemsOf(usage.right, optional, repeated)]
    case "Empty":
    case "Mixed":
      return []
  }
}

/** The names @effect/cli gives a value that has no pseudo-name (`Options.withPseudoName`). */
const typeNames = new Set(["boolean", "choice", "date", "float", "integer", "path", "file", "directory", "text"])

/** What the first paragraph of an entry says the value is. */
const kindOf = (first: string | undefined) => {
  const path = /^An? (?:existing )?(file or directory|file|directory)\b/.exec(first ?? "")?.[1]
  return {
    choice: first?.startsWith("One of the following: ") === true,
    number: first === "An integer." || first === "A floating point number.",
    path: path === undefined
      ? undefined
      : path === "file or directory"
      ? "either" as const
      : path as "file" | "directory"
  }
}

/** A text value whose pseudo-name says it is a path (`Options.withPseudoName("DIR")`). */
const pathNamed = (placeholder: string): FlagInfo["path"] =>
  placeholder === "DIR" ? "directory" : placeholder === "FILE" ? "file" : undefined

const flagOf = (item: Item, paragraphs: ReadonlyArray<string>): FlagInfo => {
  const [name, ...aliases] = item.names as [string, ...Array<string>]
  const kind = kindOf(paragraphs[0])
  const boolean = Option.isNone(item.accepted)
  const accepted = Option.getOrElse(item.accepted, () => "")
  const placeholder = boolean
    ? ""
    : !kind.choice && !typeNames.has(accepted)
    ? accepted
    : kind.path !== undefined
    ? kind.path === "directory" ? "DIR" : "FILE"
    : kind.number
    ? "N"
    : (name.split("-").at(-1) ?? name).toUpperCase()
  const facts = factsOf(paragraphs.slice(1).filter((p) => !note.test(p)))
  const property = paragraphs.some((p) => p.startsWith("This setting is a property argument"))
  return {
    name,
    aliases,
    boolean,
    placeholder,
    choices: kind.choice ? accepted.split(" | ") : undefined,
    path: kind.path ?? pathNamed(placeholder),
    description: facts.description,
    default: boolean ? undefined : facts.default,
    env: facts.env,
    repeatable: item.repeated || property,
    required: !item.optional && !item.repeated && !boolean && !property
  }
}

const argName = (name: string): string => (/^[a-z-]+$/.test(name) ? name.toUpperCase().replaceAll("-", "_") : name)

const argOf = (item: Item, paragraphs: ReadonlyArray<string>): ArgInfo => {
  const kind = kindOf(paragraphs[0])
  const inner = /^<(.*)>$/.exec(item.names[0]!)?.[1]
  const least = /This argument must be repeated at least (\d+) times/.exec(paragraphs.join(" "))?.[1]
  return {
    name: inner === undefined || typeNames.has(inner) ? item.names[0]! : argName(inner),
    description: paragraphs.slice(1).filter((p) => !note.test(p)).join(" "),
    repeated: item.repeated,
    optional: item.optional || (item.repeated && (least === undefined || least === "0")),
    choices: kind.choice ? Option.getOrElse(item.accepted, () => "").split(" | ") : undefined,
    path: kind.path
  }
}

// --- commands -------------------------------------------------------------------------------------------------------

type Descriptor = CommandDescriptor.Command<unknown>

const config = CliConfig.make({ showBuiltIns: false })

const nameOf = (descriptor: Descriptor): string => [...HashSet.values(CommandDescriptor.getNames(descriptor))][0]!

/** Its subcommands, in the order its help lists them (a usage line each, starting with the name). */
const childrenOf = (descriptor: Descriptor, sections: ReadonlyMap<string, ReadonlyArray<Block>>) => {
  const listed = sections.get("COMMANDS")
  if (listed === undefined) return []
  const children = CommandDescriptor.getSubcommands(descriptor)
  const order = listed.flatMap((b) => b._tag === "Enumeration" ? b.elements.map((e) => docText(e).split(" ")[0]!) : [])
  return [...new Set(order)].flatMap((name) => Option.toArray(HashMap.get(children, name)))
}

/** A command and every command under it, each by whole name (`fleet init`), each before its own subcommands. */
const commandsOf = (descriptor: Descriptor, prefix: string): ReadonlyArray<CommandInfo> => {
  const sections = sectionsOf(CommandDescriptor.getHelp(descriptor, config))
  const name = `${prefix}${nameOf(descriptor)}`
  const items = itemsOf(CommandDescriptor.getUsage(descriptor)).slice(1)
  const flagItems = items.filter((i) => i.names[0]!.startsWith("-"))
  const argItems = items.filter((i) => !i.names[0]!.startsWith("-"))
  const entries = (title: string, wanted: ReadonlyArray<Item>) => {
    const found = entriesOf(sections.get(title))
    if (found.length !== wanted.length) {
      throw new Error(`help of ${name}: ${found.length} ${title}, ${wanted.length} in its usage`)
    }
    return found.map(([, body]) => paragraphsOf(body))
  }
  const children = childrenOf(descriptor, sections)
  const info: CommandInfo = {
    name,
    description: docText(HelpDoc.blocks(sections.get("DESCRIPTION") ?? [])),
    args: entries("ARGUMENTS", argItems).map((paragraphs, i) => argOf(argItems[i]!, paragraphs)),
    flags: entries("OPTIONS", flagItems).map((paragraphs, i) => flagOf(flagItems[i]!, paragraphs)),
    subcommands: children.map((child) => `${name} ${nameOf(child)}`)
  }
  return [info, ...children.flatMap((child) => commandsOf(child, `${name} `))]
}

/** The names of the flags of an `Options` value (a shared option set), as help groups them. */
const flagNames = (options: Options.Options<unknown>): ReadonlyArray<string> =>
  itemsOf(Options.getUsage(options)).map((i) => i.names[0]!)

/** A command made with `Command.make` (its public `descriptor`). */
interface Described {
  readonly descriptor: Descriptor
}

/** The name a command is called by (`import`, `fleet`). */
export const commandName = (command: Described): string => nameOf(command.descriptor)

/**
 * The model of a command tree: `root` for the program's name and description, `commands` its subcommands as given
 * to `Command.withSubcommands` (in that order; @effect/cli's `getSubcommands` of the root would give a nested
 * command without its own subcommands), each with its docs by whole name.
 */
export const cliModel = (source: {
  readonly root: Described
  readonly commands: ReadonlyArray<Described>
  readonly examples: ReadonlyArray<string>
  readonly docs: CommandDocs
  readonly groups: ReadonlyArray<{ readonly title: string; readonly options: Options.Options<any> }>
}): CliModel => {
  const root = sectionsOf(CommandDescriptor.getHelp(source.root.descriptor, config))
  return {
    name: nameOf(source.root.descriptor),
    description: docText(HelpDoc.blocks(root.get("DESCRIPTION") ?? [])),
    examples: source.examples,
    groups: source.groups.map((g) => ({ title: g.title, names: flagNames(g.options) })),
    commands: source.commands.flatMap((command) => commandsOf(command.descriptor, "")).map((info) => {
      const doc = source.docs[info.name]
      return { ...info, ...doc, examples: doc?.examples ?? [] }
    })
  }
}
