/**
 * Stale edits: a file that came from an export, edited, imported again after the same records were edited on the
 * server. Rows whose records changed on the server are `conflict` (not sent) naming the fields on both sides;
 * `--merge` sends the file's changes to other fields; `--overwrite` sends the file's values.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { runVerify } from "../../src/export/Verify.js"
import { rerun } from "../../src/import/Rerun.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { apiOf, importInto, put, readReport, startTestSandbox, tempDir, writes } from "./support.js"

const quote = (cell: string) => (/[",\n]/.test(cell) ? `"${cell.replace(/"/g, "\"\"")}"` : cell)

/** Rewrites an exported CSV with `edit` applied to each row (cells by column name). */
const editCsv = (file: string, edit: (row: Record<string, string>) => void) => {
  const text = readFileSync(file, "utf8").replace(/^\uFEFF/, "")
  const [header, ...rows] = parse(text) as Array<Array<string>>
  const out = rows.map((cells) => {
    const row = Object.fromEntries(header!.map((h, i) => [h, cells[i] ?? ""]))
    edit(row)
    return header!.map((h) => quote(row[h] ?? "")).join(",")
  })
  writeFileSync(file, `\uFEFF${[header!.join(","), ...out].join("\r\n")}\r\n`)
}

/** Exports `resources` of the sandbox's account into `out`; the manifest. */
const exportTo = (sandbox: RunningSandbox, out: string, resources: ReadonlyArray<string> = ["customers"]) =>
  Effect.gen(function*() {
    const api = yield* Effect.provide(Api, apiOf(sandbox))
    const exported = yield* runExport(
      yield* prepareExport({
        resources,
        out,
        format: "csv",
        since: undefined,
        until: undefined,
        say: () => Effect.void
      })
    ).pipe(Effect.provideService(Api, api))
    return exported.manifest
  })

const statuses = (runDir: string) => readReport(runDir).map((r) => `${r.externalId}:${r._status}`).sort()

