/**
 * The connection options shared by every command that talks to the API (`--base-url`, `--credentials`,
 * `--rate`, `--concurrency` and the tuning flags, each with its environment variable), and `apiLayer`, which
 * validates them and builds the one `Api` of the command: against the given base URL, or, when there is none,
 * against an embedded sandbox started in-process (its data lives only in memory).
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { statSync } from "node:fs"
import * as Path from "node:path"
import type { Api } from "../client/Api.js"
import { ClientConfig, type ClientSettings, type Credentials, defaultConcurrency } from "../client/Config.js"
import { HttpAdapter } from "../client/HttpAdapter.js"
import { say } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { type JsonFileError, readJsonFile } from "../files/JsonFile.js"
import type { RunTarget } from "../import/Resume.js"
import { isLoopback } from "../Loopback.js"
import type { RunningSandbox, SandboxError, SandboxOptions } from "../sandbox/Sandbox.js"
import { shellQuote } from "../Shell.js"
import { formatRate, parseDuration, parseRate } from "../Units.js"
import { type ConnectionOptions } from "./ConnectionFlags.js"

/** The embedded sandbox, when the command runs against one (onboarding's demo reads its task types). */
export class EmbeddedSandbox
  extends Context.Tag("fsm-bulk/EmbeddedSandbox")<EmbeddedSandbox, Option.Option<RunningSandbox>>()
{}

export { type ConnectionOptions, connectionOptions, forceBaseUrlOption } from "./ConnectionFlags.js"

/** A base URL the client may use: https (or http on this machine), ending in /v2, without credentials. */
export const validateBaseUrl = (text: string): Either.Either<string, UsageError> => {
  const bad = (why: string) => Either.left(new UsageError({ message: `--base-url / FSM_BASE_URL: ${why}` }))
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    return bad(`"${text}" is not a URL (example: https://api.example.com/v2)`)
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return bad(`${url.protocol} is not supported: use https://`)
  }
  if (url.username !== "" || url.password !== "") {
    return bad("the address must not carry credentials; use --credentials or FSM_API_KEY/FSM_API_TOKEN")
  }
  if (url.protocol === "http:" && !isLoopback(url.hostname)) {
    return bad(
      `${url.origin} is not on this machine, so it must be reached over https:// (plain http is only accepted for 127.0.0.1/localhost)`
    )
  }
  if (url.search !== "" || url.hash !== "") return bad("the address must not carry a query or fragment")
  const path = url.pathname.replace(/\/+$/, "")
  if (!/\/v2$/i.test(path)) {
    return bad(`${url.origin}${url.pathname} must end with the version segment /v2 (example: ${url.origin}/v2)`)
  }
  return Either.right(`${url.origin}${path}`)
}

const usage = (message: string) => new UsageError({ message })

const fromEither = <A>(flag: string, e: Either.Either<A, string>) =>
  Either.mapLeft(e, (why) => usage(`${flag}: ${why}`))

/** An account's key or token: a non-empty string. */
const Secret = Schema.String.pipe(Schema.filter((s) => s.trim() !== ""))

/**
 * The `--credentials FILE` JSON: `{"apiKey": "…", "apiToken": "…"}`, and optionally the `baseUrl` they belong to
 * (other properties are ignored).
 */
const CredentialsFile = Schema.Struct({
  apiKey: Secret,
  apiToken: Secret,
  baseUrl: Schema.optional(Schema.String)
})

const credentialsShape = `{"apiKey": "…", "apiToken": "…"}`

/** Why a credentials file was refused, naming its fields but never quoting a value (it may be a secret). */
const credentialsProblem = (error: JsonFileError): string => {
  switch (error.reason) {
    case "Missing":
    case "Unreadable":
      return error.detail
    case "NotJson":
      return `not valid JSON (expected ${credentialsShape})`
    case "Invalid": {
      const fields = [...new Set(error.issues.map((i) => i.path.split(".")[0]!))].filter((f) => f !== "")
      return fields.length === 0
        ? `expected a JSON object ${credentialsShape}`
        : `${fields.join(" and ")} missing or not a non-empty string`
    }
  }
}

/** Credentials files already warned about in this process. */
const warnedAbout = new Set<string>()

/** Forgets the files warned about, as a new process starts (for test runners that keep modules between files). */
export const forgetCredentialWarnings = (): void => warnedAbout.clear()

