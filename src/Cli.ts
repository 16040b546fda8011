/**
 * The command tree. Each command lives beside the pipeline it drives, with what its help adds to the parser
 * (examples, the values its arguments complete to, its guide: the module's `CommandDocs` table), and is only
 * listed here. What a command runs is in the `Handlers.ts` beside it, loaded when it runs (cli/Lazy.ts). Flags (name, type, choices, default, environment variable, description) are defined once, with the
 * command's options; help, suggestions and completion are read from this tree through @effect/cli's public API
 * (src/cli/Model.ts).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import { completionScript, shells } from "./cli/Completion.js"
import { connectionOptions } from "./cli/ConnectionFlags.js"

import { type CliModel, cliModel, type CommandDocs, commandName } from "./cli/Model.js"
import { fileFormatOptions } from "./cli/Parsing.js"
import { guideDocs, makeDocsCommand } from "./docs/Command.js"
import { evidenceCommand, evidenceDocs, keysCommand } from "./evidence/Commands.js"
import { exportCommand, exportDocs, verifyCommand } from "./export/Commands.js"
import {
  accountsCommand,
  cancelCommand,
  fetchCommand,
  fleetCommand,
  fleetDocs,
  statusCommand,
  submitCommand,
  waitCommand,
  workerCommand
} from "./fleet/Commands.js"
import { importCommand, importDocs, rerunCommand, resumeCommand, validateCommand } from "./import/Commands.js"
import { mapCommand, mapDocs } from "./mapping/Command.js"
import { demoCommand, onboardCommand, onboardDocs } from "./onboard/Commands.js"
import { applyCommand, planCommand, planDocs } from "./plan/Commands.js"
import { reportCommand, reportDocs } from "./report/Command.js"
import { sandboxCommand, sandboxDocs } from "./sandbox/Command.js"
import { templateCommand, templateDocs } from "./template/Command.js"
import { undoCommand, undoDocs } from "./undo/Command.js"
import { version } from "./Version.js"

const completionCommand = Command.make(
  "completion",
  { shell: Args.choice(shells.map((s) => [s, s] as const), { name: "SHELL" }) },
  ({ shell }) => Console.log(completionScript(model(), shell).trimEnd())
).pipe(
  Command.withDescription(
    "Print the shell completion script (commands, flags, choices, resource names) for bash, zsh or fish"
  )
)

/** Help's examples, argument values and guide of the commands defined here. */
const completionDocs: CommandDocs = {
  completion: {
    examples: [
      "fsm-bulk completion bash > ~/.local/share/bash-completion/completions/fsm-bulk",
      "fsm-bulk completion zsh > ~/.zsh/fsm-bulk.zsh",
      "fsm-bulk completion fish > ~/.config/fish/completions/fsm-bulk.fish"
    ],
    doc: "docs/terminal.md"
  }
}

const commands = [
  sandboxCommand,
  templateCommand,
  mapCommand,
  validateCommand,
  importCommand,
  rerunCommand,
  resumeCommand,
  planCommand,
  applyCommand,
  undoCommand,
  onboardCommand,
  demoCommand,
  exportCommand,
  verifyCommand,
  keysCommand,
  evidenceCommand,
  reportCommand,
  // the fleet: many accounts on many hosts (docs/fleet.md)
  fleetCommand,
  accountsCommand,
  workerCommand,
  submitCommand,
  statusCommand,
  waitCommand,
  fetchCommand,
  cancelCommand,
  completionCommand,
  makeDocsCommand(() => model())
] as const

export const root = Command.make("fsm-bulk").pipe(
  Command.withDescription(
    "Bulk import, export and onboarding for the Field-Service Management API v2, with a local sandbox"
  ),
  Command.withSubcommands(commands)
)

let built: CliModel | undefined

/** The model of the tree that help, suggestions and completion are drawn from. */
export const model = (): CliModel => built ??= cliModel(source(commands))

/**
 * The model of the one command `name` names (with its subcommands), or of the whole tree when it names none: what a
 * command line that runs a command is checked against (cli/Suggest.ts reads only the command it names). Drawing
 * every command's help to check one was about a twentieth of a small import's CPU (docs/benchmarks.md, "Fixed
 * cost of a small run").
 */
export const modelOf = (name: string | undefined): CliModel => {
  // A root flag first (`--version`, `-v`, a mistaken flag): it is read against the root's flags and name only, so
  // the model of no command; drawing every command's help for it was some 40 ms of `--version`'s 0.5 s CPU.
  if (name?.startsWith("-") === true) return cliModel(source([]))
  const named = commands.filter((c) => commandName(c) === name?.toLowerCase())
  return named.length === 0 ? model() : cliModel(source(named))
}

const source = (of: ReadonlyArray<(typeof commands)[number]>) => ({
  root,
  commands: of,
  examples: [
    "fsm-bulk template customers",
    "fsm-bulk import customers customers.csv --dry-run",
    "fsm-bulk onboard company.xlsx",
    "fsm-bulk export --out backup"
  ],
  docs: {
    ...sandboxDocs,
    ...templateDocs,
    ...mapDocs,
    ...importDocs,
    ...planDocs,
    ...undoDocs,
    ...onboardDocs,
    ...exportDocs,
    ...evidenceDocs,
    ...reportDocs,
    ...fleetDocs,
    ...completionDocs,
    ...guideDocs
  },
  groups: [
    { title: "FILE FORMAT FLAGS", options: fileFormatOptions },
    { title: "CONNECTION FLAGS", options: connectionOptions }
  ]
})

export const cli = Command.run(root, { name: "fsm-bulk", version })
