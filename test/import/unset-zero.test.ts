/**
 * Numbers the service reads back as 0 when they were never set (users' `hourValue` and services' `price`, the
 * Blueprint's defaults: api-reference, the users' model and the services' create body "price … default 0.0"): an
 * export writes no 0 it cannot vouch for, and an import, its stale-edit check, a rerun and an undo never take a
 * file's empty cell against the server's 0 for a change or a conflict.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { fingerprintOf } from "../../src/export/Fingerprint.js"
import { staleness } from "../../src/import/Stale.js"
import { resource } from "../../src/Resources.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { changes, recordDifferences } from "../../src/validate/Compare.js"
import { undoIn } from "../undo/support.js"
import { apiOf, cp1252, importInto, put, readReport, rowStatuses, startTestSandbox, tempDir } from "./support.js"

const users = resource("users")
const services = resource("services")

/** Exports `name` from the sandbox into `out` as CSV and reads the file back: its path and its rows. */
const exportRows = (sandbox: RunningSandbox, out: string, name: "users" | "services") =>
  Effect.gen(function*() {
    const api = yield* Effect.provide(Api, apiOf(sandbox))
    yield* runExport(
      yield* prepareExport({
        resources: [name],
        out,
        format: "csv",
        since: undefined,
        until: undefined,
        say: () => Effect.void
      })
    ).pipe(Effect.provideService(Api, api))
    const file = Path.join(out, `${name}.csv`)
    const rows = parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""), { columns: true }) as Array<
      Record<string, string>
    >
    return { file, rows }
  })

