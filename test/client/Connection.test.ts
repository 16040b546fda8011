import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, type Console, Effect, Either, Exit, Layer, Option, Redacted } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  apiLayer,
  clientSettings,
  type ConnectionOptions,
  connectionOptions,
  EmbeddedSandbox,
  validateBaseUrl
} from "../../src/cli/Connection.js"
import { Api } from "../../src/client/Api.js"
import { startTestSandbox } from "./support.js"

const defaults: ConnectionOptions = {
  baseUrl: Option.none(),
  credentials: Option.none(),
  rate: "400/60s",
  rateGiven: false,
  concurrency: Option.none(),
  maxAttempts: 6,
  rateLimitPause: Option.none(),
  requestTimeout: "60s"
}

/** Parses a command line with the connection options, under the given environment. */
const parse = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    let parsed: ConnectionOptions | undefined
    const command = Command.make("probe", { connection: connectionOptions }, ({ connection }) =>
      Effect.sync(() =>
        void (parsed = connection)
      ))
    yield* Command.run(command, { name: "probe", version: "0" })(["node", "probe", ...args])
    return parsed!
  }).pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
    Effect.provide(NodeContext.layer)
  )

/** Builds the layer and runs `use` with it, collecting what was said on stderr. */
const withApi = <A, E>(
  options: ConnectionOptions,
  use: Effect.Effect<A, E, Api | EmbeddedSandbox>,
  env: Record<string, string> = {}
) =>
  Effect.gen(function*() {
    const said: Array<string> = []
    const console = yield* Effect.console
    const quiet: Console.Console = {
      ...console,
      error: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void said.push(args.join(" ")))
    }
    const exit = yield* Effect.exit(
      Effect.scoped(
        Layer.build(apiLayer(options, { client: { backoffBaseMs: 20 } })).pipe(
          Effect.flatMap((ctx) => Effect.provide(use, ctx))
        )
      )
    ).pipe(
      Effect.withConsole(quiet),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
    )
    return { exit, said }
  })

const failureMessage = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return assert.fail("expected a failure")
  return (exit.cause.error as { message: string }).message
}

describe("base URL rules", () => {
  it("wants https off this machine, /v2 at the end and no credentials in the address", () => {
    assert.deepStrictEqual(validateBaseUrl("https://api.example.com/v2/"), Either.right("https://api.example.com/v2"))
    assert.deepStrictEqual(validateBaseUrl("http://127.0.0.1:8787/v2"), Either.right("http://127.0.0.1:8787/v2"))
    assert.deepStrictEqual(validateBaseUrl("http://localhost:9/api/V2"), Either.right("http://localhost:9/api/V2"))
    const message = (text: string) =>
      Either.match(validateBaseUrl(text), { onLeft: (e) => e.message, onRight: () => "accepted" })
    assert.match(message("http://api.example.com/v2"), /must be reached over https:\/\//)
    assert.match(message("https://api.example.com/v1"), /must end with the version segment \/v2/)
    assert.match(message("https://user:secret@api.example.com/v2"), /must not carry credentials/)
    assert.notInclude(message("https://user:secret@api.example.com/v2"), "secret")
    assert.match(message("api.example.com/v2"), /is not a URL/)
    assert.match(message("ftp://api.example.com/v2"), /not supported/)
  })
})

describe("connection options", () => {
  it.live("take flags first, then the environment, then the defaults", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* parse([]), defaults)
      const fromEnv = yield* parse([], {
        FSM_BASE_URL: "https://api.example.com/v2",
        FSM_RATE: "50/5s",
        FSM_CONCURRENCY: "7"
      })
      assert.deepStrictEqual(fromEnv, {
        ...defaults,
        baseUrl: Option.some("https://api.example.com/v2"),
        rate: "50/5s",
        rateGiven: true,
        concurrency: Option.some(7)
      })
      const fromFlags = yield* parse(
        [
          "--base-url",
          "https://other.example.com/v2",
          "--rate",
          "10/1s",
          "--concurrency",
          "3",
          "--max-attempts",
          "2",
          "--rate-limit-pause",
          "5s"
        ],
        { FSM_BASE_URL: "https://api.example.com/v2", FSM_RATE: "50/5s" }
      )
      assert.deepStrictEqual(fromFlags, {
        ...defaults,
        baseUrl: Option.some("https://other.example.com/v2"),
        rate: "10/1s",
        rateGiven: true,
        concurrency: Option.some(3),
        maxAttempts: 2,
        rateLimitPause: Option.some("5s")
      })
      const pauseFromEnv = yield* parse([], { FSM_RATE_LIMIT_PAUSE: "7s" })
      assert.deepStrictEqual(pauseFromEnv, { ...defaults, rateLimitPause: Option.some("7s") })
    }))

  it("pause after a rate-limit answer for one window of the budget, unless --rate-limit-pause says otherwise", () => {
    const target = {
      baseUrl: "https://api.example.com/v2",
      credentials: { apiKey: Redacted.make("k"), apiToken: Redacted.make("t") },
      embedded: false
    }
    const pauseOf = (options: ConnectionOptions) =>
      Either.match(clientSettings(options, target), { onLeft: (e) => e.message, onRight: (s) => s.rateLimitPauseMs })
    assert.strictEqual(pauseOf(defaults), 60_000)
    assert.strictEqual(pauseOf({ ...defaults, rate: "100/5s" }), 5_000)
    assert.strictEqual(pauseOf({ ...defaults, rate: "50/1500ms" }), 1_500)
    assert.strictEqual(pauseOf({ ...defaults, rate: "100/5s", rateLimitPause: Option.some("30s") }), 30_000)
    assert.strictEqual(pauseOf({ ...defaults, rateLimitPause: Option.some("0") }), 0)
  })
})

