/**
 * What commands print. Human messages and progress go to stderr; with `--json` the last stdout line is one
 * JSON object, the command's summary. Nothing here ever prints a secret: callers pass redacted values.
 */
import { Options } from "@effect/cli"
import { Console, Effect } from "effect"

export const jsonOption = Options.boolean("json").pipe(
  Options.withDescription("Print the command's summary as one JSON object on the last line of stdout")
)

/** A line for the human, on stderr. */
export const say = (line: string) => Console.error(line)

/** The command's summary: a JSON line on stdout with `--json`, otherwise the human lines on stderr. */
export const summary = (json: boolean, value: object, human: ReadonlyArray<string>) =>
  json ? Console.log(JSON.stringify(value)) : Effect.forEach(human, (l) => Console.error(l), { discard: true })

/** Sets the process exit code the edge will use (0 all rows ended well, 1 some did not). */
export const setExitCode = (code: number) => Effect.sync(() => void (process.exitCode = code))
