/**
 * A small command tree with nested subcommands (`tool fleet init`), as @effect/cli builds it, for the parts of help,
 * suggestions and completion that fsm-bulk's own tree does not exercise yet.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
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

/**
 * The files of the bundle (dist/bin.js and its chunks, dist/bin-*.js) among the files a run loaded (URLs or
 * paths, as a load hook records them), each with the sources its source map says it holds (src/…, node_modules/…):
 * what a bundled command loaded, module by module (scripts/bundle.mjs).
 */
export const bundleFiles = (names: ReadonlyArray<string>) =>
  names.flatMap((n) => {
    if (!/\/dist\/bin(-[\w-]+)?\.js$/.test(n)) return []
    const file = n.startsWith("file:") ? fileURLToPath(n) : n
    const map = JSON.parse(readFileSync(`${file}.map`, "utf8")) as { readonly sources: ReadonlyArray<string> }
    return [{ file: Path.basename(file), sources: map.sources.map((s) => s.replaceAll("\\", "/")) }]
  })
