/**
 * Each check of the history model's actions can fail: a real step runs clean, then the run directory it wrote or
 * the account it wrote to is broken the way the check exists to catch, and the check flags it. (A check never shown
 * to fail proves nothing, however many histories it passes.) The invariants of `checkStep` have theirs in
 * invariants.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { apiOf } from "../import/support.js"
import type { World } from "./model.js"
import {
  brDateLines,
  brDatesChecks,
  exportedTwice,
  exportOnboardChecks,
  exportThroughoutChecks,
  otherAccount,
  passwordLeaks,
  ptBrChecks,
  ptBrImportChecks,
  ptBrOnboardChecks,
  ptHeadersTitleChecks,
  readCsv,
  runAction,
  snapshot,
  summarySheetOf,
  summarySheets,
  usersPasswordChecks
} from "./model.js"
import { accounts, runSteps, two, withWorld } from "./support.js"

/** The one directory of the history whose name ends with `suffix` (`-onboard-other`, `-dry-pt-BR`). */
const dirOf = (w: World, suffix: string, nth = 0) => {
  const names = readdirSync(w.dir).filter((n) => n.endsWith(suffix)).sort()
  assert.isAbove(names.length, nth, `${suffix} in ${readdirSync(w.dir).join(" ")}`)
  return Path.join(w.dir, names[nth]!)
}

/** Rewrites the file at `path` with `edit`, asserting it changed something. */
const doctor = (path: string, edit: (text: string) => string) => {
  const text = readFileSync(path, "utf8")
  const changed = edit(text)
  assert.notStrictEqual(changed, text, `${path} unchanged:\n${text}`)
  writeFileSync(path, changed)
}

describe("export-onboard: each check flags what it exists to catch", () => {
  it.live(
    "into the other account: a record edited, removed, made twice or without a key; read-only lists; no summary",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const found = yield* runSteps(w, [
            { kind: "import", mode: "upsert", file: two, dryRun: false },
            { kind: "export-onboard", export: undefined, other: true }
          ])
          assert.deepStrictEqual(found, [[], []])
          const exportDir = w.exports[0]!.dir
          const runDir = dirOf(w, "-onboard-other")
          const onboarded = yield* otherAccount(w)
          assert.deepStrictEqual(
            exportOnboardChecks(exportDir, runDir, true, { before: onboarded, after: onboarded }),
            []
          )

          // The other account broken after the onboarding: one record edited, one removed, one made without a key.
          const cli02 = onboarded.byKey.get("cli-02")!
          yield* Effect.gen(function*() {
            const api = yield* Api
            const edited = yield* api.request({
              method: "PATCH",
              path: `/customers/${String(onboarded.byKey.get("cli-01")!.id)}`,
              body: [{ op: "replace", path: "name", value: "Padaria (outro nome)" }]
            })
            const removed = yield* api.request({ method: "DELETE", path: `/customers/${String(cli02.id)}` })
            const made = yield* api.request({ method: "POST", path: "/customers", body: { name: "Sem código" } })
            assert.deepStrictEqual(
              [edited.status, removed.status, made.status].map((s) => s !== undefined && s < 300),
              [true, true, true]
            )
          }).pipe(Effect.provide(apiOf(w.sandbox, accounts[1]!.apiKey)), Effect.orDie)
          const after = yield* otherAccount(w)
          // A second record of a key: the server refuses one (409), so the account's reading is doctored.
          const broken = exportOnboardChecks(exportDir, runDir, true, {
            before: onboarded,
            after: { ...after, twice: [...after.twice, "cli-01"] }
          })
          assert.deepStrictEqual(broken, [
            "(export-onboard) the other account has a second record of cli-01",
            `(export-onboard) the other account's cli-02 (id ${String(cli02.id)}) was replaced or removed`,
            "(export-onboard) the other account has 1 records without a key (0 before, 0 rows without one in the file)",
            "(export-onboard) row 2 (cli-01): name \"Padaria Pão Quente\", the other account's description is \"Padaria (outro nome)\"",
            "(export-onboard) row 3 (cli-02) created, but the other account has no such record"
          ])

          // The run's summary: a read-only list of the export not named as skipped, one made a step; then none.
          const summaryPath = Path.join(runDir, "summary.json")
          const summary = JSON.parse(readFileSync(summaryPath, "utf8")) as {
            resources: Array<string>
            readOnly?: Array<string>
          }
          const readOnly = summary.readOnly ?? []
          assert.isNotEmpty(readOnly, JSON.stringify(summary))
          // The sandbox's read-only lists are empty (histories write customers only); a real account's hold rows, and
          // only a list with rows must be named: one row added to the export's file of the first.
          const list = Path.join(exportDir, `${readOnly[0]}.csv`)
          doctor(list, (text) =>
            `${text.trimEnd()}\r\n${text.split(/\r?\n/)[0]!.split(",").map(() => "1").join(",")}\r\n`)
          assert.deepStrictEqual(exportOnboardChecks(exportDir, runDir, true, undefined), [])
          writeFileSync(
            summaryPath,
            JSON.stringify({ ...summary, readOnly: readOnly.slice(1), resources: [...summary.resources, readOnly[0]] })
          )
          assert.deepStrictEqual(exportOnboardChecks(exportDir, runDir, true, undefined), [
            `(export-onboard) the read-only list ${readOnly[0]} was not named as skipped`,
            `(export-onboard) the read-only list ${readOnly[0]} was a step of the onboarding`
          ])
          rmSync(summaryPath)
          assert.deepStrictEqual(exportOnboardChecks(exportDir, runDir, true, undefined), [
            `(export-onboard) ${Path.basename(runDir)} has no summary.json`
          ])
        })
      ),
    120_000
  )
})

