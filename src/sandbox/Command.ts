/**
 * `fsm-bulk sandbox`: runs the emulator until SIGINT/SIGTERM, then closes it, saves the data file and exits 0
 * (a second signal exits 3 at once). The first stdout line is `listening on http://HOST:PORT/v2`, then the
 * accounts' credentials and the seeded task types; settings and the stop notice go to stderr. A bad flag value
 * stops with a message naming the flag (exit 2).
 *
 * The default account's credentials are published: on an address other machines reach (`--host 0.0.0.0`) the
 * sandbox serves only the accounts given with `--account`, and refuses to start without one unless
 * `--allow-default-account` says to serve the default account anyway; either way it warns on stderr.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { resolve } from "node:path"
import { withShownDefault } from "../cli/Facts.js"
import type { CommandDocs } from "../cli/Model.js"
import { type ExitCode, UsageError } from "../Errors.js"
import { isLoopback } from "../Loopback.js"
import { isResourceName } from "../Resources.js"
import { shielded, stopOnSignals } from "../Signals.js"
import { formatRate, parseDuration, parseProbability, parseRate } from "../Units.js"
import type { SandboxOptions } from "./Sandbox.js"

const text = (name: string, fallback: string, description: string) =>
  Options.text(name).pipe(withShownDefault(fallback), Options.withDescription(description))

const flags = {
  host: text("host", "127.0.0.1", "Address to listen on"),
  port: Options.integer("port").pipe(
    withShownDefault(8787),
    Options.withDescription("Port to listen on (0: any free port)")
  ),
  account: Options.text("account").pipe(
    Options.repeated,
    Options.withDescription(
      "An extra isolated account, as KEY:TOKEN (repeatable); sandbox-key:sandbox-token exists too, except on a --host other machines reach"
    )
  ),
  allowDefaultAccount: Options.boolean("allow-default-account").pipe(
    Options.withDescription(
      "On a --host other machines reach: serve the published sandbox-key:sandbox-token account anyway"
    )
  ),
  rateLimit: text(
    "rate-limit",
    "400/60s",
    "Requests allowed per client IP and window, e.g. 400/60s (logins and list pages count)"
  ),
  rateMode: Options.choice("rate-mode", ["sliding", "fixed"]).pipe(
    withShownDefault("sliding" as const),
    Options.withDescription("How the window is counted: any WINDOW interval (sliding) or epoch-aligned windows (fixed)")
  ),
  tokenTtl: text("token-ttl", "30m", "Lifetime of an access token (e.g. 30m, 5s)"),
  answerDelay: text("answer-delay", "5m", "Delay before a questionnaire answer shows on its task"),
  latency: text("latency", "0ms", "Delay added before every response"),
  failRate: text("fail-rate", "0", "Probability of a random 500/502/503 (nothing applied)"),
  resetRate: text("reset-rate", "0", "Probability a connection is reset before anything is applied"),
  dropAfterWriteRate: text(
    "drop-after-write-rate",
    "0",
    "Probability a write is applied and its response lost (connection reset)"
  ),
  emptyListStatus: Options.choice("empty-list-status", ["404", "200"]).pipe(
    withShownDefault("404" as const),
    Options.withDescription("Status of a list with no records: 404 as the live service, or 200 with an empty list")
  ),
  userIdStyle: Options.choice("user-id-style", ["userID", "userId"]).pipe(
    withShownDefault("userID" as const),
    Options.withDescription(
      "Name of the users' id in answers: userID as captured live traffic shows, or userId as the vendor's Blueprint writes it"
    )
  ),
  pageLatency: text(
    "page-latency",
    "0ms",
    "Delay added to a list answer per record it holds (the live service: ~125ms, 12.5 s a page of 100 tasks)"
  ),
  burstAbove: Options.integer("burst-above").pipe(
    withShownDefault(0),
    Options.withDescription(
      "Requests in flight on one token above which calls fail in bursts of 404/500 (0: never; the live service: 8)"
    )
  ),
  burstRate: text("burst-rate", "0.5", "Probability of a 404/500 to a call above --burst-above in flight"),
  emptyListFailRate: text(
    "empty-list-fail-rate",
    "0",
    "Probability that a filtered list with no matching record answers 500"
  ),
  noPageCaps: Options.boolean("no-page-caps").pipe(
    Options.withDescription(
      "Serve pages of any size (default: tasks at most 100 a page, 400 above, as the live service)"
    )
  ),
  pageCap: Options.text("page-cap").pipe(
    Options.withPseudoName("RESOURCE=N"),
    Options.repeated,
    Options.withDescription(
      "A page of RESOURCE larger than N answers 400 \"You cannot request more than N RESOURCE per page.\" (repeatable; replaces the table's cap, e.g. tasks=50; holds with --no-page-caps too)"
    )
  ),
  errorBodies: Options.choice("error-bodies", ["error", "blueprint"]).pipe(
    withShownDefault("error" as const),
    Options.withDescription(
      "Shape of error bodies but the rate limit's: {\"error\"} or the Blueprint's {message, target, errorCode, errors}"
    )
  ),
  taskTypesQuirk: Options.boolean("task-types-quirk").pipe(
    Options.withDescription(
      "/taskTypes answers totalItems 0 and no nextPage link, as one author saw on the live service"
    )
  ),
  data: Options.text("data").pipe(
    Options.optional,
    Options.withDescription("JSON file keeping the state across restarts (written atomically)")
  ),
  seed: Options.text("seed").pipe(
    Options.optional,
    Options.withDescription(
      "An export directory (fsm-bulk export --out DIR): every account starts holding its records, ids and references, verified against its manifest first"
    )
  ),
  publicKey: Options.text("public-key").pipe(
    Options.withPseudoName("PUB"),
    Options.optional,
    Options.withDescription(
      "With --seed: use the export only if its manifest.sig is a good signature by this Ed25519 public key"
    )
  )
}

const parsed = <A>(flag: string, value: Either.Either<A, string>): Effect.Effect<A, UsageError> =>
  Either.match(value, {
    onLeft: (detail) => new UsageError({ message: `--${flag}: ${detail}` }),
    onRight: Effect.succeed
  })

const account = (given: string) => {
  const at = given.indexOf(":")
  return at > 0 && at < given.length - 1
    ? Effect.succeed({ apiKey: given.slice(0, at), apiToken: given.slice(at + 1) })
    : new UsageError({ message: `--account: "${given.replace(/:.*/, ":…")}" is not KEY:TOKEN` })
}

