/**
 * `fsm-bulk report RUN_DIR`: writes a run directory's `report.html` again (runs write it at their end; this serves
 * runs of older versions, and pages lost or deleted).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import { later } from "../cli/Lazy.js"
import { type CommandDocs, exampleRun } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"

export const reportConfig = {
  dir: Args.directory({ name: "run-dir", exists: "yes" }).pipe(
    Args.withDescription("A run directory (import, rerun, resume, validate or onboard)")
  ),
  json: jsonOption
}

export const reportCommand = Command.make(
  "report",
  reportConfig,
  later(() => import("./Handlers.js"), (m) => m.handleReport)
).pipe(
  Command.withDescription(
    "Write report.html for a run directory: counts, errors by kind, sends per minute, slowest rows"
  )
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const reportDocs: CommandDocs = {
  report: { examples: [`fsm-bulk report ${exampleRun}`, `fsm-bulk report ${exampleRun} --json`], doc: "docs/runs.md" }
}
