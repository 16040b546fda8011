/**
 * The command tree. Each command lives beside the pipeline it drives and is only listed here.
 */
import { Command } from "@effect/cli"
import { sandboxCommand } from "./sandbox/Command.js"

export const root = Command.make("fsm-bulk").pipe(
  Command.withDescription("Bulk import, export and onboarding for the Field-Service Management API v2, with a local sandbox"),
  Command.withSubcommands([
    sandboxCommand
  ])
)

export const cli = Command.run(root, { name: "fsm-bulk", version: "0.1.0" })