/**
 * Like ssh with a private key: a credentials file that its group or others can read is said once on stderr (it
 * is still used), with the command that makes it private. Not on Windows, whose modes say nothing of this.
 */
const warnIfReadable = (path: string) =>
  Effect.suspend(() => {
    if (process.platform === "win32" || warnedAbout.has(Path.resolve(path))) return Effect.void
    const mode = statSync(path, { throwIfNoEntry: false })?.mode
    if (mode === undefined || (mode & 0o077) === 0) return Effect.void
    warnedAbout.add(Path.resolve(path))
    return say(
      `fsm-bulk: warning: ${path} holds credentials and its group or others can read it (mode ${
        (mode & 0o777).toString(8).padStart(4, "0")
      }); make it private: chmod 600 ${shellQuote(path)}`
    )
  })

/** Credentials from `--credentials FILE`, else from FSM_API_KEY/FSM_API_TOKEN. */
export const readCredentials = Effect.fn("Connection.readCredentials")(function*(file: Option.Option<string>) {
  if (Option.isSome(file)) {
    const path = file.value
    const json = yield* readJsonFile(path, CredentialsFile).pipe(
      Effect.mapError((error) => usage(`--credentials ${path}: ${credentialsProblem(error)}`))
    )
    yield* warnIfReadable(path)
    return Option.some<Credentials>({ apiKey: Redacted.make(json.apiKey), apiToken: Redacted.make(json.apiToken) })
  }
  const key = yield* Config.option(Config.redacted("FSM_API_KEY")).pipe(Effect.orElseSucceed(() => Option.none()))
  const token = yield* Config.option(Config.redacted("FSM_API_TOKEN")).pipe(Effect.orElseSucceed(() => Option.none()))
  if (Option.isSome(key) && Option.isSome(token)) {
    return Option.some<Credentials>({ apiKey: key.value, apiToken: token.value })
  }
  if (Option.isSome(key) !== Option.isSome(token)) {
    return yield* usage(
      `${
        Option.isSome(key) ? "FSM_API_TOKEN" : "FSM_API_KEY"
      } is not set (both FSM_API_KEY and FSM_API_TOKEN are needed)`
    )
  }
  return Option.none<Credentials>()
})

/**
 * The base URL the user paired the credentials with: `--base-url` / FSM_BASE_URL, else the `baseUrl` of the
 * `--credentials` file. Credentials are only ever sent there: never to an address read from any other file (a
 * journal, a summary, a manifest). Both given and different: refused.
 */
const pairedBaseUrl = Effect.fn("Connection.pairedBaseUrl")(function*(options: ConnectionOptions) {
  const given = Option.isSome(options.baseUrl)
    ? Option.some(yield* validateBaseUrl(options.baseUrl.value))
    : Option.none<string>()
  if (Option.isNone(options.credentials)) return given
  const path = options.credentials.value
  const file = yield* readJsonFile(path, CredentialsFile).pipe(
    Effect.mapError((error) => usage(`--credentials ${path}: ${credentialsProblem(error)}`))
  )
  if (file.baseUrl === undefined) return given
  const own = yield* validateBaseUrl(file.baseUrl).pipe(
    Effect.mapError((e) =>
      usage(`--credentials ${path}: its baseUrl: ${e.message.replace(/^--base-url \/ FSM_BASE_URL: /, "")}`)
    )
  )
  if (Option.isSome(given) && given.value !== own) {
    return yield* usage(
      `--credentials ${path} are for ${own}, but --base-url / FSM_BASE_URL is ${given.value}: nothing was sent. ` +
        `Use the credentials of ${given.value}, or leave --base-url and FSM_BASE_URL unset`
    )
  }
  return Option.some(own)
})

export interface ApiLayerExtra {
  /** Options of the embedded sandbox, when one is started. */
  readonly sandbox?: Partial<SandboxOptions>
  /** Client settings beyond the flags (tests scale backoff, page sizes …). */
  readonly client?: Partial<Omit<ClientSettings, "baseUrl" | "credentials" | "embedded">>
}

