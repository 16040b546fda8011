/**
 * A missing or misspelt key column never duplicates, and `rerun --fixed` never erases: the built CLI against a
 * sandbox on loopback. Headers that cannot find records (no key or id column, a near miss of the key) exit 2
 * before anything is sent, for validate, import and onboard alike; a rerun sends only the corrected invalid rows,
 * lays only their non-blank cells over the original row, clears a cell with `#clear`, and checks the merged rows
 * against the whole original file.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { existsSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { lastJson } from "../support.js"
import {
  importInto,
  put,
  readReport,
  readSummary,
  rowStatuses,
  runCli,
  startTestSandbox,
  tempDir,
  writes
} from "./support.js"

const workbookBytes = (sheets: Record<string, ReadonlyArray<ReadonlyArray<string>>>) =>
  Effect.promise(async () => {
    const workbook = new ExcelJS.Workbook()
    for (const [name, rows] of Object.entries(sheets)) workbook.addWorksheet(name).addRows(rows.map((r) => [...r]))
    return new Uint8Array(await workbook.xlsx.writeBuffer())
  })

describe("a missing or misspelt key column", () => {
  it.scopedLive(
    "extrenalId: validate and import (twice) exit 2 naming both spellings, nothing is created; --mode create still creates",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const rows = Array.from({ length: 10 }, (_, i) => `K-${i},Cliente ${i}`)
        const file = put(dir, "clientes.csv", ["extrenalId,name", ...rows].join("\n") + "\n")

        const checked = yield* runCli(["validate", "customers", file, "--out", Path.join(dir, "v")], undefined, dir)
        assert.strictEqual(checked.code, 2, checked.stderr)
        assert.include(checked.stderr, "clientes.csv")
        assert.include(checked.stderr, `"extrenalId"`)
        assert.include(checked.stderr, `did you mean "externalId"?`)

        for (const out of ["a", "b"]) {
          const imported = yield* runCli(["import", "customers", file, "--out", Path.join(dir, out)], sandbox, dir)
          assert.strictEqual(imported.code, 2, imported.stderr)
          assert.include(imported.stderr, `clientes.csv (column "extrenalId")`)
          assert.include(imported.stderr, `did you mean "externalId"?`)
          assert.include(imported.stderr, "--mode create")
          assert.isFalse(existsSync(Path.join(dir, out, "journal.ndjson")))
        }
        // With an id column the misspelt key is refused all the same: it would be sent as an unknown field.
        const withId = put(dir, "com-id.csv", "id,extrenalId,name\n,K-1,Um\n")
        const update = yield* runCli(
          ["import", "customers", withId, "--mode", "update", "--out", Path.join(dir, "u")],
          sandbox,
          dir
        )
        assert.strictEqual(update.code, 2, update.stderr)
        assert.include(update.stderr, `"extrenalId" is not a column of customers: did you mean "externalId"?`)
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)
        assert.strictEqual((yield* sandbox.control.records("sandbox-key", "customers")).length, 0)

        // Creating records without a key stays possible, when asked for.
        const created = yield* runCli(
          ["import", "customers", file, "--mode", "create", "--out", Path.join(dir, "c")],
          sandbox,
          dir
        )
        assert.strictEqual(created.code, 0, created.stderr)
        assert.include(
          created.stderr,
          `column "extrenalId" is not a known field of customers (did you mean "externalId"?)`
        )
        assert.strictEqual((yield* sandbox.control.records("sandbox-key", "customers")).length, 10)
      }),
    60_000
  )

  it.scopedLive(
    "update and delete without a key or id column, and upsert of a resource without a key and no id column, exit 2 naming the column",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const cases = [
          {
            args: ["customers", put(dir, "u.csv", "name,email\nUm,um@x.com.br\n"), "--mode", "update"],
            says: `u.csv (column "id"): update needs a column to find each record by: "id" or "externalId"`
          },
          {
            args: ["customers", put(dir, "d.csv", "name\nUm\n"), "--mode", "delete"],
            says: `d.csv (column "id"): delete needs a column to find each record by: "id" or "externalId"`
          },
          {
            args: [
              "expenses",
              put(
                dir,
                "e.csv",
                "description,userToLogin,typeDescription,date,amount\nAlmoço,ana,Refeição,2026-11-20,42.50\n"
              ),
              "--mode",
              "delete"
            ],
            says: `e.csv (column "id"): delete needs a column to find each record by: "id"`
          },
          {
            args: [
              "expenses",
              put(
                dir,
                "x.csv",
                "description,userToLogin,typeDescription,date,amount\nAlmoço,ana,Refeição,2026-11-20,42.50\n"
              )
            ],
            says:
              `x.csv (column "id"): expenses records have no key, so upsert finds them by "id" (rows with it empty are created) and the file has no such column; to create every row as a new record, import the file with --mode create or give it an empty "id" column`
          },
          {
            args: ["customers", put(dir, "n.csv", "name,email\nUm,um@x.com.br\n")],
            says: `n.csv (column "externalId"): upsert needs a column to find each record by: "id" or "externalId"`
          }
        ]
        for (const c of cases) {
          for (const command of ["validate", "import"]) {
            const cli = yield* runCli(
              [command, ...c.args, "--out", Path.join(dir, `${command}-${Path.basename(c.args[1]!)}`)],
              command === "import" ? sandbox : undefined,
              dir
            )
            assert.strictEqual(cli.code, 2, `${command} ${c.args.join(" ")}: ${cli.stderr}`)
            assert.include(cli.stderr, c.says)
          }
        }
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)
      }),
    60_000
  )

  it.scopedLive(
    "onboard: a workbook sheet with a misspelt key column exits 2 naming the workbook, the sheet and the column; nothing is sent",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        put(
          dir,
          "cadastro.xlsx",
          yield* workbookBytes({
            segments: [["description"], ["Varejo"]],
            customers: [["externalID ", "name", "segmentDescription"], ["C-1", "Um", "Varejo"]],
            equipments: [["externalId", "name", "customerExternalld"], ["E-1", "Forno", "C-1"]]
          })
        )
        const cli = yield* runCli(["onboard", "cadastro.xlsx", "--out", Path.join(dir, "run")], sandbox, dir)
        // `externalID ` is the key (names are trimmed and matched in any case); the equipments' reference to their
        // customer is misspelt, but it is not a key: it only warns. Only a misspelt key refuses.
        assert.strictEqual(cli.code, 0, cli.stderr)
        const misspelt = put(
          dir,
          "errado.xlsx",
          yield* workbookBytes({
            segments: [["description"], ["Atacado"]],
            customers: [["extenralId", "name"], ["C-2", "Dois"]]
          })
        )
        const before = writes(yield* sandbox.control.requests).length
        const refused = yield* runCli(["onboard", misspelt, "--out", Path.join(dir, "run2")], sandbox, dir)
        assert.strictEqual(refused.code, 2, refused.stderr)
        assert.include(refused.stderr, `errado.xlsx, sheet "customers" (column "extenralId")`)
        assert.include(refused.stderr, `did you mean "externalId"?`)
        assert.strictEqual(writes(yield* sandbox.control.requests).length, before)
        assert.isFalse(
          (yield* sandbox.control.records("sandbox-key", "segments")).some((s) => s.description === "Atacado")
        )
      }),
    60_000
  )
})

describe("rerun --fixed", () => {
  // Row 2 valid; 3, 4 and 5 invalid (e-mail, CPF, latitude); 6 valid; 7 repeats row 2's key in another case;
  // 8 has no name.
  const original = [
    "externalId,name,email,cpfCnpj,latitude",
    "C-1,Um,um@x.com.br,529.982.247-25,-23.5",
    "C-2,Dois,dois-sem-arroba,111.444.777-35,-23.6",
    "C-3,Tres,tres@x.com.br,123.456.789-00,-23.7",
    "C-4,Quatro,quatro@x.com.br,529.982.247-25,noventa",
    "C-5,Cinco,cinco@x.com.br,,",
    "c-1,Sete,sete@x.com.br,,",
    "C-6,,seis@x.com.br,,"
  ].join("\n") + "\n"

  it.scopedLive(
    "reruns only the corrected rows, keeps the original under blank cells, clears with #clear; a repeated key stays invalid",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", original)
        const first = yield* runCli(["import", "customers", file, "--out", Path.join(dir, "first")], sandbox, dir)
        assert.strictEqual(first.code, 1, first.stderr)
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(dir, "first"))), [
          "2:created",
          "3:invalid",
          "4:invalid",
          "5:invalid",
          "6:created",
          "7:invalid",
          "8:invalid"
        ])

        // A rectangular corrections sheet: each row fixes one cell and leaves the others blank; row 5 also clears
        // its e-mail (in any case).
        const fixes = put(
          dir,
          "correcoes.csv",
          [
            "_row,externalId,name,email,cpfCnpj,latitude",
            "3,,,dois@x.com.br,,",
            "4,,,,529.982.247-25,",
            "5,,,#CLEAR,,-23.8"
          ].join("\n") + "\n"
        )
        const before = writes(yield* sandbox.control.requests).length
        const again = yield* runCli(
          ["rerun", Path.join(dir, "first"), "--fixed", fixes, "--out", Path.join(dir, "again"), "--json"],
          sandbox,
          dir
        )
        assert.strictEqual(again.code, 0, again.stderr)
        // Rows 7 and 8 have no correction: they are not sent, and not in the new run.
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(dir, "again"))), [
          "3:created",
          "4:created",
          "5:created"
        ])
        assert.strictEqual(lastJson(again.stdout).rows, 3)
        assert.strictEqual(writes(yield* sandbox.control.requests).length - before, 3)

        const stored = yield* sandbox.control.records("sandbox-key", "customers")
        // The service reads a customer's name back as `description`.
        const byKey = (k: string) => stored.find((c) => c.externalId === k)!
        assert.strictEqual(stored.length, 5)
        // Row 2's record was not touched by row 7.
        assert.strictEqual(byKey("C-1").description, "Um")
        // Blank correction cells kept the original values.
        assert.deepStrictEqual(byKey("C-2").email, ["dois@x.com.br"])
        assert.strictEqual(byKey("C-2").cpfCnpj, "11144477735")
        assert.strictEqual(Number(byKey("C-2").latitude), -23.6)
        assert.strictEqual(byKey("C-3").description, "Tres")
        assert.deepStrictEqual(byKey("C-3").email, ["tres@x.com.br"])
        assert.strictEqual(Number(byKey("C-3").latitude), -23.7)
        // The marker cleared the e-mail; the rest of the row is the original's.
        const c4 = byKey("C-4")
        assert.isTrue(
          c4.email === undefined || c4.email === null || (Array.isArray(c4.email) && c4.email.length === 0),
          JSON.stringify(c4.email)
        )
        assert.strictEqual(Number(c4.latitude), -23.8)
        assert.strictEqual(c4.cpfCnpj, "52998224725")
        const rows = readFileSync(Path.join(dir, "again", "rows.csv"), "utf8")
        assert.include(rows, "5,,C-4,Quatro,,529.982.247-25,-23.8")

        // Row 7 corrected but keeping the key row 2 holds (in another case): checked against the whole original
        // file it stays invalid, and row 2's record keeps its name.
        const seven = put(dir, "sete.csv", "_row,name\n7,Sete corrigido\n")
        const mark = writes(yield* sandbox.control.requests).length
        const dup = yield* runCli(
          ["rerun", Path.join(dir, "first"), "--fixed", seven, "--only", "invalid", "--out", Path.join(dir, "dup")],
          sandbox,
          dir
        )
        assert.strictEqual(dup.code, 1, dup.stderr)
        const dupReport = readReport(Path.join(dir, "dup"))
        assert.deepStrictEqual(rowStatuses(dupReport), ["7:invalid"])
        assert.strictEqual(dupReport[0]!._error, `externalId: "c-1" repeats row 2`)
        assert.strictEqual(dupReport[0]!.name, "Sete corrigido")
        assert.strictEqual(writes(yield* sandbox.control.requests).length, mark)
        // The verdict travels with the rerun's rows: read again as `resume` reads them, row 7 is still invalid.
        const reread = yield* importInto(sandbox, {
          resource: "customers",
          file: Path.join(dir, "dup", "rows.csv"),
          rowColumn: "_row",
          runDir: Path.join(dir, "reread")
        })
        assert.deepStrictEqual(rowStatuses(readReport(reread.runDir)), ["7:invalid"])
        assert.strictEqual(writes(yield* sandbox.control.requests).length, mark)
        assert.strictEqual(
          (yield* sandbox.control.records("sandbox-key", "customers")).find((c) => c.externalId === "C-1")!.description,
          "Um"
        )

        // A rerun of that rerun, whose report holds row 7 alone, still checks against the whole original file.
        const still = yield* runCli(
          ["rerun", Path.join(dir, "dup"), "--fixed", seven, "--only", "invalid", "--out", Path.join(dir, "still")],
          sandbox,
          dir
        )
        assert.strictEqual(still.code, 1, still.stderr)
        assert.deepStrictEqual(readReport(Path.join(dir, "still")).map((r) => `${r._row}:${r._status}:${r._error}`), [
          `7:invalid:externalId: "c-1" repeats row 2`
        ])
        assert.strictEqual(writes(yield* sandbox.control.requests).length, mark)
        // A new key makes it a record of its own.
        const newKey = put(dir, "sete-chave.csv", "_row,externalId\n7,C-7\n")
        const fixed = yield* runCli(
          ["rerun", Path.join(dir, "still"), "--fixed", newKey, "--only", "invalid", "--out", Path.join(dir, "seven")],
          sandbox,
          dir
        )
        assert.strictEqual(fixed.code, 0, fixed.stderr)
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(dir, "seven"))), ["7:created"])
        const stored2 = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(stored2.find((c) => c.externalId === "C-7")!.description, "Sete corrigido")
        assert.strictEqual(stored2.find((c) => c.externalId === "C-1")!.description, "Um")
      }),
    120_000
  )

  it.scopedLive(
    "an XLSX corrections workbook: blanks keep, #clear empties; a _row the report does not have exits 2 naming the file and row",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", original)
        yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "first") })

        const stray = put(dir, "errado.csv", "_row,email\n3,dois@x.com.br\n12,doze@x.com.br\n")
        const refused = yield* runCli(
          ["rerun", Path.join(dir, "first"), "--fixed", stray, "--out", Path.join(dir, "stray")],
          sandbox,
          dir
        )
        assert.strictEqual(refused.code, 2, refused.stderr)
        assert.include(refused.stderr, `errado.csv (row 3, column "_row"): row 12 is not a row of`)
        assert.isFalse(existsSync(Path.join(dir, "stray")))

        // Matched by key, a misspelt key column would match nothing.
        const byKey = put(dir, "chave.csv", "extrenalId,email\nC-2,dois@x.com.br\n")
        const noKey = yield* runCli(
          ["rerun", Path.join(dir, "first"), "--fixed", byKey, "--out", Path.join(dir, "nokey")],
          sandbox,
          dir
        )
        assert.strictEqual(noKey.code, 2, noKey.stderr)
        assert.include(
          noKey.stderr,
          `chave.csv (column "externalId"): a corrections file needs a _row column or the column its rows are matched by: "externalId"`
        )
        // Matched by key, the key is compared as the service compares it: `c-6` corrects row 8 (`C-6`).
        const sixth = put(dir, "seis.csv", "externalId,name\nc-6,Seis\n")
        const six = yield* runCli(
          ["rerun", Path.join(dir, "first"), "--fixed", sixth, "--out", Path.join(dir, "six")],
          sandbox,
          dir
        )
        assert.strictEqual(six.code, 0, six.stderr)
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(dir, "six"))), ["8:created"])

        const before = writes(yield* sandbox.control.requests).length
        put(
          dir,
          "correcoes.xlsx",
          yield* workbookBytes({
            customers: [
              ["_row", "externalId", "name", "email", "cpfCnpj", "latitude"],
              ["3", "", "", "dois@x.com.br", "#clear", ""],
              ["5", "", "", "", "", "-23.8"]
            ]
          })
        )
        const again = yield* runCli(
          ["rerun", Path.join(dir, "first"), "--fixed", "correcoes.xlsx", "--out", Path.join(dir, "again")],
          sandbox,
          dir
        )
        assert.strictEqual(again.code, 0, again.stderr)
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(dir, "again"))), ["3:created", "5:created"])
        assert.strictEqual(writes(yield* sandbox.control.requests).length - before, 2)
        const stored = yield* sandbox.control.records("sandbox-key", "customers")
        const c2 = stored.find((c) => c.externalId === "C-2")!
        assert.deepStrictEqual(c2.email, ["dois@x.com.br"])
        assert.isTrue(c2.cpfCnpj === undefined || c2.cpfCnpj === null || c2.cpfCnpj === "", JSON.stringify(c2.cpfCnpj))
        assert.strictEqual(Number(c2.latitude), -23.6)
        const c4 = stored.find((c) => c.externalId === "C-4")!
        assert.deepStrictEqual(c4.email, ["quatro@x.com.br"])
        assert.strictEqual(Number(c4.latitude), -23.8)
        assert.strictEqual(readSummary(Path.join(dir, "again")).rows, 2)
      }),
    90_000
  )
})
