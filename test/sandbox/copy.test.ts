/**
 * `sandbox --seed EXPORT_DIR`: a sandbox started from an export holds the exported account as it was. Exported
 * again, it gives the same files byte for byte (csv and xlsx exports both read back); new records get ids above
 * the copied ones; an import rehearsed against the copy reports what it reports against the account; an export
 * that differs from its manifest is refused, naming the file. The onboarding rehearsed on a copy of the onboarded
 * example company is test/onboard/example.test.ts's, on the onboarding it checks (one onboarding fewer a run each).
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { appendFileSync, cpSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { readExportCopy } from "../../src/export/Copy.js"
import {
  accountA,
  assertSameExport,
  exportAll,
  http,
  seedEverything,
  startTestSandbox,
  tempDir
} from "../export/support.js"
import { importInto, put, readReport } from "../import/support.js"
import { oncePerFile } from "../support.js"

/** The original: every resource seeded through the HTTP API (`seedEverything`). */
const original = Effect.gen(function*() {
  const sandbox = yield* startTestSandbox()
  yield* Effect.promise(() => seedEverything(sandbox))
  return sandbox
})

/**
 * The original and its csv export, made once for the file: the tests that neither change the account nor write into
 * the export share them (each seeded and exported its own, about 2 s a test); a test that edits the export edits a
 * copy of it (`exportedCopy`).
 */
const sharedOriginal = oncePerFile(
  Effect.gen(function*() {
    const account = yield* original
    const exported = Path.join(yield* tempDir, "export")
    yield* exportAll(account, exported)
    return { account, exported }
  }).pipe(Effect.provide(NodeContext.layer))
)

/** A copy of the shared export in a directory of the test's own, to edit. */
const exportedCopy = Effect.gen(function*() {
  const { exported } = yield* sharedOriginal
  const copy = Path.join(yield* tempDir, "export")
  cpSync(exported, copy, { recursive: true })
  return copy
})

/** A second sandbox started from the export in `dir`. */
const copyOf = (dir: string) => Effect.flatMap(readExportCopy(dir), (copy) => startTestSandbox({ copy }))

describe("sandbox --seed", () => {
  it.live("an export of the copy is the export of the account, byte for byte", () =>
    Effect.gen(function*() {
      const { exported: first } = yield* sharedOriginal
      const copy = yield* copyOf(first)
      const second = Path.join(yield* tempDir, "second")
      yield* exportAll(copy, second)
      assertSameExport(first, second)

      // New records are numbered above the copied ones (tasks above the deleted task 3 too).
      const api = yield* Effect.promise(() => http(copy, accountA))
      const customer = yield* Effect.promise(() =>
        api.send("POST", "/customers", { externalId: "CLI-9", name: "Nova" })
      )
      assert.strictEqual(customer.id, 4)
      const task = yield* Effect.promise(() =>
        api.send("POST", "/tasks", { externalId: "OS-9", idUserFrom: 1, taskDate: "2026-04-01T08:00:00" })
      )
      assert.strictEqual(task.taskID, 4)
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)), 120_000)

  it.live(
    "with --data, a rehearsal's changes outlive a restart: the copy fills only accounts the file lacks",
    () =>
      Effect.gen(function*() {
        const { exported } = yield* sharedOriginal
        const dir = yield* tempDir
        const copy = yield* readExportCopy(exported)
        const dataFile = Path.join(dir, "state.json")
        yield* Effect.scoped(Effect.gen(function*() {
          const first = yield* startTestSandbox({ copy, dataFile })
          const api = yield* Effect.promise(() => http(first, accountA))
          yield* Effect.promise(() => api.send("DELETE", "/customers/3"))
          yield* Effect.promise(() => api.send("POST", "/customers", { externalId: "CLI-9", name: "Nova" }))
        }))
        const again = yield* startTestSandbox({ copy, dataFile })
        const customers = yield* again.control.records(accountA.apiKey, "customers")
        assert.deepStrictEqual(customers.map((c) => `${c.id}:${c.externalId}`), ["1:CLI-0001", "2:CLI-0002", "4:CLI-9"])
      }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)),
    120_000
  )

  it.live("an xlsx export reads back as well as a csv one", () =>
    Effect.gen(function*() {
      const { account, exported: csv } = yield* sharedOriginal
      const xlsx = Path.join(yield* tempDir, "xlsx")
      yield* exportAll(account, xlsx, "xlsx")
      const copy = yield* copyOf(xlsx)
      const again = Path.join(yield* tempDir, "again")
      yield* exportAll(copy, again)
      assertSameExport(csv, again)
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)), 120_000)

  it.live("an import rehearsed on the copy reports what it reports on the account", () =>
    Effect.gen(function*() {
      // An account of its own: the import changes it.
      const account = yield* original
      const dir = yield* tempDir
      const exported = Path.join(dir, "export")
      yield* exportAll(account, exported)
      const copy = yield* copyOf(exported)
      const file = put(
        dir,
        "clientes.csv",
        "externalId;name;segmentDescription;cpfCnpj\n" +
          "CLI-0001;Padaria Pão Quente Centro;Hospitais;11.222.333/0001-81\n" +
          "CLI-0100;Mercado Novo;Supermercados;\n" +
          "CLI-0101;Sem segmento;Padarias;\n" +
          "CLI-0003;Hospital Santa Luzia;;123\n"
      )
      const runs = [] as Array<ReadonlyArray<Record<string, string>>>
      for (const [name, sandbox] of [["account", account], ["copy", copy]] as const) {
        const runDir = Path.join(dir, name)
        yield* importInto(sandbox, { resource: "customers", file, runDir }, accountA.apiKey)
        runs.push(readReport(runDir))
      }
      const outcome = (rows: ReadonlyArray<Record<string, string>>) =>
        rows.map((r) => ({ row: r._row, status: r._status, id: r._record_id, error: r._error }))
      assert.deepStrictEqual(outcome(runs[1]!), outcome(runs[0]!))
      assert.deepStrictEqual(outcome(runs[0]!).map((r) => `${r.row}:${r.status}:${r.id}`), [
        "2:updated:1",
        "3:created:4",
        "4:failed:",
        "5:invalid:"
      ])
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)), 120_000)

  it.live("an export that differs from its manifest is refused, naming the file", () =>
    Effect.gen(function*() {
      const exported = yield* exportedCopy
      appendFileSync(Path.join(exported, "customers.csv"), "9,CLI-9,Intrusa\n")
      const refused = yield* Effect.flip(readExportCopy(exported))
      assert.match(refused.message, /customers\.csv differs from the manifest/)
      assert.match(refused.message, /not used/)
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)), 120_000)

  it.live("a cell that is not a value of its column names the file, row and column", () =>
    Effect.gen(function*() {
      const exported = yield* exportedCopy
      // Edited and its manifest entry brought in line, so it passes verify: the values themselves are read.
      const file = Path.join(exported, "equipments.csv")
      writeFileSync(file, readFileSync(file, "utf8").replace(",CLI-0001,2,", ",CLI-0001,dois,"))
      const manifestPath = Path.join(exported, "manifest.json")
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8"))
      const entry = manifest.resources.find((e: { name: string }) => e.name === "equipments")
      entry.sha256 = createHash("sha256").update(readFileSync(file)).digest("hex")
      entry.bytes = statSync(file).size
      writeFileSync(manifestPath, JSON.stringify(manifest))
      const refused = yield* Effect.flip(readExportCopy(exported))
      assert.include(refused.message, `${file}, row 2, column associatedUserId: dois is not a whole number`)
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)), 120_000)
})
