#!/usr/bin/env node
/**
 * The edge: runs the CLI once with the Node platform and exits with the contract's code (0 all rows ended well,
 * 1 some did not, 2 bad usage or input, 3 aborted). A command's handler returns its own code; a failure carries
 * its code (`exitCode`, src/Errors.ts) and is printed here as one clean line, and with `--json` also as the last
 * stdout line `{exitCode, error}`.
 *
 * Signals: a command that listens for SIGINT/SIGTERM itself (src/Signals.ts) winds down and returns its code;
 * the edge interrupts only a command that does not (exit 3).
 */
import "./files/ExcelSax.js" // first: mends exceljs before anything loads it
import { ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { makeRunMain } from "@effect/platform/Runtime"
import { Cause, Console, Effect, Exit, Option } from "effect"
import { cli } from "./Cli.js"
import { failureJson, jsonAsked } from "./cli/Output.js"
import { exitCodeOf } from "./Errors.js"

const json = jsonAsked(process.argv)

const codeOf = (cause: Cause.Cause<unknown>): number => {
  if (Cause.isInterruptedOnly(cause)) return 3
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return 1
  return ValidationError.isValidationError(failure.value) ? 2 : exitCodeOf(failure.value)
}

/** What a failure says: its tag, reason and message, and how to continue when the error knows. */
const describe = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.failureOption(cause)
  if (Cause.isInterruptedOnly(cause)) return { tag: "Interrupted", message: "interrupted" }
  if (Option.isNone(failure)) {
    return { tag: "Defect", message: Cause.pretty(cause).split("\n")[0] ?? "unexpected failure" }
  }
  const e = failure.value as {
    readonly _tag?: string
    readonly reason?: unknown
    readonly message?: string
    readonly resume?: unknown
  }
  if (ValidationError.isValidationError(e)) {
    return { tag: "ValidationError", reason: e._tag, message: "invalid arguments (see the usage printed above)" }
  }
  return {
    tag: e._tag ?? "Error",
    ...(typeof e.reason === "string" ? { reason: e.reason } : {}),
    message: e.message ?? String(e),
    ...(typeof e.resume === "string" ? { resume: e.resume } : {})
  }
}

/** The code a command's handler returned (help and `--version` return nothing: 0). */
const returned = (value: unknown): number => (value === 0 || value === 1 || value === 2 || value === 3 ? value : 0)

const main = Effect.suspend(() => cli(process.argv)).pipe(
  Effect.map((value: unknown) => returned(value)),
  // onError, not tapErrorCause: it also runs when a signal interrupts the command.
  Effect.onError((cause) =>
    Effect.gen(function*() {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) {
        // @effect/cli printed the usage already.
      } else if (Option.isSome(failure)) {
        yield* Console.error(`fsm-bulk: ${(failure.value as { message?: string }).message ?? String(failure.value)}`)
      } else if (Cause.isInterruptedOnly(cause)) yield* Console.error("fsm-bulk: interrupted")
      else yield* Console.error(`fsm-bulk: unexpected failure\n${Cause.pretty(cause)}`)
      if (json) yield* Console.log(failureJson(codeOf(cause), describe(cause)))
    })
  ),
  Effect.provide(NodeContext.layer)
)

/** NodeRuntime.runMain, except that a signal a command handles itself is left to it. */
const runMain = makeRunMain(({ fiber, teardown }) => {
  const keepAlive = setInterval(() => undefined, 2 ** 31 - 1)
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    signalled = true
    if (process.listenerCount(signal) > 1) return // the command stops cleanly and returns its own code
    process.removeListener("SIGINT", onSignal)
    process.removeListener("SIGTERM", onSignal)
    fiber.unsafeInterruptAsFork(fiber.id())
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
  fiber.addObserver((exit) => {
    process.removeListener("SIGINT", onSignal)
    process.removeListener("SIGTERM", onSignal)
    clearInterval(keepAlive)
    teardown(exit, (code) => {
      if (signalled || code !== 0) process.exit(code)
    })
  })
})

runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? returned(exit.value) : codeOf(exit.cause))
})
