/**
 * `fsm-bulk template --workbook`: one onboarding workbook (a README sheet, then every resource's sheet in
 * dependency order, with the single templates' notes and drop-downs), filled with exceljs as a user would and
 * onboarded in a dry run against the embedded sandbox.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { readFileSync, statSync } from "node:fs"
import * as Path from "node:path"
import { dependencyOrder } from "../../src/Resources.js"
import { runCli, tempDir } from "../onboard/support.js"

describe("template --workbook", () => {
  it.scopedLive(
    "writes every sheet in dependency order after a README, and a filled copy onboards in a dry run",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = Path.join(dir, "empresa.xlsx")
        const made = yield* runCli(["template", "--workbook", "--out", file], dir)
        assert.strictEqual(made.code, 0, made.stderr)
        assert.include(made.stderr + made.stdout, `wrote ${file}`)

        const workbook = new ExcelJS.Workbook()
        yield* Effect.promise(() => workbook.xlsx.readFile(file))
        assert.deepStrictEqual(workbook.worksheets.map((s) => s.name), ["README", ...dependencyOrder()])
        const customers = workbook.getWorksheet("customers")!
        assert.strictEqual(customers.rowCount, 1, "no example rows: an onboarding reads every row it finds")
        assert.isDefined(customers.getCell("A1").note, "the header cells carry the templates' notes")
        const tasks = workbook.getWorksheet("tasks")!
        const header = (sheet: ExcelJS.Worksheet) =>
          (sheet.getRow(1).values as Array<unknown>).map((v) => String(v ?? ""))
        const priority = header(tasks).indexOf("priority")
        const rule = tasks.getCell(2, priority).dataValidation
        assert.strictEqual(rule?.type, "list")
        assert.deepStrictEqual(rule?.formulae, ["\"low,medium,high\""])

        // A few rows, as a user fills them; the other sheets stay empty.
        const fill = (name: string, rows: ReadonlyArray<Record<string, string>>) => {
          const sheet = workbook.getWorksheet(name)!
          const columns = header(sheet)
          rows.forEach((cells, i) => {
            for (const [column, value] of Object.entries(cells)) {
              assert.isAbove(columns.indexOf(column), 0, `${name} has ${column}`)
              sheet.getRow(i + 2).getCell(columns.indexOf(column)).value = value
            }
          })
        }
        fill("users", [{ externalId: "U-1", name: "Ana Souza", login: "ana.souza", password: "Troque@2026" }])
        fill("customers", [
          { externalId: "C-1", name: "Padaria Boa", cpfCnpj: "11.222.333/0001-81" },
          { externalId: "C-2", name: "Oficina Dois" }
        ])
        fill("tasks", [{
          externalId: "T-1",
          userFromLogin: "ana.souza",
          customerExternalId: "C-1",
          taskDate: "2026-12-01T09:00:00",
          priority: "alta"
        }])
        const filled = Path.join(dir, "preenchido.xlsx")
        yield* Effect.promise(() => workbook.xlsx.writeFile(filled))

        const plan = yield* runCli(["onboard", filled, "--dry-run", "--json", "--out", "plan"], dir)
        assert.strictEqual(plan.code, 0, plan.stderr)
        const summary = JSON.parse(plan.stdout.trim().split("\n").at(-1)!)
        assert.strictEqual(summary.dryRun, true)
        assert.strictEqual(summary.counts.created, 4)
        assert.strictEqual(summary.counts.invalid + summary.counts.failed + summary.counts.skipped, 0)
        assert.match(plan.stderr, /not read \(notes\): README/)
        // Only the sheets with rows are steps (issue 27): the empty ones are named once, in one line, and in summary.json
        // and report.html; no "[n/31] … no rows" line for each.
        const filledSheets = summary.steps.map((st: { resource: string }) => st.resource)
        const emptySheets = dependencyOrder().filter((name) => !filledSheets.includes(name))
        assert.isAtLeast(emptySheets.length, 20)
        assert.isTrue(summary.steps.every((st: { rows: number }) => st.rows > 0))
        assert.deepStrictEqual(summary.resources, filledSheets)
        assert.deepStrictEqual(summary.empty, emptySheets)
        assert.include(
          plan.stderr,
          `  ${emptySheets.length} sheets with no rows, not imported: ${emptySheets.join(", ")}\n`
        )
        assert.notInclude(plan.stderr, "no rows\n")
        assert.match(plan.stderr, new RegExp(`\\[${filledSheets.length}/${filledSheets.length}\\] `))
        const page = readFileSync(Path.join(dir, "plan", "report.html"), "utf8")
        assert.include(page, `${emptySheets.length} sheets with no rows, not imported:`)
        assert.strictEqual(page.match(/<tr><td>[a-z-]+<\/td><td>\d+<\/td>/g)?.length, filledSheets.length)

        // The template as written (every sheet empty) has nothing to onboard: refused before anything is sent.
        const nothing = yield* runCli(["onboard", file, "--dry-run", "--out", "nothing"], dir)
        assert.strictEqual(nothing.code, 2, nothing.stderr)
        assert.include(
          nothing.stderr,
          `no sheet has rows to import (${dependencyOrder().length} sheets read, all empty)`
        )

        // Written again, the workbook is left alone.
        const before = statSync(file).mtimeMs
        const again = yield* runCli(["template", "--workbook", "--out", file], dir)
        assert.strictEqual(again.code, 0, again.stderr)
        assert.include(again.stderr + again.stdout, `unchanged ${file}`)
        assert.strictEqual(statSync(file).mtimeMs, before)
      }),
    240_000
  )
})
