/**
 * A row without a key in a file that finds records by key (upsert, update, delete): a footer line like
 * "Total de clientes: 5" must be an invalid row naming its row and column, never a record created on every run.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { cp1252, importInto, put, readReport, rowStatuses, startTestSandbox, tempDir } from "./support.js"

describe("keyless rows", () => {
  it.scopedLive("an upsert file's footer without a key is invalid on every run; nothing is created twice", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        cp1252(
          [
            "externalId;name;cpfCnpj",
            ...Array.from({ length: 5 }, (_, i) => `CLI-${i + 1};Cliente São ${i + 1};`),
            ";;",
            ";Total de clientes: 5;"
          ].join("\r\n") + "\r\n"
        )
      )
      for (const run of ["run-1", "run-2"]) {
        const runDir = Path.join(dir, run)
        const result = yield* importInto(sandbox, { resource: "customers", file, runDir })
        const report = readReport(runDir)
        const footer = report.find((r) => r.name === "Total de clientes: 5")!
        assert.strictEqual(footer._status, "invalid", run)
        assert.strictEqual(footer._row, "8")
        assert.match(footer._error!, /^externalId: no key: upsert finds each record by externalId/)
        assert.include(footer._error!, "--mode create")
        assert.strictEqual(result.exitCode, 1)
        assert.deepStrictEqual(
          rowStatuses(report).filter((s) => !s.endsWith("invalid")),
          ["2", "3", "4", "5", "6"].map((r) => `${r}:${run === "run-1" ? "created" : "unchanged"}`)
        )
      }
      const stored = yield* sandbox.control.records("sandbox-key", "customers")
      assert.deepStrictEqual(stored.map((c) => c.externalId).sort(), [1, 2, 3, 4, 5].map((i) => `CLI-${i}`))
    }))

  it.scopedLive("update and delete: a row without id or key is invalid, naming the column", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", "externalId,name\nCLI-1,Cliente 1\n,Total: 1\n")
      yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "create"), mode: "create" })
      for (const mode of ["update", "delete"] as const) {
        const runDir = Path.join(dir, mode)
        yield* importInto(sandbox, { resource: "customers", file, runDir, mode })
        const footer = readReport(runDir).find((r) => r._row === "3")!
        assert.strictEqual(footer._status, "invalid", mode)
        assert.match(footer._error!, new RegExp(`^externalId: needed to find the record to ${mode}: fill externalId`))
      }
    }))
})
