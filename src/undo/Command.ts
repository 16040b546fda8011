/**
 * `undo RUN_DIR [--dry-run] [--force]`, and the `resume`/`rerun` of an undo run (the import commands hand an undo
 * run directory over to `resumeUndoCommand`/`rerunUndoCommand`). Each builds the command's one `Api` against the
 * server the undone run wrote to, progress on stderr and the stop on signals, runs the undo, prints the closing
 * table and the summary, and returns the exit code.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { connectionOptions, forceBaseUrlOption } from "../cli/ConnectionFlags.js"

import { later } from "../cli/Lazy.js"
import { type CommandDocs, exampleRun } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import { signOption } from "../evidence/Commands.js"

export const undoConfig = {
  runDir: Args.text({ name: "RUN_DIR" }).pipe(
    Args.withDescription("The run directory to undo (an import, rerun or resume), or an onboarding directory")
  ),
  dryRun: Options.boolean("dry-run").pipe(
    Options.withDescription("List what would be undone and what cannot be, row by row; write nothing")
  ),
  force: Options.boolean("force").pipe(
    Options.withDescription("Undo also the records changed on the server since the run (else reported `conflict`)")
  ),
  out: Options.text("out").pipe(
    Options.withDescription("Run directory of the undo (default runs/<UTC timestamp>-undo)"),
    Options.optional
  ),
  sign: signOption,
  json: jsonOption,
  forceBaseUrl: forceBaseUrlOption,
  connection: connectionOptions
}

export const undoCommand = Command.make(
  "undo",
  undoConfig,
  later(() => import("./Handlers.js"), (m) => m.handleUndo)
).pipe(
  Command.withDescription(
    "Undo a run: delete what it created, put back what it changed, create again what it deleted; a run of its own"
  )
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const undoDocs: CommandDocs = {
  undo: {
    examples: [
      `fsm-bulk undo ${exampleRun} --dry-run`,
      `fsm-bulk undo ${exampleRun}`,
      `fsm-bulk undo ${exampleRun} --force --json`
    ],
    doc: "docs/runs.md"
  }
}
