/**
 * The port for "the API": what pipelines (import, export, onboarding, answers) may ask of the remote service.
 * Pipelines know this module, never `HttpClient`; `HttpAdapter.ts` is the only adapter.
 *
 * Per-call outcomes are values (`Reply`): a rejected or in-doubt write becomes a report line, never a failure.
 * Only failures of the whole run (credentials rejected, a token refused twice, a permission error on login)
 * are errors (`ApiAborted`), and they map to exit code 3.
 */
import type { Effect, Stream } from "effect"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import type { Resource } from "../Resources.js"

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** What a call cost and how it went: these become the report's `_http_status` … `_retry_outcomes` columns. */
export interface Evidence {
  /** Final HTTP status; undefined when no response was ever received. */
  readonly status: number | undefined
  /** `X-Request-Id` of the final response. */
  readonly requestId: string | undefined
  readonly attempts: number
  /** Outcome of each earlier attempt, oldest first: `503`, `timeout`, `reset`, `rate-limited`, `401`, … */
  readonly retryOutcomes: ReadonlyArray<string>
  readonly durationMs: number
}

export interface ApiRequest {
  readonly method: Method
  /** Path relative to the base URL, starting with `/` (e.g. `/customers`, `/tasks/12/products`). */
  readonly path: string
  /** Query parameters; objects (such as `paramFilter`) are JSON-encoded. */
  readonly query?: Readonly<Record<string, string | number | object | undefined>>
  readonly body?: unknown
  /**
   * For POST: how to find the record if the response is lost (timeout, reset, 5xx). The client lists
   * `resource.path` (or the list of its `readVia` resource) filtered by `{[key]: value}` (through the resource's
   * filter for that key): found → the record is taken as created; absent → resent; lookup impossible → `inDoubt`.
   * A POST without it is `inDoubt` as soon as its answer is lost. For PATCH, `resource` (when given) names the
   * fields of the re-read record; otherwise the resource is found from the path.
   */
  readonly correlation?: { readonly resource: Resource; readonly key: string; readonly value: string }
  /**
   * Called each time an attempt of this request leaves for the server (after its permit, budget and token): until
   * then the request cannot have reached it, so a run stopped meanwhile knows the write was never sent.
   */
  readonly onSent?: () => void
  /**
   * Sent only while no other request of this client is in flight (new ones wait until it is answered): a burst of
   * concurrent calls on one token makes the live service answer 404 and 500 to calls that succeed alone.
   */
  readonly alone?: boolean
  /**
   * A 404 is taken as it comes even when other requests were in flight (a probe past a window's last page, where a
   * wrong "none" costs one more window). Otherwise a 404 or 500 answered while others were in flight is asked
   * again alone before it counts.
   */
  readonly trustNotFound?: boolean
}

export interface Reply {
  /** 2xx received (or, for a reconciled POST, the record was found on the server). */
  readonly ok: boolean
  /** HTTP status of the final response; undefined when there was none. */
  readonly status: number | undefined
  /** Parsed JSON body (the whole envelope), undefined for empty bodies. */
  readonly body: unknown
  /** `body.result` when the body is an envelope. */
  readonly result: unknown
  /** Human-readable error: from `error`, `message`, the first model-state entry, or the transport failure. */
  readonly error: string | undefined
  /** A write that may or may not have happened, and the client could not find out. */
  readonly inDoubt: boolean
  /**
   * A POST whose lost response was reconciled by its correlation key (the record was found), or a PATCH whose
   * lost response was reconciled by re-reading the record (the change was on it). `result` is then the record
   * found, and the evidence's final exchange is that lookup (its status and request id); every POST/PATCH send
   * is in `retryOutcomes`.
   */
  readonly reconciled: boolean
  readonly evidence: Evidence
}

export interface ListOptions {
  /** Filter keys sent in `paramFilter` (e.g. `{externalId: "A,B"}`). */
  readonly filter?: Readonly<Record<string, string | number | boolean>>
  /** For date-windowed resources: the range walked (inclusive, `yyyy-MM-dd`). Defaults to the whole history. */
  readonly since?: string
  readonly until?: string
  readonly pageSize?: number
  /**
   * Start from this page (an interrupted export continues from its last complete page). For date-windowed
   * resources it applies to `window`, the window of the last complete page: pass the same `since` and `until` as
   * the interrupted walk, that `window` and `fromPage` = its page + 1. The windows of a range depend on the range
   * and the data, so the walk finds the same windows again and skips those before `window`.
   */
  readonly fromPage?: number
  /**
   * With `fromPage`: the size of the pages before it (the interrupted walk's, from its checkpoint; default the
   * walk's own). The walk continues in pages of that size where the list takes them, so a continued walk asks what
   * the interrupted one asked; where it does not (pages larger than the list's cap, as tasks were asked before they
   * were capped at 100), it continues from the same record in pages it takes, leaving out of the first page the
   * records the interrupted walk had read.
   */
  readonly fromPageSize?: number
  /** With `fromPage`, for date-windowed resources: the window the walk continues in (`yyyy-MM-dd`, inclusive). */
  readonly window?: { readonly start: string; readonly end: string }
}