describe("apiLayer", () => {
  it.live("without a base URL starts the embedded sandbox, says so, and talks to it", () =>
    Effect.gen(function*() {
      const { exit, said } = yield* withApi(
        defaults,
        Effect.gen(function*() {
          const api = yield* Api
          const embedded = yield* EmbeddedSandbox
          assert.isTrue(Option.isSome(embedded))
          const taskTypes = Option.getOrThrow(embedded).taskTypes
          const reply = yield* api.request({ method: "GET", path: `/tasktypes/${taskTypes[0]!.id}` })
          assert.isTrue(reply.ok)
          return api.baseUrl
        })
      )
      assert.isTrue(Exit.isSuccess(exit))
      assert.match(Exit.isSuccess(exit) ? exit.value : "", /^http:\/\/127\.0\.0\.1:\d+\/v2$/)
      assert.strictEqual(said.length, 1)
      assert.match(said[0]!, /embedded sandbox at http:\/\/127\.0\.0\.1:\d+\/v2/)
      assert.match(said[0]!, /only in memory/)
    }), 20_000)

  it.scopedLive("with a base URL uses the credentials file, and no sandbox is started", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ accounts: [{ apiKey: "acme", apiToken: "s3cr3t-token" }] })
      const dir = mkdtempSync(join(tmpdir(), "fsm-conn-"))
      const file = join(dir, "credentials.json")
      // Private, as it should be (a file others can read is warned about: test/output/cli.test.ts).
      writeFileSync(file, JSON.stringify({ apiKey: "acme", apiToken: "s3cr3t-token" }), { mode: 0o600 })
      const { exit, said } = yield* withApi(
        { ...defaults, baseUrl: Option.some(sandbox.url), credentials: Option.some(file) },
        Effect.gen(function*() {
          assert.isTrue(Option.isNone(yield* EmbeddedSandbox))
          return yield* (yield* Api).request({ method: "POST", path: "/keywords", body: { description: "via file" } })
        })
      )
      assert.isTrue(Exit.isSuccess(exit) && exit.value.status === 201)
      // Only the target is said: no embedded sandbox was started.
      assert.deepStrictEqual(said, [`fsm-bulk: target ${sandbox.url} (budget 400/60s)`])
      assert.strictEqual((yield* sandbox.control.records("acme", "keywords")).length, 1)

      // The same from the environment.
      const viaEnv = yield* withApi(
        { ...defaults, baseUrl: Option.some(sandbox.url) },
        Effect.flatMap(Api, (api) => api.request({ method: "GET", path: "/keywords" })),
        { FSM_API_KEY: "acme", FSM_API_TOKEN: "s3cr3t-token" }
      )
      assert.isTrue(Exit.isSuccess(viaEnv.exit) && viaEnv.exit.value.status === 200)
    }), 20_000)

  it.live(
    "refuses bad configuration with a message that names the flag or file, and never the secret",
    () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "fsm-conn-"))
        const notJson = join(dir, "broken.json")
        writeFileSync(notJson, "{ apiKey: s3cr3t")
        const partial = join(dir, "partial.json")
        writeFileSync(partial, JSON.stringify({ apiKey: "acme", apiToken: "" }))
        const remote = { ...defaults, baseUrl: Option.some("https://api.example.com/v2") }
        const cases: Array<[ConnectionOptions, Record<string, string>, RegExp]> = [
          [remote, {}, /no credentials for https:\/\/api\.example\.com\/v2: set FSM_API_KEY and FSM_API_TOKEN/],
          [remote, { FSM_API_KEY: "acme" }, /FSM_API_TOKEN is not set/],
          [{ ...remote, credentials: Option.some(notJson) }, {}, /broken\.json: not valid JSON/],
          [{ ...remote, credentials: Option.some(partial) }, {}, /partial\.json: apiToken missing/],
          [
            { ...remote, credentials: Option.some(join(dir, "absent.json")) },
            {},
            /absent\.json: cannot read the file \(ENOENT\)/
          ],
          [{ ...defaults, baseUrl: Option.some("http://api.example.com/v2") }, {}, /must be reached over https/],
          [{ ...defaults, rate: "fast" }, {}, /--rate \/ FSM_RATE: "fast" is not a rate/],
          [
            { ...defaults, concurrency: Option.some(0) },
            {},
            /--concurrency \/ FSM_CONCURRENCY: 0 is not a positive number/
          ],
          [
            { ...defaults, rateLimitPause: Option.some("soon") },
            {},
            /--rate-limit-pause \/ FSM_RATE_LIMIT_PAUSE: "soon" is not a duration/
          ]
        ]
        for (const [options, env, expected] of cases) {
          const { exit, said } = yield* withApi(options, Effect.void, env)
          const message = failureMessage(exit)
          assert.match(message, expected)
          assert.notInclude(message, "s3cr3t")
          assert.deepStrictEqual(said, [], "no sandbox is started for a configuration that is refused")
        }
      }),
    20_000
  )

  it.scopedLive(
    "reads a credentials file saved with a byte-order mark, and names the fields of a damaged one",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ accounts: [{ apiKey: "acme", apiToken: "s3cr3t-token" }] })
        const dir = mkdtempSync(join(tmpdir(), "fsm-conn-"))
        const remote = { ...defaults, baseUrl: Option.some(sandbox.url) }
        const withFile = (name: string, text: string) => {
          const file = join(dir, name)
          writeFileSync(file, text)
          return { ...remote, credentials: Option.some(file) }
        }
        // Windows Notepad saves UTF-8 with a byte-order mark.
        const bom = yield* withApi(
          withFile("notepad.json", `\uFEFF${JSON.stringify({ apiKey: "acme", apiToken: "s3cr3t-token" })}`),
          Effect.flatMap(Api, (api) => api.request({ method: "GET", path: "/keywords" }))
        )
        assert.isTrue(Exit.isSuccess(bom.exit), Exit.isFailure(bom.exit) ? failureMessage(bom.exit) : "")

        const cases: Array<[string, string, RegExp]> = [
          ["numbers.json", JSON.stringify({ apiKey: 12345, apiToken: "s3cr3t" }), /numbers\.json: apiKey missing/],
          ["blank.json", JSON.stringify({ apiKey: "acme", apiToken: "  " }), /blank\.json: apiToken missing/],
          ["none.json", JSON.stringify({ key: "s3cr3t" }), /none\.json: apiKey and apiToken missing/],
          ["list.json", JSON.stringify(["acme", "s3cr3t"]), /list\.json: expected a JSON object/]
        ]
        for (const [name, text, expected] of cases) {
          const { exit } = yield* withApi(withFile(name, text), Effect.void)
          const message = failureMessage(exit)
          assert.match(message, expected)
          assert.notInclude(message, "s3cr3t")
          assert.notInclude(message, "12345")
        }
      }),
    20_000
  )
})
