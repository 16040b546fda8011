#!/usr/bin/env node
/**
 * The edge: runs the CLI once with the Node platform and exits with the contract's code (0 all rows ended well,
 * 1 some did not, 2 bad usage or input, 3 aborted). A command's handler returns its own code; a failure carries
 * its code (`exitCode`, src/Errors.ts) and is printed here as one clean line, and with `--json` also as the last
 * stdout line `{exitCode, error}`.
 *
 * Before parsing, the command line is read against the model of the command tree (cli/Help.ts): `--help` prints
 * the page of the command (wrapped to the terminal, see console/Terminal.ts), and an unknown command, flag or choice
 * stops with exit 2 and the closest known name (cli/Suggest.ts, Words.ts). Colour and other escape sequences reach a stream
 * only when it is a terminal and `NO_COLOR` is not set.
 *
 * Signals: a command that listens for SIGINT/SIGTERM/SIGHUP itself (src/Signals.ts) winds down and returns its
 * code; the edge interrupts only a command that does not (exit 3). Any other signal that would end the process
 * ends it here with 3, its `.tmp` files and locks removed (src/Leftovers.ts).
 */
import "./files/ExcelSax.js" // first: mends exceljs before anything loads it
import "./HeapAtStart.js" // before the modules load: the heap's growth is set at each full collection
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { makeRunMain } from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { cli, model, modelOf } from "./Cli.js"
import { commandHelp, rootHelp } from "./cli/Help.js"
import { takeLanguage } from "./cli/Language.js"
import { docText } from "./cli/Model.js"
import { failureJson, jsonAsked } from "./cli/Output.js"
import { inSourcePositions } from "./cli/SourcePositions.js"
import { checkArguments, CommandLineError } from "./cli/Suggest.js"
import { colourOn, plain, printable, widthOf } from "./console/Terminal.js"
import type { ExitCode } from "./Errors.js"
import { setLanguage } from "./Messages.js"
import { redactKnown } from "./Secrets.js"
import { fatalSignals, stopSignals } from "./Signals.js"

const json = jsonAsked(process.argv)
// `--lang` (any command, anywhere on the line) or the environment; taken out before the command line is parsed.
const language = takeLanguage(process.argv, process.env)
if (language._tag === "Chosen") setLanguage(language.language)

/**
 * Every way a command can fail, as the command tree's own types say: our tagged errors, @effect/cli's refusals
 * and the platform's. Matched case by case below, so a new error type cannot reach the edge unplaced.
 */
type Failure = CommandLineError | Effect.Effect.Error<ReturnType<typeof cli>>

/** The contract's exit code of a failure. */
const exitCodeOf = (e: Failure): ExitCode => {
  if (ValidationError.isValidationError(e)) return 2
  switch (e._tag) {
    case "ValidationError": // a command line refused before it ran (cli/Suggest.ts)
    case "UsageError":
    case "InputError":
    case "RunError":
    case "RunStopped":
    case "ApiAborted":
    case "WriteError":
    case "FleetError":
      return e.exitCode
    // Failures that carry no code of their own: the command ended without its summary.
    case "ListFailed":
    case "SandboxError":
    case "BadArgument":
    case "SystemError":
      return 1
  }
}

const codeOf = (cause: Cause.Cause<Failure>): ExitCode => {
  if (Cause.isInterruptedOnly(cause)) return 3
  const failure = Cause.failureOption(cause)
  return Option.isNone(failure) ? 1 : exitCodeOf(failure.value)
}

/** What a failure says: its tag, reason and message, and how to continue when the error knows. */
const describe = (cause: Cause.Cause<Failure>) => {
  const failure = Cause.failureOption(cause)
  if (Cause.isInterruptedOnly(cause)) return { tag: "Interrupted", message: "interrupted" }
  if (Option.isNone(failure)) {
    return { tag: "Defect", message: Cause.pretty(cause).split("\n")[0] ?? "unexpected failure" }
  }
  const e = failure.value
  if (ValidationError.isValidationError(e)) {
    return { tag: "ValidationError", reason: e._tag, message: docText(e.error) || "invalid arguments" }
  }
  return {
    tag: e._tag,
    ...("reason" in e && typeof e.reason === "string" ? { reason: e.reason } : {}),
    message: e.message,
    ...(e._tag === "RunStopped" ? { resume: e.resume } : {})
  }
}

/** The code a command's handler returned (help and `--version` return nothing: 0). */
const returned = (value: unknown): number => (value === 0 || value === 1 || value === 2 || value === 3 ? value : 0)

