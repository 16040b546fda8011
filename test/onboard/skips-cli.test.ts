/**
 * Rows whose parent row did not end well: skipped, exactly them and nothing else, with `_error` naming the parent
 * row (across sheets, down to grandchildren, and within one sheet); a parent later in the same sheet; and the
 * inputs refused before anything is sent: rows naming each other in a cycle, sheets that do, unknown sheets.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import ExcelJS from "exceljs"
import { mkdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { journalFile, readJournal } from "../../src/import/Journal.js"
import { prepareOnboarding } from "../../src/onboard/Onboard.js"
import type { ResourceName } from "../../src/Resources.js"
import {
  errors,
  onboardInto,
  put,
  readJson,
  readReport,
  request,
  runCli,
  startTestSandbox,
  statuses,
  tempDir,
  writeFamily,
  writes
} from "./support.js"

describe("onboard: rows whose parent row did not end well", () => {
  it.scopedLive(
    "are skipped, exactly them, with _error naming the parent row; a parent later in the sheet works",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const input = writeFamily(dir)
        const runDir = Path.join(dir, "run")
        const result = yield* onboardInto(sandbox, { input, runDir })
        assert.strictEqual(result.exitCode, 1)
        const step = (name: string) => readReport(Path.join(runDir, name))

        assert.deepStrictEqual(statuses(step("customers")), ["2:created", "3:invalid", "4:failed", "5:created"])
        assert.match(
          step("customers")[2]!._error!,
          /segmentDescription: no segments record with description "Inexistente"/
        )

        const equipments = step("equipments")
        assert.deepStrictEqual(statuses(equipments), [
          "2:created",
          "3:skipped",
          "4:skipped",
          "5:created",
          "6:created",
          "7:created",
          "8:skipped"
        ])
        assert.deepStrictEqual(errors(equipments), {
          "3": "associatedCustomerExternalId \"C-2\": row 3 of customers was invalid",
          "4": "associatedCustomerExternalId \"C-3\": row 4 of customers failed",
          "8": "parentEquipmentExternalId \"E-2\": row 3 of equipments was not written"
        })
        const tasks = step("tasks")
        assert.deepStrictEqual(statuses(tasks), ["2:created", "3:skipped", "4:skipped", "5:created"])
        assert.deepStrictEqual(errors(tasks), {
          "3": "customerExternalId \"C-2\": row 3 of customers was invalid",
          "4": "equipmentsExternalId \"E-2\": row 3 of equipments was skipped"
        })
        const costs = step("task-additional-costs")
        assert.deepStrictEqual(statuses(costs), ["2:updated", "3:skipped", "4:skipped", "5:updated"])
        assert.deepStrictEqual(errors(costs), {
          "3": "taskExternalId \"T-2\": row 3 of tasks was skipped",
          "4": "taskExternalId \"T-3\": row 4 of tasks was skipped"
        })

        // The server holds the rows that ended well, and only them; the skipped ones were never sent.
        const stored = yield* sandbox.control.records("sandbox-key", "equipments")
        assert.deepStrictEqual(stored.map((e) => e.externalId).sort(), ["E-1", "E-4", "E-5", "E-6"])
        const byKey = new Map(stored.map((e) => [e.externalId, e]))
        assert.strictEqual(byKey.get("E-5")!.parentEquipmentId, byKey.get("E-6")!.id)
        const storedTasks = yield* sandbox.control.records("sandbox-key", "tasks")
        assert.deepStrictEqual(storedTasks.map((t) => t.externalId).sort(), ["T-1", "T-4"])
        assert.deepStrictEqual(storedTasks.find((t) => t.externalId === "T-1")!.equipmentsId, [
          byKey.get("E-1")!.id,
          byKey.get("E-5")!.id
        ])
        const sent = writes(yield* sandbox.control.requests)
        assert.strictEqual(sent.filter((w) => /\/equipments$/.test(w.path)).length, 4)
        assert.strictEqual(sent.filter((w) => /\/tasks$/.test(w.path)).length, 2)
        assert.strictEqual(sent.filter((w) => /\/additional-costs$/.test(w.path)).length, 2)

        // The step's journal says so too (resume leaves these rows alone), and the summaries count them.
        const journal = yield* readJournal(Path.join(runDir, "equipments", journalFile))
        assert.isTrue(journal.complete)
        assert.deepStrictEqual([3, 4, 8].map((row) => journal.rows.get(row)?.outcome?.status), [
          "skipped",
          "skipped",
          "skipped"
        ])
        // Skipped when the pipeline reached them: one `done` line each, never sent, and the session's one `end` line last.
        const lines = readFileSync(Path.join(runDir, "equipments", journalFile), "utf8").trim().split("\n").map((l) =>
          JSON.parse(l)
        )
        const ofRow = (row: number) => lines.filter((l) => l.row === row).map((l) => `${l.state}:${l.status ?? ""}`)
        assert.deepStrictEqual([3, 4, 8].map(ofRow), [["done:skipped"], ["done:skipped"], ["done:skipped"]])
        assert.deepStrictEqual(lines.filter((l) => l.state === "end").length, 1)
        assert.strictEqual(lines.at(-1).state, "end")
        const summary = readJson(Path.join(runDir, "summary.json"))
        const equipmentsStep = summary.steps.find((s: { resource: string }) => s.resource === "equipments")
        assert.strictEqual(equipmentsStep.skippedForParent, 3)
        assert.strictEqual(equipmentsStep.counts.skipped, 3)
        assert.strictEqual(equipmentsStep.exitCode, 1)
        assert.strictEqual(readJson(Path.join(runDir, "equipments", "summary.json")).counts.skipped, 3)
        assert.strictEqual(summary.counts.skipped, 7)
        assert.strictEqual(summary.exitCode, 1)
      }),
    60_000
  )
})

describe("onboard: inputs refused before anything is sent", () => {
  it.scopedLive("rows that name each other in a cycle, naming the rows", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      put(
        dir,
        "equipments.csv",
        "externalId,name,parentEquipmentExternalId\nE-1,Um,E-2\nE-2,Dois,e-1\nE-3,Três,E-3\nE-4,Quatro,E-1\n"
      )
      const refused = yield* Effect.flip(prepareOnboarding(request({ input: dir, runDir: Path.join(dir, "run") })))
      assert.strictEqual(refused._tag, "InputError")
      assert.match(refused.message, /equipments\.csv/)
      assert.match(refused.message, /rows 2 → 3 → 2; row 4 names itself through parentEquipmentExternalId/)
    }))

  it.scopedLive("sheets that refer to each other in a cycle, naming it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      put(dir, "customers.csv", "externalId,name\nC-1,Um\n")
      put(dir, "teams.csv", "description\nEquipe\n")
      // The resource table has no cycle among importable resources: this graph gives customers and teams one.
      const graph: Partial<Record<ResourceName, ReadonlyArray<ResourceName>>> = {
        customers: ["teams"],
        teams: ["customers"]
      }
      const refused = yield* Effect.flip(
        prepareOnboarding(request({ input: dir, runDir: Path.join(dir, "run"), dependenciesOf: (n) => graph[n] ?? [] }))
      )
      assert.strictEqual(refused._tag, "InputError")
      assert.match(refused.message, /reference cycle: (teams → customers → teams|customers → teams → customers)/)
    }))

  it.scopedLive(
    "an unknown sheet exits 2, naming it and listing the sheet names that work; README and _ sheets are notes",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const workbook = new ExcelJS.Workbook()
        workbook.addWorksheet("README").addRow(["notas"])
        workbook.addWorksheet("_listas").addRow(["a"])
        workbook.addWorksheet("customers").addRows([["externalId", "name"], ["C-1", "Um"]])
        workbook.addWorksheet("Clientes").addRows([["externalId", "name"], ["C-2", "Dois"]])
        put(dir, "cadastro.xlsx", new Uint8Array(yield* Effect.promise(() => workbook.xlsx.writeBuffer())))
        const cli = yield* runCli(["onboard", "cadastro.xlsx"], dir)
        assert.strictEqual(cli.code, 2, cli.stderr)
        assert.match(cli.stderr, /sheet "Clientes" is not a resource name/)
        assert.match(cli.stderr, /users, customers, customers-complete/)
        assert.notMatch(cli.stderr, /"README"|"_listas"/)
        // Refused before the embedded sandbox was even started.
        assert.notMatch(cli.stderr, /embedded sandbox/)

        const csvDir = Path.join(dir, "csv")
        mkdirSync(csvDir)
        put(csvDir, "customers.csv", "externalId,name\nC-1,Um\n")
        put(csvDir, "clientes.csv", "externalId,name\nC-1,Um\n")
        put(csvDir, "README.md", "notas\n")
        const files = yield* Effect.either(prepareOnboarding(request({ input: csvDir, runDir: Path.join(dir, "run") })))
        assert.isTrue(Either.isLeft(files))
        assert.match(Either.isLeft(files) ? files.left.message : "", /file "clientes\.csv" is not a resource name/)
      }),
    30_000
  )
})
