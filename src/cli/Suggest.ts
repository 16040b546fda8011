/**
 * The command line checked before it runs: unknown commands and flags named with the closest known one
 * (`Words.ts`), as @effect/cli's own refusals.
 */
import * as Schema from "effect/Schema"
import { didYouMean } from "../Words.js"
import { helpFlag, versionFlag } from "./Help.js"
import type { CliModel, FlagInfo } from "./Model.js"

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
