/**
 * The completion scripts, run in the real shells: bash's function is called with COMP_WORDS/COMP_CWORD set as bash
 * sets them and COMPREPLY read back; zsh runs the same function through bashcompinit; fish's `complete -C` lists
 * what it would offer. A shell missing on the machine is only parsed for (zsh -n, fish -n) when present.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { model } from "../../src/Cli.js"
import { completionScript } from "../../src/cli/Completion.js"
import { temporaryDir } from "../support.js"
import { nestedModel } from "./support.js"

const has = (shell: string) => spawnSync("sh", ["-c", `command -v ${shell}`]).status === 0

const run = (command: string, args: ReadonlyArray<string>, cwd: string) => {
  const result = spawnSync(command, args, { cwd, encoding: "utf8" })
  assert.strictEqual(result.status, 0, result.stderr)
  return result.stdout.split("\n").filter((l) => l !== "")
}

/** What bash offers for the words typed so far (the last one is being completed). */
const bash = (script: string, cwd: string, typed: ReadonlyArray<string>) =>
  run("bash", [
    "-c",
    `source "${script}"; COMP_WORDS=(${typed.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${typed.length - 1}; ` +
    `_fsm_bulk; printf '%s\\n' "\${COMPREPLY[@]}"`
  ], cwd)

describe("shell completion", () => {
  it.scoped("bash completes commands, each command's flags, choices, resource names and paths", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-completion-")
      const script = Path.join(dir, "fsm-bulk.bash")
      writeFileSync(script, completionScript(model(), "bash"))
      run("bash", ["-n", script], dir)
      writeFileSync(Path.join(dir, "customers.csv"), "externalId\n")
      mkdirSync(Path.join(dir, "backup"))

      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "imp"]), ["import"])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "comp"]), ["completion"])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "help", "imp"]), ["import"])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "import", "--dr"]), ["--dry-run"])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "export", "--sin"]), ["--since"])
      assert.includeMembers(bash(script, dir, ["fsm-bulk", "import", "customers", "a.csv", "--"]), [
        "--mode",
        "--rate",
        "--base-url",
        "--help"
      ])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "import", "--mode", "up"]), ["upsert", "update"])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "import", "--delimiter", ""]), ["auto", ",", "\\;", "tab"])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "import", "customers-c"]), ["customers-complete"])
      // The second argument is the file; a flag's value before it is not counted as an argument.
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "import", "--mode", "create", "customers", "cust"]), [
        "customers.csv"
      ])
      assert.includeMembers(bash(script, dir, ["fsm-bulk", "export", "--out", "backup", "cust"]), [
        "customers",
        "customer-groups"
      ])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "export", "--out", "ba"]), ["backup"])
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "completion", "z"]), ["zsh"])
      // A value that is free text (a duration) offers nothing rather than file names.
      assert.deepStrictEqual(bash(script, dir, ["fsm-bulk", "import", "--request-timeout", ""]), [])
    }))

  it.scoped("bash completes nested commands (fleet init) by their whole path", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-completion-")
      const script = Path.join(dir, "tool.bash")
      writeFileSync(script, completionScript(nestedModel, "bash").replaceAll("_tool", "_fsm_bulk"))
      assert.deepStrictEqual(bash(script, dir, ["tool", ""]), ["fleet", "help", "--help", "--version"])
      assert.deepStrictEqual(bash(script, dir, ["tool", "fleet", ""]), ["init", "status"])
      assert.deepStrictEqual(bash(script, dir, ["tool", "fleet", "init", "--h"]), ["--hosts", "--help"])
      assert.deepStrictEqual(bash(script, dir, ["tool", "fleet", "status", "--w"]), ["--watch"])
    }))

  it.scoped.skipIf(!has("zsh"))("zsh runs the same function through bashcompinit", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-completion-")
      const script = Path.join(dir, "fsm-bulk.zsh")
      writeFileSync(script, completionScript(model(), "zsh"))
      run("zsh", ["-n", script], dir)
      const zsh = (typed: ReadonlyArray<string>) =>
        run("zsh", [
          "-c",
          `autoload -U compinit && compinit -u -D; source "${script}"; ` +
          `COMP_WORDS=(${typed.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${typed.length - 1}; ` +
          `_fsm_bulk; print -l -- $COMPREPLY`
        ], dir)
      assert.deepStrictEqual(zsh(["fsm-bulk", "imp"]), ["import"])
      assert.deepStrictEqual(zsh(["fsm-bulk", "import", "--mode", "cr"]), ["create"])
      assert.deepStrictEqual(zsh(["fsm-bulk", "template", "task-t"]), ["task-types"])
    }))

  it.scoped.skipIf(!has("fish"))("fish completes commands, choices and resource names", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-completion-")
      const script = Path.join(dir, "fsm-bulk.fish")
      writeFileSync(script, completionScript(model(), "fish"))
      run("fish", ["-n", script], dir)
      const fish = (line: string) =>
        run("fish", ["-c", `source "${script}"; complete -C "${line}"`], dir).map((l) => l.split("\t")[0])
      assert.deepStrictEqual(fish("fsm-bulk imp"), ["import"])
      assert.sameMembers(fish("fsm-bulk import --mode "), ["upsert", "create", "update", "delete"])
      assert.include(fish("fsm-bulk import --"), "--dry-run")
      assert.include(fish("fsm-bulk export cust"), "customers")
    }))
})
