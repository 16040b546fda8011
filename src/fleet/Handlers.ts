/**
 * What `fleet init`, `accounts` and `worker` run, loaded when one of them runs (cli/Lazy.ts): the tree's flags and
 * help stay in fleet/Commands.ts, which every command loads. The other fleet commands have modules of their own
 * (JobHandlers.ts: status, wait, cancel; FetchHandlers.ts; SubmitHandlers.ts), so that `status` loads neither the
 * import pipeline nor the worker (docs/development.md, "The build").
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { readCredentials, validateBaseUrl } from "../cli/Connection.js"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { say, summary as printSummary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { shielded, stopOnSignals } from "../Signals.js"
import { formatRate, parseRate } from "../Units.js"
import {
  type accountsAddConfig,
  type accountsListConfig,
  type accountsRemoveConfig,
  type initConfig,
  type workerConfig
} from "./Commands.js"
import { fleetStore } from "./CommandStore.js"
import { FleetError } from "./Errors.js"
import { fleetUrl, leaseMs } from "./Queue.js"
import { checkFleetKey, fleetKey, seal } from "./Secrets.js"
import { openStore } from "./Stores.js"

const usage = (message: string) => new UsageError({ message })

// --- fleet init ------------------------------------------------------------------------------------------------

export const handleInit = (a: Input<typeof initConfig>) =>
  Effect.gen(function*() {
    const url = yield* fleetUrl(a.fleet)
    const store = yield* openStore(url)
    yield* store.init
    for (const warning of yield* store.settingsWarnings) yield* say(`warning: ${warning}`)
    yield* printSummary(a.json, { command: "fleet init", ready: true }, ["fleet ready: queue and tables in place"])
    return 0 as ExitCode
  }).pipe(Effect.scoped)

// --- accounts ----------------------------------------------------------------------------------------------------

const accountName = (name: string) =>
  /^[A-Za-z0-9][\w.-]{0,62}$/.test(name)
    ? Effect.succeed(name)
    : Effect.fail(usage(`account name "${name}": letters, digits, ".", "_" and "-" only (at most 63)`))

export const handleAccountsAdd = (a: Input<typeof accountsAddConfig>) =>
  Effect.gen(function*() {
    const name = yield* accountName(a.name)
    const baseUrl = yield* validateBaseUrl(a.baseUrl)
    if (Option.isSome(a.rate)) {
      yield* Either.mapLeft(parseRate(a.rate.value), (why) => usage(`--rate: ${why}`))
    }
    const credentials = yield* readCredentials(a.credentials)
    if (Option.isNone(credentials)) {
      return yield* usage(
        `no credentials for account "${name}": set FSM_API_KEY and FSM_API_TOKEN, or pass --credentials FILE`
      )
    }
    const key = yield* fleetKey
    const { store } = yield* fleetStore(a.fleet)
    // Credentials sealed with another key than the fleet's could be opened by no worker.
    yield* checkFleetKey(store, key)
    yield* store.putAccount({ name, baseUrl, rate: Option.getOrNull(a.rate), secret: seal(key, credentials.value) })
    yield* printSummary(a.json, { command: "accounts add", account: name, baseUrl }, [
      `account ${name}: ${baseUrl} (credentials stored encrypted)`
    ])
    return 0 as ExitCode
  }).pipe(Effect.scoped)

export const handleAccountsList = (a: Input<typeof accountsListConfig>) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    const accounts = yield* store.accounts
    if (a.json) yield* Console.log(JSON.stringify({ accounts }))
    else {
      for (const r of accounts) yield* Console.log(`${r.name}\t${r.baseUrl}${r.rate !== null ? `\t${r.rate}` : ""}`)
    }
    return 0 as ExitCode
  }).pipe(Effect.scoped)

export const handleAccountsRemove = (a: Input<typeof accountsRemoveConfig>) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    const removed = yield* store.removeAccount(a.name)
    if (!removed) {
      return yield* new FleetError({ reason: "NotFound", message: `no account "${a.name}" in this fleet` })
    }
    yield* say(`account ${a.name} removed`)
    return 0 as ExitCode
  }).pipe(Effect.scoped)

// --- worker ------------------------------------------------------------------------------------------------------

/**
 * The worker, loaded when this command runs: its HTTP agents (Fence.ts) bring in the platform's HTTP client
 * (undici, about 20 MB of the process), which no other fleet command needs.
 */
const loadWorker = Effect.promise(() => import("./Worker.js"))

export const handleWorker = (a: Input<typeof workerConfig>) =>
  Effect.gen(function*() {
    const rate = yield* Either.mapLeft(parseRate(a.rate), (why) => usage(`--rate / FSM_RATE: ${why}`))
    if (a.jobs < 1) return yield* usage(`--jobs: ${a.jobs} is not a positive number`)
    const key = yield* fleetKey
    const { stored: store, url } = yield* fleetStore(a.fleet)
    const lease = yield* leaseMs
    return yield* shielded(Effect.scoped(Effect.gen(function*() {
      const stop = yield* stopOnSignals({ stopping: "stopping: jobs in progress stop sending and are handed back" })
      yield* say(`worker ${a.egressId}: budget ${formatRate(rate)}, ${a.jobs} jobs at once`)
      const { runWorker } = yield* loadWorker
      yield* runWorker(store, url, key, {
        egressId: a.egressId,
        sourceAddress: Option.getOrUndefined(a.sourceAddress),
        rate,
        jobs: a.jobs,
        leaseMs: lease,
        say
      }, stop.stopped)
      return 0 as ExitCode
    })))
  }).pipe(Effect.scoped)
