/**
 * An import run works with the services its caller provides (`src/import/Services.ts`), never with defaults of its
 * own: a journal kept in memory instead of the file, its lines and progress recorded, a dry run's plan handed over
 * instead of written. What the CLI, an onboarding and a fleet worker swap, shown with recording ones.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { Notices } from "../../src/console/Output.js"
import { RunProgress } from "../../src/console/Progress.js"
import type { JournalWriter } from "../../src/import/Journal.js"
import type { PlanFile } from "../../src/import/Plan.js"
import { Journals, PlanSink } from "../../src/import/Services.js"
import { cp1252, importWith, put, readReport, startTestSandbox, tempDir } from "./support.js"

/** Services that record what the run hands them. */
const recording = () => {
  const journal: Array<Parameters<JournalWriter["append"]>[0]> = []
  const opened: Array<string> = []
  const said: Array<string> = []
  const progress: Array<string> = []
  const plans: Array<PlanFile> = []
  const layer = Layer.mergeAll(
    Layer.succeed(Journals, {
      open: (path) =>
        Effect.sync(() => {
          opened.push(path)
          return { path, append: (line) => Effect.sync(() => void journal.push(line)) } satisfies JournalWriter
        })
    }),
    Notices.to((line) => Effect.sync(() => void said.push(line))),
    Layer.succeed(RunProgress, {
      begin: (total, done) => Effect.sync(() => void progress.push(`begin ${total} ${done}`)),
      row: Effect.sync(() => void progress.push("row")),
      end: Effect.sync(() => void progress.push("end"))
    }),
    PlanSink.handOver((content) => Effect.sync(() => void plans.push(content)))
  )
  return { journal, opened, said, progress, plans, layer }
}

// A customer's sheet: Windows-1252, `;`, a column that is no field (`Vendedor`, never sent).
const clientes = cp1252("externalId;name;Vendedor\r\nC-1;Padaria São João;Ana\r\nC-2;Açougue Boa Vista;Bia\r\n")

describe("an import run's services", () => {
  it.scopedLive("are the caller's: journal lines, messages and progress go to them, nothing to the defaults", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const runDir = Path.join(dir, "run")
      const r = recording()
      const result = yield* importWith(
        sandbox,
        { resource: "customers", file: put(dir, "clientes.csv", clientes), runDir, mode: "create" },
        r.layer
      )
      assert.strictEqual(result.exitCode, 0)
      assert.deepStrictEqual(r.opened, [Path.join(runDir, "journal.ndjson")])
      assert.isFalse(existsSync(Path.join(runDir, "journal.ndjson")), "the journal went to the caller's service")
      assert.strictEqual(r.journal[0]!.state, "header")
      const done = r.journal.filter((l) => l.state === "done")
      assert.deepStrictEqual(done.map((l) => [l.row, l.status]), [[2, "created"], [3, "created"]])
      assert.isTrue(r.said.some((l) => l.startsWith("warning: ") && l.includes("Vendedor")), r.said.join("\n"))
      assert.deepStrictEqual(r.progress, ["begin 2 0", "row", "row", "end"])
      assert.deepStrictEqual(readReport(runDir).map((row) => row._status), ["created", "created"])
      assert.lengthOf(yield* sandbox.control.records("sandbox-key", "customers"), 2)
    }))

  it.scopedLive("a dry run's plan goes to the caller's sink: no plan file, no line naming one", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const planOut = Path.join(dir, "plan.json")
      const r = recording()
      const result = yield* importWith(sandbox, {
        resource: "customers",
        file: put(dir, "clientes.csv", clientes),
        runDir: Path.join(dir, "run"),
        dryRun: true,
        planOut
      }, r.layer)
      assert.strictEqual(result.exitCode, 0)
      assert.lengthOf(r.plans, 1)
      assert.deepStrictEqual(r.plans[0]!.plan.map((p) => [p.row, p.status]), [[2, "created"], [3, "created"]])
      assert.isFalse(existsSync(planOut))
      assert.isFalse(r.said.some((l) => l.startsWith("plan: ")), r.said.join("\n"))
      assert.lengthOf(yield* sandbox.control.records("sandbox-key", "customers"), 0)
    }))
})