type Flags = Command.Command.ParseConfig<typeof flags>

/** `--page-cap RESOURCE=N`, each resource once. */
const pageCaps = (given: ReadonlyArray<string>, known: (name: string) => boolean) =>
  Effect.reduce(given, {} as Record<string, number>, (caps, one) => {
    const m = /^([a-z-]+)=(\d+)$/.exec(one.trim())
    if (m === null || Number(m[2]) < 1) {
      return new UsageError({ message: `--page-cap: "${one}" is not RESOURCE=N with N at least 1 (e.g. tasks=50)` })
    }
    if (!known(m[1]!)) return new UsageError({ message: `--page-cap: "${m[1]}" is not a resource` })
    if (caps[m[1]!] !== undefined) return new UsageError({ message: `--page-cap: ${m[1]} is given twice` })
    return Effect.succeed({ ...caps, [m[1]!]: Number(m[2]) })
  })

/** The emulator, loaded when this command runs: other commands start it only when they need it. */
const loadSandbox = Effect.promise(() => import("./Sandbox.js"))

const sandboxOptions = Effect.fn("Command.sandboxOptions")(function*(f: Flags) {
  const { defaultSandboxOptions, noFaults } = yield* loadSandbox
  if (f.port < 0 || f.port > 65535) {
    return yield* new UsageError({ message: `--port: ${f.port} is not between 0 and 65535` })
  }
  const extra = yield* Effect.forEach(f.account, account)
  const exposed = !isLoopback(f.host)
  if (exposed && extra.length === 0 && !f.allowDefaultAccount) {
    return yield* new UsageError({
      message:
        `--host ${f.host}: other machines can reach this address, and the only account would be the published sandbox-key:sandbox-token. ` +
        "Give your own account with --account KEY:TOKEN (the default account is then not served), " +
        "or pass --allow-default-account to serve it anyway; --host 127.0.0.1 keeps the sandbox on this machine"
    })
  }
  const accounts = exposed && !f.allowDefaultAccount ? extra : [...defaultSandboxOptions.accounts, ...extra]
  const keys = accounts.map((a) => a.apiKey)
  const twice = keys.find((k, i) => keys.indexOf(k) !== i)
  if (twice !== undefined) return yield* new UsageError({ message: `--account: the apiKey ${twice} is given twice` })
  return {
    host: f.host,
    port: f.port,
    accounts,
    rate: yield* parsed("rate-limit", parseRate(f.rateLimit)),
    rateMode: f.rateMode,
    tokenTtlMs: yield* parsed(
      "token-ttl",
      Either.filterOrLeft(parseDuration(f.tokenTtl), (ms) => ms > 0, () => "the lifetime must be longer than 0")
    ),
    answerDelayMs: yield* parsed("answer-delay", parseDuration(f.answerDelay)),
    emptyListStatus: f.emptyListStatus === "200" ? 200 : 404,
    userIdStyle: f.userIdStyle,
    pageCaps: !f.noPageCaps,
    pageCapOf: yield* pageCaps(f.pageCap, isResourceName),
    errorBodies: f.errorBodies,
    taskTypesQuirk: f.taskTypesQuirk,
    dataFile: Option.match(f.data, { onNone: () => undefined, onSome: (file) => resolve(file) }),
    faults: {
      ...noFaults,
      latencyMs: yield* parsed("latency", parseDuration(f.latency)),
      failRate: yield* parsed("fail-rate", parseProbability(f.failRate)),
      resetRate: yield* parsed("reset-rate", parseProbability(f.resetRate)),
      dropAfterWriteRate: yield* parsed("drop-after-write-rate", parseProbability(f.dropAfterWriteRate)),
      pageLatencyPerRecordMs: yield* parsed("page-latency", parseDuration(f.pageLatency)),
      burstAbove: f.burstAbove < 0
        ? yield* new UsageError({ message: `--burst-above: ${f.burstAbove} is negative` })
        : f.burstAbove,
      burstRate: yield* parsed("burst-rate", parseProbability(f.burstRate)),
      emptyListFailRate: yield* parsed("empty-list-fail-rate", parseProbability(f.emptyListFailRate))
    }
  } satisfies SandboxOptions
})

