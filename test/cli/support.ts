/**
 * A small command tree with nested subcommands (`tool fleet init`), as @effect/cli builds it, for the parts of help,
 * suggestions and completion that fsm-bulk's own tree does not exercise yet.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { withShownDefault } from "../../src/cli/Facts.js"
import { cliModel } from "../../src/cli/Model.js"

const init = Command.make("init", {
  dir: Args.text({ name: "DIR" }),
  hosts: Options.integer("hosts").pipe(withShownDefault(2), Options.withDescription("Hosts to plan for"))
}, () => Effect.void).pipe(Command.withDescription("Create a fleet directory"))
const status = Command.make("status", {
  watch: Options.boolean("watch").pipe(Options.withDescription("Keep watching"))
}, () => Effect.void).pipe(Command.withDescription("Show the jobs"))
const fleet = Command.make("fleet", {}).pipe(
  Command.withDescription("Many accounts on many hosts"),
  Command.withSubcommands([init, status])
)
const tool = Command.make("tool").pipe(Command.withDescription("A tool"), Command.withSubcommands([fleet]))

export const nestedModel = cliModel({
  root: tool,
  commands: [fleet],
  examples: [],
  docs: {
    fleet: { examples: ["tool fleet init jobs", "tool fleet status --watch"] },
    "fleet init": { examples: ["tool fleet init jobs", "tool fleet init jobs --hosts 3"] }
  },
  groups: []
})
