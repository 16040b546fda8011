/**
 * The real sandbox (built code, dist/) run in the benchmark's own process on a free loopback port, with a
 * scope of its own: `stop` closes it (and saves its data file, when it has one).
 */
import { Effect, Exit, Scope } from "effect"
import { startSandbox } from "../../dist/sandbox/Sandbox.js"

/** Starts a sandbox; resolves with `{ url, account, control, stop }` where `control` calls return promises. */
export const openSandbox = async (options) => {
  const scope = Effect.runSync(Scope.make())
  const sandbox = await Effect.runPromise(Scope.extend(startSandbox({ port: 0, ...options }), scope))
  const account = sandbox.accounts[0]
  return {
    url: sandbox.url,
    account,
    accounts: sandbox.accounts,
    requests: () => Effect.runPromise(sandbox.control.requests),
    records: (resource) => Effect.runPromise(sandbox.control.records(account.apiKey, resource)),
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** The environment that points the CLI at `sandbox` (credentials as users give them). */
export const cliEnv = (sandbox) => ({
  FSM_BASE_URL: sandbox.url,
  FSM_API_KEY: sandbox.account.apiKey,
  FSM_API_TOKEN: sandbox.account.apiToken
})
