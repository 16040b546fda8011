/**
 * The rehearsal of issue 25 as an implementer runs it, onboarding-based (`node dist/bin.js`, built first): the
 * customer's account (A) is exported, a copy (B) is started from the export, a Brazilian workbook (a directory of
 * `;` Windows-1252 CSVs, dd/mm/yyyy dates) is onboarded against B with `--dry-run --plan`, and the plan is applied
 * to A with `--force-base-url`. Later steps name records earlier steps create: the plan holds them as "the record
 * row R of customers creates", and the apply resolves them to what that row created. A parent that ended
 * `conflict` keeps its children from being sent.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { readExportCopy } from "../../src/export/Copy.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { statusOfShown } from "../../src/Status.js"
import {
  cp1252,
  importInto,
  journalCount,
  put,
  readReport,
  rowStatuses,
  runCli,
  spawnCli,
  startTestSandbox,
  tempDir,
  until,
  writes
} from "../import/support.js"
import { lastJson } from "../support.js"
import { exportTo } from "./support.js"

/** The account before the onboarding: one user and one customer. */
const seedAccount = (sandbox: RunningSandbox, dir: string) =>
  Effect.gen(function*() {
    yield* importInto(sandbox, {
      resource: "users",
      file: put(dir, "seed-users.csv", "externalId,name,login,password\nU-1,Ana Souza,ana.souza,Troque@2026\n"),
      runDir: Path.join(dir, "seed-users")
    })
    yield* importInto(sandbox, {
      resource: "customers",
      file: put(dir, "seed-customers.csv", cp1252("externalId;name;note\r\nC-EX;Padaria São João;cliente antigo\r\n")),
      runDir: Path.join(dir, "seed-customers")
    })
  })

/**
 * The workbook: C-EX gets a new note, C-NOVO is new; E-1 and T-1 name C-NOVO (created by the customers step),
 * E-2 names C-EX (on the account).
 */
const writeWorkbook = (dir: string) => {
  const book = Path.join(dir, "implantacao")
  mkdirSync(book)
  put(
    book,
    "customers.csv",
    cp1252("externalId;name;note\r\nC-EX;Padaria São João;revisado na implantação\r\nC-NOVO;Refrigeração Ipê;novo\r\n")
  )
  put(
    book,
    "equipments.csv",
    cp1252(
      "externalId;name;associatedCustomerExternalId\r\nE-1;Câmara fria;C-NOVO\r\nE-2;Balcão refrigerado;C-EX\r\n"
    )
  )
  put(
    book,
    "tasks.csv",
    cp1252(
      "externalId;userFromLogin;customerExternalId;taskDate\r\nT-1;ana.souza;C-NOVO;15/12/2026 09:00:00\r\n"
    )
  )
  return book
}

/** The text of report.html's "The plan" section (tags stripped, entities decoded), or "" when it has none. */
const planOnPage = (runDir: string): string => {
  const html = readFileSync(Path.join(runDir, "report.html"), "utf8")
  const section = /<section><h2>The plan<\/h2>(.*?)<\/section>/s.exec(html)?.[1] ?? ""
  return section.replace(/<\/(td|th|p|tr)>/g, " | ").replace(/<[^>]+>/g, "").replace(/&quot;/g, "\"")
    .replace(/&amp;/g, "&").replace(/\s+/g, " ")
}

// A dry run's report shows the planned status (`would-create`): compared by the status it stands for.
const keyStatus = (rows: ReadonlyArray<Record<string, string>>) =>
  rows.map((r) => `${r._row}:${r.externalId}:${statusOfShown(r._status!)}`)

/** A (the account) seeded, B its copy from an export, the workbook planned on B. */
const rehearse = Effect.gen(function*() {
  const dir = yield* tempDir
  const original = yield* startTestSandbox()
  yield* seedAccount(original, dir)
  const exported = Path.join(dir, "copia")
  yield* exportTo(original, exported)
  const copy = yield* startTestSandbox({ copy: yield* readExportCopy(exported) })
  const book = writeWorkbook(dir)
  const planFile = Path.join(dir, "implantacao.plan.json")
  const dry = yield* runCli(
    ["onboard", book, "--dry-run", "--plan", planFile, "--out", Path.join(dir, "ensaio")],
    copy,
    dir
  )
  assert.strictEqual(dry.code, 0, dry.stderr)
  assert.include(dry.stderr, `plan: ${planFile}`)
  return { dir, original, copy, book, planFile }
}).pipe(Effect.provide(NodeContext.layer))

