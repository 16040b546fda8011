/**
 * The sandbox: a faithful local emulator of the Field-Service API v2 on @effect/platform's Node HTTP server.
 * `startSandbox` starts it (cheaply and silently, so other commands can embed it on port 0) and stops it, data
 * file saved, when its scope closes. `SandboxControl` is what tests and drills use to inject faults, revoke
 * tokens and look at the requests received and the records stored.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type { Scope } from "effect"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Http from "node:http"
import type { ResourceName } from "../Resources.js"
import { resource, resources } from "../Resources.js"
import type { Rate } from "../Units.js"
import type { LogEntry } from "./App.js"
import { makeApp } from "./App.js"
import { collectionProperty } from "./Collections.js"
import { type AccountCopy, applyCopy, copyAccount } from "./Copy.js"
import type { Faults } from "./Faults.js"
import { loadState, makePersistence } from "./Persistence.js"
import { makeBudget } from "./RateLimit.js"
import { readBack } from "./ReadBack.js"
import { extendedRecord } from "./Routes.js"
import { seedAccount, taskTypes } from "./Seed.js"
import { childrenOf } from "./Specials.js"
import type { Account, Rec } from "./Store.js"
import { idName, Store } from "./Store.js"
import { settleAnswers } from "./Tasks.js"
import { Tokens } from "./Tokens.js"

export type { Faults } from "./Faults.js"

export interface SandboxOptions {
  /** Default "127.0.0.1". */
  readonly host: string
  /** Default 8787; 0 = any free port. */
  readonly port: number
  /** Default [{sandbox-key, sandbox-token}]. */
  readonly accounts: ReadonlyArray<{ readonly apiKey: string; readonly apiToken: string }>
  /** Default 400/60s, per client IP, every request counted (logins and list pages too). */
  readonly rate: Rate
  /** How the server counts its window; default "sliding". */
  readonly rateMode: "sliding" | "fixed"
  /** Default 30 min. */
  readonly tokenTtlMs: number
  /** Default 5 min. */
  readonly answerDelayMs: number
  /** Default 404, as the live service. */
  readonly emptyListStatus: 404 | 200
  /** Default "userID", as captured live traffic shows; "userId" as the vendor's Blueprint writes it. */
  readonly userIdStyle: "userID" | "userId"
  /** Default true: a page larger than the resource's `maxPageSize` (tasks: 100) answers 400, as the live service. */
  readonly pageCaps: boolean
  /**
   * Page caps by resource name (`{customers: 50}`): a page larger answers 400 "You cannot request more than 50 customers
   * per page.", whatever `pageCaps` says; they stand in for the table's cap of that resource. Default none.
   * `setPageCap` changes them while the sandbox runs (a service whose limit changes between an export and its
   * continuation).
   */
  readonly pageCapOf: Readonly<Record<string, number>>
  /**
   * Error bodies other than the rate limit's: `{"error"}` (default, as api-notes B saw them) or the Blueprint's
   * `{message, target, errorCode, errors}` (api-notes, "Live behaviour reported by more public clients").
   */
  readonly errorBodies: "error" | "blueprint"
  /** `/taskTypes` answers `totalItems: 0` and no `nextPage` link, as one author saw live; default false. */
  readonly taskTypesQuirk: boolean
  /** State kept across restarts, written atomically. */
  readonly dataFile: string | undefined
  /** Default all zero. */
  readonly faults: Faults
  /**
   * What every account starts with besides the sample rows: an export's records (`--seed EXPORT_DIR`, read by
   * `export/Copy.ts`). Accounts restored from `dataFile` keep their own state.
   */
  readonly copy?: AccountCopy | undefined
  /** Seeds the faults' dice (default: unseeded), so a history of requests in one order meets the same faults. */
  readonly faultSeed?: number | undefined
}

export const noFaults: Faults = {
  latencyMs: 0,
  failRate: 0,
  resetRate: 0,
  dropAfterWriteRate: 0,
  rateLimitStormUntil: 0,
  pageLatencyPerRecordMs: 0,
  burstAbove: 0,
  burstRate: 0,
  emptyListFailRate: 0
}

export const defaultSandboxOptions: SandboxOptions = {
  host: "127.0.0.1",
  port: 8787,
  accounts: [{ apiKey: "sandbox-key", apiToken: "sandbox-token" }],
  rate: { limit: 400, windowMs: 60_000 },
  rateMode: "sliding",
  tokenTtlMs: 30 * 60_000,
  answerDelayMs: 5 * 60_000,
  emptyListStatus: 404,
  userIdStyle: "userID",
  pageCaps: true,
  pageCapOf: {},
  errorBodies: "error",
  taskTypesQuirk: false,
  dataFile: undefined,
  faults: noFaults
}