describe("pt-br: each check flags what it exists to catch", () => {
  it.live(
    "a pt-BR dry run that differs from the English one (a line, a cell, the counts), a status translated",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const found = yield* runSteps(w, [
            { kind: "import", mode: "upsert", file: { ...two, rows: two.rows.slice(0, 1) }, dryRun: false },
            { kind: "pt-br", mode: "upsert", file: two }
          ])
          assert.deepStrictEqual(found, [[], []])
          const dirs = { en: dirOf(w, "-dry-en"), pt: dirOf(w, "-dry-pt-BR") }
          const imported = readdirSync(w.dir).filter((n) => n.endsWith("-import-upsert")).sort().pop()!
          const importDir = Path.join(w.dir, imported)
          assert.deepStrictEqual(ptBrChecks(dirs, importDir), [])
          const en = readCsv(Path.join(dirs.en, "report.csv"))
          assert.lengthOf(en, 2)

          // The Portuguese dry run says another status for one row and another id, and loses the other row.
          const report = Path.join(dirs.pt, "report.csv")
          doctor(report, (text) => {
            const lines = text.split("\r\n")
            return [lines[0], lines[1]!.replace(en[0]!._status!, "updated").replace(en[0]!.name!, "Padaria")]
              .join("\r\n") + "\r\n"
          })
          doctor(Path.join(dirs.pt, "summary.json"), (text) => text.replace(/"rows":\s*2/, "\"rows\":1"))
          // The import in pt-BR: a status in Portuguese.
          doctor(Path.join(importDir, "report.csv"), (text) => text.replace(/,created,/, ",criado,"))
          const broken = ptBrChecks(dirs, importDir)
          assert.deepStrictEqual(broken.slice(0, 3), [
            "(pt-BR) the dry run's report has 1 lines in pt-BR, 2 in English",
            `(pt-BR) report row 2, column _status: ${JSON.stringify(en[0]!._status)} in English, "updated" in pt-BR`,
            "(pt-BR) report row 2, column name: \"Padaria Pão Quente\" in English, \"Padaria\" in pt-BR"
          ])
          assert.include(
            broken,
            `(pt-BR) report row 3, column _status: ${JSON.stringify(en[1]!._status)} in English, undefined in pt-BR`
          )
          assert.match(broken.at(-2)!, /^\(pt-BR\) summary\.json: \{"rows":2,.* in English, \{"rows":1,.* in pt-BR$/)
          assert.strictEqual(broken.at(-1), "(pt-BR) report row 3: status \"criado\"")

          // The import's own pt-BR reports: its page with another count and an English sentence, its Summary sheet
          // with another count, an English sentence printed (report.csv's status is translated above).
          const sheet = yield* summarySheetOf(importDir)
          assert.isDefined(sheet)
          const counts = (JSON.parse(readFileSync(Path.join(importDir, "summary.json"), "utf8")) as {
            counts: Record<string, number>
          }).counts
          const shownCounts = Object.fromEntries(Object.entries(counts).filter(([, k]) => k > 0).sort())
          const [status, n] = Object.entries(shownCounts).find(([s]) => s !== "created")!
          doctor(Path.join(importDir, "report.html"), (html) =>
            html.replace(new RegExp(`(data-figure="count:${status}"[^>]*>)${n}<`), `$1${n + 1}<`).replace(
              /(<p[^>]*>)/,
              "$1next: correct the invalid rows in a copy of x"
            ))
          const importBroken = ptBrImportChecks(
            importDir,
            ["  rows by status", "next: correct the invalid rows in a copy of x"],
            sheet!.map((r) => (r[0] === status ? [status, n + 2] : r))
          )
          assert.deepStrictEqual(importBroken.filter((l) => !l.includes("criado")), [
            `(pt-BR) the import: report.html says ${status} ${n + 1}, summary.json ${n}`,
            "(pt-BR) the import report.html: English left, \": correct the invalid rows in a copy of\" (next.fixInvalid)",
            "(pt-BR) the import report.html: English left, \": correct the invalid rows in a copy of\" (onboard.fixInvalid)",
            `(pt-BR) the import: report.xlsx Summary counts ${JSON.stringify({ ...shownCounts, [status]: n + 2 })}, ` +
            `summary.json ${JSON.stringify(shownCounts)}`,
            "(pt-BR) printed: English left, \": correct the invalid rows in a copy of\" (next.fixInvalid)",
            "(pt-BR) printed: English left, \": correct the invalid rows in a copy of\" (onboard.fixInvalid)"
          ])
          assert.include(importBroken, "(pt-BR) the import report.csv row 3: status \"criado\"")
        })
      ),
    120_000
  )
})

