/**
 * Headers against the resource table: every importable resource plans from its own template header (so the
 * table and the validator cannot drift), column kinds, warnings, and the headers refused before any row is read.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import type { InputError } from "../../src/Errors.js"
import { exportColumns, importable, resource, templateColumns } from "../../src/Resources.js"
import { exampleRowMessage } from "../../src/validate/ExampleRow.js"
import { inferFormats, makeValidator, planColumns } from "../../src/validate/Validate.js"
import { options, sourceRows, streamOf } from "./support.js"

const refused = (e: Either.Either<unknown, InputError>): InputError => {
  if (Either.isRight(e)) throw new Error("expected the header to be refused")
  return e.left
}

describe("planColumns", () => {
  it.effect("plans every importable resource from its own template header, without warnings", () =>
    Effect.gen(function*() {
      for (const r of importable) {
        const header = templateColumns(r).map((c) => c.name)
        for (const mode of ["upsert", "create"] as const) {
          const plan = yield* planColumns(r, `${r.name}.csv`, header, options({ mode }))
          assert.deepStrictEqual(plan.warnings, [], r.name)
          assert.strictEqual(plan.columns.map((c) => c.kind).every((k) => k === "field" || k === "ref"), true, r.name)
        }
        // update and delete need an id or a key: resources that have one must plan, the others are refused.
        const matchable = r.id !== undefined || r.key !== undefined
        for (const mode of ["update", "delete"] as const) {
          const plan = yield* Effect.either(planColumns(r, `${r.name}.csv`, header, options({ mode })))
          assert.strictEqual(Either.isRight(plan), matchable, `${r.name} ${mode}`)
        }
      }
    }))

  it.effect("plans an export file (read-only columns ignored) and a report (tool columns ignored)", () =>
    Effect.gen(function*() {
      const tasks = resource("tasks")
      const header = ["_row", "_status", "_error", ...exportColumns(tasks).map((c) => c.name)]
      const plan = yield* planColumns(tasks, "tasks.csv", header, options())
      const kind = (name: string) => plan.columns.find((c) => c.name === name)?.kind
      assert.strictEqual(kind("_row"), "tool")
      assert.strictEqual(kind("_status"), "tool")
      assert.strictEqual(kind("taskStatus"), "ignored")
      assert.strictEqual(kind("expense"), "ignored")
      assert.strictEqual(kind("customerId"), "field")
      assert.strictEqual(kind("customerExternalId"), "ref")
      assert.deepStrictEqual(plan.warnings, [])
    }))

  it.effect("matches column names case-insensitively and keeps the file's spelling", () =>
    Effect.gen(function*() {
      const plan = yield* planColumns(
        resource("customers"),
        "clientes.csv",
        [" Name ", "EXTERNALID", "CpfCnpj"],
        options()
      )
      assert.deepStrictEqual(plan.columns.map((c) => [c.name, c.kind, c.column?.name]), [
        ["Name", "field", "name"],
        ["EXTERNALID", "field", "externalId"],
        ["CpfCnpj", "field", "cpfCnpj"]
      ])
    }))

  it.effect("warns about unknown columns, suggesting a close known name", () =>
    Effect.gen(function*() {
      const plan = yield* planColumns(
        resource("customers"),
        "clientes.csv",
        ["name", "extrenalId", "vendedor", ""],
        options({ mode: "create" })
      )
      assert.deepStrictEqual(plan.columns.map((c) => c.kind), ["field", "unknown", "unknown", "ignored"])
      assert.deepStrictEqual(plan.warnings, [
        `clientes.csv: column "extrenalId" is not a known field of customers (did you mean "externalId"?); ignored, its values are not sent`,
        `clientes.csv: column "vendedor" is not a known field of customers; ignored, its values are not sent`,
        `clientes.csv: column 4 has no name; its values are ignored`
      ])
    }))

  it.effect("refuses create and upsert files without a required column, naming it and its reference column", () =>
    Effect.gen(function*() {
      for (const mode of ["create", "upsert"] as const) {
        const e = refused(
          yield* Effect.either(
            planColumns(resource("tasks"), "tarefas.csv", ["externalId", "customerExternalId"], options({ mode }))
          )
        )
        assert.strictEqual(e.file, "tarefas.csv")
        assert.strictEqual(e.column, "idUserFrom")
        assert.strictEqual(
          e.message,
          `tarefas.csv (column "idUserFrom"): required columns missing for ${mode}: idUserFrom (or userFromLogin), taskDate`
        )
      }
      // The reference column alone satisfies the requirement.
      const plan = yield* planColumns(
        resource("tasks"),
        "tarefas.csv",
        ["userFromLogin", "taskDate"],
        options({ mode: "create" })
      )
      assert.deepStrictEqual(plan.columns.map((c) => c.kind), ["ref", "field"])
      // update does not need them.
      yield* planColumns(resource("tasks"), "tarefas.csv", ["externalId", "priority"], options({ mode: "update" }))
    }))

  it.effect("refuses update and delete files with nothing to find the records by", () =>
    Effect.gen(function*() {
      const noKey = refused(
        yield* Effect.either(
          planColumns(resource("customers"), "c.csv", ["name", "active"], options({ mode: "update" }))
        )
      )
      assert.strictEqual(
        noKey.message,
        `c.csv (column "id"): update needs a column to find each record by: "id" or "externalId"`
      )
      const noParent = refused(
        yield* Effect.either(
          planColumns(resource("task-products"), "tp.csv", ["productExternalId"], options({ mode: "delete" }))
        )
      )
      assert.strictEqual(
        noParent.message,
        `tp.csv (column "taskId"): delete needs the parent's column: "taskId" or "taskExternalId"`
      )
      const unmatchable = refused(
        yield* Effect.either(
          planColumns(
            resource("employee-product-stock"),
            "s.csv",
            ["userLogin", "productExternalId", "amount"],
            options({ mode: "delete" })
          )
        )
      )
      assert.strictEqual(
        unmatchable.detail,
        "employee-product-stock records have neither an id nor a key, so rows cannot be matched to records to delete"
      )
    }))

  it.effect("refuses upsert, update and delete files whose key column is misspelt, naming both spellings; create only warns", () =>
    Effect.gen(function*() {
      for (const mode of ["upsert", "update", "delete"] as const) {
        // With or without an id column: a misspelt key is never silently sent as an unknown field.
        for (const header of [["extrenalId", "name"], ["id", "extrenalId", "name"]]) {
          const e = refused(
            yield* Effect.either(planColumns(resource("customers"), "clientes.csv", header, options({ mode })))
          )
          assert.strictEqual(e.column, "extrenalId")
          assert.include(e.message, `did you mean "externalId"?`)
          assert.include(e.message, `${mode} finds each record by "id" or "externalId"`)
        }
      }
      // A reference column standing for the key (sub-collections) counts as the key; for upsert it is a required
      // column, whose refusal points at the misspelling.
      const header = ["taskExternalId", "productExternalld", "quantity", "value"]
      const item = refused(
        yield* Effect.either(planColumns(resource("task-products"), "tp.csv", header, options({ mode: "delete" })))
      )
      assert.strictEqual(item.column, "productExternalld")
      const upsert = refused(yield* Effect.either(planColumns(resource("task-products"), "tp.csv", header, options())))
      assert.strictEqual(
        upsert.message,
        `tp.csv (column "productId"): required column missing for upsert: productId (or productExternalId) (is column "productExternalld" a misspelling of "productExternalId"?)`
      )
      const created = yield* planColumns(
        resource("customers"),
        "clientes.csv",
        ["extrenalId", "name"],
        options({ mode: "create" })
      )
      assert.deepStrictEqual(created.columns.map((c) => c.kind), ["unknown", "field"])
      // Beside the key itself, a similar name is another field: only warned about.
      const beside = yield* planColumns(
        resource("customers"),
        "clientes.csv",
        ["externalId", "internalId", "name"],
        options()
      )
      assert.deepStrictEqual(beside.warnings, [
        `clientes.csv: column "internalId" is not a known field of customers (did you mean "externalId"?); ignored, its values are not sent`
      ])
    }))

  it.effect("refuses an upsert file with nothing to find the records by: the key's column, or the id of a resource without a key", () =>
    Effect.gen(function*() {
      const noKey = refused(
        yield* Effect.either(planColumns(resource("customers"), "c.csv", ["name", "email"], options()))
      )
      assert.strictEqual(noKey.column, "externalId")
      assert.strictEqual(
        noKey.message,
        `c.csv (column "externalId"): upsert needs a column to find each record by: "id" or "externalId"; without one, every import of the file would create its rows again; add the column, or import the file with --mode create to create every row as a new record`
      )
      const noId = refused(
        yield* Effect.either(
          planColumns(resource("expenses"), "d.csv", ["userToLogin", "typeDescription", "date", "amount"], options())
        )
      )
      assert.strictEqual(
        noId.message,
        `d.csv (column "id"): expenses records have no key, so upsert finds them by "id" (rows with it empty are created) and the file has no such column; to create every row as a new record, import the file with --mode create or give it an empty "id" column`
      )
      // The id column alone is enough (an export edited and imported again), and so is the key's reference column.
      yield* planColumns(resource("customers"), "c.csv", ["id", "name"], options())
      yield* planColumns(
        resource("expenses"),
        "d.csv",
        ["id", "userToLogin", "typeDescription", "date", "amount"],
        options()
      )
      yield* planColumns(resource("task-products"), "tp.csv", [
        "taskExternalId",
        "productExternalId",
        "quantity",
        "value"
      ], options())
      // A misspelt id is pointed at.
      const idd = refused(
        yield* Effect.either(
          planColumns(
            resource("expenses"),
            "d.csv",
            ["idd", "userToLogin", "typeDescription", "date", "amount"],
            options({ mode: "update" })
          )
        )
      )
      assert.strictEqual(
        idd.message,
        `d.csv (column "id"): update needs a column to find each record by: "id" (is column "idd" a misspelling of "id"?)`
      )
    }))

  it.effect("refuses two columns that give the same field", () =>
    Effect.gen(function*() {
      const e = refused(
        yield* Effect.either(planColumns(resource("customers"), "c.csv", ["name", "externalId", "Name"], options()))
      )
      assert.strictEqual(e.message, `c.csv (column "Name"): columns "name" and "Name" both give name; keep one of them`)
    }))

  it.effect("the table's own example row of every importable resource is valid", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(Path.join(tmpdir(), "fsm-examples-"))
      try {
        for (const r of importable) {
          const columns = templateColumns(r)
          // Required fields without an example: a reference names its record by key, an id is 1.
          const missing = (c: (typeof columns)[number]) => c.field.required === true && !c.field.example
          const cells = columns.map((c) =>
            c.role === "ref"
              ? (missing(c) ? "KEY-1" : "")
              : missing(c) && c.field.ref === undefined
              ? "1"
              : (c.field.example ?? "")
          )
          for (const c of columns) {
            if (c.field.type._tag !== "file" || c.field.example === undefined) continue
            mkdirSync(Path.dirname(Path.join(dir, c.field.example)), { recursive: true })
            writeFileSync(Path.join(dir, c.field.example), "example")
          }
          const opts = options({ mode: "create", baseDir: dir })
          const plan = yield* planColumns(r, `${r.name}.csv`, columns.map((c) => c.name), opts)
          const rows = sourceRows([cells])
          const formats = yield* inferFormats(plan, streamOf(rows), opts)
          const result = yield* makeValidator(plan, formats, opts).validate(rows[0]!)
          // Left as it is in a file with the template's columns, the example row is reported as such; its cells
          // themselves must pass.
          const errors = result._tag === "Invalid" ? result.errors : []
          assert.deepStrictEqual(errors.filter((e) => e.message !== exampleRowMessage()), [], r.name)
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))
})
