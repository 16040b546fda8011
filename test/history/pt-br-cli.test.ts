/**
 * The Portuguese actions of the history model as the soak runs them (the `cli` feature: histories in parallel in one
 * process, so the language cannot be the process's): `pt-br-onboard`'s export, dry run and onboarding are the built
 * CLI's `--lang pt-BR`, and their reports and lines are held to `ptBrOnboardChecks`; `pt-br`'s import too, held to
 * `ptBrImportChecks`. Needs `npm run build` first.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import type { World } from "./model.js"
import { ptBrImportChecks, ptBrOnboardChecks, runAction, snapshot, summarySheetOf, summarySheets } from "./model.js"
import { two, withWorld } from "./support.js"

/** The directories of the history whose names end with `suffix`, oldest first. */
const dirsOf = (w: World, suffix: string) =>
  readdirSync(w.dir).filter((n) => n.endsWith(suffix)).sort().map((n) => Path.join(w.dir, n))

describe("pt-BR actions under the cli feature (the soak)", () => {
  it.live(
    "pt-br-onboard and pt-br run the CLI's --lang pt-BR and their reports are held to the pt-BR checks",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const notes: Array<string> = []
          const found: Array<ReadonlyArray<string>> = []
          for (
            const action of [
              { kind: "import", mode: "upsert", file: two, dryRun: false },
              { kind: "pt-br-onboard", export: undefined, other: true },
              { kind: "pt-br", mode: "upsert", file: { ...two, rows: [...two.rows].reverse() } }
            ] as const
          ) {
            w.snapshots.push(yield* snapshot(w))
            const step = yield* runAction(w, action)
            notes.push(step.note)
            found.push(step.found ?? [])
          }
          assert.deepStrictEqual(found, [[], [], []], notes.join("\n"))
          assert.match(notes[1]!, /^pt-BR \(the CLI's --lang pt-BR\), a dry run first: .*exit 0$/, notes[1])

          // The export, the dry run and the onboarding spoke Portuguese: their pages say so.
          const [dry] = dirsOf(w, "-onboard-dry-pt-BR")
          const [onboarded] = dirsOf(w, "-onboard-other")
          for (const dir of [dry!, onboarded!, Path.join(onboarded!, "customers")]) {
            assert.include(readFileSync(Path.join(dir, "report.html"), "utf8"), `<html lang="pt-BR"`, dir)
          }
          const summary = JSON.parse(readFileSync(Path.join(onboarded!, "summary.json"), "utf8")) as {
            counts: Record<string, number>
          }
          assert.strictEqual(summary.counts.created, 2)
          const table = Object.entries(summary.counts).filter(([, n]) => n > 0).map(([s, n]) => `  ${s}  ${n}`)

          // What the checks read is what the CLI wrote: a doctored page and report of it are flagged.
          const step = Path.join(onboarded!, "customers")
          const sheets = yield* summarySheets(onboarded!)
          writeFileSync(
            Path.join(step, "report.csv"),
            readFileSync(Path.join(step, "report.csv"), "utf8").replace(/,created,/, ",criado,")
          )
          assert.deepStrictEqual(ptBrOnboardChecks(onboarded!, [...table, "Rows by status"], sheets), [
            "(pt-BR onboard) step customers report.csv row 2: status \"criado\"",
            "(pt-BR onboard) step customers: report.csv counts {\"created\":1,\"criado\":1}, summary.json {\"created\":2}",
            "(pt-BR onboard) printed: English left, \"Rows by status\" (report.rowsByStatus)"
          ])

          // pt-br's import through the CLI: its page Portuguese, and a doctored count of it flagged.
          const imported = dirsOf(w, "-cli-upsert").pop()!
          const page = Path.join(imported, "report.html")
          const html = readFileSync(page, "utf8")
          assert.include(html, `<html lang="pt-BR"`)
          writeFileSync(page, html.replace(/(data-figure="count:unchanged"[^>]*>)2</, "$13<"))
          assert.deepStrictEqual(ptBrImportChecks(imported, [], yield* summarySheetOf(imported)), [
            "(pt-BR) the import: report.html says unchanged 3, summary.json 2"
          ])
        }), new Set(["cli"])),
    300_000
  )
})
