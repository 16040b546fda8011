/**
 * A run under the command's Api: the connection's layer, the progress line, the clean stop on SIGINT/SIGTERM
 * (the rows in flight finish, then the run stops with its resume command), and the hint an aborted run leaves.
 * Shared by every command that sends rows (import, rerun, resume, undo).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { Api } from "../client/Api.js"
import { Notices, say, stopAfterSending } from "../console/Output.js"
import { makeProgress, RunProgress } from "../console/Progress.js"
import { resumeHint } from "../import/Pipeline.js"
import { ImportServices } from "../import/Services.js"
import { shellQuote } from "../Shell.js"
import { RunStop, shielded, stopOnSignals } from "../Signals.js"
import { parseRate } from "../Units.js"
import { apiLayer, type ConnectionOptions } from "./Connection.js"

/**
 * Runs `work` under the command's Api, with progress and the clean stop on signals: provided as a run's services
 * (`import/Services.ts`: the terminal's lines, progress and stop, and the journal file, the server's references, plan
 * files), which an undo uses too.
 */
export const withApi = <A, E>(
  connection: ConnectionOptions,
  label: string,
  runDirOf: () => string,
  work: () => Effect.Effect<A, E, Api | ImportServices>
) =>
  shielded(
    Effect.scoped(
      Effect.gen(function*() {
        const api = yield* Api
        const rate = Either.getOrUndefined(parseRate(connection.rate))
        const stop = yield* stopOnSignals({
          stopping: "stopping after the rows in flight",
          hint: () => resumeHint(runDirOf())
        })
        const progress = yield* makeProgress({ label, stats: api.stats, activity: api.activity, rate })
        return yield* work().pipe(
          Effect.provide(Layer.mergeAll(
            ImportServices.files,
            Notices.stderr,
            Layer.succeed(RunProgress, progress),
            RunStop.signal(stop)
          )),
          stopAfterSending(Effect.map(api.stats, (s) => s.requests), () => `fsm-bulk resume ${shellQuote(runDirOf())}`)
        )
      })
    ).pipe(Effect.provide(apiLayer(connection)))
  )

/** An aborted run (credentials rejected …) says how to continue before the edge prints the error. */
export const hintOnAbort = (runDir: () => string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.tapError(
    self,
    (e) =>
      (e as { readonly _tag?: string })._tag === "ApiAborted" && runDir() !== ""
        ? say(`the journal is kept: ${resumeHint(runDir())}`)
        : Effect.void
  )
