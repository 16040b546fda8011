/**
 * The memory of `import --dry-run`, the built CLI against its embedded sandbox (an account that holds none of the
 * rows): its peak RSS (the kernel's own account, `process.resourceUsage().maxRSS`, written at exit by
 * test/bench/maxrss.cjs) against that of `validate` on the same file. The dry run adds the lookups, the journal
 * and the compare; before, its peak followed V8's sizing of a heap churned by the rows waiting on the journal
 * (292 MiB at 8,000 rows where `validate` took 151 MiB; 437 MiB at 200,000 rows).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { customerCells, importColumns } from "../bench/data.mjs"
import { readReport, readSummary, runCli, tempDir } from "./support.js"

const preload = Path.resolve(import.meta.dirname, "../bench/maxrss.cjs")

const csvCell = (text: string) => (/[",\n\r]/.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text)

/** Runs the CLI with `args` in `dir`; resolves with its exit code, stderr and peak RSS in MiB. */
const measured = (dir: string, name: string, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const rssFile = Path.join(dir, `${name}.rss.json`)
    const run = yield* runCli(args, undefined, dir, {
      NODE_OPTIONS: `--require ${preload}`,
      FSM_BENCH_RSS_FILE: rssFile
    })
    const { maxRssKiB } = JSON.parse(readFileSync(rssFile, "utf8")) as { maxRssKiB: number }
    return { ...run, peakMiB: Math.round(maxRssKiB / 1024) }
  })

describe("import --dry-run memory", () => {
  it.scopedLive(
    "a dry run of 8,000 rows peaks within 64 MiB of validate on the same file",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const rows = 8_000
        const lines = [importColumns.join(",")]
        for (let i = 0; i < rows; i++) lines.push(customerCells(i, importColumns).map(csvCell).join(","))
        const file = Path.join(dir, "clientes.csv")
        writeFileSync(file, lines.join("\n") + "\n")

        const validate = yield* measured(dir, "validate", [
          "validate",
          "customers",
          file,
          "--out",
          Path.join(dir, "validate")
        ])
        assert.strictEqual(validate.code, 0, validate.stderr)
        const runDir = Path.join(dir, "dry")
        const dry = yield* measured(dir, "dry", ["import", "customers", file, "--dry-run", "--out", runDir])
        assert.strictEqual(dry.code, 0, dry.stderr)
        const summary = readSummary(runDir)
        assert.strictEqual(summary.dryRun, true)
        assert.deepStrictEqual(summary.counts.created, rows)
        assert.strictEqual(readReport(runDir).length, rows)

        assert.isAtMost(
          dry.peakMiB - validate.peakMiB,
          64,
          `peak RSS: import --dry-run ${dry.peakMiB} MiB, validate ${validate.peakMiB} MiB`
        )
      }),
    120_000
  )
})
