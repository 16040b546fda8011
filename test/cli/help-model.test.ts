/**
 * The help model against the parser: every flag @effect/cli's own help lists is in the model and no other; every
 * command has 2–4 examples that parse; every default and environment variable shows on its page; no line is wider
 * than the page; and the mistakes of the command line get the closest known name.
 */
import { CliConfig, CommandDescriptor, HelpDoc } from "@effect/cli"
import { assert, describe, it } from "@effect/vitest"
import { model, modelOf, root } from "../../src/Cli.js"
import { commandHelp, rootHelp } from "../../src/cli/Help.js"
import { checkArguments } from "../../src/cli/Suggest.js"
import { plain } from "../../src/console/Terminal.js"
import { closest, editDistance } from "../../src/Words.js"
import { nestedModel } from "./support.js"

const page = { width: 80, colour: false }
const words = (line: string) => (line.trim() === "" ? [] : line.trim().split(/\s+/))
/** The words of an example up to the first shell operator (`>`, `|`). */
const exampleArgs = (example: string) => {
  const all = words(example)
  const end = all.findIndex((w) => w === ">" || w === "|")
  return (end < 0 ? all : all.slice(0, end)).slice(1)
}

describe("help is read from the parser", () => {
  it("lists, per command, exactly the flags @effect/cli's own usage lists", () => {
    // @effect/cli's page of the root has one usage line per command: `- import [--mode upsert | …] … <FILE>`.
    const theirs = plain(HelpDoc.toAnsiText(CommandDescriptor.getHelp(root.descriptor, CliConfig.defaultConfig)))
    for (const command of model().commands) {
      const usage = theirs.split("\n").find((l) => l.trimStart().startsWith(`- ${command.name} `))
      assert.isDefined(usage, command.name)
      const parser = new Set([...usage!.matchAll(/(?<![\w-])--[a-z][\w-]*/g)].map((m) => m[0]))
      // A flag's long aliases (`--answer-wait` for `--verify-wait`) are in the usage line too.
      const ours = command.flags.flatMap((f) => [f.name, ...f.aliases.filter((a) => a.startsWith("--"))])
      assert.deepStrictEqual(new Set(ours), parser, command.name)
    }
  })

  it("gives every command a synopsis starting with fsm-bulk, 2–4 examples that parse, defaults and env vars", () => {
    for (const command of model().commands) {
      const text = commandHelp(model(), command, page)
      const lines = text.split("\n")
      const usage = lines[lines.indexOf("USAGE") + 1]!
      assert.match(usage, new RegExp(`^  fsm-bulk ${command.name}\\b`), command.name)
      assert.isAtLeast(command.examples.length, 2, command.name)
      assert.isAtMost(command.examples.length, 4, command.name)
      for (const example of command.examples) {
        assert.match(example, new RegExp(`^fsm-bulk ${command.name}( |$)`))
        assert.deepStrictEqual(checkArguments(model(), exampleArgs(example)), { _tag: "Parse" }, example)
        assert.include(text.replace(/\n {4}/g, " "), `$ ${example}`)
      }
      for (const flag of command.flags) {
        assert.include(text, flag.name)
        if (flag.default !== undefined) assert.match(text.replace(/\s+/g, " "), new RegExp(`default:? ${flag.default}`))
        if (flag.env !== undefined) assert.include(text, flag.env)
      }
      for (const line of lines) assert.isAtMost(line.length, 80, `${command.name}: ${line}`)
    }
  })

  it("shows the defaults the issue names, and every environment variable on the main page", () => {
    const one = (name: string) => commandHelp(model(), model().commands.find((c) => c.name === name)!, page)
    assert.include(one("import"), "(default upsert)")
    // --rate has no parser default (resume, rerun and undo keep the run's own): its text says the default.
    assert.include(
      one("import").replace(/\s+/g, " "),
      "(env FSM_RATE; default 400/60s, or for resume, rerun and undo the run's own)"
    )
    assert.include(one("import"), "--request-timeout DURATION")
    assert.include(one("sandbox").replace(/\s+/g, " "), "(default 8787)")
    const main = rootHelp(model(), { width: 120, colour: false })
    for (const env of ["FSM_BASE_URL", "FSM_API_KEY", "FSM_API_TOKEN", "FSM_RATE", "FSM_CONCURRENCY", "NO_COLOR"]) {
      assert.include(main, env)
    }
    for (const line of main.split("\n")) assert.isAtMost(line.length, 120)
    assert.notInclude(main, "\x1b[")
    assert.include(rootHelp(model(), { width: 80, colour: true }), "\x1b[1mUSAGE\x1b[0m")
  })
})

