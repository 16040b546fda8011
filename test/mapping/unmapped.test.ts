/**
 * Nothing unmapped is sent: columns of a customer's file that name no field of the resource stay in the file (and
 * the report), are listed in the summary, and never reach the server — read back from the sandbox to prove it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { Notices } from "../../src/console/Output.js"
import { runValidate } from "../../src/import/ValidateRun.js"
import { cp1252, importInto, put, readReport, readSummary, startTestSandbox, tempDir } from "../import/support.js"

describe("columns that map to no field", () => {
  it.scopedLive("are not sent: the records read back have no such property, the summary and report list them", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        cp1252(
          [
            "externalId;name;Vendedor;Limite de crédito;Observações",
            "C-1;Padaria São João;Ana;5.000,00;Inadimplente desde março",
            "C-2;Açougue Boa Vista;Bruno;;"
          ].join("\r\n") + "\r\n"
        )
      )
      const runDir = Path.join(dir, "run")
      const result = yield* importInto(sandbox, { resource: "customers", file, runDir })
      assert.strictEqual(result.exitCode, 0)
      const records = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
      assert.strictEqual(records.length, 2)
      for (const record of records) {
        for (const column of ["Vendedor", "Limite de crédito", "Observações"]) {
          assert.isFalse(column in record, `${column} stored on ${JSON.stringify(record)}`)
        }
      }
      // Nor their values under any other name.
      assert.notMatch(JSON.stringify(records), /Ana|Bruno|Inadimplente|5\.000/)
      assert.deepStrictEqual(readSummary(runDir).ignoredColumns, ["Vendedor", "Limite de crédito", "Observações"])
      // The customer's report keeps the columns as they were.
      const report = readReport(runDir)
      assert.strictEqual(report[0]!["Observações"], "Inadimplente desde março")
    }))

  it.scopedLive("validate lists them too", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", "externalId,name,Vendedor\nC-1,Padaria,Ana\n")
      const lines: Array<string> = []
      const result = yield* runValidate({
        resource: "customers",
        file,
        read: { encoding: "auto", delimiter: "auto" },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert",
        runDir: Path.join(dir, "run")
      }).pipe(Effect.provide(Notices.to((line) => Effect.sync(() => void lines.push(line)))))
      assert.deepStrictEqual(result.summary.ignoredColumns, ["Vendedor"])
      assert.isTrue(
        lines.some((l) =>
          /column "Vendedor" is not a known field of customers; ignored, its values are not sent/.test(l)
        )
      )
    }))
})