describe("pt-br-onboard: the Portuguese reports and lines of an onboarding stay true and Portuguese", () => {
  it.live(
    "a count changed in report.html or summary.json, a status translated, an English sentence in a page or a line",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const found = yield* runSteps(w, [
            { kind: "import", mode: "upsert", file: two, dryRun: false },
            { kind: "pt-br-onboard", export: undefined, other: true }
          ])
          assert.deepStrictEqual(found, [[], []])
          const runDir = dirOf(w, "-onboard-other")
          const step = Path.join(runDir, "customers")
          // The closing table as the command prints it (the step ran it and its lines passed: `found` above).
          const counts = (JSON.parse(readFileSync(Path.join(runDir, "summary.json"), "utf8")) as {
            counts: Record<string, number>
          }).counts
          const table = Object.entries(counts).filter(([, n]) => n > 0).map(([s, n]) => `  ${s.padEnd(12)}  ${n}`)
          const printed = [...table, "  requisições   2", "relatórios: onde estão"]
          const sheets = yield* summarySheets(runDir)
          assert.isTrue(sheets.has(step), [...sheets.keys()].join(" "))
          assert.deepStrictEqual(ptBrOnboardChecks(runDir, printed, sheets), [])
          // report.xlsx's Summary with another count and an English line.
          const sheet = sheets.get(step)!.map((r) => (r[0] === "created" ? ["created", 1] : r))
          assert.deepStrictEqual(
            ptBrOnboardChecks(runDir, printed, new Map([[step, [...sheet, ["Rows by status"], ["exit code"]]]])),
            [
              "(pt-BR onboard) step customers: report.xlsx Summary counts {\"created\":1}, summary.json {\"created\":2}",
              "(pt-BR onboard) step customers report.xlsx Summary: English left, \"Rows by status\" (report.rowsByStatus)"
            ]
          )

          // The onboarding's page says another count; the step's summary another created count; a status in Portuguese.
          doctor(Path.join(runDir, "report.html"), (html) =>
            html.replace(/(data-figure="count:created"[^>]*>)2</, "$13<").replace(
              /(<p[^>]*>)/,
              "$1next (customers): correct the invalid rows in a copy of x"
            ))
          doctor(Path.join(step, "report.csv"), (text) => text.replace(/,created,/, ",criado,"))
          const broken = ptBrOnboardChecks(runDir, [
            ...printed.filter((l) =>
              !l.includes("created")
            ),
            "next (customers): correct the invalid rows in a copy of x"
          ])
          assert.deepStrictEqual(broken, [
            "(pt-BR onboard) the onboarding: report.html says created 3, summary.json 2",
            "(pt-BR onboard) the onboarding report.html: English left, \": correct the invalid rows in a copy of\" (next.fixInvalid)",
            "(pt-BR onboard) the onboarding report.html: English left, \": correct the invalid rows in a copy of\" (onboard.fixInvalid)",
            "(pt-BR onboard) step customers report.csv row 2: status \"criado\"",
            "(pt-BR onboard) step customers: report.csv counts {\"created\":1,\"criado\":1}, summary.json {\"created\":2}",
            "(pt-BR onboard) the printed summary has no line \"created 2\"",
            "(pt-BR onboard) printed: English left, \": correct the invalid rows in a copy of\" (next.fixInvalid)",
            "(pt-BR onboard) printed: English left, \": correct the invalid rows in a copy of\" (onboard.fixInvalid)"
          ])

          // The dry run before it: its statuses are planned (`would-create`) and its counts its summary's.
          const dryDir = dirOf(w, "-onboard-dry-pt-BR")
          const dryStep = Path.join(dryDir, "customers")
          const dryPrinted = [`  would-create  2`, ...printed.filter((l) => !l.includes("created"))]
          const drySheets = yield* summarySheets(dryDir)
          assert.isTrue(drySheets.has(dryStep), [...drySheets.keys()].join(" "))
          assert.deepStrictEqual(ptBrOnboardChecks(dryDir, dryPrinted, drySheets), [])
          // A planned row reported as done, a count of the step's page changed, the table without the planned line.
          doctor(Path.join(dryStep, "report.csv"), (text) => text.replace(/,would-create,/, ",created,"))
          doctor(Path.join(dryStep, "report.html"), (html) =>
            html.replace(/(data-figure="count:created"[^>]*>)2</, "$11<"))
          assert.deepStrictEqual(ptBrOnboardChecks(dryDir, printed, drySheets), [
            "(pt-BR onboard) step customers: report.html says created 1, summary.json 2",
            "(pt-BR onboard) step customers report.csv row 2: status \"created\"",
            "(pt-BR onboard) the printed summary has no line \"would-create 2\""
          ])
        })
      ),
    120_000
  )
})

