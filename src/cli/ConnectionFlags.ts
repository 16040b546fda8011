/**
 * The connection flags every command that talks to the API takes (`--base-url`, `--credentials`, `--rate`…), apart
 * from what they connect with (cli/Connection.ts, the client): the command tree, which every command builds, needs the
 * flags only (docs/development.md, "The build").
 */
import * as Options from "@effect/cli/Options"
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import { withEnvironment, withShownDefault } from "./Facts.js"

export interface ConnectionOptions {
  readonly baseUrl: Option.Option<string>
  readonly credentials: Option.Option<string>
  readonly rate: string
  /** `--rate` or FSM_RATE was given (else `rate` is the default): a continued run keeps its own otherwise. */
  readonly rateGiven?: boolean
  readonly concurrency: Option.Option<number>
  readonly maxAttempts: number
  readonly rateLimitPause: Option.Option<string>
  readonly requestTimeout: string
}

/** The request budget when neither `--rate` nor FSM_RATE (nor, for a continued run, its own) says otherwise. */
const defaultRate = "400/60s"

export const connectionOptions: Options.Options<ConnectionOptions> = Options.all({
  baseUrl: Options.text("base-url").pipe(
    withEnvironment("FSM_BASE_URL", Config.string),
    Options.withDescription(
      "API base address, ending in /v2 (env FSM_BASE_URL); without it an embedded, in-memory sandbox is started"
    ),
    Options.optional
  ),
  credentials: Options.file("credentials").pipe(
    Options.withDescription("JSON file {\"apiKey\": …, \"apiToken\": …} (otherwise env FSM_API_KEY and FSM_API_TOKEN)"),
    Options.optional
  ),
  rate: Options.text("rate").pipe(
    Options.withPseudoName("N/WINDOW"),
    withEnvironment("FSM_RATE", Config.string),
    Options.withDescription(
      `Request budget N/WINDOW shared by every call, logins and list pages included (env FSM_RATE; default ${defaultRate}, or for resume, rerun and undo the run's own)`
    ),
    Options.optional
  ),
  concurrency: Options.integer("concurrency").pipe(
    withEnvironment("FSM_CONCURRENCY", Config.integer),
    Options.withDescription(
      "Requests in flight at once on the token (env FSM_CONCURRENCY; default: enough to spend the budget at ~300 ms latency, at most 8: more at once make the live service answer bursts of 404 and 500)"
    ),
    Options.optional
  ),
  maxAttempts: Options.integer("max-attempts").pipe(
    withShownDefault(6),
    Options.withDescription("Attempts per request before it is given up (rate-limited attempts are counted apart)")
  ),
  rateLimitPause: Options.text("rate-limit-pause").pipe(
    Options.withPseudoName("DURATION"),
    withEnvironment("FSM_RATE_LIMIT_PAUSE", Config.string),
    Options.withDescription(
      "How long every call waits after the API answers \"rate limit exceeded\" (env FSM_RATE_LIMIT_PAUSE; default: one window of --rate)"
    ),
    Options.optional
  ),
  requestTimeout: Options.text("request-timeout").pipe(
    Options.withPseudoName("DURATION"),
    withShownDefault("60s"),
    Options.withDescription("Time limit of one attempt (a page of 100 tasks can take over 25 s on the live service)")
  )
}).pipe(
  Options.map((o): ConnectionOptions => ({
    ...o,
    rate: Option.getOrElse(o.rate, () => defaultRate),
    rateGiven: Option.isSome(o.rate)
  }))
)

export const forceBaseUrlOption = Options.boolean("force-base-url").pipe(
  Options.withDescription("Continue against --base-url / FSM_BASE_URL even though the run was sent to another server")
)
