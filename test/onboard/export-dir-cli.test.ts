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
        const back = Path.join(dir, "into-source")
        const again = yield* cli(["onboard", exportDir, "--out", back], source)
        assert.strictEqual(again.code, 0, again.stderr)
        for (const name of recordSteps) {
          const statuses = new Set(readReport(Path.join(back, name)).map((r) => r._status))
          assert.deepStrictEqual([...statuses], ["unchanged"], name)
        }
        assert.strictEqual(readJson(Path.join(back, "summary.json")).counts.created ?? 0, 0)
      }),
    { timeout: 240_000 }
  )
})