describe("mistakes get the closest known name", () => {
  it("counts a swap of neighbours as one edit and stays silent when nothing is close", () => {
    assert.strictEqual(editDistance("upsret", "upsert"), 1)
    assert.strictEqual(closest("upsret", ["upsert", "create", "update", "delete"]), "upsert")
    assert.strictEqual(closest("--dryrun", ["--dry-run", "--verify"]), "--dry-run")
    assert.strictEqual(closest("Custmers", ["Customers", "Tasks"]), "Customers")
    assert.isUndefined(closest("zzz", ["upsert", "create"]))
  })

  it("answers an unknown command, flag or choice with a suggestion, and a help request with help", () => {
    const check = (line: string) => checkArguments(model(), words(line))
    const mistake = (line: string) => {
      const checked = check(line)
      assert.strictEqual(checked._tag, "Mistake", line)
      return checked._tag === "Mistake" ? checked.message : ""
    }
    assert.include(mistake("improt customers a.csv"), `unknown command "improt" (did you mean "import"?)`)
    assert.include(
      mistake("import customers a.csv --dryrun"),
      "unknown flag --dryrun for `fsm-bulk import` (did you mean --dry-run?)"
    )
    assert.include(
      mistake("import customers a.csv --mode upsret"),
      `--mode: "upsret" is not one of upsert, create, update, delete (did you mean "upsert"?)`
    )
    assert.include(mistake("import customers a.csv --mode=upsret"), `(did you mean "upsert"?)`)
    assert.include(mistake("--log-level debug import customers a.csv"), "fsm-bulk writes no log")
    assert.include(mistake("--completions bash"), "fsm-bulk completion bash|zsh|fish")
    assert.include(mistake("export --out"), "--out needs a value")
    const reason = (line: string) => {
      const checked = check(line)
      return checked._tag === "Mistake" ? checked.reason : undefined
    }
    assert.strictEqual(reason("improt"), "UnknownCommand")
    assert.strictEqual(reason("import --dryrun"), "UnknownFlag")
    assert.strictEqual(reason("import --mode upsret"), "InvalidValue")
    assert.deepStrictEqual(check("import customers a.csv --dry-run false --mode create --json"), { _tag: "Parse" })
    assert.deepStrictEqual(check("import customers a.csv -- --not-a-flag"), { _tag: "Parse" })
    assert.deepStrictEqual(check(""), { _tag: "Help" })
    const topic = check("help import")
    assert.isTrue(topic._tag === "Help" && topic.command?.name === "import")
    assert.include(mistake("help improt"), `unknown command "improt" (did you mean "import"?)`)
    const help = check("import --mode create -h")
    assert.isTrue(help._tag === "Help" && help.command?.name === "import")
  })
})

describe("a command line that runs a command is read against that command's model only", () => {
  it("holds that command and its subcommands, and checks every line as the whole tree does", () => {
    // what a run of `import` draws: one command's help, not every command's (bin.ts)
    assert.deepStrictEqual(modelOf("import").commands.map((c) => c.name), ["import"])
    assert.deepStrictEqual(modelOf("IMPORT").commands.map((c) => c.name), ["import"])
    assert.includeMembers(modelOf("submit").commands.map((c) => c.name), ["submit", "submit import", "submit export"])
    assert.isTrue(modelOf("submit").commands.every((c) => c.name === "submit" || c.name.startsWith("submit ")))
    for (const other of [undefined, "help", "improt"]) {
      assert.strictEqual(modelOf(other).commands.length, model().commands.length, String(other))
    }
    // a line that starts with a flag is read against the root's flags alone (`--version` draws no command's help);
    // the lines below check it decides as the whole tree does
    for (const flag of ["--help", "-v", "--version", "--log-level"]) {
      assert.deepStrictEqual(modelOf(flag).commands, [], flag)
      assert.strictEqual(modelOf(flag).name, model().name, flag)
    }
    const lines = [
      ...model().commands.flatMap((c) => c.examples.map(exampleArgs)),
      ...model().commands.flatMap((c) => [
        [...c.name.split(" "), "--help"],
        [...c.name.split(" "), "--no-such-flag"],
        [...c.name.split(" "), "zzz", "--json"],
        ...c.flags.map((f) => [...c.name.split(" "), f.name, ...(f.boolean ? [] : ["nada"])])
      ]),
      ...[
        "improt customers a.csv",
        "Import customers a.csv --dryrun",
        "import customers a.csv --mode=upsret",
        "import customers a.csv -- --not-a-flag",
        "help import",
        "help improt",
        "help fleet init",
        "export --out",
        "fleet int jobs",
        "--log-level debug import customers a.csv",
        "--version",
        "-V",
        "--improt customers a.csv",
        ""
      ].map(words)
    ]
    for (const args of lines) {
      assert.deepStrictEqual(checkArguments(modelOf(args[0]), args), checkArguments(model(), args), args.join(" "))
    }
  })
})

describe("nested commands (fleet init)", () => {
  it("are checked, helped and named by their whole path", () => {
    const check = (line: string) => checkArguments(nestedModel, words(line))
    assert.deepStrictEqual(check("fleet init jobs --hosts 3"), { _tag: "Parse" })
    assert.deepStrictEqual(check("fleet status --watch"), { _tag: "Parse" })
    const unknownFlag = check("fleet init jobs --host 3")
    assert.isTrue(unknownFlag._tag === "Mistake" && unknownFlag.message.includes("(did you mean --hosts?)"))
    const unknownSub = check("fleet int jobs")
    assert.isTrue(
      unknownSub._tag === "Mistake" && unknownSub.message.startsWith(`unknown command "int" (did you mean "init"?)`),
      JSON.stringify(unknownSub)
    )
    const help = check("fleet init --help")
    assert.isTrue(help._tag === "Help" && help.command?.name === "fleet init")
    const topic = check("help fleet status")
    assert.isTrue(topic._tag === "Help" && topic.command?.name === "fleet status")
    const fleet = nestedModel.commands.find((c) => c.name === "fleet")!
    const fleetPage = commandHelp(nestedModel, fleet, page)
    assert.include(fleetPage, "tool fleet <command> [flags]")
    assert.match(fleetPage, /init:\s+Create a fleet directory/)
    const initPage = commandHelp(nestedModel, nestedModel.commands.find((c) => c.name === "fleet init")!, page)
    assert.include(initPage, "tool fleet init DIR [flags]")
    assert.include(initPage, "(default 2)")
    assert.match(rootHelp(nestedModel, page), /COMMANDS\n {2}fleet: +Many accounts/)
    assert.notInclude(rootHelp(nestedModel, page), "fleet init")
  })
})
