/**
 * "Did you mean …?": the one place that finds the known name closest to a mistyped one (command, flag, choice,
 * resource, sheet), by edit distance with adjacent swaps counted as one edit, ignoring case.
 */
import * as Schema from "effect/Schema"
import { type CliModel, type FlagInfo, helpFlag, versionFlag } from "./Help.js"

/** Edits (insert, delete, replace, swap of two neighbours) that turn `a` into `b`, ignoring case. */
export const editDistance = (a: string, b: string): number => {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  const rows: Array<Array<number>> = Array.from({ length: s.length + 1 }, (_, i) => [i])
  for (let j = 1; j <= t.length; j++) rows[0]![j] = j
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = d
    }
  }
  return rows[s.length]![t.length]!
}

/**
 * The known name a mistyped `given` most likely meant: the closest one within a third of its length (at least one
 * edit, at most three), or one that differs only by case or punctuation; undefined when none is that close or two
 * are equally close.
 */
export const closest = (given: string, known: ReadonlyArray<string>): string | undefined => {
  const bare = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "")
  const same = known.filter((k) => bare(k) === bare(given) && bare(given) !== "")
  if (same.length === 1) return same[0]
  const limit = Math.max(1, Math.min(3, Math.floor(given.length / 3)))
  let best: string | undefined
  let bestDistance = limit + 1
  let tie = false
  for (const k of known) {
    const d = editDistance(given, k)
    if (d < bestDistance) {
      best = k
      bestDistance = d
      tie = false
    } else if (d === bestDistance) tie = true
  }
  return best === undefined || tie ? undefined : best
}

/** ` (did you mean "customers"?)` for the closest known name, else nothing; `show` writes the name. */
export const didYouMean = (
  given: string,
  known: ReadonlyArray<string>,
  show: (name: string) => string = (name) => `"${name}"`
): string => {
  const best = closest(given, known)
  return best === undefined ? "" : ` (did you mean ${show(best)}?)`
}

/**
 * A command line refused before it runs: exit 2, nothing done. Tagged as @effect/cli's own refusals (a missing
 * argument, `--port abc`), so that `--json` names every bad command line alike: `{"tag": "ValidationError", …}`.
 */
export class CommandLineError extends Schema.TaggedError<CommandLineError>()("ValidationError", {
  reason: Schema.Literal("UnknownCommand", "UnknownFlag", "InvalidValue", "MissingValue"),
  message: Schema.String
}) {
  get exitCode(): 2 {
    return 2
  }
}

/** What the edge does with the command line before @effect/cli parses it. */
export type Checked =
  | { readonly _tag: "Help"; readonly command?: CliModel["commands"][number] | undefined }
  | { readonly _tag: "Parse" }
  | { readonly _tag: "Version" }
  | { readonly _tag: "Mistake"; readonly reason: CommandLineError["reason"]; readonly message: string }

const booleanWords = new Set(["true", "false", "yes", "no", "y", "n", "on", "off", "1", "0"])

/**
 * Reads the command line against the model of the parser: a request for help, or the first mistake it finds (an
 * unknown command or flag, a value that is not one of a flag's or argument's choices), each with the closest known
 * name; or nothing to say, and @effect/cli parses it (values, arguments, missing flags). Names are compared without
 * case, as @effect/cli compares them; choices exactly, as it does.
 */
