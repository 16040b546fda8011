/**
 * What commands print and the exit code they end with. Human messages and progress go to stderr; with `--json`
 * the last stdout line is one JSON object: the command's summary, or `{exitCode, error}` (printed by the edge)
 * when the command failed before producing one. Nothing here ever prints a secret: callers pass redacted values.
 * A command's handler returns its exit code as its value; the edge (bin.ts) exits with it.
 */
import { Options } from "@effect/cli"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { Api } from "../client/Api.js"
import { RunStopped } from "../Errors.js"
import { WriteError } from "../files/Write.js"

export const jsonOption = Options.boolean("json").pipe(
  Options.withDescription("Print the command's summary as one JSON object on the last line of stdout")
)

export type { ExitCode } from "../Errors.js"

/** A line for the human, on stderr. */
export const say = (line: string) => Console.error(line)

/** The command's summary: a JSON line on stdout with `--json`, otherwise the human lines on stderr. */
export const summary = (json: boolean, value: object, human: ReadonlyArray<string>) =>
  json ? Console.log(JSON.stringify(value)) : Effect.forEach(human, (l) => Console.error(l), { discard: true })

/**
 * A file that cannot be written (journal, report, summary, export file) after `requests` were sent stops the run
 * with exit 3 and says how to continue (`resume`: e.g. "fsm-bulk resume runs/…"); before any request it stays
 * what it is (exit 2: nothing happened).
 */
export const stopAfterSending =
  (requests: Effect.Effect<number>, resume: () => string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | RunStopped, R> =>
    Effect.catchAll(self, (e) =>
      e instanceof WriteError
        ? Effect.flatMap(requests, (sent): Effect.Effect<never, E | RunStopped> =>
          sent === 0
            ? Effect.fail(e)
            : Effect.fail(
              new RunStopped({
                reason: "WriteFailed",
                message: `${e.message}; the run stopped after ${sent} request${
                  sent === 1 ? "" : "s"
                }: what was sent is in the journal, continue with \`${resume()}\` once that is fixed`,
                resume: resume(),
                cause: e
              })
            ))
        : Effect.fail(e))

/** `stopAfterSending` with the requests the command's `Api` has sent. */
export const stopAfterApiRequests = (resume: () => string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Api, (api) => stopAfterSending(Effect.map(api.stats, (s) => s.requests), resume)(self))

/** `--json` was asked: read from the arguments themselves, so it is known even when the flags fail to parse. */
export const jsonAsked = (argv: ReadonlyArray<string>): boolean => {
  const args = argv.slice(2)
  const end = args.indexOf("--")
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === "--json" || a === "--json=true")
}

/** The last stdout line of a command that failed before printing its summary. */
export const failureJson = (
  exitCode: number,
  error: {
    readonly tag: string
    readonly reason?: string | undefined
    readonly message: string
    readonly resume?: string | undefined
  }
) => JSON.stringify({ exitCode, error })