describe("unset numbers read as 0 (users' hourValue)", () => {
  it.scopedLive(
    "import, export, the export edited and imported back, undo, the first file again: no 0 invented, no false change",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        // A Brazilian file: Windows-1252, `;`, decimal comma; Ana's hour value left empty.
        const first = put(
          dir,
          "usuarios.csv",
          cp1252("externalId;login;name;hourValue\r\nU-1;ana.souza;Ana Souza;\r\nU-2;bia.lima;Bia Lima;85,5\r\n")
        )
        const created = yield* importInto(sandbox, { resource: "users", file: first, runDir: Path.join(dir, "first") })
        assert.deepStrictEqual(rowStatuses(readReport(created.runDir)), ["2:created", "3:created"])
        const stored = yield* sandbox.control.records("sandbox-key", "users")
        assert.deepStrictEqual(stored.map((u) => u.hourValue), [0, 85.5]) // the sandbox reads the unset value as 0

        const { file, rows: exported } = yield* exportRows(sandbox, Path.join(dir, "export"), "users")
        assert.deepStrictEqual(exported.map((r) => [r.externalId, r.hourValue]), [["U-1", ""], ["U-2", "85.5"]])

        // The export edited (Ana's name) and imported back: the stale-edit check finds nothing changed on the server,
        // the dry run lists the name alone, and the run updates Ana only.
        writeFileSync(file, readFileSync(file, "utf8").replace("Ana Souza", "Ana Souza Lima"))
        const dry = yield* importInto(sandbox, { resource: "users", file, runDir: Path.join(dir, "dry"), dryRun: true })
        const dryReport = readReport(dry.runDir)
        assert.deepStrictEqual(rowStatuses(dryReport), ["2:would-update", "3:unchanged"])
        assert.strictEqual(dryReport[0]!._changes, "name: \"Ana Souza\" → \"Ana Souza Lima\"")
        const back = yield* importInto(sandbox, { resource: "users", file, runDir: Path.join(dir, "back") })
        assert.deepStrictEqual(rowStatuses(readReport(back.runDir)), ["2:updated", "3:unchanged"])

        // Undo takes the name back: the hour value the run never touched is no conflict.
        const undo = yield* undoIn(sandbox, { target: back.runDir, runDir: Path.join(dir, "undo") })
        assert.deepStrictEqual(rowStatuses(readReport(undo.runDir)), ["2:updated"])
        const after = yield* sandbox.control.records("sandbox-key", "users")
        assert.deepStrictEqual(after.map((u) => [u.name, u.hourValue]), [["Ana Souza", 0], ["Bia Lima", 85.5]])

        // The first file again, and the same with Ana's 0 written out: nothing to send.
        const again = yield* importInto(sandbox, { resource: "users", file: first, runDir: Path.join(dir, "again") })
        assert.deepStrictEqual(rowStatuses(readReport(again.runDir)), ["2:unchanged", "3:unchanged"])
        const zero = put(dir, "zero.csv", "externalId;login;name;hourValue\nU-1;ana.souza;Ana Souza;0\n")
        const zeroRun = yield* importInto(sandbox, { resource: "users", file: zero, runDir: Path.join(dir, "zero") })
        assert.deepStrictEqual(rowStatuses(readReport(zeroRun.runDir)), ["2:unchanged"])
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )

  it("compare, stale check and record differences take a 0 and an unset hourValue for one value, and a real value for a change", () => {
    const record = { userID: 7, externalId: "U-1", login: "ana", name: "Ana", hourValue: 0 }
    // A record read in another form (a create answer without the property, a null) against the list's 0.
    const bare = { userID: 7, externalId: "U-1", login: "ana", name: "Ana", hourValue: null }
    assert.deepStrictEqual(changes(users, { hourValue: 0 }, bare), [])
    assert.deepStrictEqual(changes(users, { hourValue: "0,00" }, { ...record, hourValue: undefined }), [])
    assert.deepStrictEqual(changes(users, { hourValue: 85.5 }, record).map((c) => c.field), ["hourValue"])
    assert.deepStrictEqual(changes(users, { hourValue: 0 }, { ...record, hourValue: 85.5 }).map((c) => c.field), [
      "hourValue"
    ])
    assert.deepStrictEqual(recordDifferences(users, record, bare), [])
    assert.deepStrictEqual(recordDifferences(users, record, { ...record, hourValue: 12 }).map((c) => c.field), [
      "hourValue"
    ])
    const base = fingerprintOf(users, bare)!
    assert.deepStrictEqual(staleness(users, { externalId: "U-1", name: "Ana B" }, record, base, "stop"), {
      _tag: "Clear"
    })
    assert.strictEqual(
      staleness(users, { externalId: "U-1" }, { ...record, hourValue: 40 }, base, "stop")._tag,
      "Conflict"
    )
  })

  it.scopedLive(
    "services' price: an unset price is exported as an empty cell, and a 0 against an unset one is no change",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const first = put(
          dir,
          "servicos.csv",
          cp1252("externalCode;title;price\r\nSRV-1;Limpeza de split;\r\nSRV-2;Instalação;180,5\r\n")
        )
        const created = yield* importInto(sandbox, { resource: "services", file: first, runDir: Path.join(dir, "a") })
        assert.deepStrictEqual(rowStatuses(readReport(created.runDir)), ["2:created", "3:created"])
        const { file, rows: exported } = yield* exportRows(sandbox, Path.join(dir, "export"), "services")
        // The service reads the unset price as "0.00": the export does not vouch for it.
        assert.deepStrictEqual(exported.map((r) => [r.externalCode, r.price]), [["SRV-1", ""], ["SRV-2", "180.5"]])
        const again = yield* importInto(sandbox, { resource: "services", file, runDir: Path.join(dir, "b") })
        assert.deepStrictEqual(rowStatuses(readReport(again.runDir)), ["2:unchanged", "3:unchanged"])

        const record = { id: 3, externalCode: "SRV-1", title: "Limpeza", price: "0.00" }
        assert.deepStrictEqual(recordDifferences(services, record, { ...record, price: null }), [])
        assert.deepStrictEqual(changes(services, { price: 0 }, { ...record, price: undefined }), [])
        assert.deepStrictEqual(changes(services, { price: 12 }, record).map((c) => c.field), ["price"])
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )
})
