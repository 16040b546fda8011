/**
 * CSV exports for Excel in Brazil (`--excel-br`, `--delimiter`, `--decimal`): semicolons and decimal commas that
 * a double-click opens right, recorded in the manifest, checked by `verify`, and read back by the importer on its
 * own (delimiter and decimal mark detected).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { lastJson } from "../support.js"
import { accountA, cliEnv, runCli, seededSandbox, tempDir } from "./support.js"

describe("export for Excel in Brazil", () => {
  it.scopedLive(
    "--excel-br writes ; and decimal commas, verify passes, and a dry-run import reads every record back unchanged",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seededSandbox
        const tmp = yield* tempDir
        const dir = Path.join(tmp, "export")
        const env = cliEnv(sandbox, accountA)
        const exported = yield* Effect.promise(() =>
          runCli(["export", "products", "services", "--out", dir, "--excel-br", "--json"], env)
        )
        assert.strictEqual(exported.code, 0, exported.stderr)
        assert.deepStrictEqual(lastJson(exported.stdout).csv, { delimiter: ";", decimal: "," })

        const text = readFileSync(Path.join(dir, "products.csv"), "utf8")
        assert.isTrue(text.startsWith("\uFEFFid;externalId;"), "a BOM, then the header with semicolons")
        const [header, ...lines] = text.slice(1).trimEnd().split("\r\n").map((l) => l.split(";"))
        const filter = lines.find((l) => l.includes("PRD-01"))!
        assert.strictEqual(filter[header!.indexOf("unitaryValue")], "1234,56")
        assert.strictEqual(filter[header!.indexOf("totalStock")], "40")
        const services = readFileSync(Path.join(dir, "services.csv"), "utf8")
        assert.include(services, ";180,5;")

        const manifest = JSON.parse(readFileSync(Path.join(dir, "manifest.json"), "utf8"))
        assert.deepStrictEqual(manifest.csv, { delimiter: ";", decimal: "," })
        const verify = yield* Effect.promise(() => runCli(["verify", dir, "--json"], {}))
        assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr)
        assert.isTrue(lastJson(verify.stdout).ok)

        // The importer settles the delimiter and the decimal mark itself: compared with the account, every record
        // would come back unchanged (180,5 read as 180.5).
        const back = yield* Effect.promise(() =>
          runCli([
            "import",
            "services",
            Path.join(dir, "services.csv"),
            "--out",
            Path.join(tmp, "back"),
            "--json",
            "--dry-run"
          ], env)
        )
        assert.strictEqual(back.code, 0, back.stderr)
        const summary = lastJson(back.stdout)
        assert.isAbove(summary.counts.unchanged, 0)
        assert.strictEqual(summary.counts.unchanged, summary.rows)
      }),
    180_000
  )

  it.scopedLive(
    "--delimiter tab --decimal , is one dialect; mixed with --excel-br or --format xlsx it is refused",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seededSandbox
        const tmp = yield* tempDir
        const env = cliEnv(sandbox, accountA)
        const dir = Path.join(tmp, "tab")
        const tab = yield* Effect.promise(() =>
          runCli(["export", "services", "--out", dir, "--delimiter", "tab", "--decimal", ","], env)
        )
        assert.strictEqual(tab.code, 0, tab.stderr)
        assert.include(readFileSync(Path.join(dir, "services.csv"), "utf8"), "\t180,5\t")
        const verify = yield* Effect.promise(() => runCli(["verify", dir], {}))
        assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr)

        const xlsx = yield* Effect.promise(() =>
          runCli(["export", "--out", Path.join(tmp, "x"), "--format", "xlsx", "--excel-br"], env)
        )
        assert.strictEqual(xlsx.code, 2)
        assert.include(xlsx.stderr, "only apply to CSV")
        const both = yield* Effect.promise(() =>
          runCli(["export", "--out", Path.join(tmp, "y"), "--excel-br", "--decimal", "."], env)
        )
        assert.strictEqual(both.code, 2)
        assert.include(both.stderr, "--excel-br already means --delimiter ; --decimal ,")
      }),
    180_000
  )
})
