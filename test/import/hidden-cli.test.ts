/**
 * Hidden rows through the CLI as users run it: warned once on stderr with the rows and the flag, exit 0;
 * `--include-hidden` is accepted by validate and import and recorded in the journal, so `resume` reads the same.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { filteredWorkbook } from "./hiddenBook.js"
import { readJournalLines, readReport, rowStatuses, runCli, startTestSandbox, tempDir } from "./support.js"

describe("hidden rows through the CLI", () => {
  it.scopedLive(
    "are warned about once and skipped; --include-hidden sends them and the journal keeps it",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = yield* filteredWorkbook(dir)

        const checked = yield* runCli(["validate", "customers", file, "--out", Path.join(dir, "v")], undefined, dir)
        assert.strictEqual(checked.code, 0, checked.stderr)
        const warning =
          /warning: 2 rows hidden in the sheet \(by hand or by a filter\) were not validated: rows 3, 5 \(skipped\); unhide them or pass --include-hidden/g
        assert.strictEqual(checked.stderr.match(warning)?.length, 1, checked.stderr)
        assert.include(checked.stderr, `column "note" is hidden in the sheet`)

        const run = Path.join(dir, "run")
        const imported = yield* runCli(["import", "customers", file, "--out", run], sandbox, dir)
        assert.strictEqual(imported.code, 0, imported.stderr)
        assert.strictEqual(imported.stderr.match(/rows hidden in the sheet/g)?.length, 1, imported.stderr)
        assert.include(imported.stderr, "were not imported: rows 3, 5")

        const all = Path.join(dir, "all")
        const included = yield* runCli(["import", "customers", file, "--include-hidden", "--out", all], sandbox, dir)
        assert.strictEqual(included.code, 0, included.stderr)
        assert.notInclude(included.stderr, "hidden")
        assert.deepStrictEqual(rowStatuses(readReport(all)), [
          "2:updated",
          "3:created",
          "4:updated",
          "5:created",
          "6:updated"
        ])
        assert.isTrue(readJournalLines(all)[0]!.read.includeHidden, "resume reads the file the same way")
      }),
    180_000
  )
})