/**
 * The console, without escape sequences on a stream that is not a terminal or when `NO_COLOR` is set, and without
 * secrets or foreign control characters anywhere.
 */
const plainWhereNeeded = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.console, (console) => {
    const out = colourOn(process.stdout)
    const err = colourOn(process.stderr)
    // The last guard of what is printed: no secret the process holds, no control character from outside.
    const clean = (on: boolean) => (args: ReadonlyArray<unknown>) =>
      args.map((a) => (typeof a === "string" ? printable(redactKnown(on ? a : plain(a)), on) : a))
    return Effect.withConsole(self, {
      ...console,
      log: (...args: ReadonlyArray<unknown>) => console.log(...clean(out)(args)),
      info: (...args: ReadonlyArray<unknown>) => console.info(...clean(out)(args)),
      error: (...args: ReadonlyArray<unknown>) => console.error(...clean(err)(args)),
      warn: (...args: ReadonlyArray<unknown>) => console.warn(...clean(err)(args))
    })
  })

/** Help, a mistake in the command line, or the command itself. */
type Run = ReturnType<typeof cli>
const command = Effect.suspend((): Effect.Effect<unknown, Failure, Effect.Effect.Context<Run>> => {
  if (language._tag === "Mistake") {
    return Effect.fail(new CommandLineError({ reason: "InvalidValue", message: language.message }))
  }
  // Read against the command it names only; help is drawn from the whole tree.
  const checked = checkArguments(modelOf(process.argv[2]), process.argv.slice(2))
  switch (checked._tag) {
    case "Help": {
      const page = { width: widthOf(process.stdout), colour: colourOn(process.stdout) }
      const asked = checkArguments(model(), process.argv.slice(2))
      const text = asked._tag === "Help" && asked.command !== undefined
        ? commandHelp(model(), asked.command, page)
        : rootHelp(model(), page)
      return Effect.as(Effect.sync(() => process.stdout.write(text)), 0)
    }
    case "Mistake":
      return Effect.fail(new CommandLineError({ reason: checked.reason, message: checked.message }))
    case "Version": // `-v`, as most tools take it; @effect/cli knows only `--version`
      return cli([...process.argv.slice(0, 2), "--version"])
    case "Parse":
      return cli(process.argv)
  }
})

const main = command.pipe(
  Effect.map((value: unknown) => returned(value)),
  // onError, not tapErrorCause: it also runs when a signal interrupts the command.
  Effect.onError((cause) =>
    Effect.gen(function*() {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure)) {
        const e = failure.value
        if (ValidationError.isValidationError(e)) {
          // @effect/cli printed what is wrong; say where the usage is.
          const name = modelOf(process.argv[2]).commands.find((c) => c.name === process.argv[2])?.name
          yield* Console.error(`fsm-bulk: run \`fsm-bulk${name === undefined ? "" : ` ${name}`} --help\` for its usage`)
        } else yield* Console.error(`fsm-bulk: ${e.message}`)
      } else if (Cause.isInterruptedOnly(cause)) yield* Console.error("fsm-bulk: interrupted")
      else yield* Console.error(`fsm-bulk: unexpected failure\n${inSourcePositions(Cause.pretty(cause))}`)
      if (json) yield* Console.log(failureJson(codeOf(cause), describe(cause)))
    })
  ),
  plainWhereNeeded,
  Effect.provide(NodeContext.layer),
  // Every ending is its exit code here; what reaches the teardown otherwise is an interruption from outside.
  Effect.catchAllCause((cause) => Effect.succeed(codeOf(cause)))
)

/** NodeRuntime.runMain, except that a signal a command handles itself is left to it. */
const runMain = makeRunMain(({ fiber, teardown }) => {
  const keepAlive = setInterval(() => undefined, 2 ** 31 - 1)
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    signalled = true
    if (process.listenerCount(signal) > 1) return // the command stops cleanly and returns its own code
    for (const s of stopSignals) process.removeListener(s, onSignal)
    fiber.unsafeInterruptAsFork(fiber.id())
  }
  const onFatal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopped at once\n`)
    process.exit(3)
  }
  for (const s of stopSignals) process.on(s, onSignal)
  for (const s of fatalSignals) {
    try {
      process.on(s, onFatal)
    } catch {
      // not a signal of this platform
    }
  }
  fiber.addObserver((exit) => {
    for (const s of stopSignals) process.removeListener(s, onSignal)
    for (const s of fatalSignals) process.removeListener(s, onFatal)
    clearInterval(keepAlive)
    teardown(exit, (code) => {
      if (signalled || code !== 0) process.exit(code)
    })
  })
})

runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? returned(exit.value) : 3)
})
