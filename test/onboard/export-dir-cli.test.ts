/**
 * An export's folder fed to `onboard` as it is (issue 27): the read-only lists it holds are skipped and named once,
 * in one line and in summary.json's `readOnly`; into another server's empty account the records are created by
 * their keys, the references pointing at the new account's records (the export's ids are never used there); into
 * the account it came from nothing changes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { resource } from "../../src/Resources.js"
import { accountA, cliEnv, runCli, startTestSandbox, tempDir } from "../export/support.js"
import { exampleWorkbook, readJson, readReport, recordSteps } from "./support.js"

const readOnlyLists = [
  "customer-group-clients",
  "deleted-tasks",
  "gps-positions",
  "questionnaires",
  "quotations",
  "satisfaction-surveys",
  "team-users",
  "ticket-request-types"
]

const taskItems = ["task-products", "task-services", "task-additional-costs"] as const

/** The paths of the PUTs on a task's items among `log`. */
const itemPuts = (log: ReadonlyArray<{ readonly method: string; readonly path: string }>) =>
  log.filter((e) => e.method === "PUT" && /\/tasks\/[^/]+\/(products|services|additional-costs)$/.test(e.path))
    .map((e) => e.path)

/** How many items of each kind every task holds, by the task's externalId. */
const taskItemsOf = (sandbox: { readonly control: { readonly records: (key: string, name: "tasks") => any } }) =>
  Effect.map(
    sandbox.control.records(accountA.apiKey, "tasks") as Effect.Effect<ReadonlyArray<Record<string, any>>>,
    (tasks) =>
      tasks.map((t) => ({
        task: String(t.externalId),
        count: [t.products, t.services, t.additionalCosts].map((l) => (Array.isArray(l) ? l.length : 0))
      })).sort((a, b) => a.task.localeCompare(b.task))
  )

/** `text` (a CSV an export wrote) with the cell of data row `row` (1 = first) in `column` set to `value`. */
const editCell = (text: string, row: number, column: string, value: string) => {
  const lines = text.split(/\r?\n/)
  const delimiter = lines[0]!.includes(";") ? ";" : ","
  const header = lines[0]!.replace(/^\uFEFF/, "").split(delimiter).map((h) => h.replace(/^"|"$/g, ""))
  const at = header.indexOf(column)
  assert.isAtLeast(at, 0, `${column} in ${header.join(delimiter)}`)
  const cells = lines[row]!.split(delimiter)
  assert.strictEqual(cells.length, header.length, lines[row])
  cells[at] = value
  lines[row] = cells.join(delimiter)
  return { text: lines.join(text.includes("\r\n") ? "\r\n" : "\n") }
}