describe("br-dates: dd/mm/yyyy and decimal commas read as meant", () => {
  const customers = { kind: "import", mode: "upsert", file: two, dryRun: false } as const
  const rows = [
    { customer: 0, day: 25, month: 12, year: 2026, cents: 123456 },
    { customer: 1, day: 3, month: 4, year: 2026, cents: 35000 }
  ]

  it.live(
    "a Brazilian receivables file: each row created with its dates and values",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const found = yield* runSteps(w, [
            customers,
            { kind: "br-dates", rows, dateFormat: "auto", decimal: "auto" },
            { kind: "br-dates", rows: rows.slice(1), dateFormat: "dd/mm/yyyy", decimal: "," }
          ])
          assert.deepStrictEqual(found, [[], [], []])
          const held = yield* w.sandbox.control.records(accounts[0]!.apiKey, "receivables")
          assert.deepStrictEqual(
            held.map((r) => [String(r.dueDate).slice(0, 10), String(r.competencyDate).slice(0, 10), r.value]),
            [["2026-12-25", "2026-12-01", 1234.56], ["2026-04-03", "2026-04-01", 350], [
              "2026-04-03",
              "2026-04-01",
              350
            ]]
          )
        })
      ),
    120_000
  )

  it.live(
    "a tool that read the dates month-first, scaled a value, lost or doubled a row, or mixed customers is flagged",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          // Month-first: what the tool does when told so (--date-format mm/dd/yyyy), as a tool that misread would.
          const found = yield* runSteps(w, [
            customers,
            { kind: "br-dates", rows, dateFormat: "mm/dd/yyyy", decimal: "auto" }
          ])
          assert.deepStrictEqual(found, [[], [
            "(br-dates) row 2 (cli-01) invalid: dueDate: \"25/12/2026\" is not a real date",
            "(br-dates) row 3 (cli-02): dueDate 03/04/2026 is 2026-04-03, the server holds \"2026-03-04T00:00:00\"",
            "(br-dates) row 3 (cli-02): competencyDate 01/04/2026 is 2026-04-01, the server holds \"2026-01-04T00:00:00\""
          ]])

          // A value scaled (the comma read as a thousands separator), the customer mixed up, a receivable made twice:
          // the tool refuses `350,00` with --decimal . (an invalid row), so the account's receivables are doctored.
          const action = { kind: "br-dates", rows, dateFormat: "auto", decimal: "auto" } as const
          assert.deepStrictEqual(yield* runSteps(w, [action]), [[]])
          const receivables = yield* w.sandbox.control.records(accounts[0]!.apiKey, "receivables")
          const made = receivables.slice(1)
          const report = readCsv(Path.join(dirOf(w, "-receivables", 1), "run", "report.csv"))
          const lines = brDateLines(action, w.snapshots.at(-1)!)
          const doctored = [
            { ...made[0]!, value: 123456 },
            { ...made[1]!, customerId: made[0]!.customerId },
            { ...made[1]!, id: 99 }
          ]
          assert.deepStrictEqual(brDatesChecks(lines, report, w.snapshots.at(-1)!, [], made), [])
          assert.deepStrictEqual(brDatesChecks(lines, report, w.snapshots.at(-1)!, [], doctored), [
            "(br-dates) 2 rows created, the account has 3 more receivables",
            "(br-dates) row 2 (cli-01): value 1.234,56 is 1234.56, the server holds 123456",
            `(br-dates) row 3 (cli-02): customer ${String(made[1]!.customerId)}, the server's receivable is for ${
              String(made[0]!.customerId)
            }`
          ])
          // A row lost: reported created, no such receivable.
          assert.deepStrictEqual(brDatesChecks(lines, report, w.snapshots.at(-1)!, [], made.slice(0, 1)), [
            "(br-dates) 2 rows created, the account has 1 more receivables",
            `(br-dates) row 3 (cli-02) created, but the server has no receivable ${String(made[1]!.id)}`
          ])
        })
      ),
    120_000
  )
})

