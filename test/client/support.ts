/** Test support: a sandbox on a free loopback port and a client built for it with scaled settings. */
import { Effect } from "effect"
import type { RequestLogEntry, SandboxOptions } from "../../src/sandbox/Sandbox.js"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { testClient } from "../support.js"

export const startTestSandbox = (options: Partial<SandboxOptions> = {}) =>
  startSandbox({ port: 0, rate: { limit: 10_000, windowMs: 1_000 }, ...options })

/** A client of `sandbox` (its first account unless `credentials` say otherwise), with fast backoff. */
export const makeClient = testClient

/** The sandbox's request log without the given path prefixes. */
export const requestsTo = (log: ReadonlyArray<RequestLogEntry>, method: string, path: RegExp) =>
  log.filter((e) => e.method === method && path.test(e.path))

/** Polls `check` every few milliseconds until it holds (or fails the test after `timeoutMs`). */
export const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, timeoutMs = 5_000) =>
  Effect.gen(function*() {
    const until = Date.now() + timeoutMs
    while (!(yield* check)) {
      if (Date.now() > until) return yield* Effect.die(new Error("condition not met in time"))
      yield* Effect.sleep(5)
    }
  })

/** The largest number of entries inside any half-open interval of `windowMs`. */
export const busiestWindow = (times: ReadonlyArray<number>, windowMs: number): number => {
  const sorted = [...times].sort((a, b) => a - b)
  let best = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++
    best = Math.max(best, i - j + 1)
  }
  return best
}
