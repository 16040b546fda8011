/**
 * What commands and runs print for the human: lines on stderr, the closing summary (one JSON line on stdout with
 * `--json`), and the rule that a file not written after requests were sent stops the run with exit 3. Nothing here
 * ever prints a secret: callers pass redacted values. The command line's own pieces (`--json`, the edge's failure
 * line) are in `cli/Output.ts`.
 */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Api } from "../client/Api.js"
import { RunStopped } from "../Errors.js"
import { WriteError } from "../files/Write.js"
import { t } from "../Messages.js"

/** A line for the human, on stderr. */
export const say = (line: string) => Console.error(line)

/**
 * Where a run's human messages (warnings, what it does) go: a service, so that the command that starts the run
 * chooses (stderr for the CLI, a prefix per step for an onboarding, the job's log for a fleet worker, a list in a test).
 */
export class Notices extends Context.Tag("fsm-bulk/Notices")<
  Notices,
  { readonly say: (line: string) => Effect.Effect<void> }
>() {
  /** Each line on stderr (`say`). */
  static readonly stderr: Layer.Layer<Notices> = Layer.succeed(Notices, { say })
  /** Every line dropped. */
  static readonly none: Layer.Layer<Notices> = Layer.succeed(Notices, { say: () => Effect.void })
  static readonly to = (sayLine: (line: string) => Effect.Effect<void>): Layer.Layer<Notices> =>
    Layer.succeed(Notices, { say: sayLine })
}

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
                message: t(sent === 1 ? "stop.writeFailedOne" : "stop.writeFailed", {
                  problem: e.message,
                  count: sent,
                  command: resume()
                }),
                resume: resume(),
                cause: e
              })
            ))
        : Effect.fail(e))

/** `stopAfterSending` with the requests the command's `Api` has sent. */
export const stopAfterApiRequests = (resume: () => string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Api, (api) => stopAfterSending(Effect.map(api.stats, (s) => s.requests), resume)(self))