describe("users, pt-headers and export-while-deleting: each check flags what it exists to catch", () => {
  it.live(
    "users: a password the server kept, changed or never set against the run's flag; a password written or printed",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const users = ["USR-01", "USR-02"]
          const passwords = [["Senha#1a", "Senha#1b"], ["Senha#2a", "Senha#2b"], ["Senha#3a", "Senha#3b"]]
          assert.deepStrictEqual(yield* runSteps(w, [{ kind: "users", users, passwords }]), [[]])
          const stored = new Map(
            (yield* w.sandbox.control.stored(accounts[0]!.apiKey, "users")).map((r) => [
              String(r.externalId).toLowerCase(),
              r.password as unknown
            ])
          )
          assert.deepStrictEqual([stored.get("usr-01"), stored.get("usr-02")], passwords[2])
          const runDir = Path.join(dirOf(w, "-users-2"), "run")
          const without = { passwords: passwords[1]!, sendWriteOnly: false }
          assert.deepStrictEqual(usersPasswordChecks(users, 1, without, { before: stored, after: stored }, runDir), [])
          // The re-import without --send-write-only sent USR-01's password; the one with it sent none; a user created
          // without its password.
          const sent = new Map([...stored, ["usr-01", "Senha#2a"]])
          const withFlag = { passwords: passwords[2]!, sendWriteOnly: true }
          const before = new Map([...stored].map(([k]) => [k, "old"]))
          const created = new Map([...stored, ["usr-02", undefined]])
          assert.deepStrictEqual(
            [
              ...usersPasswordChecks(users, 1, without, { before: stored, after: sent }, runDir),
              ...usersPasswordChecks(users, 2, withFlag, { before, after: before }, runDir),
              ...usersPasswordChecks(users, 0, withFlag, { before: new Map(), after: created }, runDir)
            ].map((x) => x.replace(/ \(before:.*$/, "")),
            [
              "(users) import 2 without --send-write-only: USR-01's password on the server is \"Senha#2a\", expected \"Senha#3a\"",
              "(users) import 3 with --send-write-only: USR-01's password on the server is \"old\", expected \"Senha#3a\"",
              "(users) import 3 with --send-write-only: USR-02's password on the server is \"old\", expected \"Senha#3b\"",
              "(users) import 1 with --send-write-only: USR-02's password on the server is undefined, expected \"Senha#3b\""
            ]
          )

          // The runs' directories hold the passwords only in the inputs and the reports; then a log holding one.
          const dirs = [1, 2, 3].map((n) => dirOf(w, `-users-${n}`))
          const inputs = new Set(dirs.map((d) => Path.join(d, "usuarios.csv")))
          const secrets = passwords.flat()
          assert.deepStrictEqual(yield* passwordLeaks(w, secrets, dirs, inputs, []), [])
          writeFileSync(Path.join(dirs[1]!, "run", "debug.log"), "PATCH /users/1 {\"password\":\"Senha#2a\"}\n")
          assert.deepStrictEqual(yield* passwordLeaks(w, secrets, dirs, inputs, ["sent password Senha#3b"]), [
            `(v) ${Path.relative(w.dir, Path.join(dirs[1]!, "run", "debug.log"))} holds a password (Senha#2a)`,
            "(v) the output holds a password: sent password Senha#3b"
          ])
        })
      ),
    60_000
  )

  it.live(
    "pt-headers: a write sent above a title row without a profile; the user not told which row is the header",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const mark = (yield* w.sandbox.control.requests).length
          w.snapshots.push(yield* snapshot(w))
          const step = yield* runAction(w, {
            kind: "pt-headers",
            mode: "upsert",
            file: { ...two, style: "aliases", title: true },
            map: false,
            dryRun: false
          })
          assert.deepStrictEqual(step.found, [], step.note)
          assert.deepStrictEqual(ptHeadersTitleChecks((yield* w.sandbox.control.requests).slice(mark), step.output), [])
          // What the user is told, without the line naming row 2; then a write reaching the server during the run.
          const quiet = step.output.filter((l) => !/row 2 looks like the header/.test(l))
          const notTold = ptHeadersTitleChecks((yield* w.sandbox.control.requests).slice(mark), quiet)
          assert.strictEqual(notTold.length, 1, notTold.join("\n"))
          assert.match(
            notTold[0]!,
            /^\(pt-headers\) a title row above the header, no profile: not told that row 2 looks like it/
          )
          const made = yield* Effect.flatMap(
            Api,
            (api) =>
              api.request({ method: "POST", path: "/customers", body: { externalId: "CLI-09", name: "Escrita" } })
          ).pipe(
            Effect.provide(apiOf(w.sandbox, accounts[0]!.apiKey)),
            Effect.orDie
          )
          assert.isBelow(made.status ?? 500, 300)
          assert.deepStrictEqual(ptHeadersTitleChecks((yield* w.sandbox.control.requests).slice(mark), step.output), [
            "(pt-headers) a title row above the header, no profile: 1 writes were sent"
          ])
        })
      ),
    60_000
  )

  it.live(
    "export-while-deleting: a record there before and after the export missing from its file",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const found = yield* runSteps(w, [
            { kind: "import", mode: "upsert", file: two, dryRun: false },
            { kind: "export-while-deleting", deletes: 1, pageSize: 1 }
          ])
          assert.deepStrictEqual(found, [[], []])
          const out = dirOf(w, "-export-deleting")
          const before = w.snapshots[1]!
          const after = yield* snapshot(w)
          assert.deepStrictEqual([...after.keys()], ["cli-02"])
          assert.deepStrictEqual(exportThroughoutChecks(before, after, out), [])
          doctor(
            Path.join(out, "customers.csv"),
            (text) => text.split(/\r?\n/).filter((l) => !l.includes("CLI-02")).join("\r\n")
          )
          assert.deepStrictEqual(exportThroughoutChecks(before, after, out), [
            "(export) cli-02 existed throughout the export, which ended well without it"
          ])
        })
      ),
    60_000
  )

  it.live(
    "page-cap: an export walked in pages of one holds each record once; a record written twice is flagged",
    () =>
      withWorld((w) =>
        Effect.gen(function*() {
          const found = yield* runSteps(w, [
            { kind: "import", mode: "upsert", file: two, dryRun: false },
            { kind: "page-cap", cap: 1 },
            { kind: "export" }
          ])
          assert.deepStrictEqual(found, [[], [], []])
          const out = dirOf(w, "-export")
          assert.strictEqual(readFileSync(Path.join(out, "customers.csv"), "utf8").trim().split(/\r?\n/).length, 3)
          assert.deepStrictEqual(exportedTwice(out), [])
          // The walk met the cap: a list asked above it refused (400), then pages of one.
          const lists = (yield* w.sandbox.control.requests).filter((r) =>
            r.method === "GET" && /\/customers(\?|$)/.test(r.path)
          )
          assert.isTrue(lists.some((r) => r.status === 400), JSON.stringify(lists))
          assert.isAtLeast(lists.filter((r) => r.status === 200).length, 2, JSON.stringify(lists))
          doctor(Path.join(out, "customers.csv"), (text) => {
            const lines = text.trimEnd().split(/\r?\n/)
            return [...lines, lines[1]!].join("\r\n") + "\r\n"
          })
          assert.strictEqual(exportedTwice(out).length, 1)
          assert.match(exportedTwice(out)[0]!, /^\(export\) cli-0[12] is in the export's file 2 times$/)
        })
      ),
    60_000
  )
})