describe("onboard EXPORT_DIR", () => {
  it.scopedLive(
    "skips the read-only lists, creates by key in another account, leaves the same account unchanged",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const source = yield* startTestSandbox()
        const target = yield* startTestSandbox()
        const cli = (args: ReadonlyArray<string>, sandbox: typeof source) =>
          Effect.promise(() => runCli([...args, "--json"], cliEnv(sandbox, accountA)))

        const seeded = yield* cli(["onboard", exampleWorkbook, "--out", Path.join(dir, "seed")], source)
        assert.strictEqual(seeded.code, 0, seeded.stderr)
        const exportDir = Path.join(dir, "export")
        const exported = yield* cli(["export", "--out", exportDir], source)
        assert.strictEqual(exported.code, 0, exported.stderr)
        for (const name of readOnlyLists) assert.strictEqual(resource(name as never).kind, "readonly", name)

        // Into another server's empty account.
        const into = Path.join(dir, "into-target")
        const run = yield* cli(["onboard", exportDir, "--out", into], target)
        assert.strictEqual(run.code, 0, run.stderr)
        // The export is another server's: said once for the onboarding, not once per step.
        const origin = run.stderr.split("\n").filter((l) => l.includes("are not checked for edits"))
        assert.strictEqual(origin.length, 1, origin.join("\n"))
        assert.include(origin[0], `were exported from ${source.url}`)
        const named = run.stderr.split("\n").filter((l) => l.includes("read-only lists"))
        assert.deepStrictEqual(named, [
          `  8 files of read-only lists, not imported (the API cannot write them): ${readOnlyLists.join(", ")}`
        ])
        const summary = readJson(Path.join(into, "summary.json"))
        assert.deepStrictEqual(summary.readOnly, readOnlyLists)
        // report.html says what the terminal said of them.
        assert.include(
          Fs.readFileSync(Path.join(into, "report.html"), "utf8"),
          `<p class="muted" data-figure="readOnlySheets">8 files of read-only lists, not imported (the API cannot write them): ${
            readOnlyLists.join(", ")
          }</p>`
        )
        assert.strictEqual(summary.exitCode, 0)
        for (const name of recordSteps) {
          const statuses = new Set(readReport(Path.join(into, name)).map((r) => r._status))
          // Task types are the sandbox's own, the same in every account: found, not created.
          assert.deepStrictEqual([...statuses], name === "task-types" ? ["unchanged"] : ["created"], name)
          const here = yield* target.control.records(accountA.apiKey, name)
          const there = yield* source.control.records(accountA.apiKey, name)
          assert.strictEqual(here.length, there.length, name)
        }
        // References point at the target's records, found by key: each task's customer and users are the ones with
        // the keys the source's task named.
        // Users read back with `userID`, customers with `id`.
        const byId = (rows: ReadonlyArray<Record<string, unknown>>, id: string) =>
          new Map(rows.map((r) => [String(r[id]), r]))
        const sourceCustomers = byId(yield* source.control.records(accountA.apiKey, "customers"), "id")
        const targetCustomers = byId(yield* target.control.records(accountA.apiKey, "customers"), "id")
        const sourceUsers = byId(yield* source.control.records(accountA.apiKey, "users"), "userID")
        const targetUsers = byId(yield* target.control.records(accountA.apiKey, "users"), "userID")
        const targetTasks = new Map(
          (yield* target.control.records(accountA.apiKey, "tasks")).map((t) => [String(t.externalId), t])
        )
        const sourceTasks = yield* source.control.records(accountA.apiKey, "tasks")
        assert.isAbove(sourceTasks.length, 0)
        for (const task of sourceTasks) {
          const copy = targetTasks.get(String(task.externalId))
          assert.isDefined(copy, String(task.externalId))
          assert.strictEqual(
            targetCustomers.get(String(copy!.customerId))?.externalId,
            sourceCustomers.get(String(task.customerId))?.externalId,
            `${String(task.externalId)}: customer`
          )
          assert.strictEqual(
            targetUsers.get(String(copy!.idUserTo))?.login,
            sourceUsers.get(String(task.idUserTo))?.login,
            `${String(task.externalId)}: user`
          )
        }

        // Into the account it was exported from: every record step unchanged, nothing created.
        // The tasks' items too: each task is read once, and an item the task holds as the file gives it is not sent.
        const back = Path.join(dir, "into-source")
        const before = (yield* source.control.requests).length
        const again = yield* cli(["onboard", exportDir, "--out", back], source)
        assert.strictEqual(again.code, 0, again.stderr)
        for (const name of [...recordSteps, ...taskItems]) {
          const statuses = new Set(readReport(Path.join(back, name)).map((r) => r._status))
          assert.deepStrictEqual([...statuses], ["unchanged"], name)
        }
        const counts = readJson(Path.join(back, "summary.json")).counts
        assert.strictEqual(counts.created ?? 0, 0)
        assert.strictEqual(counts.updated ?? 0, 0)
        assert.deepStrictEqual(itemPuts((yield* source.control.requests).slice(before)), [])
        const itemsBefore = yield* taskItemsOf(source)

        // One item changed in the file: that item alone is sent, and reads `updated`.
        const file = Path.join(exportDir, "task-products.csv")
        const edited = editCell(Fs.readFileSync(file, "utf8"), 1, "quantity", "97")
        Fs.writeFileSync(file, edited.text)
        const changed = Path.join(dir, "changed")
        const sinceChange = (yield* source.control.requests).length
        const third = yield* cli(["onboard", exportDir, "--out", changed], source)
        assert.strictEqual(third.code, 0, third.stderr)
        const products = readReport(Path.join(changed, "task-products"))
        assert.deepStrictEqual(
          products.filter((r) => r._status !== "unchanged").map((r) => r._status),
          ["updated"]
        )
        for (const name of ["task-services", "task-additional-costs"] as const) {
          assert.deepStrictEqual([...new Set(readReport(Path.join(changed, name)).map((r) => r._status))], [
            "unchanged"
          ], name)
        }
        const puts = itemPuts((yield* source.control.requests).slice(sinceChange))
        assert.deepStrictEqual(puts.map((p) => p.replace(/\/tasks\/[^/]+\//, "/tasks/{id}/")), [
          "/v2/tasks/{id}/products"
        ])
        // No item was added: the same items, one quantity changed.
        const itemsAfter = yield* taskItemsOf(source)
        assert.deepStrictEqual(itemsAfter.map((t) => t.count), itemsBefore.map((t) => t.count))
      }),
    { timeout: 240_000 }
  )
})
