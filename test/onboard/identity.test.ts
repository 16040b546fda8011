/**
 * Onboarding across sheets with keys in another case: a sheet naming a record of an earlier sheet (or a later row
 * of its own) with the key in another case finds it, in the dry run's plan and in the real run, from CSV files
 * and from a workbook — as the service compares keys, trimmed and without regard to case.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { onboardInto, put, readReport, startTestSandbox, statuses, tempDir, writes } from "./support.js"

describe("onboarding: references in another case", () => {
  it.scopedLive(
    "a dry run plans rows naming an earlier sheet's or a later row's key in another case as created",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const input = Path.join(dir, "input")
        mkdirSync(input)
        put(input, "segments.csv", "description\nVarejo\n")
        put(input, "customers.csv", "externalId,name,segmentDescription\nCLI-1,Padaria,VAREJO\n")
        put(
          input,
          "equipments.csv",
          "externalId,name,associatedCustomerExternalId,parentEquipmentExternalId\nEQ-2,Evaporadora,cli-1,eq-1\nEQ-1,Condensadora, Cli-1 ,\n"
        )
        const runDir = Path.join(dir, "plan")
        const result = yield* onboardInto(sandbox, { input, runDir, dryRun: true })
        const equipments = readReport(Path.join(runDir, "equipments"))
        assert.strictEqual(result.exitCode, 0, JSON.stringify(equipments))
        assert.deepStrictEqual(statuses(readReport(Path.join(runDir, "customers"))), ["2:would-create"])
        assert.deepStrictEqual(statuses(equipments), ["2:would-create", "3:would-create"])
        assert.deepStrictEqual(writes(yield* sandbox.control.requests), [])
      }),
    60_000
  )

  it.scopedLive(
    "a workbook whose sheets name each other's keys in another case is loaded with every reference resolved",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const workbook = new ExcelJS.Workbook()
        workbook.addWorksheet("segments").addRows([["description"], ["Varejo"]])
        workbook.addWorksheet("users").addRows([["externalId", "name", "login", "password"], [
          "U-1",
          "Ana Souza",
          "Ana.Souza",
          "Troque@2026"
        ]])
        workbook.addWorksheet("customers").addRows([["externalId", "name", "segmentDescription"], [
          "CLI-1",
          "Padaria",
          "VAREJO"
        ]])
        workbook.addWorksheet("equipments").addRows([
          ["externalId", "name", "associatedCustomerExternalId", "associatedUserLogin", "parentEquipmentExternalId"],
          ["EQ-2", "Evaporadora", "cli-1", "ana.souza", "eq-1"],
          ["EQ-1", "Condensadora", "Cli-1", "ANA.SOUZA", ""]
        ])
        const input = put(
          dir,
          "cadastro.xlsx",
          new Uint8Array(yield* Effect.promise(() => workbook.xlsx.writeBuffer()))
        )
        const runDir = Path.join(dir, "run")
        const result = yield* onboardInto(sandbox, { input, runDir })
        const equipmentReport = readReport(Path.join(runDir, "equipments"))
        assert.strictEqual(result.exitCode, 0, JSON.stringify(equipmentReport))
        assert.deepStrictEqual(statuses(equipmentReport), ["2:created", "3:created"])

        const apiKey = sandbox.accounts[0]!.apiKey
        const segment = (yield* sandbox.control.records(apiKey, "segments"))[0]!
        const user = (yield* sandbox.control.records(apiKey, "users"))[0]!
        const customers = yield* sandbox.control.records(apiKey, "customers")
        const equipments = yield* sandbox.control.records(apiKey, "equipments")
        assert.strictEqual(customers.length, 1)
        assert.strictEqual(customers[0]!.segmentId, segment.id)
        const parent = equipments.find((e) => e.externalId === "EQ-1")!
        const child = equipments.find((e) => e.externalId === "EQ-2")!
        assert.deepStrictEqual([child.associatedCustomerId, child.associatedUserId, child.parentEquipmentId], [
          customers[0]!.id,
          user.userID,
          parent.id
        ])
        assert.deepStrictEqual([parent.associatedCustomerId, parent.associatedUserId], [customers[0]!.id, user.userID])

        // Run again: every row is found by its key, nothing is created twice.
        const again = yield* onboardInto(sandbox, { input, runDir: Path.join(dir, "again") })
        assert.strictEqual(again.exitCode, 0)
        assert.strictEqual((yield* sandbox.control.records(apiKey, "equipments")).length, 2)
        assert.strictEqual((yield* sandbox.control.records(apiKey, "customers")).length, 1)
      }),
    60_000
  )
})