/** The settings the options describe, checked; `target` is the base URL and credentials to use. */
export const clientSettings = (
  options: ConnectionOptions,
  target: { readonly baseUrl: string; readonly credentials: Credentials; readonly embedded: boolean },
  extra?: ApiLayerExtra
): Either.Either<ClientSettings, UsageError> =>
  Either.gen(function*() {
    const rate = yield* fromEither("--rate / FSM_RATE", parseRate(options.rate))
    const pause = Option.isSome(options.rateLimitPause)
      ? yield* fromEither("--rate-limit-pause / FSM_RATE_LIMIT_PAUSE", parseDuration(options.rateLimitPause.value))
      : rate.windowMs
    const timeout = yield* fromEither("--request-timeout", parseDuration(options.requestTimeout))
    if (timeout <= 0) return yield* Either.left(usage("--request-timeout: must be longer than 0"))
    const concurrency = Option.getOrElse(options.concurrency, () => defaultConcurrency(rate))
    if (concurrency < 1) {
      return yield* Either.left(usage(`--concurrency / FSM_CONCURRENCY: ${concurrency} is not a positive number`))
    }
    if (options.maxAttempts < 1) {
      return yield* Either.left(usage(`--max-attempts: ${options.maxAttempts} is not a positive number`))
    }
    return ClientConfig.make({
      ...extra?.client,
      baseUrl: target.baseUrl,
      credentials: target.credentials,
      embedded: target.embedded,
      rate,
      concurrency,
      maxAttempts: options.maxAttempts,
      rateLimitPauseMs: pause,
      requestTimeoutMs: timeout
    })
  })

/** The live `Api` for `settings`, over Node's HTTP client. */
export const clientLayer = (settings: ClientSettings): Layer.Layer<Api> =>
  HttpAdapter.layer.pipe(
    Layer.provide(Layer.succeed(ClientConfig, settings)),
    // node:http with one keep-alive agent sized to the concurrency: connections are reused (one TLS handshake
    // per socket, not per request) and failures keep Node's error codes, which tell "refused" (never sent,
    // safe to resend) from "reset" (maybe applied).
    // Loaded when a command first needs the network, and only its node:http half: not undici (./NodeHttp.ts).
    Layer.provide(
      Layer.unwrapEffect(
        Effect.promise(() => import("./NodeHttp.js")).pipe(
          Effect.map((NodeHttpClient) =>
            NodeHttpClient.layerWithoutAgent.pipe(
              Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: true, maxSockets: settings.concurrency }))
            )
          )
        )
      )
    )
  )

/**
 * The command's `Api` (and `EmbeddedSandbox`): validates the connection options, and without a base URL starts
 * the embedded sandbox for the layer's lifetime and says so on stderr.
 */
export const apiLayer = (
  options: ConnectionOptions,
  extra?: ApiLayerExtra
): Layer.Layer<Api | EmbeddedSandbox, UsageError | SandboxError> =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const credentials = yield* readCredentials(options.credentials)
      const paired = yield* pairedBaseUrl(options)
      if (Option.isSome(paired)) {
        const baseUrl = paired.value
        if (Option.isNone(credentials)) {
          return yield* usage(
            `no credentials for ${baseUrl}: set FSM_API_KEY and FSM_API_TOKEN, or pass --credentials FILE (JSON {"apiKey", "apiToken"})`
          )
        }
        const settings = yield* clientSettings(
          options,
          { baseUrl, credentials: credentials.value, embedded: false },
          extra
        )
        // Said before anything is sent, as a user checks the target before a bulk write (never a secret).
        yield* say(`fsm-bulk: target ${baseUrl} (budget ${formatRate(settings.rate)})`)
        return Layer.merge(clientLayer(settings), Layer.succeed(EmbeddedSandbox, Option.none()))
      }
      // Validate the flags before a sandbox is started for nothing.
      const placeholder = { apiKey: Redacted.make(""), apiToken: Redacted.make("") }
      yield* clientSettings(
        options,
        { baseUrl: "http://127.0.0.1/v2", credentials: placeholder, embedded: true },
        extra
      )
      // Loaded only when a command runs on the embedded sandbox (its HTTP server is not needed otherwise).
      const { startSandbox } = yield* Effect.promise(() => import("../sandbox/Sandbox.js"))
      const sandbox = yield* startSandbox({ port: 0, ...extra?.sandbox })
      const account = sandbox.accounts[0]!
      const settings = yield* clientSettings(
        options,
        {
          baseUrl: sandbox.url,
          credentials: { apiKey: Redacted.make(account.apiKey), apiToken: Redacted.make(account.apiToken) },
          embedded: true
        },
        extra
      )
      yield* say(
        `fsm-bulk: no --base-url or FSM_BASE_URL: running against the embedded sandbox at ${sandbox.url} ` +
          `(budget ${formatRate(settings.rate)}); its data lives only in memory and is gone when this command ends` +
          (Option.isSome(credentials) ? "; the given credentials are not used" : "")
      )
      return Layer.merge(clientLayer(settings), Layer.succeed(EmbeddedSandbox, Option.some(sandbox)))
    })
  )

