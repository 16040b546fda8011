/**
 * Help, suggestions and completion are read from @effect/cli's public API (cli/Model.ts), never from its internal
 * descriptors; what that API cannot say is declared where it belongs: a flag's default and environment variable
 * where the flag is defined (cli/Facts.ts), a command's examples, argument values and guide in the module that
 * defines the command.
 */
import { CliConfig, Command, CommandDescriptor, HelpDoc, Options } from "@effect/cli"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Config from "effect/Config"
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { model, root } from "../../src/Cli.js"
import { withEnvironment, withShownDefault } from "../../src/cli/Facts.js"
import { commandHelp } from "../../src/cli/Help.js"
import { cliModel, type CommandDocs } from "../../src/cli/Model.js"
import { guideDocs, makeDocsCommand } from "../../src/docs/Command.js"
import { evidenceCommand, evidenceDocs, keysCommand } from "../../src/evidence/Commands.js"
import { exportCommand, exportDocs, verifyCommand } from "../../src/export/Commands.js"
import * as Fleet from "../../src/fleet/Commands.js"
import { importCommand, importDocs, rerunCommand, resumeCommand, validateCommand } from "../../src/import/Commands.js"
import { mapCommand, mapDocs } from "../../src/mapping/Command.js"
import { demoCommand, onboardCommand, onboardDocs } from "../../src/onboard/Commands.js"
import { applyCommand, planCommand, planDocs } from "../../src/plan/Commands.js"
import { reportCommand, reportDocs } from "../../src/report/Command.js"
import { sandboxCommand, sandboxDocs } from "../../src/sandbox/Command.js"
import { templateCommand, templateDocs } from "../../src/template/Command.js"
import { undoCommand, undoDocs } from "../../src/undo/Command.js"

const src = Path.resolve(import.meta.dirname, "../../src")
const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(Path.join(dir, e.name)) : e.name.endsWith(".ts") ? [Path.join(dir, e.name)] : []
  )

describe("help through @effect/cli's public API", () => {
  it("reads no internal descriptor: no cast, no internal tag or field", () => {
    for (const file of ["Model.ts", "Help.ts", "Suggest.ts", "Completion.ts", "Man.ts", "Facts.ts"]) {
      const text = readFileSync(Path.join(src, "cli", file), "utf8")
      const internal =
        /as Node\b|\bprimitiveType\b|\bpseudoName\b|"(Single|Subcommands|Standard|WithDefault|WithFallback|Variadic)"|\b[a-z]\["\w+"\]/
      assert.notMatch(text, internal, file)
    }
  })

  it("declares every flag's default and environment variable through Facts.ts, so help cannot miss one", () => {
    // @effect/cli's public help says "This setting is optional." of a plain default, without its value, and "can be
    // set from environment variables" without the name: a default or fallback set directly would vanish from help.
    for (const file of sources(src).filter((f) => !f.endsWith(Path.join("cli", "Facts.ts")))) {
      const text = readFileSync(file, "utf8")
      assert.notMatch(text, /Options\.(withDefault|withFallbackConfig)\(/, Path.relative(src, file))
    }
    const tool = Command.make("tool", {
      rate: Options.text("rate").pipe(
        withShownDefault("400/60s"),
        withEnvironment("TOOL_RATE", Config.string),
        Options.withDescription("Request budget")
      ),
      jobs: Options.integer("jobs").pipe(withShownDefault(4), Options.withDescription("Jobs at once"))
    }, () => Effect.void)
    // The facts are in @effect/cli's own help too, and the parser still falls back to them.
    const theirs = HelpDoc.toAnsiText(CommandDescriptor.getHelp(tool.descriptor, CliConfig.defaultConfig))
    assert.include(theirs, "Default: 400/60s")
    assert.include(theirs, "Environment: TOOL_RATE")
    const m = cliModel({ root: tool, commands: [], examples: [], docs: {}, groups: [] })
    assert.strictEqual(m.name, "tool")
    const sub = cliModel({ root: Command.make("x"), commands: [tool], examples: [], docs: {}, groups: [] })
    const [rate, jobs] = sub.commands[0]!.flags
    assert.deepInclude(rate, { name: "--rate", default: "400/60s", env: "TOOL_RATE", description: "Request budget" })
    assert.deepInclude(jobs, { name: "--jobs", default: "4", placeholder: "N", description: "Jobs at once" })
    const page = commandHelp(sub, sub.commands[0]!, { width: 100, colour: false })
    assert.include(page, "--rate RATE   Request budget (default 400/60s)")
    assert.include(page, "TOOL_RATE   Used when --rate is not given")
  })

  it("keeps each command's examples, values and guide in the module that defines the command", () => {
    const modules: ReadonlyArray<readonly [CommandDocs, Parameters<typeof cliModel>[0]["commands"]]> = [
      [sandboxDocs, [sandboxCommand]],
      [templateDocs, [templateCommand]],
      [mapDocs, [mapCommand]],
      [importDocs, [validateCommand, importCommand, rerunCommand, resumeCommand]],
      [planDocs, [planCommand, applyCommand]],
      [undoDocs, [undoCommand]],
      [onboardDocs, [onboardCommand, demoCommand]],
      [exportDocs, [exportCommand, verifyCommand]],
      [evidenceDocs, [keysCommand, evidenceCommand]],
      [reportDocs, [reportCommand]],
      [
        Fleet.fleetDocs,
        [
          Fleet.fleetCommand,
          Fleet.accountsCommand,
          Fleet.workerCommand,
          Fleet.submitCommand,
          Fleet.statusCommand,
          Fleet.waitCommand,
          Fleet.fetchCommand,
          Fleet.cancelCommand
        ]
      ],
      [guideDocs, [makeDocsCommand(() => model())]]
    ]
    const documented = new Set<string>()
    for (const [docs, commands] of modules) {
      const names = cliModel({ root, commands, examples: [], docs: {}, groups: [] }).commands.map((c) => c.name)
      assert.deepStrictEqual(Object.keys(docs).sort(), [...names].sort())
      for (const name of names) documented.add(name)
    }
    // Every command of the tree but `completion` (defined, with its docs, in src/Cli.ts) is one of those.
    const all = model().commands.map((c) => c.name).filter((name) => !documented.has(name))
    assert.deepStrictEqual(all, ["completion"])
  })
})
