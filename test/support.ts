/**
 * What the tests of every area share: a temporary directory removed with the test's scope, and the real client
 * of a test sandbox (the sandbox's first account unless `credentials` say otherwise), with fast backoff, a
 * budget that never gets in the way and short pauses after a 403. Each area's support module sets its own
 * directory prefix and defaults on top.
 */
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"
import { clientLayer } from "../src/cli/Connection.js"
import { Api } from "../src/client/Api.js"
import { ClientConfig, type ClientSettingsInput } from "../src/client/Config.js"
import { ImportServices } from "../src/import/Services.js"
import type { RunningSandbox } from "../src/sandbox/Sandbox.js"

/** The last line of a command's stdout, parsed: the JSON summary that `--json` ends with. */
export const lastJson = (stdout: string): Record<string, any> => JSON.parse(stdout.trim().split("\n").at(-1)!)

/**
 * `make` run once for the test file that calls this at its top level (within the first test that uses it), what it
 * holds (servers, directories) kept until the file's tests have all run: for set-up that the file's tests only read,
 * such as a seeded sandbox or an export, which each test made again before. A failure is every user's failure.
 */
export const oncePerFile = <A, E>(make: Effect.Effect<A, E, Scope.Scope>): Effect.Effect<A, E> => {
  const scope = Effect.runSync(Scope.make())
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  let made: Promise<Exit.Exit<A, E>> | undefined
  return Effect.flatten(Effect.promise(() => made ??= Effect.runPromiseExit(Scope.extend(make, scope))))
}

/** A fresh directory under the system's temporary directory, removed (with its content) when the scope closes. */
export const temporaryDir = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(Path.join(tmpdir(), prefix))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/**
 * The client layer of `sandbox`, as a command would build it, with test settings; with an import run's services as
 * a quiet command has them (`ImportServices.quiet`: journal files, the server's references, nothing printed, no
 * stop). A test that listens to the run's lines or stops it provides its own `Notices` or `RunStop` inside.
 */
export const testClientLayer = (
  sandbox: RunningSandbox,
  overrides: Partial<ClientSettingsInput> = {}
): Layer.Layer<Api | ImportServices> => Layer.merge(testApiLayer(sandbox, overrides), ImportServices.quiet)

const testApiLayer = (
  sandbox: RunningSandbox,
  overrides: Partial<ClientSettingsInput> = {}
): Layer.Layer<Api> =>
  clientLayer(
    ClientConfig.make({
      baseUrl: sandbox.url,
      credentials: sandbox.accounts[0]!,
      rate: { limit: 10_000, windowMs: 1_000 },
      backoffBaseMs: 20,
      backoffMaxMs: 200,
      requestTimeoutMs: 10_000,
      rateLimitPauseMs: 200,
      ...overrides
    })
  )

/** The same client, built for the test's scope. */
export const testClient = (
  sandbox: RunningSandbox,
  overrides: Partial<ClientSettingsInput> = {}
): Effect.Effect<Context.Tag.Service<Api>, never, Scope.Scope> =>
  Layer.build(testApiLayer(sandbox, overrides)).pipe(Effect.map(Context.get(Api)))