describe("onboard --dry-run --plan on a copy, apply to the account", () => {
  it.scopedLive(
    "the two runs agree row by row; references to records earlier steps create are planned by row and resolved to them",
    () =>
      Effect.gen(function*() {
        const { copy, dir, original, planFile } = yield* rehearse
        // Nothing written to the copy, nothing to the account.
        assert.strictEqual(writes(yield* copy.control.requests).length, 0)
        assert.strictEqual((yield* copy.control.records("sandbox-key", "customers")).length, 1)

        const plan = JSON.parse(readFileSync(planFile, "utf8"))
        assert.strictEqual(plan.command, "onboard")
        assert.deepStrictEqual(plan.steps.map((s: any) => s.resource), ["customers", "equipments", "tasks"])
        const e1 = plan.steps[1].plan.find((p: any) => p.key === "E-1")
        assert.deepStrictEqual(e1.refs, [{ field: "associatedCustomerId", to: [{ resource: "customers", row: 3 }] }])
        const shown = yield* runCli(["plan", "show", planFile, "--all"], copy, dir)
        assert.strictEqual(shown.code, 0, shown.stderr)
        assert.include(shown.stdout, "steps      customers (2) → equipments (2) → tasks (1)")
        assert.include(shown.stdout, "step 2/3 equipments: ")
        assert.include(shown.stdout, "associatedCustomerId → the record row 3 of customers creates")
        // The dry run's own report.html draws the plan for sign-off: its sha256, each step's planned rows, each
        // row's write with its changes and the references to records earlier steps create.
        const sha = createHash("sha256").update(readFileSync(planFile)).digest("hex")
        const drawn = planOnPage(Path.join(dir, "ensaio"))
        assert.include(drawn, `This dry run wrote the plan ${planFile}, sha256 ${sha}`)
        assert.include(drawn, "customers | 2 | would-update 1 would-create 1 |")
        assert.include(drawn, "equipments | 2 | would-create 2 |")
        assert.include(drawn, `customers | 2 | would-update | upsert | C-EX, id `)
        assert.include(drawn, `note: "cliente antigo" → "revisado na implantação"`)
        assert.include(
          drawn,
          "equipments | 2 | would-create | upsert | E-1 | associatedCustomerId → the record row 3 of customers creates"
        )
        assert.include(drawn, "tasks | 2 | would-create | upsert | T-1 |")

        const applied = yield* runCli(
          [
            "apply",
            planFile,
            "--approved-by",
            "Ana Souza",
            "--force-base-url",
            "--out",
            Path.join(dir, "aplicado"),
            "--json"
          ],
          original,
          dir
        )
        assert.strictEqual(applied.code, 0, applied.stderr)
        assert.include(applied.stderr, `applied plan ${planFile}`)

        // Row by row, step by step: the same keys and statuses.
        for (const step of ["customers", "equipments", "tasks"]) {
          const rehearsal = readReport(Path.join(dir, "ensaio", step))
          const onAccount = readReport(Path.join(dir, "aplicado", step))
          assert.deepStrictEqual(keyStatus(onAccount), keyStatus(rehearsal), step)
        }
        assert.deepStrictEqual(keyStatus(readReport(Path.join(dir, "aplicado", "customers"))), [
          "2:C-EX:updated",
          "3:C-NOVO:created"
        ])
        const summary = JSON.parse(readFileSync(Path.join(dir, "aplicado", "summary.json"), "utf8"))
        assert.strictEqual(summary.plan.approvedBy, "Ana Souza")
        assert.strictEqual(summary.plan.target.baseUrl, copy.url)
        // The applied onboarding's report.html: the plan, its approver, and per step planned beside applied.
        const onPage = planOnPage(Path.join(dir, "aplicado"))
        assert.include(onPage, `This run applied the plan ${planFile}, sha256 ${sha}, made against ${copy.url}.`)
        assert.include(onPage, "Approved by Ana Souza.")
        assert.include(onPage, "customers | 2 | would-update 1 would-create 1 | created 1 updated 1 |")
        assert.include(onPage, "equipments | 2 | would-create 2 | created 2 |", onPage)

        // Read back from the account: what the plan said.
        const customers = yield* original.control.records("sandbox-key", "customers")
        const novo = customers.find((c) => c.externalId === "C-NOVO")!
        const ex = customers.find((c) => c.externalId === "C-EX")!
        assert.strictEqual(ex.note, "revisado na implantação")
        const equipments = yield* original.control.records("sandbox-key", "equipments")
        assert.strictEqual(equipments.find((e) => e.externalId === "E-1")!.associatedCustomerId, novo.id)
        assert.strictEqual(equipments.find((e) => e.externalId === "E-2")!.associatedCustomerId, ex.id)
        const tasks = yield* original.control.records("sandbox-key", "tasks")
        assert.strictEqual(tasks.length, 1)
        assert.strictEqual(tasks[0]!.customerId, novo.id)

        // The plan file gone, the page written again says so instead of drawing rows it cannot vouch for.
        renameSync(planFile, `${planFile}.moved`)
        const again = yield* runCli(["report", Path.join(dir, "aplicado")], original, dir)
        assert.strictEqual(again.code, 0, again.stderr)
        assert.include(planOnPage(Path.join(dir, "aplicado")), `The plan file ${planFile} is not there now`)
        assert.notInclude(planOnPage(Path.join(dir, "aplicado")), "would-create")
        renameSync(`${planFile}.moved`, planFile)

        // The applied onboarding is a run like any other: verify holds, undo takes it back.
        const verified = yield* runCli(["verify", Path.join(dir, "aplicado")], original, dir)
        assert.strictEqual(verified.code, 0, verified.stderr + verified.stdout)
        const undone = yield* runCli(["undo", Path.join(dir, "aplicado")], original, dir)
        assert.strictEqual(undone.code, 0, undone.stderr)
        assert.strictEqual((yield* original.control.records("sandbox-key", "equipments")).length, 0)
      }),
    180_000
  )

  it.scopedLive(
    "a parent row that ends conflict keeps its children from being sent; an edited workbook is refused",
    () =>
      Effect.gen(function*() {
        const { book, dir, original, planFile } = yield* rehearse
        // C-EX changes on the account after the plan: its row is a conflict, and E-2, which names it, is skipped.
        yield* importInto(original, {
          resource: "customers",
          file: put(dir, "mudou.csv", cp1252("externalId;name;note\r\nC-EX;Padaria São João;mudou no meio\r\n")),
          runDir: Path.join(dir, "mudou")
        })
        const applied = yield* runCli(
          ["apply", planFile, "--force-base-url", "--out", Path.join(dir, "aplicado")],
          original,
          dir
        )
        assert.strictEqual(applied.code, 1, applied.stderr)
        const customers = readReport(Path.join(dir, "aplicado", "customers"))
        assert.deepStrictEqual(keyStatus(customers), ["2:C-EX:conflict", "3:C-NOVO:created"])
        const equipments = readReport(Path.join(dir, "aplicado", "equipments"))
        assert.deepStrictEqual(keyStatus(equipments), ["2:E-1:created", "3:E-2:skipped"])
        assert.include(equipments[1]!._error, "row 2 of customers ended conflict")
        assert.strictEqual(
          (yield* original.control.records("sandbox-key", "equipments")).map((e) => e.externalId).join(),
          "E-1"
        )

        // The workbook edited after the plan: refused before anything is sent.
        put(book, "tasks.csv", cp1252("externalId;userFromLogin;customerExternalId;taskDate\r\n"))
        const before = writes(yield* original.control.requests).length
        const edited = yield* runCli(
          ["apply", planFile, "--force-base-url", "--out", Path.join(dir, "editado")],
          original,
          dir
        )
        assert.strictEqual(edited.code, 2, edited.stderr)
        assert.include(edited.stderr, "tasks.csv changed since the plan")
        assert.strictEqual(writes(yield* original.control.requests).length, before)
      }),
    180_000
  )

  it.scopedLive(
    "an apply killed mid-step (SIGKILL) and resumed sends only the plan: each planned record once, children bound to them",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const sandbox = yield* startTestSandbox()
        const book = Path.join(dir, "lote")
        mkdirSync(book)
        const n = 30
        const ids = Array.from({ length: n }, (_, i) => i + 1)
        put(
          book,
          "customers.csv",
          cp1252("externalId;name\r\n" + ids.map((i) => `C-${i};Cliente Ação ${i}\r\n`).join(""))
        )
        put(
          book,
          "equipments.csv",
          cp1252(
            "externalId;name;associatedCustomerExternalId\r\n" +
              ids.map((i) => `E-${i};Câmara ${i};C-${i}\r\n`).join("")
          )
        )
        const planFile = Path.join(dir, "lote.plan.json")
        const dry = yield* runCli(["onboard", book, "--dry-run", "--plan", planFile, "--out", "ensaio"], sandbox, dir)
        assert.strictEqual(dry.code, 0, dry.stderr)

        const runDir = Path.join(dir, "aplicado")
        const cli = spawnCli(
          ["apply", planFile, "--approved-by", "Ana", "--out", runDir, "--rate", "40/2s", "--concurrency", "4"],
          sandbox,
          dir
        )
        yield* until(() => journalCount(Path.join(runDir, "customers"), "done") >= 8, 60_000)
        cli.child.kill("SIGKILL")
        const killed = yield* Effect.promise(() => cli.exit)
        assert.strictEqual(killed.signal, "SIGKILL")
        assert.isBelow(journalCount(Path.join(runDir, "customers"), "done"), n)

        const resumed = yield* runCli(["resume", runDir, "--rate", "40/2s"], sandbox, dir)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        const summary = JSON.parse(readFileSync(Path.join(runDir, "summary.json"), "utf8"))
        assert.strictEqual(summary.plan.approvedBy, "Ana")
        assert.strictEqual(summary.plan.file, planFile)
        assert.deepStrictEqual(
          rowStatuses(readReport(Path.join(runDir, "equipments"))),
          ids.map((i) => `${i + 1}:created`)
        )
        const customers = yield* sandbox.control.records("sandbox-key", "customers")
        const equipments = yield* sandbox.control.records("sandbox-key", "equipments")
        assert.strictEqual(customers.length, n)
        assert.strictEqual(equipments.length, n)
        for (const e of equipments) {
          const c = customers.find((x) => x.id === e.associatedCustomerId)!
          assert.strictEqual(String(c.externalId).slice(2), String(e.externalId).slice(2), String(e.externalId))
        }
        // Only planned writes, each record created once: one applied write per row at most.
        const sent = writes(yield* sandbox.control.requests).filter((w) => w.applied)
        assert.isAtMost(sent.length, 2 * n)
        assert.isTrue(
          sent.every((w) => w.path === "/v2/customers" || w.path === "/v2/equipments"),
          JSON.stringify(sent)
        )
      }),
    180_000
  )
  it.scopedLive(
    "a plan made against another account or server is refused before its first step: exit 2, nothing sent, no run left",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const sandbox = yield* startTestSandbox({
          accounts: [{ apiKey: "sandbox-key", apiToken: "sandbox-token" }, { apiKey: "outra", apiToken: "outra-token" }]
        })
        const book = writeWorkbook(dir)
        const planFile = Path.join(dir, "implantacao.plan.json")
        yield* seedAccount(sandbox, dir)
        const dry = yield* runCli(["onboard", book, "--dry-run", "--plan", planFile, "--out", "ensaio"], sandbox, dir)
        assert.strictEqual(dry.code, 0, dry.stderr)
        const before = writes(yield* sandbox.control.requests).length

        // Another account of the same server: refused as an import's plan is, not an onboarding aborted in its first
        // step (which left a run directory whose summary said exit 3, "aborted").
        const out = Path.join(dir, "outra-conta")
        const otherAccount = yield* runCli(["apply", planFile, "--out", out, "--json"], sandbox, dir, {
          FSM_API_KEY: "outra",
          FSM_API_TOKEN: "outra-token"
        })
        assert.strictEqual(otherAccount.code, 2, otherAccount.stderr)
        assert.include(otherAccount.stderr, `the plan ${planFile} was made against another account of ${sandbox.url}`)
        assert.include(otherAccount.stderr, "--force-base-url")
        assert.notInclude(otherAccount.stderr, "[1/3]")
        assert.notInclude(otherAccount.stderr, "aborted")
        assert.strictEqual(lastJson(otherAccount.stdout).exitCode, 2)
        assert.isFalse(existsSync(out), "no run directory is left behind")

        // Another server: refused the same way.
        const elsewhere = yield* startTestSandbox()
        const otherServer = yield* runCli(["apply", planFile, "--out", out], elsewhere, dir)
        assert.strictEqual(otherServer.code, 2, otherServer.stderr)
        assert.include(
          otherServer.stderr,
          `the plan was made against ${sandbox.url}, but your credentials are for ${elsewhere.url}`
        )
        assert.isFalse(existsSync(out))
        // No server given: the plan's own address is never used with credentials read from nowhere.
        const noServer = yield* runCli(["apply", planFile, "--out", out], undefined, dir)
        assert.strictEqual(noServer.code, 2, noServer.stderr)
        assert.include(noServer.stderr, `the plan was made against ${sandbox.url}, as the plan file says`)
        assert.isFalse(existsSync(out))
        assert.strictEqual(writes(yield* elsewhere.control.requests).length, 0)
        assert.strictEqual(writes(yield* sandbox.control.requests).length, before)
        assert.strictEqual((yield* sandbox.control.records("outra", "customers")).length, 0)

        // The plan's own account: applied.
        const applied = yield* runCli(["apply", planFile, "--out", out], sandbox, dir)
        assert.strictEqual(applied.code, 0, applied.stderr)
        assert.strictEqual((yield* sandbox.control.records("sandbox-key", "equipments")).length, 2)
      }),
    180_000
  )
  it.scopedLive(
    "a step's mapping profile edited after the plan: apply refuses before anything is sent (exit 2), the profile named",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const sandbox = yield* startTestSandbox()
        // The customer's own list (title row, Portuguese headers, a footer), read through a profile; equipments plain.
        const book = Path.join(dir, "cliente")
        mkdirSync(book)
        put(
          book,
          "clientes.csv",
          cp1252(
            "Clientes ativos em 27/11/2026;;\r\nCódigo;Razão social;Observação\r\n" +
              "C-1;Padaria Pão Quente;cliente antigo\r\nC-2;Oficina São José;\r\nTotal: 2;;\r\n"
          )
        )
        put(
          book,
          "equipments.csv",
          cp1252("externalId;name;associatedCustomerExternalId\r\nE-1;Câmara fria;C-1\r\n")
        )
        const profileText = JSON.stringify(
          {
            resource: "customers",
            sheet: "clientes.csv",
            columns: { "Código": "externalId", "Razão social": "name", "Observação": "note" }
          },
          null,
          2
        )
        const profile = put(dir, "clientes.map.json", profileText)
        const planFile = Path.join(dir, "cliente.plan.json")
        const dry = yield* runCli(
          ["onboard", book, "--map", "customers=clientes.map.json", "--dry-run", "--plan", planFile, "--out", "ensaio"],
          sandbox,
          dir
        )
        assert.strictEqual(dry.code, 0, dry.stderr)
        const plan = JSON.parse(readFileSync(planFile, "utf8"))
        assert.strictEqual(plan.steps[0].read.map.file, profile)

        // The note is no longer sent: the rows would send other fields than the approver saw.
        writeFileSync(profile, profileText.replace(`"Observação": "note"`, `"Observação": "ignore"`))
        const out = Path.join(dir, "aplicado")
        const edited = yield* runCli(["apply", planFile, "--out", out], sandbox, dir)
        assert.strictEqual(edited.code, 2, edited.stderr)
        assert.include(edited.stderr, `${profile}: the mapping profile changed since the plan ${planFile} was made`)
        assert.include(edited.stderr, "nothing was sent")
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)
        assert.isFalse(existsSync(out))

        // The profile as planned: applied, each row as the plan said.
        writeFileSync(profile, profileText)
        const applied = yield* runCli(["apply", planFile, "--out", out], sandbox, dir)
        assert.strictEqual(applied.code, 0, applied.stderr)
        assert.deepStrictEqual(rowStatuses(readReport(Path.join(out, "customers"))), ["3:created", "4:created"])
        const customers = yield* sandbox.control.records("sandbox-key", "customers")
        assert.strictEqual(customers.find((c) => c.externalId === "C-1")!.note, "cliente antigo")
      }),
    180_000
  )
})
