/**
 * Record identity: a key written in another case names the same record, as the service compares keys (trimmed,
 * case-insensitive). Upserts find the record instead of creating a duplicate, the dry run plans what the real run
 * does, references and self-references resolve, and update/delete modes find their record — against the sandbox.
 * The built CLI's exit codes for the same: `identity-cli.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { apiOf, importInto, put, readReport, startTestSandbox, tempDir, writes } from "./support.js"

describe("keys in another case name the same record", () => {
  it.scopedLive(
    "the sandbox compares keys as the service does: a second record with the key in another case is refused (409)",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const first = yield* importInto(sandbox, {
          resource: "equipment-categories",
          file: put(dir, "a.csv", "externalId,description\nEQC-A,Split\n"),
          runDir: Path.join(dir, "a")
        })
        assert.strictEqual(first.exitCode, 0)
        // As a create, the key in another case names the existing record: the read before refuses it unsent (the
        // server itself would answer 409).
        const create = yield* importInto(sandbox, {
          resource: "equipment-categories",
          file: put(dir, "b.csv", "externalId,description\neqc-a,Split\n"),
          runDir: Path.join(dir, "b"),
          mode: "create"
        })
        assert.strictEqual(create.exitCode, 1)
        const row = readReport(Path.join(dir, "b"))[0]!
        assert.strictEqual(row._status, "failed")
        assert.strictEqual(row._http_status, "")
        assert.match(row._error!, /^already exists \(externalId "eqc-a", id \d+\): use --mode upsert/)
        const posted = yield* Effect.flatMap(Api, (api) =>
          api.request({
            method: "POST",
            path: "/equipmentcategories",
            body: { externalId: "eqc-a", description: "x" }
          })).pipe(Effect.provide(apiOf(sandbox)))
        assert.strictEqual(posted.status, 409)
        assert.strictEqual(
          (yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "equipment-categories")).length,
          1
        )
      }),
    30_000
  )

  it.scopedLive(
    "a dry run of a key stored in another case plans updated (not created), as the real run then does",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const apiKey = sandbox.accounts[0]!.apiKey
        assert.strictEqual(
          (yield* importInto(sandbox, {
            resource: "customers",
            file: put(dir, "a.csv", "externalId,name\ncli-9,Padaria\n"),
            runDir: Path.join(dir, "a")
          })).exitCode,
          0
        )
        const id = (yield* sandbox.control.records(apiKey, "customers"))[0]!.id
        const file = put(dir, "b.csv", "externalId,name\nCLI-9,Padaria Nova\n")

        const dry = yield* importInto(sandbox, {
          resource: "customers",
          file,
          runDir: Path.join(dir, "dry"),
          dryRun: true
        })
        assert.strictEqual(dry.exitCode, 0)
        const planned = readReport(Path.join(dir, "dry"))[0]!
        assert.strictEqual(planned._status, "would-update", JSON.stringify(planned))
        assert.strictEqual(planned._changes, "name: \"Padaria\" → \"Padaria Nova\"")
        // The key alone in another case changes nothing.
        yield* importInto(sandbox, {
          resource: "customers",
          file: put(dir, "c.csv", "externalId,name\nCLI-9,Padaria\n"),
          runDir: Path.join(dir, "same"),
          dryRun: true
        })
        assert.strictEqual(readReport(Path.join(dir, "same"))[0]!._status, "unchanged")
        // A field that is not the key is a value: another case there is a change.
        yield* importInto(sandbox, {
          resource: "customers",
          file: put(dir, "d.csv", "externalId,name\nCLI-9,PADARIA\n"),
          runDir: Path.join(dir, "value"),
          dryRun: true
        })
        assert.deepStrictEqual(
          [readReport(Path.join(dir, "value"))[0]!._status, readReport(Path.join(dir, "value"))[0]!._changes],
          ["would-update", "name: \"Padaria\" → \"PADARIA\""]
        )

        const real = yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "real") })
        assert.strictEqual(real.exitCode, 0)
        const done = readReport(Path.join(dir, "real"))[0]!
        assert.strictEqual(done._status, "updated")
        assert.strictEqual(done._record_id, String(id))
        const stored = yield* sandbox.control.records(apiKey, "customers")
        assert.strictEqual(stored.length, 1)
        assert.strictEqual(stored[0]!.description, "Padaria Nova")
      }),
    30_000
  )

  it.scopedLive(
    "a reference cell written in another case resolves to the record (externalId, description, login)",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const apiKey = sandbox.accounts[0]!.apiKey
        const load = (resource: "segments" | "customers" | "users" | "equipments", name: string, csv: string) =>
          Effect.map(
            importInto(sandbox, { resource, file: put(dir, `${name}.csv`, csv), runDir: Path.join(dir, name) }),
            (r) => r.exitCode
          )
        assert.strictEqual(yield* load("segments", "s", "description\nVarejo\n"), 0)
        assert.strictEqual(
          yield* load("users", "u", "externalId,name,login,password\nU-1,Ana Souza,Ana.Souza,Troque@2026\n"),
          0
        )
        assert.strictEqual(
          yield* load("customers", "c", "externalId,name,segmentDescription\nCLI-1,Padaria,VAREJO\n"),
          0
        )
        assert.strictEqual(
          yield* load(
            "equipments",
            "e",
            "externalId,name,associatedCustomerExternalId,associatedUserLogin\nEQ-1,Split,cli-1,ana.souza\n"
          ),
          0
        )

        const segment = (yield* sandbox.control.records(apiKey, "segments"))[0]!
        const user = (yield* sandbox.control.records(apiKey, "users"))[0]!
        const customer = (yield* sandbox.control.records(apiKey, "customers"))[0]!
        const equipment = (yield* sandbox.control.records(apiKey, "equipments"))[0]!
        assert.strictEqual(customer.segmentId, segment.id)
        assert.strictEqual(equipment.associatedCustomerId, customer.id)
        assert.strictEqual(equipment.associatedUserId, user.userID)
        assert.deepStrictEqual(readReport(Path.join(dir, "e")).map((r) => r._status), ["created"])
      }),
    30_000
  )

  it.scopedLive(
    "a row naming a later row of the same file in another case waits for it (self-reference)",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(
          dir,
          "e.csv",
          "externalId,name,parentEquipmentExternalId\nEQ-2,Evaporadora,eq-1\nEQ-1,Condensadora,\n"
        )
        const result = yield* importInto(sandbox, { resource: "equipments", file, runDir: Path.join(dir, "e") })
        const report = readReport(Path.join(dir, "e"))
        assert.strictEqual(result.exitCode, 0, JSON.stringify(report))
        assert.deepStrictEqual(report.map((r) => r._status), ["created", "created"])
        const stored = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "equipments")
        const parent = stored.find((r) => r.externalId === "EQ-1")!
        assert.strictEqual(stored.find((r) => r.externalId === "EQ-2")!.parentEquipmentId, parent.id)
      }),
    30_000
  )

  it.scopedLive("update and delete modes find the record by its key in another case", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const apiKey = sandbox.accounts[0]!.apiKey
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "a.csv", "externalId,name\nCLI-1,Um\nCLI-2,Dois\n"),
        runDir: Path.join(dir, "a")
      })
      yield* importInto(sandbox, {
        resource: "equipment-categories",
        file: put(dir, "k.csv", "externalId,description\nEQC-X,Velha\n"),
        runDir: Path.join(dir, "k")
      })

      const update = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "u.csv", "externalId,name\ncli-1,Um Novo\n"),
        runDir: Path.join(dir, "u"),
        mode: "update"
      })
      assert.strictEqual(update.exitCode, 0, JSON.stringify(readReport(Path.join(dir, "u"))))
      assert.strictEqual(readReport(Path.join(dir, "u"))[0]!._status, "updated")

      const remove = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "d.csv", "externalId\n cli-2 \n"),
        runDir: Path.join(dir, "d"),
        mode: "delete"
      })
      assert.strictEqual(remove.exitCode, 0, JSON.stringify(readReport(Path.join(dir, "d"))))
      assert.strictEqual(readReport(Path.join(dir, "d"))[0]!._status, "deleted")
      const customers = yield* sandbox.control.records(apiKey, "customers")
      assert.deepStrictEqual(customers.map((r) => [r.externalId, r.description]), [["CLI-1", "Um Novo"]])

      // A resource the tool upserts itself (no upsert in the API): delete finds it too.
      const dropped = yield* importInto(sandbox, {
        resource: "equipment-categories",
        file: put(dir, "x.csv", "externalId\neqc-x\n"),
        runDir: Path.join(dir, "x"),
        mode: "delete"
      })
      assert.strictEqual(dropped.exitCode, 0, JSON.stringify(readReport(Path.join(dir, "x"))))
      assert.deepStrictEqual(yield* sandbox.control.records(apiKey, "equipment-categories"), [])
    }), 30_000)

  it.scopedLive(
    "task items are keyed by their parent and item in any case: resolved, and a repeat in another case is refused",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const apiKey = sandbox.accounts[0]!.apiKey
        yield* importInto(sandbox, {
          resource: "users",
          file: put(dir, "u.csv", "externalId,name,login,password\nU-1,Ana,ana,Troque@2026\n"),
          runDir: Path.join(dir, "u")
        })
        yield* importInto(sandbox, {
          resource: "products",
          file: put(dir, "p.csv", "externalId,name\nP-1,Filtro\n"),
          runDir: Path.join(dir, "p")
        })
        const tasks = yield* importInto(sandbox, {
          resource: "tasks",
          file: put(dir, "t.csv", "externalId,userFromLogin,taskDate\nOS-1,ana,2026-12-01T09:00:00\n"),
          runDir: Path.join(dir, "t")
        })
        assert.strictEqual(tasks.exitCode, 0, JSON.stringify(readReport(Path.join(dir, "t"))))
        const task = (yield* sandbox.control.records(apiKey, "tasks"))[0]!
        const before = (yield* sandbox.control.requests).length

        // Both rows name one item of one task: the second is refused, the first resolves in another case.
        const items = put(
          dir,
          "tp.csv",
          "taskExternalId,productExternalId,quantity,value\nos-1,p-1,2,10\nOS-1,P-1,3,10\n"
        )
        const result = yield* importInto(sandbox, {
          resource: "task-products",
          file: items,
          runDir: Path.join(dir, "tp")
        })
        const report = readReport(Path.join(dir, "tp"))
        assert.strictEqual(result.exitCode, 1, JSON.stringify(report))
        assert.deepStrictEqual(report.map((r) => r._status), ["updated", "invalid"], JSON.stringify(report))
        assert.strictEqual(report[1]!._error, "productExternalId: \"P-1\" repeats row 2 (same taskExternalId \"OS-1\")")
        assert.deepStrictEqual(
          writes((yield* sandbox.control.requests).slice(before)).map((w) => `${w.method} ${w.path}`),
          [`PUT /v2/tasks/${task.taskID}/products`]
        )
        const after = (yield* sandbox.control.records(apiKey, "tasks"))[0]!
        assert.deepStrictEqual((after.products as ReadonlyArray<Record<string, unknown>>).map((p) => p.quantity), [2])
      }),
    30_000
  )
})
