/**
 * The example onboarding workbook: it holds exactly the rows of templates/example/*.csv, it onboards into the
 * real sandbox over loopback with exit 0 and every reference on the right server record (read back from the
 * sandbox), answers end `confirmed`, references to rows of earlier sheets cost no lookup, and onboarding it a
 * second time changes nothing and creates nothing. The onboarded account exported and started as a copy
 * (`sandbox --seed`) exports the same files, and the second onboarding rehearsed on the copy reports what it reports
 * on the account, step by step, row by row (test/sandbox/copy.test.ts's other cases of the copy).
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect, Stream } from "effect"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { readExportCopy } from "../../src/export/Copy.js"
import { openSource } from "../../src/files/Read.js"
import { inspectWorkbook } from "../../src/files/Workbook.js"
import { keyProperty, recordId } from "../../src/Identity.js"
import { exampleCreator, fileColumns, readExampleSheets } from "../../src/onboard/Example.js"
import { dependencyOrder, readName, refKey, resource, type ResourceName, writableFields } from "../../src/Resources.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { assertSameExport, exportAll } from "../export/support.js"
import {
  exampleCsvDir,
  exampleWorkbook,
  listCalls,
  onboardInto,
  readJson,
  readReport,
  startTestSandbox,
  tempDir,
  writes
} from "./support.js"

type Row = Record<string, string>

const csvNames = () =>
  readdirSync(exampleCsvDir)
    .filter((f) => f.endsWith(".csv"))
    .map((f) => f.slice(0, -4) as ResourceName)

const csvRows = (name: string): ReadonlyArray<Row> =>
  parse(readFileSync(Path.join(exampleCsvDir, `${name}.csv`)), {
    columns: true,
    bom: true,
    skip_empty_lines: true
  }) as Array<Row>

const same = (a: unknown, b: unknown) => String(a) === String(b)

/** Checks that every row of the example landed on the server, with each reference on the record it names. */
const checkReferences = (sandbox: RunningSandbox) =>
  Effect.gen(function*() {
    const records = new Map<ResourceName, ReadonlyArray<Record<string, any>>>()
    const recordsOf = (name: ResourceName) =>
      Effect.gen(function*() {
        if (!records.has(name)) records.set(name, yield* sandbox.control.records("sandbox-key", name))
        return records.get(name)!
      })
    /** The server id of the one record of `name` whose `by` property is `value`. */
    const idOf = (name: ResourceName, by: string, value: string) =>
      Effect.gen(function*() {
        const r = resource(name)
        const property = keyProperty(r, by)
        const found = (yield* recordsOf(name)).filter((rec) =>
          String(rec[property] ?? "").trim().toLowerCase() === value.trim().toLowerCase()
        )
        assert.strictEqual(found.length, 1, `${name} with ${by} "${value}" on the server`)
        return recordId(r, found[0]!)
      })
    let checked = 0

    for (const name of csvNames()) {
      const r = resource(name)
      const refs = writableFields(r).filter((f) => f.ref !== undefined)
      for (const row of csvRows(name)) {
        /** Each reference column of the row, as the ids it must have become. */
        const expected = new Map<string, Array<unknown>>()
        for (const f of refs) {
          const cell = row[f.ref!.column] ?? ""
          if (cell.trim() === "") continue
          expected.set(f.name, yield* Effect.forEach(cell.split("|"), (v) => idOf(f.ref!.resource, refKey(f.ref!), v)))
        }
        const matches = (item: Record<string, any>, fields: ReadonlyArray<string>) =>
          fields.every((field) => {
            const want = expected.get(field)!
            const have = item[readName(r.fields.find((x) => x.name === field)!)]
            return Array.isArray(have)
              ? [...have].map(String).sort().join() === want.map(String).sort().join()
              : same(have, want[0])
          })

        if (r.kind === "record") {
          const key = r.key!
          const found = (yield* recordsOf(name)).filter((rec) =>
            String(rec[keyProperty(r, key)]).trim() === row[key]!.trim()
          )
          assert.strictEqual(found.length, 1, `${name} ${key} "${row[key]}" exactly once on the server`)
          assert.isTrue(
            matches(found[0]!, [...expected.keys()]),
            `${name} ${row[key]}: ${JSON.stringify(Object.fromEntries(expected))}`
          )
        } else if (name === "questionnaire-answers") {
          const groups = (yield* recordsOf(name)).filter(
            (g) =>
              same(g.taskId, expected.get("taskId")![0]) && g.itemID === row.itemID &&
              g.codigoChecklist === row.codigoChecklist
          )
          assert.strictEqual(
            groups.length,
            1,
            `checklist ${row.codigoChecklist} #${row.itemID} of ${row.taskExternalId}`
          )
          const answer = (groups[0]!.answers as Array<Record<string, any>>).find((a) =>
            a.questionId === row.codigoPergunta
          )
          assert.isDefined(answer, `answer ${row.codigoPergunta} of ${row.taskExternalId} #${row.itemID}`)
          assert.strictEqual(answer!.reply, row.resposta)
          assert.strictEqual(String(answer!.equipmentId ?? ""), String(expected.get("codigoEquipamento")?.[0] ?? ""))
        } else if (name === "customer-attachments") {
          const files = (yield* recordsOf(name)).filter((a) =>
            same(a.id, expected.get("id")![0]) && a.name === row.name
          )
          assert.strictEqual(files.length, 1, `attachment ${row.name} on ${row.customerExternalId}`)
          const bytes = readFileSync(Path.join(exampleCsvDir, row.file!))
          assert.strictEqual(files[0]!.sha256, createHash("sha256").update(bytes).digest("hex"))
        } else {
          // Sub-collections and employee stock: the item whose every reference is the record it names.
          const found = (yield* recordsOf(name)).filter((item) => matches(item, [...expected.keys()]))
          assert.strictEqual(found.length, 1, `${name} row ${JSON.stringify(row)}`)
        }
        checked += 1
      }
    }
    return checked
  })

