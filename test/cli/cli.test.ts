/**
 * The terminal as a user meets it, through the built CLI (`node dist/bin.js`, built first): help pages wrapped to
 * the width, no escape sequence off a terminal or with NO_COLOR (a pseudo-terminal from `script` shows the
 * colour is there otherwise), mistakes answered with exit 2 and the closest name (also as the last `--json` line),
 * and the completion command.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { bin, runCli } from "../import/support.js"
import { spawned } from "../spawned.js"
import { temporaryDir } from "../support.js"
import { lastJson } from "../support.js"

const escape = "\x1b["
const widest = (text: string) => Math.max(...text.split("\n").map((l) => l.length))

/** The CLI run under a pseudo-terminal of `columns` columns (`script`), its output as the terminal shows it. */
const onTerminal = (args: string, env: Record<string, string>, cwd?: string) =>
  spawned("script", ["-qec", `stty cols 100; ${process.execPath} ${bin} ${args}`, "/dev/null"], {
    env: { PATH: process.env.PATH ?? "", TERM: "xterm", ...env },
    ...(cwd !== undefined ? { cwd } : {})
  })
const hasScript = spawnSync("sh", ["-c", "command -v script"]).status === 0

describe("the terminal", () => {
  it.scoped("help pages: synopsis, examples, defaults, environment, wrapped to COLUMNS, no escapes in a pipe", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-help-")
      for (const columns of ["80", "120"]) {
        const main = yield* runCli(["--help"], undefined, dir, { COLUMNS: columns })
        assert.strictEqual(main.code, 0, main.stderr)
        assert.isAtMost(widest(main.stdout), Number(columns))
        assert.include(main.stdout, "fsm-bulk <command>")
        const page = yield* runCli(["import", "--help"], undefined, dir, { COLUMNS: columns })
        assert.strictEqual(page.code, 0, page.stderr)
        assert.isAtMost(widest(page.stdout), Number(columns))
        if (columns === "120") assert.isAbove(widest(page.stdout), 80)
        assert.notInclude(page.stdout + page.stderr, escape)
        assert.notInclude(page.stdout, "A user-defined piece of text")
        // import has the most flags of any command (about 30); its page stays under a few screens.
        assert.isBelow(page.stdout.split("\n").length, 140)
        const flat = page.stdout.replace(/\s+/g, " ")
        assert.include(flat, "USAGE fsm-bulk import RESOURCE FILE [flags]")
        assert.include(flat, "(default upsert)")
        assert.include(flat, "default 400/60s, or for resume, rerun and undo the run's own")
        assert.include(flat, "(default 60s)")
        assert.include(flat, "$ fsm-bulk import customers customers.csv --dry-run")
        assert.include(flat, "ENVIRONMENT FSM_BASE_URL")
      }
      const sandbox = yield* runCli(["sandbox", "-h"], undefined, dir)
      assert.include(sandbox.stdout.replace(/\s+/g, " "), "(default 8787)")
      // Without COLUMNS and off a terminal: 80.
      const plain = yield* runCli(["export", "--help"], undefined, dir)
      assert.isAtMost(widest(plain.stdout), 80)
    }))

  it.effect.skipIf(!hasScript)(
    "on a terminal help is bold and as wide as the terminal; NO_COLOR turns the colour off",
    () =>
      Effect.gen(function*() {
        const coloured = yield* onTerminal("--help", {})
        assert.include(coloured.stdout, `${escape}1mUSAGE`)
        assert.isAtMost(widest(coloured.stdout.replaceAll("\r", "").replaceAll(/\x1b\[[0-9;]*m/g, "")), 100)
        assert.isAbove(widest(coloured.stdout.replaceAll("\r", "")), 80)
        const noColour = yield* onTerminal("--help", { NO_COLOR: "1" })
        assert.include(noColour.stdout, "USAGE")
        assert.notInclude(noColour.stdout, escape)
        const mistake = yield* onTerminal("export --json", { NO_COLOR: "1" })
        assert.include(mistake.stdout, "Expected to find option: '--out'")
        assert.notInclude(mistake.stdout, escape)
      })
  )

  it.scoped.skipIf(!hasScript)(
    "progress draws its live bar on a terminal, and plain lines with NO_COLOR",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDir("fsm-progress-")
        writeFileSync(Path.join(dir, "customers.csv"), "externalId,name\nK-1,Um\nK-2,Dois\n")
        const bar = yield* onTerminal("import customers customers.csv --out bar", {}, dir)
        assert.strictEqual(bar.status, 0, bar.stdout)
        assert.include(bar.stdout, `${escape}2K`)
        const plain = yield* onTerminal("import customers customers.csv --out plain", { NO_COLOR: "1" }, dir)
        assert.strictEqual(plain.status, 0, plain.stdout)
        assert.include(plain.stdout, "import customers: 2 rows")
        assert.notInclude(plain.stdout, escape)
      })
  )

  it.scoped("mistakes exit 2 with the closest name, on stderr and as the last --json line; nothing is written", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-suggest-")
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [
          ["import", "customers", "a.csv", "--dryrun"],
          "unknown flag --dryrun for `fsm-bulk import` (did you mean --dry-run?)"
        ],
        [
          ["import", "customers", "a.csv", "--mode", "upsret"],
          `--mode: "upsret" is not one of upsert, create, update, delete (did you mean "upsert"?)`
        ],
        [["improt", "customers", "a.csv"], `unknown command "improt" (did you mean "import"?)`],
        [["import", "custmers", "a.csv"], `unknown resource "custmers" (did you mean "customers"?)`],
        [["validate", "custmers", "a.csv"], `unknown resource "custmers" (did you mean "customers"?)`],
        [["template", "custmers", "--out", "t"], `unknown resource "custmers" (did you mean "customers"?)`],
        [["export", "custmers", "--out", "x"], `unknown resource "custmers" (did you mean "customers"?)`],
        [["--log-level", "debug", "import", "customers", "a.csv"], "unknown flag --log-level for `fsm-bulk`"],
        [["export"], "Expected to find option: '--out'"]
      ]
      for (const [args, message] of cases) {
        const run = yield* runCli([...args, "--json"], undefined, dir, { COLUMNS: "80" })
        assert.strictEqual(run.code, 2, `${args.join(" ")}: ${run.stderr}`)
        assert.include(run.stderr, message)
        assert.notInclude(run.stderr + run.stdout, escape)
        const json = lastJson(run.stdout)
        assert.strictEqual(json.exitCode, 2)
        assert.include(["ValidationError", "UsageError"], json.error.tag)
        assert.include(json.error.message, message)
      }
      assert.deepStrictEqual(readdirSync(dir), [])
    }))

  it.scoped("a sheet that is not in the workbook gets the closest sheet name", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-sheet-")
      const file = Path.join(dir, "book.xlsx")
      yield* Effect.promise(async () => {
        const book = new ExcelJS.Workbook()
        book.addWorksheet("Customers").addRow(["externalId", "name"]).commit()
        book.addWorksheet("Tasks").addRow(["externalId"]).commit()
        await book.xlsx.writeFile(file)
      })
      const run = yield* runCli(["validate", "customers", file, "--sheet", "Custmers", "--out", "run"], undefined, dir)
      assert.strictEqual(run.code, 2, run.stderr)
      assert.include(run.stderr, `no sheet named "Custmers" (--sheet) (did you mean "Customers"?)`)
    }))

  it.scoped("completion prints a script for each shell; the unknown shell gets the closest", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-completion-")
      const bash = yield* runCli(["completion", "bash"], undefined, dir)
      assert.strictEqual(bash.code, 0, bash.stderr)
      assert.include(bash.stdout, "complete -F _fsm_bulk fsm-bulk")
      const fish = yield* runCli(["completion", "fish"], undefined, dir)
      assert.include(fish.stdout, "complete -c fsm-bulk")
      const zsh = yield* runCli(["completion", "zsh"], undefined, dir)
      assert.include(zsh.stdout, "bashcompinit")
      const wrong = yield* runCli(["completion", "bahs"], undefined, dir)
      assert.strictEqual(wrong.code, 2)
      assert.include(wrong.stderr, `SHELL: "bahs" is not one of bash, zsh, fish (did you mean "bash"?)`)
      assert.isFalse(existsSync(Path.join(dir, "runs")))
    }))
})
