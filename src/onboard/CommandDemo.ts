/**
 * `fsm-bulk demo` (what `npm start` runs): the example company onboarded from `templates/example-onboarding.xlsx`
 * with `--verify` (the embedded sandbox answers questionnaires after a short delay), everything exported to
 * `<run dir>/export`, the export verified, and a short account of where the reports and files are.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as Path from "node:path"
import type { ConnectionOptions } from "../cli/Connection.js"
import { say, stopAfterApiRequests } from "../console/Output.js"
import { type ExportResult, prepareExport, runExport } from "../export/Export.js"
import { runVerify, type VerifyResult } from "../export/Verify.js"
import { withOnboardApi } from "./CommandRun.js"
import { exampleDir, exampleWorkbookFile } from "./Example.js"
import { type OnboardResult, prepareOnboarding, runOnboarding } from "./Onboard.js"

interface DemoRequest {
  readonly runDir: string
  /** How long the embedded sandbox takes to show a questionnaire answer on its task. */
  readonly answerDelayMs: number
  readonly answerWaitMs: number
  readonly connection: ConnectionOptions
}

export interface DemoResult {
  readonly onboarding: OnboardResult
  readonly exported: ExportResult | undefined
  readonly verified: VerifyResult | undefined
  readonly exportDir: string
  /** What was onboarded: the example workbook, or its CSV directory when the workbook is missing. */
  readonly input: string
  /** 0 onboarding, export and verify all went well; 1 otherwise; 3 stopped. */
  readonly exitCode: number
}

export const runDemo = Effect.fn("Demo.run")(function*(
  request: DemoRequest,
  /** Tells the user how it went; runs inside the shielded run, so a stop signal cannot cut it short. */
  report: (result: DemoResult) => Effect.Effect<void>
) {
  const input = fs.existsSync(exampleWorkbookFile) ? exampleWorkbookFile : exampleDir
  if (input !== exampleWorkbookFile) {
    yield* say(
      `demo: ${exampleWorkbookFile} is missing (rebuild it with \`fsm-bulk template --example\`); onboarding the CSV files of ${exampleDir} instead`
    )
  }
  const prepared = yield* prepareOnboarding({
    command: "demo",
    input,
    runDir: request.runDir,
    dryRun: false,
    verify: true,
    answerWaitMs: request.answerWaitMs,
    answerPollMs: 10_000,
    read: { encoding: "auto", delimiter: "auto" },
    dateFormat: "auto",
    decimal: "auto"
  })
  const exportDir = Path.join(prepared.runDir, "export")
  const preparedExport = yield* prepareExport({
    resources: [],
    out: exportDir,
    format: "csv",
    since: undefined,
    until: undefined,
    say
  })

  return yield* withOnboardApi(request.connection, prepared.runDir, {
    sandbox: { answerDelayMs: request.answerDelayMs }
  }, (embedded) =>
    Effect.gen(function*() {
      // The embedded sandbox shows answers after `answerDelayMs`: read the tasks again about twice as often.
      const answerPollMs = Option.isSome(embedded)
        ? Math.min(10_000, Math.max(100, Math.round(request.answerDelayMs / 2)))
        : 10_000
      if (Option.isNone(embedded)) {
        yield* say(
          `demo: onboarding the example company into the account at ${
            request.connection.baseUrl.pipe(Option.getOrElse(() => ""))
          }`
        )
      }
      const onboarding = yield* runOnboarding({ ...prepared, request: { ...prepared.request, answerPollMs } })
      if (onboarding.interrupted) {
        const stopped: DemoResult = {
          onboarding,
          exported: undefined,
          verified: undefined,
          exportDir,
          input,
          exitCode: 3
        }
        yield* report(stopped)
        return stopped
      }
      yield* say(`demo: exporting everything the account holds to ${exportDir}`)
      const exported = yield* runExport(preparedExport)
      const verified = yield* runVerify(exportDir)
      const result: DemoResult = {
        onboarding,
        exported,
        verified,
        exportDir,
        input,
        exitCode: onboarding.exitCode === 0 && verified.ok ? 0 : 1
      }
      yield* report(result)
      return result
    }).pipe(stopAfterApiRequests(() => "fsm-bulk demo")))
})
