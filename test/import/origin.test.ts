/**
 * Ids from another server or account are never keys: account A's export imported into account B (the same
 * sandbox, so the same base URL) does not find B's records by A's ids, nor refer to them; rows that would are
 * refused naming the column, and nothing of B changes. The same file into A itself still finds its records by id.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { accountOf, Api } from "../../src/client/Api.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { apiOf, importInto, put, readJournalLines, readReport, startTestSandbox, tempDir, writes } from "./support.js"

const a = { apiKey: "conta-a", apiToken: "token-a" }
const b = { apiKey: "conta-b", apiToken: "token-b" }

const exportTo = (sandbox: RunningSandbox, apiKey: string, out: string, resources: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const api = yield* Effect.provide(Api, apiOf(sandbox, apiKey))
    return yield* runExport(
      yield* prepareExport({
        resources,
        out,
        format: "csv",
        since: undefined,
        until: undefined,
        say: () => Effect.void
      })
    ).pipe(Effect.provideService(Api, api))
  })

describe("ids of another account's export", () => {
  it.scopedLive("are not keys nor references in account B; the same file in account A still finds records by id", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ accounts: [a, b] })
      const dir = yield* tempDir
      // B's own customers 1 and 2, and A's customers without an externalId (ids 1 and 2 there too) plus K-3.
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "b.csv", "name\nLoja B1\nLoja B2\n"),
        runDir: Path.join(dir, "b"),
        mode: "create"
      }, b.apiKey)
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "a.csv", "externalId,name\n,Alfa\n,Beta\nK-3,Gama\n"),
        runDir: Path.join(dir, "a"),
        mode: "create"
      }, a.apiKey)
      const alfa = (yield* sandbox.control.records(a.apiKey, "customers")).find((c) => c.description === "Alfa")!
      yield* importInto(sandbox, {
        resource: "equipments",
        file: put(dir, "e.csv", `externalId,name,associatedCustomerId\nEQ-1,Split,${alfa.id}\n`),
        runDir: Path.join(dir, "e")
      }, a.apiKey)
      const before = yield* sandbox.control.records(b.apiKey, "customers")
      assert.deepStrictEqual(before.map((c) => [c.id, c.description]), [[1, "Loja B1"], [2, "Loja B2"]])

      const out = Path.join(dir, "export-a")
      const exported = yield* exportTo(sandbox, a.apiKey, out, ["customers", "equipments"])

      // Into B, as docs/export.md describes, even with --overwrite (what a conflict's message offers): the keyless
      // rows are refused, K-3 is created by its key.
      const mark = (yield* sandbox.control.requests).length
      const customers = yield* importInto(sandbox, {
        resource: "customers",
        file: Path.join(out, "customers.csv"),
        runDir: Path.join(dir, "into-b"),
        onConflict: "overwrite"
      }, b.apiKey)
      assert.strictEqual(customers.exitCode, 1)
      // B's customers 1 and 2 are B's still.
      const after = yield* sandbox.control.records(b.apiKey, "customers")
      assert.deepStrictEqual(after.filter((c) => c.id === 1 || c.id === 2).map((c) => c.description), [
        "Loja B1",
        "Loja B2"
      ])
      const report = readReport(customers.runDir)
      assert.deepStrictEqual(report.map((r) => r._status), ["invalid", "invalid", "created"])
      assert.include(report[0]!._error, "ids of the export this file came from")
      assert.include(report[0]!._error, "fill externalId, or empty id to create the record")
      assert.include(readJournalLines(customers.runDir)[0]!.origin.manifest, "manifest.json")
      assert.deepStrictEqual(after.map((c) => c.externalId ?? "").sort(), ["", "", "K-3"])
      // A reference by A's id only: refused, not pointed at B's customer with that number.
      const equipments = yield* importInto(sandbox, {
        resource: "equipments",
        file: Path.join(out, "equipments.csv"),
        runDir: Path.join(dir, "eq-into-b")
      }, b.apiKey)
      assert.strictEqual(readReport(equipments.runDir)[0]!._status, "invalid")
      assert.include(readReport(equipments.runDir)[0]!._error, `associatedCustomerId ${alfa.id}`)
      assert.deepStrictEqual(yield* sandbox.control.records(b.apiKey, "equipments"), [])
      // One write in all: K-3's, by its key.
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark)).length, 1)

      // The same file into A itself: its ids name its own records, so they are still used (no refusal).
      const back = yield* importInto(sandbox, {
        resource: "customers",
        file: Path.join(out, "customers.csv"),
        runDir: Path.join(dir, "into-a")
      }, a.apiKey)
      assert.strictEqual(back.exitCode, 0, JSON.stringify(readReport(back.runDir)))
      assert.deepStrictEqual(readReport(back.runDir).map((r) => r._status), ["unchanged", "unchanged", "unchanged"])
      // The manifest names the account by a hash, never by its apiKey.
      assert.isString(exported.manifest.account)
      assert.notInclude(JSON.stringify(exported.manifest), a.apiKey)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("an interrupted export is not continued with another account's credentials", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ accounts: [a, b] })
      const out = yield* tempDir
      // The checkpoint account A's export left when it was interrupted before its first page.
      writeFileSync(
        Path.join(out, ".export-progress.json"),
        JSON.stringify({
          tool: "fsm-bulk",
          baseUrl: sandbox.url,
          account: accountOf(a.apiKey),
          format: "csv",
          since: "2000-01-01",
          until: "2099-12-31",
          resources: ["customers"],
          started: new Date().toISOString(),
          done: []
        })
      )
      const refused = yield* Effect.flip(exportTo(sandbox, b.apiKey, out, ["customers"]))
      assert.strictEqual(refused._tag, "UsageError")
      assert.include(refused.message, `other credentials, another account of ${sandbox.url}`)
    }).pipe(Effect.provide(NodeContext.layer)))
})
