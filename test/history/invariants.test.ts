/**
 * The checker's invariants can fail: a history directory or a report that breaks one is flagged. (A checker
 * whose invariants cannot fail proves nothing, however many histories it runs.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { loadExcelJs } from "../../src/files/ExcelJs.js"
import { startTestSandbox } from "../import/support.js"
import { temporaryDir } from "../support.js"
import { startEchoGateway } from "./echo.js"
import type { Action, FileShape, Step, World } from "./model.js"
import { checkStep, newWorld, rng, runAction, snapshot } from "./model.js"
import { accounts, runOne, runSteps, withWorld } from "./support.js"

const nothing: Step = { targeted: new Set(), keyless: 0, output: [], note: "" }

/** A world that holds only what invariant (v) reads: the account's secrets and the history's directory. */
const worldIn = (dir: string) =>
  ({
    sandbox: { accounts },
    dir,
    runs: [],
    snapshots: [],
    changes: [],
    exports: [],
    clean: new Map()
  }) as unknown as World

const workbookWith = (path: string, cell: string) =>
  Effect.promise(async () => {
    const ExcelJS = await loadExcelJs()
    const book = new ExcelJS.Workbook()
    book.addWorksheet("Rows").addRows([["_row", "_status", "_error"], [2, "failed", cell]])
    await book.xlsx.writeFile(path)
  })

describe("invariant (v): no secret in any file", () => {
  it.live("a secret inside report.xlsx (compressed) or a .zip is found, entry named", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = Path.join(yield* temporaryDir("fsm-history-v-"), "h")
      const run = Path.join(dir, "001-import-upsert")
      mkdirSync(run, { recursive: true })
      writeFileSync(Path.join(run, "report.csv"), "_row,_status,_error\r\n2,failed,Bad Gateway\r\n")
      yield* workbookWith(Path.join(run, "report.xlsx"), "Bad Gateway")
      const w = worldIn(dir)
      assert.deepStrictEqual(yield* checkStep(w, 0, nothing, new Map(), new Map()), [])

      yield* workbookWith(Path.join(run, "report.xlsx"), `Bad Gateway (apiToken ${accounts[0]!.apiToken})`)
      const found = yield* checkStep(w, 0, nothing, new Map(), new Map())
      assert.deepStrictEqual(found, ["(v) 001-import-upsert/report.xlsx:xl/sharedStrings.xml holds a secret (hist-t…)"])

      yield* workbookWith(Path.join(run, "report.xlsx"), "Bad Gateway")
      yield* workbookWith(Path.join(run, "bundle.zip"), `apiKey=${accounts[0]!.apiKey}`)
      const inZip = yield* checkStep(w, 0, nothing, new Map(), new Map())
      assert.deepStrictEqual(inZip, ["(v) 001-import-upsert/bundle.zip:xl/sharedStrings.xml holds a secret (hist-k…)"])
    })))
})

/** A customer's own sheet: Portuguese headers, title row, Sim/Não, decimal commas, internal columns. */
const ownSheet: FileShape = {
  delimiter: ";",
  encoding: "windows-1252",
  style: "portuguese",
  internal: true,
  rows: [
    {
      key: "CLI-01",
      name: "Padaria Pão Quente",
      note: "Cliente desde 2019",
      phone: "+55 11 93988-2938",
      address: " Av. Paulista, 900 ",
      active: false,
      visit: 45,
      lat: "-23.5505",
      seller: "Ana Vendedora 17",
      credit: "R$ 5.000,00"
    },
    {
      key: "CLI-02",
      name: "Açougue São João",
      note: "Pagamento à vista",
      phone: "",
      address: "Rua Augusta, 100 - Consolação",
      active: true,
      visit: 120,
      lat: "-21.6725",
      seller: "Bruno Representante 40",
      credit: "R$ 1.250,00"
    }
  ]
}