export interface RequestLogEntry {
  readonly at: number
  readonly method: string
  readonly path: string
  readonly status: number | undefined
  readonly apiKey: string | undefined
  readonly applied: boolean
  /** The client's address (the per-IP budget's key). */
  readonly client?: string
  /** Requests in flight on this request's token when it arrived, itself included (0: no token). */
  readonly inFlight: number
  /**
   * When its answer was handed to the connection, on the same clock as `at` (its latency and page latency
   * included); absent while it is being handled. `answeredAt - at` is the time the request was served.
   */
  readonly answeredAt?: number
}

export interface SandboxControl {
  readonly setFaults: (faults: Partial<Faults>) => Effect.Effect<void>
  /** Sets the page cap of a resource (as `pageCapOf`), or removes it (undefined: the table's cap, if any). */
  readonly setPageCap: (resource: ResourceName, cap: number | undefined) => Effect.Effect<void>
  /** Every token issued so far answers 401 from now on. */
  readonly revokeTokens: Effect.Effect<void>
  /** Every request received, in arrival order. */
  readonly requests: Effect.Effect<ReadonlyArray<RequestLogEntry>>
  /** Stored records as GET would return them (read-back names), deleted ones excluded. */
  readonly records: (apiKey: string, resource: ResourceName) => Effect.Effect<ReadonlyArray<Record<string, unknown>>>
  /**
   * Records of a top-level resource as the server keeps them, write-only fields (passwords) included: what no GET
   * shows, for tests that check what a write set (deleted ones excluded).
   */
  readonly stored: (apiKey: string, resource: ResourceName) => Effect.Effect<ReadonlyArray<Record<string, unknown>>>
}

export interface RunningSandbox {
  /** "http://127.0.0.1:PORT/v2" */
  readonly url: string
  readonly port: number
  readonly accounts: SandboxOptions["accounts"]
  readonly taskTypes: ReadonlyArray<{ readonly id: number; readonly description: string }>
  readonly control: SandboxControl
}

export class SandboxError extends Schema.TaggedError<SandboxError>()("SandboxError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

const checkOptions = (o: SandboxOptions): string | undefined => {
  if (o.accounts.length === 0) return "at least one account is needed"
  const keys = o.accounts.map((a) => a.apiKey)
  const twice = keys.find((k, i) => keys.indexOf(k) !== i)
  if (twice !== undefined) return `the account ${twice} is given twice`
  if (o.accounts.some((a) => a.apiKey === "" || a.apiToken === "")) {
    return "an account needs a non-empty apiKey and apiToken"
  }
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) return `port ${o.port} is not between 0 and 65535`
  if (!(o.rate.limit >= 1 && o.rate.windowMs > 0)) {
    return "the rate limit needs at least 1 request in a window longer than 0"
  }
  if (!(o.tokenTtlMs > 0)) return "the token lifetime must be longer than 0"
  if (!(o.answerDelayMs >= 0) || !(o.faults.latencyMs >= 0)) return "delays cannot be negative"
  if (!(o.faults.pageLatencyPerRecordMs >= 0) || !(o.faults.burstAbove >= 0)) {
    return "delays and limits cannot be negative"
  }
  const rates = [
    o.faults.failRate,
    o.faults.resetRate,
    o.faults.dropAfterWriteRate,
    o.faults.burstRate,
    o.faults.emptyListFailRate
  ]
  if (rates.some((p) => !(p >= 0 && p <= 1))) return "fault rates are probabilities between 0 and 1"
  for (const [name, cap] of Object.entries(o.pageCapOf)) {
    if (!resources.has(name as ResourceName)) return `page cap of "${name}": no such resource`
    if (!(Number.isInteger(cap) && cap >= 1)) return `page cap of ${name}: ${cap} is not a whole number of at least 1`
  }
  return undefined
}

/** Records of any resource as GET shows them; for collections kept inside records, their items with the parent id. */
const viewOf = (account: Account, name: ResourceName): ReadonlyArray<Rec> => {
  const r = resource(name)
  if (r.kind === "action" && r.parent === undefined && r.id !== undefined) {
    // `/customers/complete` writes customers (employee stock, which has no id, is a table of its own).
    const target = extendedRecord(r) ?? r
    return account.table(target.name).values().map((rec) => readBack(target, rec))
  }
  if (r.parent === undefined || !r.path.includes("{")) {
    return account.table(name).values().map((rec) => readBack(r, rec))
  }
  const parent = resource(r.parent.resource)
  const owners = account.table(parent.name).values()
  if (r.kind === "readonly") return owners.flatMap((owner) => childrenOf(r, account, owner))
  const property = collectionProperty(r)
  return owners.flatMap((owner) =>
    ((owner[property] as Array<Rec> | undefined) ?? []).map((item) => ({
      [r.parent!.field]: owner[idName(parent)],
      ...item
    }))
  )
}

