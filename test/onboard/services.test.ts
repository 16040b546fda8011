/**
 * An onboarding works with the services its caller provides, as an import run does: its lines go to `Notices`
 * (each step's named by its resource), each step's progress line comes from `StepProgress` with the step's label,
 * `SummaryCopies` is told of every summary written, and `RunStop` stops it between steps. What the CLI
 * (`onboard/CommandRun.ts`) and a fleet worker (`fleet/Whole.ts`) swap, shown with recording ones.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { Notices } from "../../src/console/Output.js"
import { StepProgress } from "../../src/console/Progress.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { prepareOnboarding, runOnboarding } from "../../src/onboard/Onboard.js"
import { type OnboardSummary, SummaryCopies } from "../../src/onboard/Summary.js"
import { RunStop } from "../../src/Signals.js"
import { apiOf as importApiOf } from "../import/support.js"
import { apiOf, put, readJson, request, startTestSandbox, tempDir, writes } from "./support.js"

/** Two steps: a segment, then a customer of it (`;`, Portuguese text). */
const twoSteps = (dir: string) => {
  const input = Path.join(dir, "input")
  mkdirSync(input)
  put(input, "segments.csv", "description\nVarejo\n")
  put(input, "customers.csv", "externalId;name;segmentDescription\nCLI-1;Padaria São João;Varejo\n")
  return input
}

describe("an onboarding's services", () => {
  it.scopedLive(
    "are the caller's: step lines, each step's progress and every summary go to them",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const runDir = Path.join(dir, "run")
        const said: Array<string> = []
        const progress: Array<string> = []
        const copies: Array<OnboardSummary> = []
        const services = Layer.mergeAll(
          Notices.to((line) => Effect.sync(() => void said.push(line))),
          Layer.succeed(StepProgress, {
            step: (label) =>
              Effect.acquireRelease(
                Effect.sync(() => {
                  progress.push(`open ${label}`)
                  return {
                    begin: (total: number) => Effect.sync(() => void progress.push(`${label} begin ${total}`)),
                    row: Effect.sync(() => void progress.push(`${label} row`)),
                    end: Effect.void
                  }
                }),
                () => Effect.sync(() => void progress.push(`close ${label}`))
              )
          }),
          SummaryCopies.to((summary) => Effect.sync(() => void copies.push(JSON.parse(JSON.stringify(summary)))))
        )
        const result = yield* prepareOnboarding(request({ input: twoSteps(dir), runDir })).pipe(
          Effect.flatMap(runOnboarding),
          Effect.provide(services),
          Effect.provide(apiOf(sandbox))
        )
        assert.strictEqual(result.exitCode, 0, said.join("\n"))
        assert.deepStrictEqual(progress, [
          "open [1/2] segments",
          "[1/2] segments begin 1",
          "[1/2] segments row",
          "close [1/2] segments",
          "open [2/2] customers",
          "[2/2] customers begin 1",
          "[2/2] customers row",
          "close [2/2] customers"
        ])
        assert.deepStrictEqual(said.filter((l) => /^\[\d\/2\]/.test(l)).map((l) => l.slice(0, 16)), [
          "[1/2] segments  ",
          "[2/2] customers "
        ])
        // Before the first step, after each step, and the last one: the file on disk is the last copy.
        assert.deepStrictEqual(copies.map((c) => c.steps.length), [0, 1, 2, 2])
        assert.deepStrictEqual(copies.map((c) => c.finished === null), [true, true, true, false])
        assert.deepStrictEqual(readJson(Path.join(runDir, "summary.json")), copies[3])
      }),
    60_000
  )

  it.scopedLive(
    "stops between steps when its RunStop says so: the next step is not started",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const runDir = Path.join(dir, "run")
        const stop = yield* Deferred.make<void>()
        // A stop asked for as the first step's line is printed (Ctrl-C between two steps).
        const services = Layer.mergeAll(
          Notices.to((line) => line.startsWith("[1/2] segments") ? Deferred.succeed(stop, undefined) : Effect.void),
          RunStop.when(Deferred.await(stop))
        )
        const result = yield* prepareOnboarding(request({ input: twoSteps(dir), runDir })).pipe(
          Effect.flatMap(runOnboarding),
          Effect.provide(services),
          Effect.provide(apiOf(sandbox))
        )
        assert.strictEqual(result.exitCode, 3)
        assert.isTrue(result.interrupted)
        assert.deepStrictEqual(result.summary.steps.map((s) => s.resource), ["segments"])
        assert.deepStrictEqual(result.summary.notRun, ["customers"])
        const apiKey = sandbox.accounts[0]!.apiKey
        assert.deepStrictEqual(yield* sandbox.control.records(apiKey, "customers"), [])
        assert.deepStrictEqual(
          writes(yield* sandbox.control.requests).map((w) => w.path.replace(/\/\d+$/, "")),
          ["/v2/segments"]
        )
      }),
    60_000
  )

  it.scopedLive(
    "say the note of files exported from another account once for the onboarding, not once per step",
    () =>
      Effect.gen(function*() {
        const a = { apiKey: "conta-a", apiToken: "token-a" }
        const b = { apiKey: "conta-b", apiToken: "token-b" }
        const sandbox = yield* startTestSandbox({ accounts: [a, b] })
        const dir = yield* tempDir
        // Account A's segment and customer, exported: a folder of two steps that names A as its account.
        yield* prepareOnboarding(request({ input: twoSteps(dir), runDir: Path.join(dir, "into-a") })).pipe(
          Effect.flatMap(runOnboarding),
          Effect.provide(Notices.none),
          Effect.provide(importApiOf(sandbox, a.apiKey))
        )
        const out = Path.join(dir, "export-a")
        yield* Effect.flatMap(
          prepareExport({
            resources: ["segments", "customers"],
            out,
            format: "csv",
            since: undefined,
            until: undefined,
            say: () => Effect.void
          }),
          runExport
        ).pipe(Effect.provide(importApiOf(sandbox, a.apiKey)), Effect.provide(NodeContext.layer))
        const said: Array<string> = []
        const result = yield* prepareOnboarding(request({ input: out, runDir: Path.join(dir, "into-b") })).pipe(
          Effect.flatMap(runOnboarding),
          Effect.provide(Notices.to((line) => Effect.sync(() => void said.push(line)))),
          Effect.provide(importApiOf(sandbox, b.apiKey))
        )
        assert.strictEqual(result.exitCode, 0, said.join("\n"))
        assert.deepStrictEqual(result.summary.steps.map((s) => s.resource), ["segments", "customers"])
        const notes = said.filter((l) => /note: the files were exported from another account/.test(l))
        assert.strictEqual(notes.length, 1, said.join("\n"))
        assert.match(notes[0]!, /^segments: /)
        assert.isFalse(said.some((l) => /note: \S+ was exported/.test(l)), said.join("\n"))
      }),
    60_000
  )
})
