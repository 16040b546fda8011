/**
 * The `next:` lines through the built CLI (issue 27, "`next:` hints go round in circles"): every command suggested
 * is one that would make progress, with the flags the user already gave.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { importInto, put, readReport, runCli, startTestSandbox, tempDir } from "./support.js"

const nextLines = (stderr: string) => stderr.split("\n").filter((l) => /^(next|and|      )/.test(l)).join("\n")

describe("next: hints (CLI)", () => {
  it.scopedLive("validate suggests the import with every read flag it was given, quoted", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes maio.csv", "externalId;name\nC-1;Alfa\n")
      const map = put(
        dir,
        "perfil.json",
        JSON.stringify({ resource: "customers", columns: { externalId: "externalId", name: "name" } })
      )
      const args = [
        "--delimiter",
        ";",
        "--encoding",
        "windows-1252",
        "--date-format",
        "dd/mm/yyyy",
        "--decimal",
        ","
      ]
      const plain = yield* runCli(
        ["validate", "customers", file, ...args, "--out", Path.join(dir, "v1")],
        undefined,
        dir
      )
      assert.strictEqual(plain.code, 0, plain.stderr)
      assert.include(
        plain.stderr,
        `next: fsm-bulk import customers '${file}' --encoding windows-1252 --delimiter ';' --date-format dd/mm/yyyy --decimal ,\n`
      )
      const mapped = yield* runCli(
        [
          "validate",
          "customers",
          file,
          "--delimiter",
          ";",
          "--map",
          map,
          "--mode",
          "create",
          "--out",
          Path.join(dir, "v2")
        ],
        undefined,
        dir
      )
      assert.strictEqual(mapped.code, 0, mapped.stderr)
      assert.include(
        mapped.stderr,
        `next: fsm-bulk import customers '${file}' --mode create --delimiter ';' --map ${map}\n`
      )
    }))

  it.scopedLive("a row naming a record that does not exist is not offered a plain rerun", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const runDir = Path.join(dir, "eq")
      const run = yield* runCli(
        [
          "import",
          "equipments",
          put(dir, "eq.csv", "externalId,name,associatedCustomerExternalId\nE-1,Split,NOPE-1\n"),
          "--out",
          runDir
        ],
        sandbox,
        dir
      )
      assert.strictEqual(run.code, 1, run.stderr)
      assert.deepStrictEqual(readReport(runDir).map((r) => r._status), ["failed"])
      const next = nextLines(run.stderr)
      assert.include(next, "1 row names a record that does not exist (see _error): import those records first")
      assert.include(next, `--only failed --fixed CORRECTED.csv`)
      assert.notInclude(next, "send the failed and in-doubt rows again")
    }))

  it.scopedLive("conflicts left after --merge (rerun or import) get --overwrite, not --merge again", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "seed.csv", "externalId,name,note\nK-1,Alfa,n1\n"),
        runDir: Path.join(dir, "seed")
      })
      const out = Path.join(dir, "export")
      const exported = yield* runCli(["export", "customers", "--out", out], sandbox, dir)
      assert.strictEqual(exported.code, 0, exported.stderr)
      const file = Path.join(out, "customers.csv")
      writeFileSync(file, readFileSync(file, "utf8").replace(",n1,", ",n1 in the file,"))
      // The server changes the same field: a real conflict, which --merge cannot settle.
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "server.csv", "externalId,note\nK-1,n1 on the server\n"),
        runDir: Path.join(dir, "server"),
        mode: "update"
      })
      const first = Path.join(dir, "first")
      const imported = yield* runCli(["import", "customers", file, "--out", first], sandbox, dir)
      assert.strictEqual(imported.code, 1, imported.stderr)
      assert.include(imported.stderr, `fsm-bulk rerun ${first} --only conflict --merge`)

      const merged = Path.join(dir, "merged")
      const again = yield* runCli(["rerun", first, "--only", "conflict", "--merge", "--out", merged], sandbox, dir)
      assert.deepStrictEqual(readReport(merged).map((r) => r._status), ["conflict"], again.stderr)
      const afterMerge = nextLines(again.stderr)
      assert.notInclude(afterMerge, "--merge")
      assert.include(afterMerge, `fsm-bulk rerun ${merged} --only conflict --overwrite`)

      const forced = yield* runCli(
        ["import", "customers", file, "--merge", "--out", Path.join(dir, "m2")],
        sandbox,
        dir
      )
      assert.notInclude(nextLines(forced.stderr), "--merge")
    }))
})
