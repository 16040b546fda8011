/**
 * The checker's invariants can fail: a history directory or a report that breaks one is flagged. (A checker
 * whose invariants cannot fail proves nothing, however many histories it runs.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { mkdirSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { temporaryDir } from "../support.js"
import type { Step, World } from "./model.js"
import { checkStep } from "./model.js"
import { accounts } from "./support.js"

const nothing: Step = { targeted: new Set(), keyless: 0, output: [], note: "" }

/** A world that holds only what invariant (v) reads: the account's secrets and the history's directory. */
const worldIn = (dir: string) =>
  ({ sandbox: { accounts }, dir, runs: [], snapshots: [], changes: [], exports: [] }) as unknown as World

const workbookWith = (path: string, cell: string) =>
  Effect.promise(async () => {
    const book = new ExcelJS.Workbook()
    book.addWorksheet("Rows").addRows([["_row", "_status", "_error"], [2, "failed", cell]])
    await book.xlsx.writeFile(path)
  })

describe("invariant (v): no secret in any file", () => {
  it.live("a secret inside report.xlsx (compressed) or a .zip is found, entry named", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = Path.join(yield* temporaryDir("fsm-history-v-"), "h")
      const run = Path.join(dir, "001-import-upsert")
      mkdirSync(run, { recursive: true })
      writeFileSync(Path.join(run, "report.csv"), "_row,_status,_error\r\n2,failed,Bad Gateway\r\n")
      yield* workbookWith(Path.join(run, "report.xlsx"), "Bad Gateway")
      const w = worldIn(dir)
      assert.deepStrictEqual(yield* checkStep(w, 0, nothing, new Map(), new Map()), [])

      yield* workbookWith(Path.join(run, "report.xlsx"), `Bad Gateway (apiToken ${accounts[0]!.apiToken})`)
      const found = yield* checkStep(w, 0, nothing, new Map(), new Map())
      assert.deepStrictEqual(found, ["(v) 001-import-upsert/report.xlsx:xl/sharedStrings.xml holds a secret (hist-t…)"])

      yield* workbookWith(Path.join(run, "report.xlsx"), "Bad Gateway")
      yield* workbookWith(Path.join(run, "bundle.zip"), `apiKey=${accounts[0]!.apiKey}`)
      const inZip = yield* checkStep(w, 0, nothing, new Map(), new Map())
      assert.deepStrictEqual(inZip, ["(v) 001-import-upsert/bundle.zip:xl/sharedStrings.xml holds a secret (hist-k…)"])
    })))
})