/** One own-sheet import in a fresh sandbox, then `tamper`; the violations checkStep finds for the import's step. */
const importThen = (tamper: (w: World, runDir: string) => Effect.Effect<void>) =>
  Effect.scoped(Effect.gen(function*() {
    const sandbox = yield* startTestSandbox({ accounts })
    const gateway = yield* startEchoGateway(sandbox.url, rng(1))
    const w = newWorld(sandbox, gateway, Path.join(yield* temporaryDir("fsm-history-iv-"), "h"), new Set())
    const before = yield* snapshot(w)
    w.snapshots.push(before)
    const action: Action = { kind: "own-sheet", mode: "upsert", file: ownSheet, dryRun: false }
    const step = yield* runAction(w, action)
    assert.isDefined(step.runDir, step.note)
    const clean = yield* checkStep(w, 0, step, before, yield* snapshot(w))
    assert.deepStrictEqual(clean, [], step.note)
    yield* tamper(w, step.runDir!)
    return yield* checkStep(w, 0, step, before, yield* snapshot(w))
  }))

describe("invariant (iv): every report line agrees with the server, every mapped column", () => {
  it.live(
    "a report whose Ativo, Latitude or Tempo de visita says other than the server is flagged",
    () =>
      Effect.gen(function*() {
        const found = yield* importThen((_, runDir) =>
          Effect.sync(() => {
            const report = Path.join(runDir, "report.csv")
            const text = readFileSync(report, "utf8")
            const wrong = text.replace("Não,45,\"-23,5505\"", "Sim,46,\"-23,5506\"")
            assert.notStrictEqual(wrong, text, text)
            writeFileSync(report, wrong)
          })
        )
        assert.deepStrictEqual(found, [
          "(iv) 002-import-upsert row 3 (cli-01) created: Ativo \"Sim\" (true), the server's active is false",
          "(iv) 002-import-upsert row 3 (cli-01) created: Tempo de visita (min) \"46\" (46), the server's maximumVisitTime is 45",
          "(iv) 002-import-upsert row 3 (cli-01) created: Latitude \"-23,5506\" (-23.5506), the server's latitude is -23.5505"
        ])
      }),
    60_000
  )

  it.live(
    "a record edited on the server between the write and the check is flagged (a field the old check skipped)",
    () =>
      Effect.gen(function*() {
        const found = yield* importThen((w) =>
          Effect.asVoid(runAction(w, { kind: "actor-edit", record: 1, field: "address", value: "Rua Nova, 1" }))
        )
        assert.deepStrictEqual(found, [
          "(iv) 002-import-upsert row 4 (cli-02) created: Endereço \"Rua Augusta, 100 - Consolação\" (\"Rua Augusta, 100 - Consolação\"), the server's address is \"Rua Nova, 1\""
        ])
      }),
    60_000
  )
})

describe("invariant (i): no internal column reaches the server", () => {
  it.live("a record holding a value of Vendedor is flagged", () =>
    Effect.gen(function*() {
      const found = yield* importThen((w) =>
        Effect.asVoid(runAction(w, { kind: "actor-edit", record: 0, field: "note", value: "Ana Vendedora 17" }))
      )
      assert.include(
        found,
        "(i) cli-01 holds \"Ana Vendedora 17\", a value of the column \"Vendedor\", never to be sent"
      )
    }), 60_000)
})

describe("invariant (i) and undo: records without a key", () => {
  it.live(
    "a keyless record a create made is that run's own: its undo deleting it is no untargeted change",
    () =>
      Effect.gen(function*() {
        // The shrunk history of soak seed 200002, a false alarm of the checker.
        const history: ReadonlyArray<Action> = [
          {
            kind: "import",
            mode: "create",
            file: {
              delimiter: ",",
              encoding: "utf-8",
              rows: [{ key: undefined, name: "Total de clientes: 2", note: "", phone: "" }]
            },
            dryRun: false
          },
          { kind: "undo", run: 0, dryRun: false }
        ]
        const outcome = yield* runOne(1, history, new Set())
        assert.deepStrictEqual(outcome.violations, [], outcome.log.join("\n"))
        assert.match(outcome.log[1]!, /undo 002-import-create: exit 0/)
      }),
    60_000
  )
})

