#!/usr/bin/env node
/**
 * The edge: runs the CLI once with the Node platform, and turns the outcome into the contract's exit codes
 * (0 all rows ended well, 1 some did not, 2 bad usage or input, 3 aborted). Commands set their own 0/1 through
 * `process.exitCode`, also after a clean stop on a signal; failures of a whole command are printed here as one
 * clean line.
 */
import "./files/ExcelSax.js" // first: mends exceljs before anything loads it
import { ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Exit, Option } from "effect"
import { cli } from "./Cli.js"

const exitCodeOf = (error: unknown): number => {
  if (ValidationError.isValidationError(error)) return 2
  const tag = (error as { readonly _tag?: string } | null)?._tag
  switch (tag) {
    case "UsageError":
    case "InputError":
    case "RunError":
      return 2
    case "ApiAborted":
    case "WriteError": // a journal or report that cannot be written stops the run; what was written stays usable
      return 3
    default:
      return 1
  }
}

/**
 * A command that stopped cleanly on a signal (see cli/Signals.ts) has set its own exit code; the runtime still
 * reports the signal as an interruption of the main fiber.
 */
const stoppedCleanly = () => typeof process.exitCode === "number"

const main = Effect.suspend(() => cli(process.argv)).pipe(
  // onError, not tapErrorCause: it also runs when a signal interrupts the command.
  Effect.onError((cause) => {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return Effect.void // already printed by @effect/cli
    if (Option.isSome(failure)) return Console.error(`fsm-bulk: ${(failure.value as { message?: string }).message ?? String(failure.value)}`)
    if (Cause.isInterruptedOnly(cause)) return stoppedCleanly() ? Effect.void : Console.error("fsm-bulk: interrupted")
    return Console.error(`fsm-bulk: unexpected failure\n${Cause.pretty(cause)}`)
  }),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(typeof process.exitCode === "number" ? process.exitCode : 0)
    if (Cause.isInterruptedOnly(exit.cause)) return onExit(stoppedCleanly() ? Number(process.exitCode) : 3)
    const failure = Cause.failureOption(exit.cause)
    onExit(Option.isSome(failure) ? exitCodeOf(failure.value) : 1)
  }
})
