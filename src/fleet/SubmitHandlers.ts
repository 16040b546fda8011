/**
 * What `submit import`, `submit onboard` and `submit export` run, loaded when one of them runs (cli/Lazy.ts): the
 * file read, checked and stored with its job (fleet/Submit.ts), then queued.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { onConflictOf, readProfiles, readSettings, withProfile } from "../cli/Parsing.js"
import { say } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { csvDialect } from "../export/Commands.js"
import { resourceName } from "../import/Commands.js"
import { modeProblem } from "../import/WritePlan.js"
import { pollFor } from "../onboard/Commands.js"
import { resource as resourceOf } from "../Resources.js"
import { parseDuration } from "../Units.js"
import { type submitExportConfig, type submitImportConfig, type submitOnboardConfig } from "./Commands.js"
import { fleetStore } from "./CommandStore.js"
import { openQueue } from "./Queue.js"
import { submitExport, submitImport, submitOnboard } from "./Submit.js"

const usage = (message: string) => new UsageError({ message })

// --- --------------------------------------------------------------------------------------------------------

export const handleSubmitImport = (a: Input<typeof submitImportConfig>) =>
  Effect.gen(function*() {
    if (a.chunkRows < 1) return yield* usage(`--chunk-rows: ${a.chunkRows} is not a positive number`)
    const resource = yield* resourceName(a.resource)
    const problem = modeProblem(resourceOf(resource), a.mode)
    if (problem !== undefined) return yield* usage(problem)
    const verifyWaitMs = yield* Either.mapLeft(parseDuration(a.verifyWait), (why) => usage(`--verify-wait: ${why}`))
    const { store, url } = yield* fleetStore(a.fleet)
    const queue = yield* openQueue(url)
    const submitted = yield* submitImport(store, queue, a.account, a.file, {
      resource,
      mode: a.mode,
      dryRun: a.dryRun,
      verify: a.verify,
      verifyWaitMs,
      read: yield* withProfile(readSettings(a.parsing), a.map),
      dateFormat: a.parsing.dateFormat,
      decimal: a.parsing.decimal
    }, a.chunkRows)
    yield* say(
      `${
        submitted.queued ? "queued" : "stored (not queued yet)"
      } job ${submitted.job}: import ${resource} for ${a.account}, ${submitted.rows} rows${
        submitted.chunks > 0 ? ` in ${submitted.chunks} parts` : ""
      }${submitted.invalid > 0 ? ` (${submitted.invalid} invalid: they will be reported, not sent)` : ""}${
        submitted.whole !== undefined
          ? `; not split into parts, because its rows name each other (${submitted.whole}): one worker runs it`
          : ""
      }`
    )
    if (a.json) yield* Console.log(JSON.stringify(submitted))
    else yield* Console.log(submitted.job)
    return 0 as ExitCode
  }).pipe(Effect.scoped)

export const handleSubmitOnboard = (a: Input<typeof submitOnboardConfig>) =>
  Effect.gen(function*() {
    const answerWaitMs = yield* Either.mapLeft(parseDuration(a.answerWait), (why) => usage(`--verify-wait: ${why}`))
    const onConflict = yield* onConflictOf(a.conflicts)
    const { store, url } = yield* fleetStore(a.fleet)
    const queue = yield* openQueue(url)
    const submitted = yield* submitOnboard(store, queue, a.account, a.input, {
      dryRun: a.dryRun,
      verify: a.verify,
      answerWaitMs,
      answerPollMs: pollFor(answerWaitMs),
      read: readSettings(a.parsing),
      maps: yield* readProfiles(a.map),
      dateFormat: a.parsing.dateFormat,
      decimal: a.parsing.decimal,
      onConflict
    })
    yield* say(
      `${
        submitted.queued ? "queued" : "stored (not queued yet)"
      } job ${submitted.job}: onboard ${a.input} for ${a.account}, ${submitted.rows} rows in ${submitted.steps.length} steps (${
        submitted.steps.join(" → ")
      })${a.dryRun ? ", dry run" : ""}`
    )
    if (a.json) yield* Console.log(JSON.stringify(submitted))
    else yield* Console.log(submitted.job)
    return 0 as ExitCode
  }).pipe(Effect.scoped)

export const handleSubmitExport = (a: Input<typeof submitExportConfig>) =>
  Effect.gen(function*() {
    const csv = yield* csvDialect(a)
    const { store, url } = yield* fleetStore(a.fleet)
    const queue = yield* openQueue(url)
    const submitted = yield* submitExport(store, queue, a.account, {
      resources: a.resources,
      format: a.format,
      csv,
      since: Option.getOrUndefined(a.since),
      until: Option.getOrUndefined(a.until)
    })
    yield* say(
      `${submitted.queued ? "queued" : "stored (not queued yet)"} job ${submitted.job}: export ${
        submitted.resources.join(", ")
      } of ${a.account} (${a.format})`
    )
    if (a.json) yield* Console.log(JSON.stringify(submitted))
    else yield* Console.log(submitted.job)
    return 0 as ExitCode
  }).pipe(Effect.scoped)
