/**
 * How often `import` reads its source, counted as test/bench/passes.mjs does: the built CLI runs under
 * `strace -f -y` and the bytes that reads of the source's descriptors returned are summed, against the file's size.
 * Only the source's reads count (the run's own files, read back for report.html, do not). Skipped without strace.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { readFileSync, realpathSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { bytesReadFrom } from "../bench/strace.mjs"
import { bin, readReport, tempDir } from "../import/support.js"
import { spawned } from "../spawned.js"

const traced = spawnSync("strace", ["-V"]).error === undefined

describe("passes of an import over its source", () => {
  it.scoped.skipIf(!traced)(
    "import --dry-run reads its CSV about twice: formats and lookups in one read, the sending and the report in the other",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        // Created without a key: nothing to look up, so the dry run is quick. Large enough for the first 64 KiB,
        // read to open it, to count little.
        const lines = ["name,latitude,active"]
        for (let i = 0; i < 10_000; i++) lines.push(`Padaria ${i} da Esquina Ltda,-23.${5000 + (i % 999)},sim`)
        const file = Path.join(dir, "customers.csv")
        writeFileSync(file, lines.join("\n") + "\n")
        const trace = Path.join(dir, "strace.txt")
        const run = yield* spawned(
          "strace",
          [
            "-f",
            "-y",
            "-s",
            "0",
            "-e",
            "trace=read,pread64",
            "-o",
            trace,
            process.execPath,
            bin,
            "import",
            "customers",
            file,
            "--mode",
            "create",
            "--dry-run",
            "--out",
            Path.join(dir, "run")
          ],
          { cwd: dir, env: { PATH: process.env.PATH ?? "" } }
        )
        assert.strictEqual(run.status, 0, run.stderr)
        const report = readReport(Path.join(dir, "run"))
        assert.strictEqual(report.length, 10_000)
        assert.deepStrictEqual(report.slice(0, 2).map((r) => [r._row, r._status, r.name]), [
          ["2", "would-create", "Padaria 0 da Esquina Ltda"],
          ["3", "would-create", "Padaria 1 da Esquina Ltda"]
        ])
        const ratio = bytesReadFrom(readFileSync(trace, "utf8"), realpathSync(file)) / statSync(file).size
        assert.isAtMost(ratio, 2.2, `read ${ratio.toFixed(2)} times the file's size`)
      })
  )
})
