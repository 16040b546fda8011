/**
 * A worker's API clients, one per account and settings (address, budget, credentials), built in the worker's scope:
 * an account replaced by `accounts add` gets a new one at its next job, and its token lives in this process only.
 * `watchAccount` gives a job its account's client, and a gate that looks the account up again before each request:
 * once the account is removed or replaced, no request of the job leaves with the old settings.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Api } from "../client/Api.js"
import { type Budget, makeBudget, SharedBudget } from "../client/Budget.js"
import { ClientConfig, type Credentials, defaultBudgetMargin, defaultConcurrency } from "../client/Config.js"
import { HttpAdapter } from "../client/HttpAdapter.js"
import { parseRate, type Rate } from "../Units.js"
import { FleetError } from "./Errors.js"
import { type Fence, fencedAgentLayer } from "./Fence.js"
import { groupCommit } from "./GroupCommit.js"
import { open } from "./Secrets.js"
import type { FleetStore, StoredAccount } from "./Store.js"

/** What makes an account's client: a change of any of it (`accounts add` again) needs a new one. */
const accountSettings = (row: StoredAccount): string => JSON.stringify([row.baseUrl, row.rate, row.secret])

interface AccountClientsOptions {
  readonly store: FleetStore
  readonly key: Buffer
  /** The worker's rate; its budget (gated: Worker.ts) is shared by every account's client. */
  readonly rate: Rate
  readonly budget: Budget
  readonly sourceAddress: string | undefined
  /** The fence of the request being made now (Fence.ts). */
  readonly fenceOf: () => Fence
  readonly scope: Scope.Scope
}

/** An account's budget (`accounts add --rate`), spent first, then the worker's. */
const withAccountBudget = (budget: Budget, own: Budget): Budget => ({
  spend: (request, unsent) => own.spend(budget.spend(request, unsent), unsent),
  pause: (ms) => Effect.zipRight(budget.pause(ms), own.pause(ms)),
  paused: budget.paused,
  // What progress shows: the account's own budget holds first, then the worker's.
  holding: Effect.flatMap(
    own.holding,
    (held) => held.forRoom || held.pausedUntil !== undefined ? Effect.succeed(held) : budget.holding
  ),
  // The worker's: what its address's budget was kept busy to (Pace.ts reads the worker's own budget).
  fullAt: budget.fullAt
})

export const makeAccountClients = Effect.fn("Fleet.accountClients")(function*(options: AccountClientsOptions) {
  const { store } = options
  const apis = new Map<string, { readonly settings: string; readonly api: Context.Tag.Service<Api> }>()
  const apiLock = yield* Effect.makeSemaphore(1)
  const build = Effect.fn("Fleet.accountClient")(function*(row: StoredAccount) {
    const credentials: Credentials = yield* open(options.key, row.secret, row.name)
    const own = row.rate !== null ? Either.getOrUndefined(parseRate(row.rate)) : undefined
    // Its permits for the budget it can spend: the account's own when it is the slower. A request takes its permit
    // before the budget, so permits sized for the worker's budget were held by one job's rows waiting for the
    // account's (every row of a part, at 90/2s over 3/2s), and a request asked again alone, which needs every
    // permit, waited for all of them to be sent (issue 29).
    const spends = own !== undefined && own.limit / own.windowMs < options.rate.limit / options.rate.windowMs
      ? own
      : options.rate
    // Every job of the account on this worker sends through this client: its requests take the permits and the
    // budget in the job's turn (`requestLane`, set by JobRunner.ts; client/Lanes.ts), not first come, first served.
    const settings = ClientConfig.make({
      baseUrl: row.baseUrl,
      credentials,
      rate: options.rate,
      // At most `safeInFlight` on the account's token, as a single import has: sized from the worker's 60/1s
      // uncapped, 36 requests were in flight on it, where the live service answers bursts of 404 and 500 above 8.
      concurrency: defaultConcurrency(spends)
    })
    const spending = own === undefined
      ? options.budget
      : withAccountBudget(options.budget, yield* makeBudget(own, defaultBudgetMargin(own.windowMs)))
    const layer = HttpAdapter.layer.pipe(
      Layer.provide(Layer.succeed(ClientConfig, settings)),
      Layer.provide(Layer.succeed(SharedBudget, spending)),
      Layer.provide(
        NodeHttpClient.layerWithoutAgent.pipe(
          Layer.provide(fencedAgentLayer({
            keepAlive: true,
            maxSockets: settings.concurrency,
            ...(options.sourceAddress !== undefined ? { localAddress: options.sourceAddress } : {})
          }, options.fenceOf))
        )
      )
    )
    return Context.get(yield* Layer.buildWithScope(layer, options.scope), Api)
  })
  const apiFor = (row: StoredAccount) =>
    apiLock.withPermits(1)(Effect.gen(function*() {
      const known = apis.get(row.name)
      if (known !== undefined && known.settings === accountSettings(row)) return known.api
      const api = yield* build(row)
      apis.set(row.name, { settings: accountSettings(row), api })
      return api
    }))

  /**
   * The account a job works for, read when the job starts (so a job always runs with the account's settings of
   * now), and looked up again before each of its requests: once the account is removed or replaced (`accounts add`
   * with another address, budget or credentials), no request of the job leaves with the old ones.
   */
  const watchAccount = (name: string) =>
    Effect.gen(function*() {
      const first = yield* store.account(name)
      if (first === undefined) {
        return yield* new FleetError({ reason: "NotFound", message: `account "${name}" was removed` })
      }
      const api = yield* apiFor(first)
      let change: "removed" | "replaced" | undefined
      const changed = yield* Deferred.make<void>()
      // The requests that reach the gate while a look-up is on its way share the next one, which starts after they
      // arrived (GroupCommit.ts): each still sees the account as it is after it came, at one look-up per round trip
      // instead of one per request (which queued behind the worker's few store connections: issue 29).
      const lookUp = groupCommit((_: ReadonlyArray<void>) => store.account(name))
      const gate = Effect.gen(function*() {
        if (change === undefined) {
          // A store that cannot answer (after its retries) is the lease check's to find: it stops the run too.
          const now = yield* lookUp(undefined).pipe(Effect.orElseSucceed(() => first))
          if (now === undefined) change = "removed"
          else if (accountSettings(now) !== accountSettings(first)) change = "replaced"
          else return
          yield* Deferred.succeed(changed, undefined)
        }
        return yield* Effect.interrupt
      })
      return {
        api,
        gate,
        changed: Deferred.await(changed),
        change: () => change,
        refusal: () => change === undefined ? undefined : `account "${name}" was ${change}`
      }
    })
  return { watchAccount }
})

export type WatchedAccount = Effect.Effect.Success<
  ReturnType<Effect.Effect.Success<ReturnType<typeof makeAccountClients>>["watchAccount"]>
>
