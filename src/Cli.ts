/**
 * The command tree. Each command lives beside the pipeline it drives and is only listed here.
 */
import { Command } from "@effect/cli"
import { exportCommand, verifyCommand } from "./export/Commands.js"
import { importCommand, rerunCommand, resumeCommand, validateCommand } from "./import/Commands.js"
import { demoCommand, onboardCommand } from "./onboard/Commands.js"
import { reportCommand } from "./report/Command.js"
import { sandboxCommand } from "./sandbox/Command.js"
import { templateCommand } from "./template/Command.js"
import { undoCommand } from "./undo/Command.js"
import { version } from "./Version.js"

export const root = Command.make("fsm-bulk").pipe(
  Command.withDescription(
    "Bulk import, export and onboarding for the Field-Service Management API v2, with a local sandbox"
  ),
  Command.withSubcommands([
    sandboxCommand,
    templateCommand,
    validateCommand,
    importCommand,
    rerunCommand,
    resumeCommand,
    undoCommand,
    onboardCommand,
    demoCommand,
    exportCommand,
    verifyCommand,
    reportCommand
  ])
)

export const cli = Command.run(root, { name: "fsm-bulk", version })
