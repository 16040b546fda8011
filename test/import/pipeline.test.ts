/**
 * The import pipeline in process, against the real sandbox over loopback HTTP: messy inputs, modes, dry run,
 * an export of one account into another, self references, and rerun.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { createHash } from "node:crypto"
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { rerun } from "../../src/import/Rerun.js"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import {
  apiOf,
  cp1252,
  importInto,
  put,
  readJournalLines,
  readReport,
  readSummary,
  rowStatuses,
  startTestSandbox,
  tempDir,
  writes
} from "./support.js"

describe("import: messy real-world files", () => {
  it.scopedLive("Windows-1252 with ; and decimal commas, punctuated CPFs, a multi-line cell, a blank line, ragged rows, duplicate keys, = cells", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        cp1252(
          [
            "externalId;name;cpfCnpj;latitude;longitude;note",
            "C-1;Padaria São João;529.982.247-25;-23,5614;-46,6559;=SOMA(A1:A3)",
            "C-2;Açougue Boa Vista;11.222.333/0001-81;-23,1;-46,2;\"linha 1\r\nlinha 2\"",
            "",
            "C-3;Linha torta;;;;;sobra",
            "C-1;Repetido;;;;",
            "C-4;CPF errado;123.456.789-00;;;",
            "C-5;Curta"
          ].join("\r\n") + "\r\n"
        )
      )
      const runDir = Path.join(dir, "run")
      const result = yield* importInto(sandbox, { resource: "customers", file, runDir })
      const report = readReport(runDir)
      // Spreadsheet rows: the multi-line cell is one row, the blank line is a row of its own.
      assert.deepStrictEqual(rowStatuses(report), [
        "2:created",
        "3:created",
        "5:invalid",
        "6:invalid",
        "7:invalid",
        "8:created"
      ])
      assert.match(report[2]!._error!, /sobra/)
      assert.match(report[3]!._error!, /externalId: "C-1" repeats row 2/)
      assert.match(report[4]!._error!, /cpfCnpj/)
      // The source's columns come back unchanged after the tool's.
      assert.deepStrictEqual(Object.keys(report[0]!).slice(0, 8), [
        "_row",
        "_status",
        "_http_status",
        "_request_id",
        "_attempts",
        "_retry_outcomes",
        "_record_id",
        "_error"
      ])
      assert.strictEqual(report[1]!.note, "linha 1\r\nlinha 2")
      assert.strictEqual(report[0]!.name, "Padaria São João")
      assert.strictEqual(result.exitCode, 1)
      assert.strictEqual(readSummary(runDir).counts.invalid, 3)

      const stored = yield* sandbox.control.records("sandbox-key", "customers")
      const byKey = new Map(stored.map((c) => [c.externalId, c]))
      assert.strictEqual(stored.length, 3)
      const c1 = byKey.get("C-1")!
      assert.strictEqual(c1.cpfCnpj, "52998224725")
      assert.strictEqual(c1.latitude, -23.5614)
      // A cell starting with = in a file this tool did not write is plain text, sent unchanged.
      assert.strictEqual(c1.note, "=SOMA(A1:A3)")
      assert.strictEqual(byKey.get("C-2")!.note, "linha 1\r\nlinha 2")
      assert.strictEqual(byKey.get("C-2")!.cpfCnpj, "11222333000181")
      assert.strictEqual(String(report[0]!._record_id), String(c1.id))
    }))

  it.scopedLive("UTF-8 with BOM and dd/mm/yyyy dates", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "equip.csv",
        "\uFEFFexternalId,name,warrantyStartDate,warrantyEndDate\nE-1,Split,25/12/2025,03/01/2027\nE-2,Cassete,01/02/2026,\n"
      )
      const runDir = Path.join(dir, "run")
      const result = yield* importInto(sandbox, { resource: "equipments", file, runDir })
      assert.strictEqual(result.exitCode, 0)
      const stored = yield* sandbox.control.records("sandbox-key", "equipments")
      const e1 = stored.find((e) => e.externalId === "E-1")!
      assert.match(String(e1.warrantyStartDate), /^2025-12-25/)
      assert.match(String(e1.warrantyEndDate), /^2027-01-03/)
      assert.match(String(stored.find((e) => e.externalId === "E-2")!.warrantyStartDate), /^2026-02-01/)
      assert.deepStrictEqual(readJournalLines(runDir)[0]!.formats, { dateFormat: "dd/mm/yyyy", decimal: "." })
    }))

  it.scopedLive("ambiguous dates stop the run before anything is sent, naming the column and the flag", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "equip.csv",
        "externalId,name,warrantyStartDate\nE-1,Split,01/02/2026\nE-2,Cassete,03/04/2026\n"
      )
      const runDir = Path.join(dir, "run")
      const failure = yield* Effect.flip(importInto(sandbox, { resource: "equipments", file, runDir }))
      assert.strictEqual(failure._tag, "InputError")
      assert.match(failure.message, /equip\.csv/)
      assert.match(failure.message, /warrantyStartDate/)
      assert.match(failure.message, /--date-format/)
      assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)
      // The flag settles it.
      const settled = yield* importInto(sandbox, { resource: "equipments", file, runDir, dateFormat: "dd/mm/yyyy" })
      assert.strictEqual(settled.summary.counts.created, 2)
    }))
})

describe("import: one account's export into another", () => {
  it.scopedLive("externalId wins over id: the other account's ids are never sent", () =>
    Effect.gen(function*() {
      const sandbox = yield* startSandbox({
        port: 0,
        rate: { limit: 10_000, windowMs: 1_000 },
        accounts: [
          { apiKey: "key-a", apiToken: "token-a" },
          { apiKey: "key-b", apiToken: "token-b" }
        ]
      })
      const dir = yield* tempDir
      // Account B already has records 1 and 2, which are not the ones the export of account A describes.
      const own = put(dir, "own.csv", "externalId,name\nB-1,Cliente próprio 1\nB-2,Cliente próprio 2\n")
      yield* importInto(sandbox, { resource: "customers", file: own, runDir: Path.join(dir, "own") }, "key-b")
      const before = yield* sandbox.control.records("key-b", "customers")
      assert.deepStrictEqual(before.map((c) => c.id).sort(), [1, 2])

      // An export of account A: its ids (1, 2, 7) mean nothing in account B.
      const exported = put(
        dir,
        "customers.csv",
        "id,externalId,name,legalName\n1,A-1,Padaria da Conta A,Padaria A Ltda\n2,A-2,Mercado da Conta A,\n7,A-3,Farmácia da Conta A,\n"
      )
      const first = yield* importInto(sandbox, {
        resource: "customers",
        file: exported,
        runDir: Path.join(dir, "first")
      }, "key-b")
      assert.deepStrictEqual(first.summary.counts.created, 3)
      const after = yield* sandbox.control.records("key-b", "customers")
      assert.strictEqual(after.length, 5)
      for (const c of before) {
        const now = after.find((x) => x.id === c.id)!
        assert.strictEqual(now.externalId, c.externalId)
        assert.strictEqual(now.description, c.description)
      }
      for (const w of writes(yield* sandbox.control.requests)) assert.notMatch(w.path, /customers\/\d/)

      // Importing the same export again finds the records by externalId: no duplicates, and nothing to send.
      const second = yield* importInto(sandbox, {
        resource: "customers",
        file: exported,
        runDir: Path.join(dir, "second")
      }, "key-b")
      assert.strictEqual(second.summary.counts.unchanged, 3)
      assert.strictEqual((yield* sandbox.control.records("key-b", "customers")).length, 5)
      assert.strictEqual((yield* sandbox.control.records("key-a", "customers")).length, 0)
    }))
})

describe("import: dry run", () => {
  it.scopedLive("reads the server state with list calls and writes nothing", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "products",
        file: put(dir, "seed.csv", "externalId,name,unitaryValue\nP-1,Filtro,49.90\nP-2,Gás,120\n"),
        runDir: Path.join(dir, "seed")
      })
      const seeded = (yield* sandbox.control.requests).length
      const file = put(
        dir,
        "products.csv",
        "externalId,name,unitaryValue\nP-1,Filtro,\"49,90\"\nP-2,Gás R410,\"120,00\"\nP-3,Novo,\"10,00\"\nP-4,,1\n"
      )
      const runDir = Path.join(dir, "dry")
      const result = yield* importInto(sandbox, { resource: "products", file, runDir, dryRun: true })
      const log = (yield* sandbox.control.requests).slice(seeded)
      assert.strictEqual(writes(log).length, 0)
      // Pages, not a GET per row.
      assert.isTrue(log.every((e) => e.method === "POST" ? /login/i.test(e.path) : !/\/products\/\d/.test(e.path)))
      const report = readReport(runDir)
      assert.deepStrictEqual(rowStatuses(report), ["2:unchanged", "3:would-update", "4:would-create", "5:invalid"])
      assert.strictEqual(report[1]!._changes, "name: \"Gás\" → \"Gás R410\"")
      assert.strictEqual(report[0]!._changes, "")
      const summary = readSummary(runDir)
      assert.strictEqual(summary.dryRun, true)
      assert.strictEqual(result.exitCode, 1)
      assert.deepStrictEqual(readJournalLines(runDir).filter((l) => l.state === "sending"), [])
    }))
})

describe("import: modes", () => {
  it.scopedLive("upsert is emulated for resources without PUT: unchanged, PATCH of the changed fields, or a clear refusal", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const segments = put(dir, "segments.csv", "description\nSupermercados\nFarmácias\n")
      yield* importInto(sandbox, { resource: "segments", file: segments, runDir: Path.join(dir, "s1") })
      const again = yield* importInto(sandbox, { resource: "segments", file: segments, runDir: Path.join(dir, "s2") })
      assert.strictEqual(again.summary.counts.unchanged, 2)
      assert.strictEqual((yield* sandbox.control.records("sandbox-key", "segments")).length, 2)

      // Equipment categories have PATCH but no PUT: a changed description is patched.
      yield* importInto(sandbox, {
        resource: "equipment-categories",
        file: put(dir, "c1.csv", "externalId,description\nEQC-1,Split\nEQC-2,Cassete\n"),
        runDir: Path.join(dir, "c1")
      })
      const mark = (yield* sandbox.control.requests).length
      const changed = yield* importInto(sandbox, {
        resource: "equipment-categories",
        file: put(dir, "c2.csv", "externalId,description\nEQC-1,Split hi-wall\nEQC-2,Cassete\nEQC-3,Piso-teto\n"),
        runDir: Path.join(dir, "c2")
      })
      assert.deepStrictEqual(rowStatuses(readReport(changed.runDir)), ["2:updated", "3:unchanged", "4:created"])
      const sent = writes((yield* sandbox.control.requests).slice(mark)).map((w) => `${w.method} ${w.path}`)
      assert.deepStrictEqual(sent.sort(), ["PATCH /v2/equipmentcategories/1", "POST /v2/equipmentcategories"].sort())
      const stored = yield* sandbox.control.records("sandbox-key", "equipment-categories")
      assert.strictEqual(stored.find((c) => c.externalId === "EQC-1")!.description, "Split hi-wall")

      // Webhooks can only be created and deleted: a change is refused with the reason.
      yield* importInto(sandbox, {
        resource: "webhooks",
        file: put(dir, "w1.csv", "entity,action,targetUrl,active\n4,1,https://example.com.br/a,true\n"),
        runDir: Path.join(dir, "w1")
      })
      const refused = yield* importInto(sandbox, {
        resource: "webhooks",
        file: put(dir, "w2.csv", "entity,action,targetUrl,active\n4,2,https://example.com.br/a,true\n"),
        runDir: Path.join(dir, "w2")
      })
      const row = readReport(refused.runDir)[0]!
      assert.strictEqual(row._status, "failed")
      assert.match(row._error!, /cannot change an existing webhooks record/)
    }))

  it.scopedLive("update patches the filled cells and delete removes, both by key looked up with list calls", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name,note\nK-1,Um,nota 1\nK-2,Dois,nota 2\nK-3,Três,nota 3\n"),
        runDir: Path.join(dir, "c")
      })
      const mark = (yield* sandbox.control.requests).length
      const updated = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "u.csv", "externalId,name,note\nK-1,,nota nova\nK-2,Dois,\nK-9,Nove,x\n"),
        runDir: Path.join(dir, "u"),
        mode: "update"
      })
      assert.deepStrictEqual(rowStatuses(readReport(updated.runDir)), ["2:updated", "3:unchanged", "4:failed"])
      assert.match(readReport(updated.runDir)[2]!._error!, /no customers record with externalId "K-9"/)
      const log = (yield* sandbox.control.requests).slice(mark)
      assert.deepStrictEqual(writes(log).map((w) => `${w.method} ${w.path}`), ["PATCH /v2/customers/1"])
      assert.isFalse(log.some((e) => e.method === "GET" && /customers\/\d/.test(e.path)))
      const k1 = (yield* sandbox.control.records("sandbox-key", "customers")).find((c) => c.externalId === "K-1")!
      assert.strictEqual(k1.note, "nota nova")
      assert.strictEqual(k1.description, "Um")

      const deleted = yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "d.csv", "externalId\nK-2\nK-3\nK-8\n"),
        runDir: Path.join(dir, "d"),
        mode: "delete"
      })
      assert.deepStrictEqual(rowStatuses(readReport(deleted.runDir)), ["2:deleted", "3:deleted", "4:failed"])
      assert.deepStrictEqual((yield* sandbox.control.records("sandbox-key", "customers")).map((c) => c.externalId), [
        "K-1"
      ])
    }))

  it.scopedLive("create refuses an existing key with the way out; sub-collections go to their parent's path", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "p.csv", "externalId,name\nP-1,Um\n")
      yield* importInto(sandbox, { resource: "products", file, runDir: Path.join(dir, "a"), mode: "create" })
      const again = yield* importInto(sandbox, {
        resource: "products",
        file,
        runDir: Path.join(dir, "b"),
        mode: "create"
      })
      const row = readReport(again.runDir)[0]!
      // The read before the create found the key: refused without a request.
      assert.strictEqual(row._status, "failed")
      assert.strictEqual(row._http_status, "")
      assert.match(row._error!, /already exists \(externalId "P-1", id \d+\): use --mode upsert/)

      yield* importInto(sandbox, {
        resource: "users",
        file: put(dir, "u.csv", "externalId,name,login,password\nU-1,Ana,ana,Senha@123\n"),
        runDir: Path.join(dir, "u")
      })
      yield* importInto(sandbox, {
        resource: "tasks",
        file: put(dir, "t.csv", "externalId,userFromLogin,taskDate\nT-1,ana,2026-12-01T09:00:00\n"),
        runDir: Path.join(dir, "t")
      })
      const mark = (yield* sandbox.control.requests).length
      const items = yield* importInto(sandbox, {
        resource: "task-products",
        file: put(dir, "tp.csv", "taskExternalId,productExternalId,quantity,value\nT-1,P-1,2,\"49,90\"\nT-2,P-1,1,1\n"),
        runDir: Path.join(dir, "tp")
      })
      assert.deepStrictEqual(rowStatuses(readReport(items.runDir)), ["2:updated", "3:failed"])
      assert.match(readReport(items.runDir)[1]!._error!, /taskExternalId: no tasks record with externalId "T-2"/)
      assert.deepStrictEqual(
        writes((yield* sandbox.control.requests).slice(mark)).map((w) => `${w.method} ${w.path}`),
        ["PUT /v2/tasks/1/products"]
      )
      const stored = yield* sandbox.control.records("sandbox-key", "task-products")
      assert.deepStrictEqual(stored.map((x) => [x.taskId, x.code, x.quantity, x.value]), [[1, 1, 2, 49.9]])
    }))

  it.scopedLive("attachments are read from disk at send time and sent base64-encoded under their parent", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nC-1,Um\n"),
        runDir: Path.join(dir, "c")
      })
      mkdirSync(Path.join(dir, "anexos"))
      const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251))
      put(dir, "anexos/contrato.pdf", bytes)
      put(dir, "anexos/foto.jpg", Buffer.from("jpeg"))
      const file = put(
        dir,
        "a.csv",
        "customerExternalId,file,name\nC-1,anexos/contrato.pdf,Contrato 2026.pdf\nC-1,anexos\\foto.jpg,\nC-1,anexos/falta.pdf,\n"
      )
      const result = yield* importInto(sandbox, {
        resource: "customer-attachments",
        file,
        runDir: Path.join(dir, "run")
      })
      const report = readReport(result.runDir)
      assert.deepStrictEqual(rowStatuses(report), ["2:updated", "3:updated", "4:invalid"])
      assert.match(report[2]!._error!, /falta\.pdf/)
      const stored = yield* sandbox.control.records("sandbox-key", "customer-attachments")
      const byName = new Map(stored.map((a) => [a.name, a]))
      assert.strictEqual(byName.get("Contrato 2026.pdf")!.sha256, createHash("sha256").update(bytes).digest("hex"))
      assert.strictEqual(byName.get("Contrato 2026.pdf")!.size, 3000)
      assert.strictEqual(byName.get("foto.jpg")!.size, 4)
    }))

  it.scopedLive("rows that refer to records other rows of the file create are sent after them", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(
        dir,
        "e.csv",
        "externalId,name,parentEquipmentExternalId\nE-CHILD,Filho,E-PARENT\nE-PARENT,Pai,E-ROOT\nE-ROOT,Raiz,\nE-LOST,Órfão,E-NONE\n"
      )
      const result = yield* importInto(sandbox, { resource: "equipments", file, runDir: Path.join(dir, "run") })
      assert.deepStrictEqual(rowStatuses(readReport(result.runDir)), [
        "2:created",
        "3:created",
        "4:created",
        "5:failed"
      ])
      const stored = yield* sandbox.control.records("sandbox-key", "equipments")
      const id = (k: string) => stored.find((e) => e.externalId === k)!.id
      assert.strictEqual(stored.find((e) => e.externalId === "E-CHILD")!.parentEquipmentId, id("E-PARENT"))
      assert.strictEqual(stored.find((e) => e.externalId === "E-PARENT")!.parentEquipmentId, id("E-ROOT"))
    }))
})

describe("rerun", () => {
  it.scopedLive("retries exactly the failed rows, in a new run directory that names its parent", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nC-1,Um\n"),
        runDir: Path.join(dir, "c")
      })
      // Rows 3 and 5 refer to a customer that does not exist yet; row 4 is invalid.
      const file = put(
        dir,
        "eq.csv",
        "externalId,name,associatedCustomerExternalId\nE-1,Um,C-1\nE-2,Dois,C-2\nE-3,,C-1\nE-4,Quatro,C-2\nE-5,Cinco,\n"
      )
      const first = yield* importInto(sandbox, { resource: "equipments", file, runDir: Path.join(dir, "first") })
      assert.deepStrictEqual(rowStatuses(readReport(first.runDir)), [
        "2:created",
        "3:failed",
        "4:invalid",
        "5:failed",
        "6:created"
      ])

      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c2.csv", "externalId,name\nC-2,Dois\n"),
        runDir: Path.join(dir, "c2")
      })
      const mark = (yield* sandbox.control.requests).length
      const again = yield* rerun({
        target: Path.join(first.runDir, "report.csv"),
        only: undefined,
        fixed: undefined,
        dryRun: false,
        out: () => Path.join(dir, "again")
      }).pipe(
        Effect.provide(apiOf(sandbox))
      )
      const result = again.result!
      const report = readReport(result.runDir)
      // Exactly the failed rows, with their original row numbers.
      assert.deepStrictEqual(rowStatuses(report), ["3:created", "5:created"])
      assert.deepStrictEqual(report.map((r) => r.externalId), ["E-2", "E-4"])
      assert.deepStrictEqual(writes((yield* sandbox.control.requests).slice(mark)).map((w) => w.method), ["PUT", "PUT"])
      const summary = readSummary(result.runDir)
      assert.strictEqual(summary.parent.runDir, first.runDir)
      assert.deepStrictEqual(summary.parent.only, ["failed", "in-doubt"])
      assert.strictEqual(summary.exitCode, 0)
      assert.strictEqual((yield* sandbox.control.records("sandbox-key", "equipments")).length, 4)

      // Invalid rows need their corrections: matched by _row.
      const noFix = yield* Effect.flip(
        rerun({
          target: first.runDir,
          only: ["invalid"],
          fixed: undefined,
          dryRun: false,
          out: () => Path.join(dir, "nofix")
        }).pipe(Effect.provide(apiOf(sandbox)))
      )
      assert.strictEqual(noFix._tag, "UsageError")
      const fixes = put(dir, "fix.csv", "_row,externalId,name,associatedCustomerExternalId\n4,E-3,Três,C-1\n")
      const fixed = yield* rerun({
        target: first.runDir,
        only: ["invalid"],
        fixed: fixes,
        dryRun: false,
        out: () => Path.join(dir, "fixed")
      }).pipe(
        Effect.provide(apiOf(sandbox))
      )
      assert.deepStrictEqual(rowStatuses(readReport(fixed.result!.runDir)), ["4:created"])
      assert.strictEqual(
        (yield* sandbox.control.records("sandbox-key", "equipments")).find((e) => e.externalId === "E-3")!.name,
        "Três"
      )

      // A rerun with nothing selected runs nothing.
      const none = yield* rerun({
        target: result.runDir,
        only: undefined,
        fixed: undefined,
        dryRun: false,
        out: () => Path.join(dir, "none")
      }).pipe(
        Effect.provide(apiOf(sandbox))
      )
      assert.strictEqual(none.result, undefined)
      assert.strictEqual(none.selected, 0)
    }))

  it.scopedLive("corrections without _row are matched by key; cells starting with = survive the report round trip", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "externalId,name,note,email\nC-1,Um,=1+1,um@x.com.br\nC-2,Dois,-ok,nao-e-email\n")
      const first = yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "first") })
      assert.deepStrictEqual(rowStatuses(readReport(first.runDir)), ["2:created", "3:invalid"])
      // The corrections may bring a column the original file did not have.
      const fixes = put(dir, "fix.csv", "externalId,email,legalName\nC-2,dois@x.com.br,Dois Ltda\n")
      const fixed = yield* rerun({
        target: Path.join(first.runDir, "report.xlsx"),
        only: undefined,
        fixed: fixes,
        dryRun: false,
        out: () => Path.join(dir, "fixed")
      }).pipe(
        Effect.provide(apiOf(sandbox))
      )
      assert.deepStrictEqual(rowStatuses(readReport(fixed.result!.runDir)), ["3:created"])
      const stored = yield* sandbox.control.records("sandbox-key", "customers")
      const c2 = stored.find((c) => c.externalId === "C-2")!
      assert.strictEqual(c2.note, "-ok")
      assert.deepStrictEqual(c2.email, ["dois@x.com.br"])
      assert.strictEqual(c2.legalName, "Dois Ltda")
      assert.strictEqual(stored.find((c) => c.externalId === "C-1")!.note, "=1+1")
      // report.csv neutralises formula-like cells (a spreadsheet would run them); report.xlsx holds them as inline
      // text, which no spreadsheet runs, so no `'` shows there. Reading either back gives the original.
      const reportCells = readReport(first.runDir)
      assert.strictEqual(reportCells[0]!.note, "'=1+1")
      const workbook = new ExcelJS.Workbook()
      yield* Effect.promise(() => workbook.xlsx.readFile(Path.join(first.runDir, "report.xlsx")))
      const sheet = workbook.getWorksheet("report")!
      const noteColumn = (sheet.getRow(1).values as Array<unknown>).indexOf("note")
      assert.strictEqual(sheet.getRow(2).getCell(noteColumn).value, "=1+1")
      assert.strictEqual(sheet.getRow(2).getCell(noteColumn).type, ExcelJS.ValueType.String)
    }))
})

describe("workbook number cells", () => {
  it.scopedLive("keep their value through the report and a rerun when the file's typed numbers use a decimal comma", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "product-categories",
        file: put(dir, "cat.csv", "externalId,description\nCAT-1,Filtros\n"),
        runDir: Path.join(dir, "cat")
      })
      // totalStock holds number cells, minimumStock text typed with a decimal comma; CAT-2 does not exist yet.
      const file = Path.join(dir, "produtos.xlsx")
      const workbook = new ExcelJS.Workbook()
      const sheet = workbook.addWorksheet("products")
      sheet.addRow(["externalId", "name", "categoryExternalId", "totalStock", "minimumStock"])
      sheet.addRow(["PRD-1", "Filtro", "CAT-1", 1.234, "22,5"])
      sheet.addRow(["PRD-2", "Bomba", "CAT-2", 12.345, "1.234,5"])
      yield* Effect.promise(() => workbook.xlsx.writeFile(file))

      const first = yield* importInto(sandbox, { resource: "products", file, runDir: Path.join(dir, "first") })
      assert.deepStrictEqual(rowStatuses(readReport(first.runDir)), ["2:created", "3:failed"])
      // The report repeats the number cell with the file's mark, as a rerun reads it.
      assert.strictEqual(readReport(first.runDir)[1]!.totalStock, "12,345")

      yield* importInto(sandbox, {
        resource: "product-categories",
        file: put(dir, "cat2.csv", "externalId,description\nCAT-2,Bombas\n"),
        runDir: Path.join(dir, "cat2")
      })
      const again = yield* rerun({
        target: first.runDir,
        only: undefined,
        fixed: undefined,
        dryRun: false,
        out: () => Path.join(dir, "again")
      }).pipe(
        Effect.provide(apiOf(sandbox))
      )
      assert.deepStrictEqual(rowStatuses(readReport(again.result!.runDir)), ["3:created"])
      const stored = yield* sandbox.control.records("sandbox-key", "products")
      const stock = (key: string) => stored.find((p) => p.externalId === key)!
      assert.deepStrictEqual([stock("PRD-1").totalStock, stock("PRD-1").minimumStock], [1.234, 22.5])
      assert.deepStrictEqual([stock("PRD-2").totalStock, stock("PRD-2").minimumStock], [12.345, 1234.5])
    }))
})

describe("the journal", () => {
  it.scopedLive("holds a header, sending before each write and done after it, and an end line; never a secret", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const result = yield* importInto(sandbox, {
        resource: "users",
        file: put(dir, "u.csv", "externalId,name,login,password\nU-1,Ana,ana,Segredo@123\nU-2,Bia,,x\n"),
        runDir: Path.join(dir, "run")
      })
      const lines = readJournalLines(result.runDir)
      assert.deepStrictEqual(lines.map((l) => `${l.state}${l.row !== undefined ? `:${l.row}` : ""}`).sort(), [
        "done:2",
        "done:3",
        "end",
        "header",
        "sending:2"
      ])
      const sending = lines.findIndex((l) => l.state === "sending")
      const done = lines.findIndex((l) => l.state === "done" && l.row === 2)
      assert.isBelow(sending, done)
      assert.strictEqual(lines[0]!.source.file, Path.join(dir, "u.csv"))
      const text = JSON.stringify(lines)
      assert.notInclude(text, "sandbox-token")
      assert.notInclude(text, "Segredo@123")
      const answer = lines[done]!
      assert.strictEqual(answer.status, "created")
      assert.strictEqual(answer.http, 201)
      assert.isString(answer.requestId)
      assert.strictEqual(answer.attempts, 1)
    }))
})

describe("verify", () => {
  const setUp = (dir: string, sandbox: Parameters<typeof importInto>[0]) =>
    Effect.gen(function*() {
      yield* importInto(sandbox, {
        resource: "users",
        file: put(dir, "u.csv", "externalId,name,login,password\nU-1,Ana,ana,Senha@123\n"),
        runDir: Path.join(dir, "u")
      })
      yield* importInto(sandbox, {
        resource: "tasks",
        file: put(
          dir,
          "t.csv",
          "externalId,userFromLogin,taskDate\nT-1,ana,2026-12-01T09:00:00\nT-2,ana,2026-12-02T09:00:00\n"
        ),
        runDir: Path.join(dir, "t")
      })
      return put(
        dir,
        "a.csv",
        "taskExternalId,itemID,codigoChecklist,codigoPergunta,resposta\nT-1,1,CHK,P1,Sim\nT-1,1,CHK,P2,\"12,5\"\nT-2,1,CHK,P1,Não\n"
      )
    })

  it.scopedLive("queued answers are confirmed once they show on their tasks", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ answerDelayMs: 300 })
      const dir = yield* tempDir
      const file = yield* setUp(dir, sandbox)
      const plain = yield* importInto(sandbox, {
        resource: "questionnaire-answers",
        file,
        runDir: Path.join(dir, "plain")
      })
      assert.deepStrictEqual(rowStatuses(readReport(plain.runDir)), ["2:queued", "3:queued", "4:queued"])
      assert.strictEqual(plain.exitCode, 0)

      const result = yield* importInto(sandbox, {
        resource: "questionnaire-answers",
        file,
        runDir: Path.join(dir, "verified"),
        verify: true,
        verifyWaitMs: 10_000,
        verifyPollMs: 100
      })
      assert.deepStrictEqual(rowStatuses(readReport(result.runDir)), ["2:confirmed", "3:confirmed", "4:confirmed"])
      assert.strictEqual(result.exitCode, 0)
      const lines = readJournalLines(result.runDir).filter((l) => l.row === 2).map((l) =>
        `${l.state}:${l.status ?? ""}`
      )
      assert.deepStrictEqual(lines, ["sending:", "done:queued", "done:confirmed"])
    }))

  it.scopedLive("answers not seen within the wait are unconfirmed", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ answerDelayMs: 60_000 })
      const dir = yield* tempDir
      const file = yield* setUp(dir, sandbox)
      const result = yield* importInto(sandbox, {
        resource: "questionnaire-answers",
        file,
        runDir: Path.join(dir, "verified"),
        verify: true,
        verifyWaitMs: 300,
        verifyPollMs: 100
      })
      const report = readReport(result.runDir)
      assert.deepStrictEqual(rowStatuses(report), ["2:unconfirmed", "3:unconfirmed", "4:unconfirmed"])
      assert.match(report[0]!._error!, /not seen on the tasks record within/)
      assert.strictEqual(result.exitCode, 1)
    }))
})
