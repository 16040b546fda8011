/**
 * A dry run looks planned everywhere a person reads it (issue 27): report.csv's and report.xlsx's `_status`
 * (`would-create`, `would-update`; `unchanged` and `invalid` as they are), report.xlsx's Summary sheet,
 * summary.json's `planned` (beside the contract's `counts`), report.html (a rehearsal banner, no green `created`)
 * and the closing lines. The dry run's report stays a valid rerun input: `--only created` selects its planned
 * creates.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { mkdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import {
  cp1252,
  put,
  readReport,
  readSummary,
  rowStatuses,
  runCli,
  startTestSandbox,
  tempDir
} from "../import/support.js"

describe("a dry run's reports", () => {
  it.scopedLive(
    "say what rows would get, in every file and on the terminal",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        // As Brazilian implementers send them: `;`, Windows-1252, accents.
        const first = put(
          dir,
          "clientes.csv",
          cp1252("externalId;name;note\r\nDR-1;Padaria São João;\r\nDR-2;Açougue Boi Bom;\r\n")
        )
        const seeded = yield* runCli(["import", "customers", first, "--out", Path.join(dir, "seed")], sandbox, dir)
        assert.strictEqual(seeded.code, 0, seeded.stderr)

        const file = put(
          dir,
          "clientes-2.csv",
          cp1252(
            "externalId;name;note\r\nDR-1;Padaria São João;\r\nDR-2;Açougue Boi Bom;cliente desde 2019\r\n" +
              "DR-3;Mercadinho Irmãos Fé;\r\nDR-4;;sem nome\r\nDR-5;Farmácia Popular;\r\n"
          )
        )
        const runDir = Path.join(dir, "dry")
        const dry = yield* runCli(["import", "customers", file, "--dry-run", "--out", runDir], sandbox, dir)
        assert.strictEqual(dry.code, 1, dry.stderr) // row 5 has no name

        // report.csv: planned statuses; statuses true of a rehearsal too stay as they are.
        const report = readReport(runDir)
        assert.deepStrictEqual(rowStatuses(report), [
          "2:unchanged",
          "3:would-update",
          "4:would-create",
          "5:invalid",
          "6:would-create"
        ])

        // summary.json: the contract's counts for scripts, and the planned ones as the reports show them.
        const summary = readSummary(runDir)
        assert.strictEqual(summary.dryRun, true)
        assert.strictEqual(summary.counts.created, 2)
        assert.deepStrictEqual(summary.planned, { "would-update": 1, unchanged: 1, invalid: 1, "would-create": 2 })

        // report.xlsx: the same statuses, and a Summary sheet that says it was a rehearsal.
        const book = new ExcelJS.Workbook()
        yield* Effect.promise(() => book.xlsx.readFile(Path.join(runDir, "report.xlsx")))
        const rows = book.getWorksheet("report")!
        const statusAt = (rows.getRow(1).values as Array<unknown>).indexOf("_status")
        const xlsxStatuses: Array<string> = []
        rows.eachRow((row, n) => {
          if (n > 1) xlsxStatuses.push(String(row.getCell(statusAt).value))
        })
        assert.deepStrictEqual(xlsxStatuses, ["unchanged", "would-update", "would-create", "invalid", "would-create"])
        const front: Array<string> = []
        book.worksheets[0]!.eachRow((row) => front.push((row.values as Array<unknown>).slice(1).join(" | ")))
        assert.include(front[0], "DRY RUN")
        assert.include(front, "Rows by planned status | rows")
        assert.include(front, "would-create | 2")
        assert.notInclude(front.join("\n"), "created | 2")

        // report.html: a rehearsal banner and planned labels; no green "created".
        const html = readFileSync(Path.join(runDir, "report.html"), "utf8")
        assert.include(html, `data-figure="dryRun"`)
        assert.include(html, "Nothing was written to the API")
        assert.match(html, />would-create<\/text>/)
        assert.notMatch(html, />created</)
        assert.include(html, "some rows would not end well")

        // The closing lines.
        assert.include(dry.stderr, "(dry run: nothing was written)")
        assert.match(dry.stderr, /^ {2}would-create {2,}2$/m)
        assert.notMatch(dry.stderr, /^ {2}created /m)

        // Still a rerun input: `--only created` (or `would-create`) takes the planned creates.
        const rerun = yield* runCli(
          ["rerun", Path.join(runDir, "report.csv"), "--only", "created", "--out", Path.join(dir, "rerun")],
          sandbox,
          dir
        )
        assert.strictEqual(rerun.code, 0, rerun.stderr)
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(dir, "rerun"))), ["4:created", "6:created"])
      }),
    120_000
  )

  it.scopedLive(
    "onboard --dry-run closes with planned totals",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const folder = Path.join(dir, "planilhas")
        mkdirSync(folder)
        put(folder, "segments.csv", "description\r\nVarejo\r\nAtacado\r\n")
        put(folder, "keywords.csv", "description\r\nurgente\r\n")
        const runDir = Path.join(dir, "onb")
        const run = yield* runCli(["onboard", folder, "--dry-run", "--out", runDir], sandbox, dir)
        assert.strictEqual(run.code, 0, run.stderr)
        assert.match(run.stderr, /^ {2}would-create {2,}3$/m)
        assert.notMatch(run.stderr, /^ {2}created /m)
        const summary = readSummary(runDir)
        assert.deepStrictEqual(summary.planned, { "would-create": 3 })
        const html = readFileSync(Path.join(runDir, "report.html"), "utf8")
        assert.include(html, "Nothing was written to the API")
        assert.include(html, `<span class="tag plan">would-create 2</span>`)
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(runDir, "segments"))), [
          "2:would-create",
          "3:would-create"
        ])
      }),
    120_000
  )
})