/**
 * The export `--seed` names, verified and read back. Loaded only with the flag: reading exports is the export
 * module's (`export/Copy.ts`), the only place the emulator's command reaches outside `sandbox/`.
 */
const readSeed = (dir: string, publicKey: string | undefined) =>
  Effect.gen(function*() {
    const { readExportCopy } = yield* Effect.promise(() => import("../export/Copy.js"))
    const { loadPublicKey } = yield* Effect.promise(() => import("../evidence/Keys.js"))
    const expected = publicKey !== undefined ? yield* loadPublicKey(publicKey) : undefined
    const copy = yield* readExportCopy(dir, expected)
    const sig = copy.signature
    yield* Console.error(
      sig === undefined || sig.status === "unsigned"
        ? `--seed ${dir}: unsigned export (no manifest.sig): its files match its manifest, nobody vouches for either`
        : sig.trusted === true
        ? `--seed ${dir}: signed by key ${sig.keyId?.slice(0, 16)}, the key given with --public-key`
        : `--seed ${dir}: signed by key ${
          sig.keyId?.slice(0, 16)
        } (the key inside manifest.sig: give --public-key PUB to check who signed)`
    )
    return copy
  })

const run = Effect.fn("Command.sandbox")(function*(f: Flags) {
  const flagged = yield* sandboxOptions(f)
  if (Option.isSome(f.publicKey) && Option.isNone(f.seed)) {
    return yield* new UsageError({ message: "--public-key checks the export --seed names: add --seed EXPORT_DIR" })
  }
  const copy = Option.isSome(f.seed)
    ? yield* readSeed(resolve(f.seed.value), Option.getOrUndefined(f.publicKey))
    : undefined
  const options = { ...flagged, copy }
  const serveUntilStopped = Effect.scoped(
    Effect.gen(function*() {
      const stop = yield* stopOnSignals({ stopping: "stopping the sandbox" })
      const { startSandbox } = yield* loadSandbox
      const sandbox = yield* startSandbox(options).pipe(Effect.mapError((e) => new UsageError({ message: e.message })))
      yield* Console.log(`listening on ${sandbox.url}`)
      if (!isLoopback(options.host)) {
        const keys = sandbox.accounts.map((a) => a.apiKey).join(", ")
        yield* Console.error(
          `WARNING: the sandbox listens on ${options.host}, which other machines can reach: anyone who can connect and knows the credentials ` +
            `of an account (${keys}) can read and change its data` +
            (f.allowDefaultAccount ? "; the default account's credentials sandbox-key:sandbox-token are published" : "")
        )
      }
      for (const a of sandbox.accounts) yield* Console.log(`account apiKey=${a.apiKey} apiToken=${a.apiToken}`)
      yield* Console.log("task types (the same ids in every account):")
      for (const t of sandbox.taskTypes) yield* Console.log(`  ${t.id}  ${t.description}`)
      const faults = options.faults
      yield* Console.error(
        [
          `rate limit ${formatRate(options.rate)} per client IP (${options.rateMode})`,
          `token TTL ${options.tokenTtlMs} ms`,
          `answer delay ${options.answerDelayMs} ms`,
          `empty lists answer ${options.emptyListStatus}`,
          `users read back with ${options.userIdStyle}`,
          `latency ${faults.latencyMs} ms, fail rate ${faults.failRate}, reset rate ${faults.resetRate}, drop-after-write rate ${faults.dropAfterWriteRate}`,
          `page caps ${options.pageCaps ? "on" : "off"}${
            Object.entries(options.pageCapOf).map(([name, cap]) => `, ${name} at most ${cap} a page`).join("")
          }, page latency ${faults.pageLatencyPerRecordMs} ms a record, bursts ${
            faults.burstAbove > 0 ? `above ${faults.burstAbove} in flight at rate ${faults.burstRate}` : "off"
          }, empty filtered lists fail at rate ${faults.emptyListFailRate}`,
          options.dataFile === undefined ? "state in memory only" : `state kept in ${options.dataFile}`,
          ...(copy === undefined ?
            [] :
            [`accounts start as the export in ${copy.source} (${
              copy.resources.reduce((n, r) => n + r.records.length, 0)
            } records of ${copy.resources.length} lists)`])
        ].join("; ")
      )
      yield* Console.error("sandbox running; stop it with Ctrl-C (SIGINT) or SIGTERM")
      yield* stop.stopped
    })
  )
  return yield* shielded(
    serveUntilStopped.pipe(
      Effect.zipRight(
        Console.error(
          options.dataFile === undefined ? "sandbox stopped" : `sandbox stopped; state saved to ${options.dataFile}`
        )
      ),
      // A stop asked for is the normal end.
      Effect.as(0 as ExitCode)
    )
  )
})

export const sandboxCommand = Command.make("sandbox", flags, run).pipe(
  Command.withDescription(
    "Run a local emulator of the Field-Service API v2 (accounts, rate limit, faults) until interrupted"
  )
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const sandboxDocs: CommandDocs = {
  sandbox: {
    examples: [
      "fsm-bulk sandbox",
      "fsm-bulk sandbox --port 0 --data sandbox.json",
      "fsm-bulk sandbox --rate-limit 60/60s --fail-rate 0.05 --latency 200ms"
    ],
    doc: "docs/sandbox.md"
  }
}
