/**
 * Exports of a sandbox seeded through its HTTP API: the files match the server's records (counts and values,
 * read-back differences mapped back), an export imports into an empty account and exports again to the same
 * rows, and a formula-like customer name is inert in CSV and XLSX and comes back unchanged on import.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import ExcelJS from "exceljs"
import { cpSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import type { ExportRequest } from "../../src/export/Export.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { runVerify } from "../../src/export/Verify.js"
import { restore } from "../../src/files/Guard.js"
import { openSource } from "../../src/files/Read.js"
import { runImport } from "../../src/import/Pipeline.js"
import { ImportServices } from "../../src/import/Services.js"
import type { Field, Resource, ResourceName } from "../../src/Resources.js"
import { exportColumns, idReadName, importable, readName, refKey, resource } from "../../src/Resources.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { job } from "../import/support.js"
import {
  accountA,
  accountB,
  apiOf,
  cliEnv,
  http,
  hyperlink,
  readCsv,
  runCli,
  seededSandbox,
  startTestSandbox,
  tempDir
} from "./support.js"

type Account = { readonly apiKey: string; readonly apiToken: string }

const exportTo = (sandbox: RunningSandbox, account: Account, out: string, extra: Partial<ExportRequest> = {}) =>
  Effect.gen(function*() {
    const api = yield* apiOf(sandbox, account)
    const prepared = yield* prepareExport({
      resources: [],
      out,
      format: "csv",
      since: undefined,
      until: undefined,
      say: () => Effect.void,
      ...extra
    })
    return yield* runExport(prepared).pipe(Effect.provideService(Api, api))
  })

/** The server's records behind an export file; questionnaire answers come grouped per checklist instance. */
const serverRecords = (sandbox: RunningSandbox, account: Account, name: ResourceName) =>
  Effect.map(sandbox.control.records(account.apiKey, name), (records) => {
    const r = resource(name)
    if (r.readBackItems === undefined) return records
    return records.flatMap((group) => {
      const { [r.readBackItems!]: items, ...shared } = group
      return (items as Array<Record<string, unknown>>).map((item) => ({ ...shared, ...item }))
    })
  })

// --- the test's own reading of a record, to compare the export with -------------------------------------------

const property = (
  r: Resource,
  field: Field
): string => (r.id !== undefined && field.name === r.id.name && field.readAs === undefined
  ? idReadName(r)!
  : readName(field))

const money = (text: string): string =>
  String(Number(text.includes(",") ? text.replace(/\./g, "").replace(",", ".") : text))

/** The cell a value should become: unset → empty, lists joined with `|`, nested values as JSON, money as a plain number. */
const expectedCell = (field: Field, value: unknown): string => {
  if (value === undefined || value === null || value === "") return ""
  if (field.ref !== undefined && value === 0) return "" // the live service's unset reference
  if (field.zeroWhenUnset === true && value === 0) return "" // a 0 that may mean unset (users' hourValue)
  if (field.type._tag === "date" && typeof value === "string" && value.startsWith("0001-01-01")) return ""
  if (field.type._tag === "object") return Array.isArray(value) && value.length === 0 ? "" : JSON.stringify(value)
  if (Array.isArray(value)) return value.map(String).join("|")
  if (typeof value === "string" && field.readFormat !== undefined) return money(value)
  // Enumerations whose codes changed are exported as labels.
  if (field.type._tag === "enum" && field.type.formerly !== undefined) {
    return field.type.values.find((v) => String(v.value) === String(value))?.label ?? String(value)
  }
  return String(value)
}

/** Customers whose cells a spreadsheet would run as formulas, and numbers that must stay numbers. */
const formulaLike = [
  ["CLI-0002", hyperlink, "-12,5"],
  ["CLI-0003", "@SUM(A1:A9)", "-12.5"],
  ["CLI-0004", "'=1+1", "-2+3"],
  ["CLI-0005", "Padaria", "+55 11 3333-4444"]
]