/** What `startSandbox` takes: any option, and any of the faults (the others none). */
export type SandboxOptionsInput = Partial<Omit<SandboxOptions, "faults">> & { readonly faults?: Partial<Faults> }

export const startSandbox = (
  options: SandboxOptionsInput = {}
): Effect.Effect<RunningSandbox, SandboxError, Scope.Scope> =>
  Effect.gen(function*() {
    const o: SandboxOptions = { ...defaultSandboxOptions, ...options, faults: { ...noFaults, ...options.faults } }
    const problem = checkOptions(o)
    if (problem !== undefined) return yield* new SandboxError({ message: `sandbox: ${problem}` })

    const template = o.copy === undefined ? undefined : copyAccount(o.copy)
    const store = new Store(seedAccount, template === undefined ? undefined : (a) => applyCopy(template, a))
    const lock = yield* Effect.makeSemaphore(1)
    let markDirty: Effect.Effect<void> = Effect.void
    if (o.dataFile !== undefined) {
      const file = o.dataFile
      yield* Effect.mapError(loadState(file, store), (message) => new SandboxError({ message }))
      markDirty = (yield* Effect.mapError(makePersistence(file, store, lock), (message) =>
        new SandboxError({ message }))).markDirty
    }
    for (const a of o.accounts) {
      store.account(a.apiKey)
    }

    const faults = yield* Ref.make(o.faults)
    const pageCapOf = new Map(Object.entries(o.pageCapOf))
    const tokens = new Tokens(o.tokenTtlMs)
    const log: Array<LogEntry> = []
    const app = makeApp({
      accounts: o.accounts,
      settings: {
        answerDelayMs: o.answerDelayMs,
        emptyListStatus: o.emptyListStatus,
        userIdStyle: o.userIdStyle,
        pageCaps: o.pageCaps,
        pageCapOf,
        errorBodies: o.errorBodies,
        taskTypesQuirk: o.taskTypesQuirk
      },
      store,
      tokens,
      budget: makeBudget(o.rate, o.rateMode),
      faults,
      log,
      lock,
      markDirty,
      inFlight: new Map(),
      random: o.faultSeed === undefined ? undefined : Random.make(o.faultSeed)
    })

    let nodeServer: Http.Server | undefined
    const server = yield* NodeHttpServer.make(() => (nodeServer = Http.createServer()), { host: o.host, port: o.port })
      .pipe(
        Effect.mapError((e) =>
          new SandboxError({ message: `sandbox: cannot listen on ${o.host}:${o.port} (${String(e.cause)})`, cause: e })
        )
      )
    // No spans under a request, the server's own (the middleware) nor any below it: the request's steps are
    // Effect.fnUntraced (App.ts), and a step named with Effect.fn later would otherwise open a timed span a request
    // that nothing reads (issue 26).
    yield* server.serve(Effect.withTracerEnabled(app, false)).pipe(HttpMiddleware.withTracerDisabledWhenEffect(() =>
      true
    ))
    // Runs before the server's own close: keep-alive connections would otherwise hold the close open.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => nodeServer?.closeAllConnections())
    )
    const port = server.address._tag === "TcpAddress" ? server.address.port : o.port
    const host = o.host.includes(":") ? `[${o.host}]` : o.host

    const control: SandboxControl = {
      setFaults: (changes) => Ref.update(faults, (f) => ({ ...f, ...changes })),
      setPageCap: (name, cap) =>
        Effect.sync(() => {
          if (cap === undefined) pageCapOf.delete(name)
          else pageCapOf.set(name, cap)
        }),
      revokeTokens: Effect.sync(() => tokens.revokeAll()),
      requests: Effect.sync(() => log.map((e): RequestLogEntry => ({ ...e }))),
      records: (apiKey, name) =>
        lock.withPermits(1)(
          Effect.gen(function*() {
            const account = store.account(apiKey)
            if (settleAnswers(account, yield* Clock.currentTimeMillis)) yield* markDirty
            return viewOf(account, name)
          })
        ),
      stored: (apiKey, name) =>
        lock.withPermits(1)(
          Effect.gen(function*() {
            const account = store.account(apiKey)
            if (settleAnswers(account, yield* Clock.currentTimeMillis)) yield* markDirty
            return account.table(name).values().map((rec) => ({ ...rec }))
          })
        )
    }
    return { url: `http://${host}:${port}/v2`, port, accounts: o.accounts, taskTypes, control } satisfies RunningSandbox
  })