// --- resume and rerun: the run's own server ----------------------------------------------------------------------

/**
 * The run's own `--rate` and `--concurrency`, unless given again: a run resumed, rerun or undone is sent the way it
 * was started (a 20/10s run must not go on at 400/60s).
 */
const runShaped = (options: ConnectionOptions, run: RunTarget, what: string) =>
  Effect.gen(function*() {
    const rate = run.rate !== undefined && options.rateGiven !== true ? run.rate : options.rate
    const concurrency = Option.isNone(options.concurrency) && run.concurrency !== undefined
      ? Option.some(run.concurrency)
      : options.concurrency
    const kept = [
      ...(rate !== options.rate ? [`--rate ${rate}`] : []),
      ...(concurrency !== options.concurrency ? [`--concurrency ${String(run.concurrency)}`] : [])
    ]
    if (kept.length > 0) yield* say(`fsm-bulk: ${what} keeps its own ${kept.join(" and ")} (give them again to change)`)
    return { ...options, rate, concurrency } satisfies ConnectionOptions
  })

/**
 * The connection of a command that continues a run (`resume`, `rerun`, `undo`): against the server the user
 * paired the credentials with (`pairedBaseUrl`), which must be the run's own; a different one is refused unless
 * `force`. The run's base URL is read from a file (its journal or summary), which may come from anywhere: it never
 * receives credentials by itself, so with nothing pairing them with a server the command is refused before any
 * request, naming the run's server. A run sent to an embedded sandbox continues against a new, empty one: a
 * rehearsal, said so.
 */
export const continuingConnection = Effect.fn("Connection.continuing")(function*(
  options: ConnectionOptions,
  run: RunTarget | undefined,
  force: boolean,
  what: string,
  /** A plan (`apply`) was made against its server, as its file says; a run was sent to it, as its directory says. */
  from: "run" | "plan" = "run"
) {
  if (run === undefined) return options
  return yield* continuingTarget(yield* runShaped(options, run, what), run, force, what, from)
})

const continuingTarget = Effect.fn("Connection.continuingTarget")(function*(
  options: ConnectionOptions,
  run: RunTarget,
  force: boolean,
  what: string,
  from: "run" | "plan"
) {
  const sentTo = from === "plan" ? "was made against" : "was sent to"
  const given = yield* pairedBaseUrl(options)
  if (run.embedded) {
    if (Option.isNone(given)) {
      yield* say(
        `warning: ${what} ${sentTo} an embedded sandbox, whose data was lost when its command ended: this continues against a new, empty ` +
          "embedded sandbox, a rehearsal only (nothing reaches a real server)"
      )
      return options
    }
    if (!force) {
      return yield* usage(
        `${what} ${sentTo} an embedded, in-memory sandbox, not to ${given.value}: continuing there would send only the rows that run ` +
          `had not done. Import the file again against ${given.value}, or pass --force-base-url to continue there anyway`
      )
    }
    return options
  }
  const own = Either.getOrElse(validateBaseUrl(run.baseUrl), () => run.baseUrl)
  if (Option.isNone(given)) {
    return yield* usage(
      `${what} ${sentTo} ${own}, as ${
        from === "plan" ? "the plan file" : "its run directory"
      } says; credentials are never sent to an address read from a file, ` +
        `and nothing pairs yours with it: nothing was sent. If ${own} is your server, pass --base-url ${own} ` +
        `(or set FSM_BASE_URL), or add "baseUrl": "${own}" to the --credentials file`
    )
  }
  if (given.value !== own && !force) {
    return yield* usage(
      `${what} ${sentTo} ${own}, but your credentials are for ${given.value} (--base-url / FSM_BASE_URL or the credentials' baseUrl): ` +
        `rows would be split between two servers; nothing was sent. ` +
        `Pass --base-url ${own} with its credentials to continue where it was sent, or --force-base-url to continue against ${given.value}`
    )
  }
  return { ...options, baseUrl: given }
})