describe("stale edits of an exported file", () => {
  it.scopedLive("export → edit the file → edit the server → conflict; --merge merges disjoint fields; --overwrite", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(
          dir,
          "seed.csv",
          "externalId,name,email,note\nK-1,Alfa,alfa@x.com,n1\nK-2,Beta,beta@x.com,n2\nK-3,Gama,gama@x.com,n3\n"
        ),
        runDir: Path.join(dir, "seed")
      })

      const out = Path.join(dir, "export")
      const api = yield* Effect.provide(Api, apiOf(sandbox))
      const exported = yield* runExport(
        yield* prepareExport({
          resources: ["customers"],
          out,
          format: "csv",
          since: undefined,
          until: undefined,
          say: () => Effect.void
        })
      ).pipe(Effect.provideService(Api, api))
      const entry = exported.manifest.resources.find((e) => e.name === "customers")!
      assert.strictEqual(entry.fingerprints, "customers.csv.fingerprints.ndjson")
      assert.isTrue(existsSync(Path.join(out, entry.fingerprints!)))
      assert.isTrue((yield* runVerify(out)).ok)
      const file = Path.join(out, entry.file)

      // The file: K-1's note and K-2's name change. The server, meanwhile: K-1's email and K-2's name.
      editCsv(file, (row) => {
        if (row.externalId === "K-1") row.note = "n1 in the file"
        if (row.externalId === "K-2") row.name = "Beta in the file"
      })
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "server.csv", "externalId,name,email\nK-1,Alfa,alfa@server.com\nK-2,Beta on the server,\n"),
        runDir: Path.join(dir, "server"),
        mode: "update"
      })

      // 1. Plain upsert: both edited records are conflicts, nothing is written; K-3 is unchanged.
      const mark = (yield* sandbox.control.requests).length
      const first = yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "first") })
      assert.strictEqual(first.exitCode, 1)
      assert.deepStrictEqual(statuses(first.runDir), ["K-1:conflict", "K-2:conflict", "K-3:unchanged"])
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark)).length, 0)
      assert.strictEqual(first.summary.counts["conflict"], 2)
      const k1 = readReport(first.runDir).find((r) => r.externalId === "K-1")!
      assert.include(k1._error, "changed on the server since the export: \"email\"")
      assert.include(k1._error, "changed in the file: \"note\"")
      const k2 = readReport(first.runDir).find((r) => r.externalId === "K-2")!
      assert.include(k2._error, "changed on the server since the export: \"name\"")

      // 2. The conflicts again, merged: K-1's note is sent alone (the server's email stays); K-2's name collides.
      const merged = yield* rerun(
        {
          target: first.runDir,
          only: ["conflict"],
          fixed: undefined,
          dryRun: false,
          onConflict: "merge",
          out: () => Path.join(dir, "merged")
        }
      ).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(merged.result!.exitCode, 1)
      assert.deepStrictEqual(statuses(merged.result!.runDir), ["K-1:updated", "K-2:conflict"])
      assert.include(
        readReport(merged.result!.runDir).find((r) => r.externalId === "K-2")!._error,
        "changed on the server and in the file since the export: \"name\""
      )
      let stored = yield* sandbox.control.records("sandbox-key", "customers")
      const one = stored.find((c) => c.externalId === "K-1")!
      assert.strictEqual(one.note, "n1 in the file")
      assert.deepStrictEqual(one.email, ["alfa@server.com"])
      assert.strictEqual(stored.find((c) => c.externalId === "K-2")!.description, "Beta on the server")

      // 3. Overwrite: the file's values win.
      const over = yield* importInto(sandbox, {
        resource: "customers",
        file,
        runDir: Path.join(dir, "over"),
        onConflict: "overwrite"
      })
      assert.strictEqual(over.exitCode, 0)
      stored = yield* sandbox.control.records("sandbox-key", "customers")
      assert.strictEqual(stored.find((c) => c.externalId === "K-2")!.description, "Beta in the file")
      assert.deepStrictEqual(stored.find((c) => c.externalId === "K-1")!.email, ["alfa@x.com"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a contacts edit and a deletion on the server are conflicts; a missing fingerprints file is refused", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const contact = (email: string) => `"[{""name"":""Ana"",""email"":""${email}""},{""name"":""Bia""}]"`
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(
          dir,
          "seed.csv",
          `externalId,name,contacts\nK-1,Alfa,${contact("ana@x.com")}\nK-2,Beta,\nK-3,Gama,\n`
        ),
        runDir: Path.join(dir, "seed")
      })
      const out = Path.join(dir, "export")
      const manifest = yield* exportTo(sandbox, out)
      const file = Path.join(out, "customers.csv")

      // On the server, after the export: K-1's contact gets another email; K-2 is deleted.
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "server.csv", `externalId,contacts\nK-1,${contact("ana@server.com")}\n`),
        runDir: Path.join(dir, "server"),
        mode: "update"
      })
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "gone.csv", "externalId\nK-2\n"),
        runDir: Path.join(dir, "gone"),
        mode: "delete"
      })

      // The export, imported again as it is: nothing is sent; K-1 and K-2 are conflicts, K-3 is unchanged.
      const mark = (yield* sandbox.control.requests).length
      const again = yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "again") })
      assert.strictEqual(again.exitCode, 1)
      assert.deepStrictEqual(statuses(again.runDir), ["K-1:conflict", "K-2:conflict", "K-3:unchanged"])
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark)).length, 0)
      const report = readReport(again.runDir)
      assert.include(
        report.find((r) => r.externalId === "K-1")!._error,
        "changed on the server since the export: \"contacts\""
      )
      assert.include(report.find((r) => r.externalId === "K-2")!._error, "deleted on the server since the export")
      const stored = yield* sandbox.control.records("sandbox-key", "customers")
      assert.deepStrictEqual(stored.map((c) => c.externalId).sort(), ["K-1", "K-3"])
      assert.include(JSON.stringify(stored.find((c) => c.externalId === "K-1")!.contacts), "ana@server.com")
      // `--merge` cannot bring a deleted record back either.
      const merged = yield* importInto(sandbox, {
        resource: "customers",
        file,
        runDir: Path.join(dir, "merged"),
        onConflict: "merge"
      })
      assert.include(statuses(merged.runDir), "K-2:conflict")
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark)).length, 0)

      // The manifest names a fingerprints file that is gone: refused before anything is sent, naming it.
      const fingerprints = Path.join(out, manifest.resources.find((e) => e.name === "customers")!.fingerprints!)
      rmSync(fingerprints)
      const refused = yield* Effect.flip(
        importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "refused") })
      )
      assert.strictEqual(refused._tag, "UsageError")
      assert.include(refused.message, fingerprints)
      assert.include(refused.message, "--overwrite")
      assert.isFalse(existsSync(Path.join(dir, "refused")))
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark)).length, 0)
      // `--overwrite`, knowingly: the file's values are sent and K-2 is created again.
      const over = yield* importInto(sandbox, {
        resource: "customers",
        file,
        runDir: Path.join(dir, "over"),
        onConflict: "overwrite"
      })
      assert.strictEqual(over.exitCode, 0)
      const after = yield* sandbox.control.records("sandbox-key", "customers")
      assert.deepStrictEqual(after.map((c) => c.externalId).sort(), ["K-1", "K-2", "K-3"])
    }).pipe(Effect.provide(NodeContext.layer)))
})