describe("the example onboarding workbook", () => {
  it.live("holds exactly the rows of templates/example/*.csv, attachment paths relative to the workbook", () =>
    Effect.gen(function*() {
      const book = yield* Effect.promise(() => inspectWorkbook(exampleWorkbook))
      assert.notStrictEqual(book.creator, "fsm-bulk")
      assert.strictEqual(book.creator, exampleCreator)
      const names = csvNames()
      assert.deepStrictEqual(
        book.sheets.map((s) => s.name),
        ["README", ...dependencyOrder(names)]
      )
      const expected = yield* readExampleSheets(exampleCsvDir, Path.dirname(exampleWorkbook))
      for (const sheet of expected) {
        const source = yield* openSource(exampleWorkbook, {
          encoding: "auto",
          delimiter: "auto",
          sheet: sheet.resource
        })
        assert.deepStrictEqual(source.header, sheet.header, `header of sheet ${sheet.resource}`)
        const rows = yield* Stream.runCollect(source.rows)
        assert.deepStrictEqual(
          [...rows].map((r) => sheet.header.map((_, i) => r.cells[i] ?? "")),
          sheet.rows.map((r) => [...r]),
          `rows of sheet ${sheet.resource}`
        )
        // A file named in the workbook is the file the CSV names.
        const files = fileColumns(sheet.resource)
        for (const [i, h] of sheet.header.entries()) {
          if (!files.has(h.toLowerCase())) continue
          for (const [n, r] of [...rows].entries()) {
            const fromCsv = Path.resolve(exampleCsvDir, csvRows(sheet.resource)[n]![h]!)
            assert.strictEqual(Path.resolve(Path.dirname(exampleWorkbook), r.cells[i]!), fromCsv)
            assert.match(r.cells[i]!, /^example\/anexos\//)
          }
        }
      }
    }))

  it.scopedLive(
    "onboards with exit 0: every reference on the right record, answers confirmed, earlier sheets' records found without lookups; onboarding it again changes nothing and creates no duplicate, and reports on a copy of the account what it reports on the account",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const runDir = Path.join(dir, "run")
        const result = yield* onboardInto(sandbox, { input: exampleWorkbook, runDir, verify: true })
        const summary = readJson(Path.join(runDir, "summary.json"))
        assert.strictEqual(result.exitCode, 0, JSON.stringify(summary.steps.filter((s: any) => s.exitCode !== 0)))
        assert.strictEqual(summary.exitCode, 0)
        assert.strictEqual(summary.steps.length, 20)
        assert.deepStrictEqual(summary.resources, dependencyOrder(csvNames()))
        assert.strictEqual(summary.counts.confirmed, 12)
        assert.strictEqual(summary.rows, 111)
        for (const step of summary.steps) {
          assert.strictEqual(step.runDir, Path.join(runDir, step.resource))
          assert.strictEqual(readReport(step.runDir).length, step.rows)
        }
        assert.deepStrictEqual(
          readReport(Path.join(runDir, "questionnaire-answers")).map((r) => r._status),
          Array(12).fill("confirmed")
        )
        assert.strictEqual(yield* checkReferences(sandbox), 111)

        // Records written by earlier steps are named by later ones with no list call: they come from the run itself.
        // (Resources the API cannot upsert, such as teams and keywords, are listed by their own step to find existing
        // records by key; these have an upsert, so besides their own step's read before write, which reads the
        // records it is about to write, only a reference lookup could list them.)
        const log = yield* sandbox.control.requests
        for (
          const collection of ["customers", "users", "equipments", "products", "services", "tasks", "productcategories"]
        ) {
          // At most the step's own read before write of the records it upserts (one call for the sheet's keys), and
          // on this empty account its 404 asked again alone: a 404 is "no such record" only when confirmed. Tasks
          // are listed by date window, and a walk probes two window sizes at once (client/Pages.ts): two calls,
          // each 404 asked again alone.
          assert.isAtMost(
            listCalls(log, collection).length,
            collection === "tasks" ? 4 : 2,
            `list calls of /${collection}`
          )
        }

        // The onboarded account exported and started as a copy (`sandbox --seed`): the copy's export is the
        // account's, byte for byte.
        const exported = Path.join(dir, "export")
        yield* exportAll(sandbox, exported).pipe(Effect.provide(NodeContext.layer))
        const copy = yield* startTestSandbox({
          copy: yield* readExportCopy(exported).pipe(Effect.provide(NodeContext.layer))
        })
        const exportedAgain = Path.join(dir, "again")
        yield* exportAll(copy, exportedAgain).pipe(Effect.provide(NodeContext.layer))
        assertSameExport(exported, exportedAgain)

        // The same workbook again, onto the account it just onboarded (one onboarding serves all these checks: each
        // costs 20 steps), then onto the copy.
        const counted = (names: ReadonlyArray<ResourceName>) =>
          Effect.forEach(
            names,
            (n) => Effect.map(sandbox.control.records("sandbox-key", n), (rows) => [n, rows.length] as const)
          )
        const names = csvNames()
        const before = yield* counted(names)
        const writesBefore = writes(yield* sandbox.control.requests).length

        const secondDir = Path.join(dir, "second")
        const second = yield* onboardInto(sandbox, { input: exampleWorkbook, runDir: secondDir, verify: true })
        assert.strictEqual(second.exitCode, 0)
        const counts = second.summary.counts
        assert.strictEqual(counts.created, 0)
        assert.strictEqual(counts.unchanged + counts.updated + counts.confirmed, 111)
        assert.deepStrictEqual(yield* counted(names), before)
        // Nothing was created on the server: no POST in the second run.
        const again = writes(yield* sandbox.control.requests).slice(writesBefore)
        assert.deepStrictEqual(again.filter((w) => w.method === "POST"), [])
        for (const step of second.summary.steps) {
          for (const row of readReport(step.runDir)) {
            assert.include(["unchanged", "updated", "confirmed"], row._status, `${step.resource} row ${row._row}`)
          }
        }
        assert.strictEqual(yield* checkReferences(sandbox), 111)

        // The second onboarding rehearsed on the copy reports what it reported on the account, step by step, row by
        // row, each row with the record's id.
        const onCopy = yield* onboardInto(copy, {
          input: exampleWorkbook,
          runDir: Path.join(dir, "second-copy"),
          verify: true
        })
        const outcomes = (steps: typeof second.summary.steps) =>
          Object.fromEntries(steps.map((step) => [
            step.resource,
            readReport(step.runDir).map((r) => `${r._row}:${r._status}:${r._record_id}`)
          ]))
        const onAccount = outcomes(second.summary.steps)
        assert.deepStrictEqual(outcomes(onCopy.summary.steps), onAccount)
        assert.strictEqual(Object.values(onAccount).flat().length, 111)
        assert.include(onAccount["customers"], "2:unchanged:1")
      }),
    180_000
  )
})