export const checkArguments = (model: CliModel, args: ReadonlyArray<string>): Checked => {
  const end = args.indexOf("--")
  const before = end < 0 ? args : args.slice(0, end)
  const first = before[0]
  const rootFlags = [helpFlag, versionFlag]
  if (first === undefined) return { _tag: "Help" }
  if (first.startsWith("-")) {
    const name = first.split("=")[0]!.toLowerCase()
    if (name === "--help" || name === "-h") return { _tag: "Help" }
    if (name === "--version") return { _tag: "Parse" }
    if (name === "-v") return { _tag: "Version" }
    return { _tag: "Mistake", reason: "UnknownFlag", message: unknownFlag(name, model.name, rootFlags) }
  }
  const named = (name: string) => model.commands.find((c) => c.name === name.toLowerCase())
  const topLevel = model.commands.filter((c) => !c.name.includes(" ")).map((c) => c.name)
  if (first === "help") {
    // `fsm-bulk help [COMMAND [SUBCOMMAND]]`, as gh has it.
    const topic = before.slice(1).join(" ")
    const command = named(topic)
    if (topic === "" || command !== undefined) return { _tag: "Help", command }
    return { _tag: "Mistake", reason: "UnknownCommand", message: unknownCommand(model.name, topic, topLevel) }
  }
  let command = named(first)
  if (command === undefined || command.name.includes(" ")) {
    return { _tag: "Mistake", reason: "UnknownCommand", message: unknownCommand(model.name, first, topLevel) }
  }
  const rest = before.slice(1)
  if (rest.some((a) => a.toLowerCase() === "--help" || a.toLowerCase() === "-h")) {
    // The page of the deepest command named: `fleet init --help` is init's.
    for (const token of rest) command = named(`${command.name} ${token}`) ?? command
    return { _tag: "Help", command }
  }
  let flags = [...command.flags, helpFlag, versionFlag]
  let position = 0
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!
    if (!token.startsWith("-") || token === "-") {
      if (position === 0 && command.subcommands.length > 0) {
        const sub = named(`${command.name} ${token}`)
        if (sub !== undefined) {
          command = sub
          flags = [...command.flags, helpFlag, versionFlag]
          continue
        }
        if (command.args.length === 0) {
          const names = command.subcommands.map((n) => n.split(" ").at(-1)!)
          return {
            _tag: "Mistake",
            reason: "UnknownCommand",
            message: unknownCommand(`${model.name} ${command.name}`, token, names)
          }
        }
      }
      const arg = command.args[Math.min(position++, command.args.length - 1)]
      if (arg?.choices !== undefined && !arg.choices.includes(token)) {
        return {
          _tag: "Mistake",
          reason: "InvalidValue",
          message: `${arg.name}: "${token}" is not one of ${arg.choices.join(", ")}${didYouMean(token, arg.choices)}`
        }
      }
      continue
    }
    const eq = token.indexOf("=")
    const name = token.startsWith("--") && eq > 0 ? token.slice(0, eq) : token
    const flag = flags.find((f) => f.name === name.toLowerCase() || f.aliases.includes(name.toLowerCase()))
    if (flag === undefined) {
      return {
        _tag: "Mistake",
        reason: "UnknownFlag",
        message: unknownFlag(name, `${model.name} ${command.name}`, flags)
      }
    }
    if (flag.boolean) {
      if (name === token && booleanWords.has(rest[i + 1]?.toLowerCase() ?? "")) i++
      continue
    }
    const value = name !== token ? token.slice(eq + 1) : rest[++i]
    if (value === undefined) {
      return { _tag: "Mistake", reason: "MissingValue", message: `${flag.name} needs a value: ${flag.placeholder}` }
    }
    if (flag.choices !== undefined && !flag.choices.includes(value)) {
      return {
        _tag: "Mistake",
        reason: "InvalidValue",
        message: `${flag.name}: "${value}" is not one of ${flag.choices.join(", ")}${didYouMean(value, flag.choices)}`
      }
    }
  }
  return { _tag: "Parse" }
}

const unknownCommand = (where: string, name: string, known: ReadonlyArray<string>) =>
  `unknown command "${name}"${didYouMean(name, known)}; run \`${where} --help\` for the list`

/** @effect/cli's built-in flags that fsm-bulk does not offer, and what to use instead. */
const retired: Readonly<Record<string, string>> = {
  "--completions": "shell completion is `fsm-bulk completion bash|zsh|fish`",
  "--log-level": "fsm-bulk writes no log; its messages and progress go to stderr",
  "--wizard": "fsm-bulk has no wizard mode; see `fsm-bulk <command> --help`"
}

const unknownFlag = (name: string, where: string, flags: ReadonlyArray<FlagInfo>): string => {
  const known = flags.flatMap((f) => [f.name, ...f.aliases])
  const instead = retired[name]
  return `unknown flag ${name} for \`${where}\`${
    instead !== undefined ? `: ${instead}` : didYouMean(name, known, (n) => n)
  }; run \`${where} --help\` for its flags`
}