/** Runs `history` step by step in a fresh sandbox, `between(w, i)` before step i; the violations of each step. */
const stepsWith = (history: ReadonlyArray<Action>, between: (w: World, i: number) => Effect.Effect<void>) =>
  withWorld((w) => runSteps(w, history, (i) => between(w, i)))

const plain = (key: string, note: string): FileShape => ({
  delimiter: ";",
  encoding: "windows-1252",
  rows: [{ key, name: "Padaria Pão Quente", note, phone: "+55 11 93988-2938" }]
})

describe("the new actions' checks can fail", () => {
  it.live(
    "apply: a planned write sent although its record changed since the plan (a plan stripped of what it read)",
    () =>
      Effect.gen(function*() {
        const found = yield* stepsWith([
          { kind: "import", mode: "upsert", file: plain("CLI-01", "antiga"), dryRun: false },
          { kind: "onboard-plan", file: plain("CLI-01", "revisada") },
          { kind: "actor-edit", record: 0, field: "name", value: "Padaria (editado)" },
          { kind: "apply", run: 1 }
        ], (w, i) =>
          Effect.sync(() => {
            if (i !== 3) return
            // A tool that did not compare the record with the plan's reading would send the row: so does a plan
            // without that reading.
            const file = w.runs.find((r) => r.planFile !== undefined)!.planFile!
            const plan = JSON.parse(readFileSync(file, "utf8"))
            for (const step of plan.steps) for (const row of step.plan) delete row.state
            writeFileSync(file, JSON.stringify(plan))
          }))
        assert.deepStrictEqual(found.slice(0, 3), [[], [], []])
        assert.include(
          found[3]!.join("\n"),
          "(apply) customers row 2 (cli-01) updated: its record changed on the server since the plan"
        )
      }),
    60_000
  )
})

describe("invariants (i), (iii), (v) and stale: each flags what it exists to catch", () => {
  it.live(
    "an untargeted change, a keyless record, a second record of a key, a secret printed, a stale overwrite",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const dir = Path.join(yield* temporaryDir("fsm-history-i-"), "h")
        mkdirSync(dir, { recursive: true })
        const w = worldIn(dir)
        const before = new Map([["cli-01", { id: 1, externalId: "CLI-01", name: "Padaria" }]])
        const after = new Map([
          ["cli-01", { id: 1, externalId: "CLI-01", name: "Padaria (editado)" }],
          ["cli-01#dup2", { id: 2, externalId: "cli-01", name: "Padaria" }],
          ["#3", { id: 3, name: "Sem código" }]
        ])
        const step: Step = { ...nothing, targeted: new Set(["cli-01"]) }
        assert.deepStrictEqual(yield* checkStep(w, 0, { ...step, keyless: 1 }, before, before), [])
        assert.deepStrictEqual(
          yield* checkStep(w, 0, { ...nothing, output: [`token ${accounts[0]!.apiToken}`] }, before, after),
          [
            "(i) cli-01 changed although no command targeted it: {\"externalId\":\"CLI-01\",\"name\":\"Padaria\"} → {\"externalId\":\"CLI-01\",\"name\":\"Padaria (editado)\"}",
            "(i) cli-01#dup2 changed although no command targeted it: (none) → {\"externalId\":\"cli-01\",\"name\":\"Padaria\"}",
            "(i) 1 records without a key appeared (0 allowed)",
            "(iii) a second record of key cli-01",
            `(v) the output holds a secret: token ${accounts[0]!.apiToken}`
          ]
        )
        assert.deepStrictEqual(
          yield* checkStep(w, 0, { ...step, keyless: 1, stale: new Set(["cli-01"]) }, before, after),
          [
            "(iii) a second record of key cli-01",
            "(stale) cli-01 changed on the server since the export, and the re-import changed it: {\"externalId\":\"CLI-01\",\"name\":\"Padaria\"} → {\"externalId\":\"CLI-01\",\"name\":\"Padaria (editado)\"}"
          ]
        )
      })),
    60_000
  )
})