/** Rows sorted by their first cell (the importer sends rows concurrently: creation order is not file order). */
const byKey = (rows: ReadonlyArray<ReadonlyArray<unknown>>) =>
  [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])))

describe("export", () => {
  it.scopedLive("lists a referenced resource only when a record refers to it", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const api = yield* Effect.promise(() => http(sandbox, accountA))
      yield* Effect.promise(() => api.send("POST", "/customers", { externalId: "CLI-1", name: "Padaria Um" }))
      const gets = (from: number) =>
        Effect.map(sandbox.control.requests, (log) =>
          log.slice(from).filter((e) => e.method === "GET").map((e) => e.path.toLowerCase().replace(/\?.*/, "")))

      // Customers name groups, teams, users and a segment: none is referred to, so none is listed.
      let before = (yield* sandbox.control.requests).length
      yield* exportTo(sandbox, accountA, yield* tempDir, { resources: ["customers"] })
      assert.deepStrictEqual(yield* gets(before), ["/v2/customers"])

      const segment = yield* Effect.promise(() =>
        api.send("POST", "/segments", { description: "Supermercados" })
      )
      yield* Effect.promise(() =>
        api.send("POST", "/customers", { externalId: "CLI-2", name: "Mercado Dois", segmentId: segment.id })
      )
      before = (yield* sandbox.control.requests).length
      const dir = yield* tempDir
      yield* exportTo(sandbox, accountA, dir, { resources: ["customers"] })
      assert.deepStrictEqual(yield* gets(before), ["/v2/customers", "/v2/segments"])
      const { rows } = readCsv(Path.join(dir, "customers.csv"))
      assert.deepStrictEqual(
        rows.map((r) => [r["externalId"], r["segmentDescription"]]),
        [["CLI-1", ""], ["CLI-2", "Supermercados"]]
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive(
    "an export of a seeded sandbox matches its records exactly, read-back differences mapped back",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seededSandbox
        const dir = yield* tempDir
        const result = yield* exportTo(sandbox, accountA, dir)

        for (const entry of result.manifest.resources) {
          const r = resource(entry.name as ResourceName)
          const table = readCsv(Path.join(dir, entry.file))
          const records = yield* serverRecords(sandbox, accountA, r.name)
          assert.strictEqual(table.rows.length, records.length, `${entry.file}: rows`)
          assert.strictEqual(entry.rows, records.length, `${entry.file}: manifest rows`)
          assert.deepStrictEqual(table.header, exportColumns(r).map((c) => c.name), `${entry.file}: header`)
          for (const [i, record] of records.entries()) {
            const row = table.rows[i]!
            for (const column of exportColumns(r)) {
              const value = record[property(r, column.field)]
              let expected: string
              if (column.role === "value") expected = expectedCell(column.field, value)
              else {
                const target = resource(column.field.ref!.resource)
                const keyField = target.fields.find((f) => f.name === refKey(column.field.ref!))!
                const referenced = yield* sandbox.control.records(accountA.apiKey, target.name)
                const ids = value === undefined || value === null || value === ""
                  ? []
                  : Array.isArray(value)
                  ? value
                  : [value]
                expected = ids
                  .map((id) =>
                    referenced.find((x) => String(x[idReadName(target)!]) === String(id))?.[property(target, keyField)]
                  )
                  .filter((k) => k !== undefined && k !== "")
                  .join("|")
              }
              assert.strictEqual(
                restore(row[column.name]!),
                expected,
                `${entry.file} row ${i + 2} column ${column.name}`
              )
            }
          }
        }

        // The differences between what is written and what is read back (api-notes B), one by one.
        const rows = (name: string) => readCsv(Path.join(dir, `${name}.csv`)).rows
        const padaria = rows("customers").find((c) => c.externalId === "CLI-0001")!
        assert.strictEqual(padaria.name, "Padaria Pão Quente")
        assert.strictEqual(padaria.groupsDescription, "Redes de varejo")
        assert.strictEqual(padaria.managerTeamsDescription, "Equipe Zona Sul")
        assert.strictEqual(padaria.managersLogin, "bruno.almeida")
        assert.strictEqual(padaria.segmentDescription, "Supermercados")
        assert.strictEqual(restore(padaria.phoneNumber!), "+55 11 3333-4444|+55 11 98888-7777")
        const users = yield* sandbox.control.records(accountA.apiKey, "users")
        assert.deepStrictEqual(rows("users").map((u) => u.id), users.map((u) => String(u["userID"])))
        assert.strictEqual(rows("users")[0]!.workDaysOfWeek, "2|3|4|5|6")
        assert.strictEqual(rows("users")[0]!.hourValue, "85.5")
        const products = yield* sandbox.control.records(accountA.apiKey, "products")
        assert.strictEqual(products[0]!["unitaryValue"], "1234,56", "the sandbox sends pt-BR money")
        assert.strictEqual(rows("products")[0]!.unitaryValue, "1234.56")
        assert.strictEqual(rows("products")[0]!.id, String(products[0]!["code"]))
        assert.strictEqual(rows("products")[0]!.associatedEquipmentExternalId, "EQP-0001")
        assert.strictEqual(rows("services")[0]!.price, "180.5")
        assert.strictEqual(rows("webhooks")[0]!.targetUrl, "https://example.com.br/hooks/fsm")
        assert.strictEqual(
          rows("equipments").find((e) => e.externalId === "EQP-0002")!.parentEquipmentExternalId,
          "EQP-0001"
        )
        const task = rows("tasks").find((t) => t.externalId === "OS-0001")!
        assert.strictEqual(task.equipmentsExternalId, "EQP-0001|EQP-0002")
        assert.strictEqual(task.keyWordsDescription, "Urgente|Garantia")
        assert.strictEqual(task.userFromLogin, "ana.souza")
        assert.strictEqual(task.expense, "0")
        assert.deepStrictEqual(rows("task-products")[0], {
          taskId: task.id,
          taskExternalId: "OS-0001",
          productId: rows("products")[0]!.id,
          productExternalId: "PRD-01",
          quantity: "2",
          value: "49.9",
          discountType: "percent",
          discountValue: "10"
        })
        // Fields whose codes changed (discount type, ticket priority) are exported as labels, which mean one thing only.
        assert.strictEqual(rows("tickets")[0]!.priority, "medium")
        assert.deepStrictEqual(
          rows("questionnaire-answers").map((
            a
          ) => [a.taskExternalId, a.itemID, a.codigoChecklist, a.codigoPergunta, a.resposta, a.equipmentExternalId]),
          [["OS-0001", "1", "CHK-PREV", "P1", "Sim", ""], ["OS-0001", "1", "CHK-PREV", "P2", "Filtro sujo", "EQP-0001"]]
        )
        assert.deepStrictEqual(rows("deleted-tasks").map((t) => t.externalId), ["OS-0003"])
        assert.deepStrictEqual(rows("team-users").map((u) => u.login), ["ana.souza", "bruno.almeida"])
        assert.deepStrictEqual(rows("customer-group-clients").map((c) => c.externalId), ["CLI-0001", "CLI-0003"])
        assert.strictEqual(rows("receivables")[0]!.paidDate, "")
        assert.deepStrictEqual(
          result.manifest.resources.filter((e) => e.derivedFrom !== undefined).map((e) => [e.name, e.derivedFrom]),
          [["task-products", "tasks"], ["task-services", "tasks"], ["task-additional-costs", "tasks"], [
            "questionnaire-answers",
            "tasks"
          ]]
        )
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )

  it.scopedLive(
    "an XLSX export reads the same as the CSV export, reference columns included",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seededSandbox
        const csv = yield* tempDir
        const xlsx = yield* tempDir
        const first = yield* exportTo(sandbox, accountA, csv)
        const second = yield* exportTo(sandbox, accountA, xlsx, { format: "xlsx" })
        assert.deepStrictEqual(
          second.manifest.resources.map((e) => e.file),
          first.manifest.resources.map((e) => e.file.replace(/\.csv$/, ".xlsx"))
        )
        for (const [i, entry] of first.manifest.resources.entries()) {
          const rows = (file: string) =>
            Effect.flatMap(openSource(file, { encoding: "auto", delimiter: "auto" }), (source) =>
              Effect.map(Stream.runCollect(source.rows), (all) => [
                source.header,
                ...[...all].map((r) =>
                  r.cells.map(restore)
                )
              ]))
          const fromXlsx = yield* rows(Path.join(xlsx, second.manifest.resources[i]!.file))
          assert.deepStrictEqual(fromXlsx, yield* rows(Path.join(csv, entry.file)), entry.name)
          assert.strictEqual(second.manifest.resources[i]!.rows, entry.rows)
        }
        assert.isTrue((yield* runVerify(xlsx)).ok)
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )

  it.scopedLive(
    "export → import into an empty account → export again gives the same rows apart from server-assigned values",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seededSandbox
        const dirA = yield* tempDir
        const dirB = yield* tempDir
        const work = yield* tempDir
        const first = yield* exportTo(sandbox, accountA, dirA)

        // Records without a key are only found again by id, which means nothing in another account: a migration
        // empties those ids (the README says so). The copy keeps its manifest, so the guard is still reversed.
        const migration = Path.join(work, "migration")
        cpSync(dirA, migration, { recursive: true })
        for (
          const r of importable.filter((x) =>
            x.key === undefined && x.id !== undefined && first.manifest.resources.some((e) => e.name === x.name)
          )
        ) {
          const file = Path.join(migration, `${r.name}.csv`)
          const table = readCsv(file)
          const idAt = table.header.indexOf(r.id!.name)
          const lines = readFileSync(file, "utf8").split("\r\n")
          writeFileSync(
            file,
            lines.map((
              line,
              i
            ) => (i === 0 || line === "" ? line : line.split(",").map((c, j) => (j === idAt ? "" : c)).join(","))).join(
              "\r\n"
            )
          )
        }

        const apiB = yield* apiOf(sandbox, accountB)
        // In the manifest's order, which is an import order (parents before the files that name them).
        const names = first.manifest.resources.map((e) => e.name).filter((n) =>
          importable.some((r) => r.name === n)
        ) as Array<ResourceName>
        for (const name of names) {
          const run = yield* runImport(
            job({ resource: name, file: Path.join(migration, `${name}.csv`), runDir: Path.join(work, "runs", name) })
          ).pipe(
            Effect.provideService(Api, apiB),
            Effect.provide(ImportServices.quiet)
          )
          assert.strictEqual(
            run.exitCode,
            0,
            `import ${name}: ${JSON.stringify(run.summary.counts)} (see ${run.runDir})`
          )
        }
        const second = yield* exportTo(sandbox, accountB, dirB)

        // Deleted tasks are not imported; every other file must hold the same rows once the values the server
        // assigns (ids, ids of referenced records, read-only fields such as `created`) are set aside.
        for (const entry of first.manifest.resources.filter((e) => e.name !== "deleted-tasks")) {
          const r = resource(entry.name as ResourceName)
          const assigned = new Set(
            exportColumns(r)
              .filter(
                (c) =>
                  c.field.name === r.id?.name ||
                  c.field.name === r.parent?.field ||
                  c.field.readOnly ||
                  (c.role === "value" && c.field.ref !== undefined) ||
                  // The read-only lists carry the ids of the records they list (`id`, `userId`) without a reference.
                  (r.kind === "readonly" && /^id$|Id$/.test(c.field.name))
              )
              .map((c) => c.name)
          )
          const comparable = (dir: string) =>
            readCsv(Path.join(dir, entry.file))
              .rows.map((row) => JSON.stringify(Object.entries(row).filter(([k]) => !assigned.has(k))))
              .sort()
          const rowsA = comparable(dirA)
          assert.isAbove(rowsA.length, 0, `${entry.file} holds rows`)
          assert.deepStrictEqual(comparable(dirB), rowsA, entry.file)
        }
        assert.strictEqual(second.manifest.resources.find((e) => e.name === "tasks")!.rows, 2)
      }).pipe(Effect.provide(NodeContext.layer)),
    90_000
  )

  it.scopedLive(
    `a customer named ${hyperlink} is inert in the CSV and the XLSX, and comes back unchanged on import`,
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({
          accounts: [accountA, accountB, { apiKey: "key-of-c", apiToken: "token-c" }]
        })
        yield* Effect.promise(async () => {
          const api = await http(sandbox, accountA)
          for (const [externalId, name, note] of formulaLike) {
            await api.send("POST", "/customers", { externalId, name, note })
          }
        })
        const csvDir = yield* tempDir
        const xlsxDir = yield* tempDir
        const work = yield* tempDir
        yield* exportTo(sandbox, accountA, csvDir, { resources: ["customers"] })
        yield* exportTo(sandbox, accountA, xlsxDir, { resources: ["customers"], format: "xlsx" })

        const csvRows = readCsv(Path.join(csvDir, "customers.csv")).rows
        const csvRow = csvRows.find((c) => c.externalId === "CLI-0002")!
        assert.strictEqual(csvRow.name, `'${hyperlink}`)
        assert.strictEqual(csvRow.note, "-12,5", "a number stays a number")
        assert.deepStrictEqual(
          csvRows.map((c) => [c.name, c.note]),
          [[`'${hyperlink}`, "-12,5"], ["'@SUM(A1:A9)", "-12.5"], ["''=1+1", "'-2+3"], ["Padaria", "'+55 11 3333-4444"]]
        )

        const workbook = new ExcelJS.Workbook()
        yield* Effect.promise(() => workbook.xlsx.readFile(Path.join(xlsxDir, "customers.xlsx")))
        assert.strictEqual(workbook.creator, "fsm-bulk")
        const sheet = workbook.worksheets[0]!
        const header = (sheet.getRow(1).values as Array<unknown>).slice(1)
        let found = false
        sheet.eachRow((row, n) => {
          if (n === 1 || row.getCell(header.indexOf("externalId") + 1).value !== "CLI-0002") return
          found = true
          const cell = row.getCell(header.indexOf("name") + 1)
          // An inline string is never a formula in a workbook: the text is kept as it is, with no `'` showing.
          assert.strictEqual(cell.type, ExcelJS.ValueType.String)
          assert.strictEqual(cell.value, hyperlink)
          assert.isUndefined(cell.formula)
        })
        assert.isTrue(found, "the customer is in the workbook")

        // The importer reverses the guard for files this tool wrote: through the CLI for the CSV …
        const run = yield* Effect.promise(() =>
          runCli([
            "import",
            "customers",
            Path.join(csvDir, "customers.csv"),
            "--out",
            Path.join(work, "csv-run"),
            "--json"
          ], cliEnv(sandbox, accountB))
        )
        assert.strictEqual(run.code, 0, run.stderr)
        const inB = yield* sandbox.control.records(accountB.apiKey, "customers")
        assert.deepStrictEqual(byKey(inB.map((c) => [c["externalId"], c["description"], c["note"]])), formulaLike)

        // … and in-process for the XLSX.
        const apiC = yield* apiOf(sandbox, { apiKey: "key-of-c", apiToken: "token-c" })
        const xlsxRun = yield* runImport(
          job({
            resource: "customers",
            file: Path.join(xlsxDir, "customers.xlsx"),
            runDir: Path.join(work, "xlsx-run")
          })
        ).pipe(
          Effect.provideService(Api, apiC),
          Effect.provide(ImportServices.quiet)
        )
        assert.strictEqual(xlsxRun.exitCode, 0, JSON.stringify(xlsxRun.summary.counts))
        const inC = yield* sandbox.control.records("key-of-c", "customers")
        assert.deepStrictEqual(byKey(inC.map((c) => [c["externalId"], c["description"], c["note"]])), formulaLike)
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )
})
