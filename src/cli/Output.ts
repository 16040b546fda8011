/**
 * What commands print and the exit code they end with. Human messages and progress go to stderr; with `--json`
 * the last stdout line is one JSON object: the command's summary, or `{exitCode, error}` (printed by the edge)
 * when the command failed before producing one. Nothing here ever prints a secret: callers pass redacted values.
 * A command's handler returns its exit code as its value; the edge (bin.ts) exits with it.
 */
import * as Options from "@effect/cli/Options"

export const jsonOption = Options.boolean("json").pipe(
  Options.withDescription("Print the command's summary as one JSON object on the last line of stdout")
)

export type { ExitCode } from "../Errors.js"

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