export interface Page {
  readonly page: number
  /** The page size it was asked in: page `page` holds records `(page - 1) × size + 1` on (a checkpoint records it). */
  readonly size: number
  readonly records: ReadonlyArray<Record<string, unknown>>
  /** Date window this page belongs to, for date-windowed resources. */
  readonly window?: { readonly start: string; readonly end: string }
  /** The answer's `totalItems`, when it gives one: an estimate only (api-notes B), used to weigh a walk's cost. */
  readonly total?: number
}

/** Counters of the whole process, for summaries and benchmarks. */
export interface ApiStats {
  readonly requests: number
  readonly rateLimited: number
  readonly retries: number
  readonly logins: number
}

/**
 * What the client is doing now, for progress: what its requests wait for (a login under way, a pause after a
 * rate-limit answer until `pausedUntil` on this machine's clock, room in the budget's window), else `sending`;
 * and how many requests it sent in the budget's last window.
 */
export interface ClientActivity {
  readonly state: "sending" | "waiting-budget" | "paused" | "logging-in"
  readonly pausedUntil?: number
  readonly inWindow: number
}

/** What a run's summary tells of its traffic. */
export type RunTraffic = Pick<ApiStats, "requests" | "rateLimited" | "retries">

/** The traffic between two readings of the counters. */
export const trafficSince = (start: ApiStats, now: ApiStats): RunTraffic => ({
  requests: now.requests - start.requests,
  rateLimited: now.rateLimited - start.rateLimited,
  retries: now.retries - start.retries
})

export class ApiAborted extends Schema.TaggedError<ApiAborted>()("ApiAborted", {
  reason: Schema.Literal("CredentialsRejected", "Unauthorized", "Forbidden", "Unreachable", "Redirected"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** The run stops; its journal is kept for `resume`. */
  get exitCode(): 3 {
    return 3
  }
}

/**
 * An account's name in files: a short hash of its apiKey (the key itself never goes in a file). Records belong to
 * the account of the credentials used (api-notes), so two apiKeys are two accounts.
 */
export const accountOf = (apiKey: string): string =>
  createHash("sha256").update(`fsm-bulk account\u0000${apiKey}`).digest("hex").slice(0, 16)

export class Api extends Context.Tag("fsm-bulk/Api")<
  Api,
  {
    readonly baseUrl: string
    /** The request budget every call is held to (reported in summaries). */
    readonly budget: { readonly limit: number; readonly windowMs: number }
    /** True when `baseUrl` is the embedded, in-memory sandbox (recorded in a run's journal). */
    readonly embedded?: boolean
    /**
     * Which account of `baseUrl` the credentials are (`accountOf` their apiKey): recorded in an export's manifest,
     * so that ids and fingerprints read from a file are only used against the account they came from; and the key of
     * the writer locks (one writer per server, account and resource on a machine).
     */
    readonly account?: string
    /** One call under the shared budget, token and per-method retry policy. */
    readonly request: (req: ApiRequest) => Effect.Effect<Reply, ApiAborted>
    /**
     * Every page of a list call: short pages and `nextPage` links followed, a 404 read as the end once the same
     * call, sent alone, answers 404 again; a list that changed under the walk fails it (`ListFailed` `Shifted`).
     */
    readonly pages: (
      path: string,
      options?: ListOptions & { readonly resource?: Resource }
    ) => Stream.Stream<Page, ApiAborted | ListFailed>
    readonly stats: Effect.Effect<ApiStats>
    readonly activity: Effect.Effect<ClientActivity>
  }
>() {}

/** A list call that could not be completed (retries exhausted, or a non-404 4xx). */
export class ListFailed extends Schema.TaggedError<ListFailed>()("ListFailed", {
  /**
   * `Failed`: retries exhausted or a 4xx (running again may get further); `RepeatingPages`: the API answers the
   * same records page after page, so a run again would stop at the same place; `Shifted`: records were added or
   * deleted while the list was walked, so the walk may have skipped records (walking it again may succeed).
   */
  reason: Schema.optionalWith(Schema.Literal("Failed", "RepeatingPages", "Shifted"), {
    default: () => "Failed" as const
  }),
  path: Schema.String,
  status: Schema.optional(Schema.Number),
  message: Schema.String
}) {}
