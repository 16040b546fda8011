/**
 * The client's configuration: where the API is, the credentials (held redacted), the request budget and the
 * tuning of retries, timeouts and token renewal. Built from plain values by `ClientConfig.make`; the CLI's
 * connection options (`src/cli/Connection.ts`) are its usual source.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { Rate } from "../Units.js"

export interface Credentials {
  readonly apiKey: Redacted.Redacted<string>
  readonly apiToken: Redacted.Redacted<string>
}

export interface ClientSettings {
  /** Base address ending in `/v2`, without a trailing slash. */
  readonly baseUrl: string
  readonly credentials: Credentials
  /** At most `limit` requests in any `windowMs` interval, logins and list pages included. */
  readonly rate: Rate
  /** Requests in flight at once. */
  readonly concurrency: number
  /** Sends of one request, the first included. */
  readonly maxAttempts: number
  /** Limit of one attempt (send and read the whole answer). */
  readonly requestTimeoutMs: number
  /** Renew the token this long before it expires (capped to a quarter of the token's lifetime). */
  readonly renewBeforeMs: number
  /** How long every call waits after a rate-limit answer (403 "Rate limit…" or 429); default: one window of `rate`. */
  readonly rateLimitPauseMs: number
  /** First backoff delay between attempts; it doubles, with jitter, up to `backoffMaxMs`. */
  readonly backoffBaseMs: number
  readonly backoffMaxMs: number
  /** Extra time a request stays in the budget's window after it ended. */
  readonly budgetMarginMs: number
  /** Page size of list calls (a resource's `maxPageSize` caps it, and so does a size the server refused). */
  readonly pageSize: number
  /** A date window that would need more pages than this is split (date-windowed lists only). */
  readonly maxWindowPages: number
  /** An answer longer than this is abandoned and handled like a broken connection (see `defaultMaxAnswerBytes`). */
  readonly maxAnswerBytes: number
  /** True when the base URL is the embedded, in-memory sandbox. */
  readonly embedded: boolean
}

/**
 * The largest answer the client reads: 64 MiB. A list page of 1000 large records (tasks with their products,
 * services and questionnaires) is a few MB; an answer 10 times larger than any real page is a broken server or
 * proxy streaming without end, and reading it would exhaust memory (a string cannot pass ~512 MB in Node).
 */
const defaultMaxAnswerBytes = 64 * 1024 * 1024

/**
 * The margin the budget adds to its window: timer granularity only. The budget counts each request from when it
 * ended, after the server had already counted it, so requests `limit` apart arrive more than a window apart
 * without any margin; 0.1 % of the window (at least 10 ms) covers clocks that tick in milliseconds.
 * It was 1 %, which cost 0.6 s of every 60 s window for nothing.
 */
export const defaultBudgetMargin = (windowMs: number): number =>
  Math.min(1_000, Math.max(10, Math.round(windowMs * 0.001)))

/**
 * Requests in flight on one token that the live service bears: 16 at once gave bursts of 404 and 500 to calls
 * that succeed alone, 8 was consistently fine (api-notes, "Live behaviour reported by more public clients").
 */
export const safeInFlight = 8

/**
 * Enough requests in flight to spend the budget at ~300 ms latency, at least 2 and at most `safeInFlight`
 * (`--concurrency` may set more, at the user's risk).
 */
export const defaultConcurrency = (rate: Rate): number =>
  Math.min(safeInFlight, Math.max(2, Math.ceil((rate.limit / rate.windowMs) * 1000 * 0.3) * 2))

/**
 * The time limit of one attempt: a page of 100 tasks takes ~12.5 s on the live service and sometimes more than
 * 25 s; a 10–12 s limit abandoned answers that were coming and spent every retry.
 */
const defaultRequestTimeoutMs = 60_000

export type ClientSettingsInput =
  & Pick<ClientSettings, "baseUrl" | "rate">
  & {
    readonly credentials: {
      readonly apiKey: string | Redacted.Redacted<string>
      readonly apiToken: string | Redacted.Redacted<string>
    }
  }
  & Partial<Omit<ClientSettings, "baseUrl" | "rate" | "credentials">>

const redact = (value: string | Redacted.Redacted<string>): Redacted.Redacted<string> =>
  Redacted.isRedacted(value) ? value : Redacted.make(value)

export class ClientConfig extends Context.Tag("fsm-bulk/ClientConfig")<ClientConfig, ClientSettings>() {
  /** Settings from plain values; everything but the base URL, credentials and rate has a default. */
  static make(input: ClientSettingsInput): ClientSettings {
    return {
      baseUrl: input.baseUrl.replace(/\/+$/, ""),
      credentials: { apiKey: redact(input.credentials.apiKey), apiToken: redact(input.credentials.apiToken) },
      rate: input.rate,
      concurrency: input.concurrency ?? defaultConcurrency(input.rate),
      maxAttempts: input.maxAttempts ?? 6,
      requestTimeoutMs: input.requestTimeoutMs ?? defaultRequestTimeoutMs,
      renewBeforeMs: input.renewBeforeMs ?? 120_000,
      // The server forgives after one window of its budget: 60 s at 400/60s, 5 s at 100/5s.
      rateLimitPauseMs: input.rateLimitPauseMs ?? input.rate.windowMs,
      backoffBaseMs: input.backoffBaseMs ?? 500,
      backoffMaxMs: input.backoffMaxMs ?? 30_000,
      budgetMarginMs: input.budgetMarginMs ?? defaultBudgetMargin(input.rate.windowMs),
      pageSize: input.pageSize ?? 500,
      maxWindowPages: input.maxWindowPages ?? 40,
      maxAnswerBytes: input.maxAnswerBytes ?? defaultMaxAnswerBytes,
      embedded: input.embedded ?? false
    }
  }

  static layer(input: ClientSettingsInput): Layer.Layer<ClientConfig> {
    return Layer.succeed(ClientConfig, ClientConfig.make(input))
  }
}
