/**
 * The fleet's generated histories (issue 29; fleet.ts): a few short seeded histories on each backend, with the
 * fleet's invariants checked (no job lost, one record per key, no address over its budget, nothing after an
 * account's removal or to its old address) — the bounded run of `npm test`, in the cli tier (it spawns the built
 * CLI: `npm run build` first).
 *
 * HISTORY_FLEET_SEED=7 [HISTORY_FLEET_BACKEND=redis] [HISTORY_LENGTH=8] replays one seed (and shrinks it when it
 * fails); HISTORY_FLEET_JSON='[…]' replays a printed history. `npm run soak -- --fleet` runs them until the time
 * is up (HISTORY_SOAK=1 HISTORY_FLEET=1: the soak below).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, writeFileSync } from "node:fs"
import type { Backend } from "../fleet/support.js"
import { availableBackends, bin } from "../fleet/support.js"
import type { FleetAction, FleetVerdict } from "./fleet.js"
import { checkFleetSeed, describeFleetFailure, fleetFeaturesOf } from "./fleet.js"

const env = process.env
/** HISTORY_LENGTH: every history's number of actions (the soak's, and the bounded run's when given). */
const length = Number(env.HISTORY_LENGTH ?? 8)
const only = env.HISTORY_FLEET_BACKEND as Backend | undefined
const backends = availableBackends.filter((b) => only === undefined || b.backend === only)
/**
 * The bounded run's histories per backend (few, to keep the tier's time), chosen so that between them they cover a
 * killed and a slow submit with a worker sweeping, store faults, an account removed, a refused job:
 * - PostgreSQL's 527, 10 actions (store-fault, slow-submit held 5.1 s, account-remove, slow-submit killed, submit,
 *   store-session-end of the worker's 8–9 connections, two submits to the removed account);
 * - Redis's 896, 8 actions (slow-submit killed, refused-job, a second worker, store-fault, let-run, slow-submit held
 *   4.6 s), and 1957, 8 actions (slow-submit killed, store-session-end, cancel, store-outage, a worker, store-fault).
 * (Their store-freezes and 527's account move were drawn before store-session-end was added: docs/development.md.)
 * HISTORY_FLEET_SEED replays one seed on every backend, of HISTORY_LENGTH actions (8).
 */
const historiesOf = (backend: Backend): ReadonlyArray<{ readonly seed: number; readonly length: number }> =>
  env.HISTORY_FLEET_SEED !== undefined
    ? [{ seed: Number(env.HISTORY_FLEET_SEED), length }]
    : backend === "postgres"
    ? [{ seed: 527, length: env.HISTORY_LENGTH !== undefined ? length : 10 }]
    : [{ seed: 896, length }, { seed: 1957, length }]
/** HISTORY_ALL=1: with the features FLEET_KNOWN_OPEN leaves out (a known open defect each). */
const features = fleetFeaturesOf(env.HISTORY_ALL === "1")
const replay = env.HISTORY_FLEET_JSON !== undefined
  ? (JSON.parse(env.HISTORY_FLEET_JSON) as Array<FleetAction>)
  : undefined

describe.skipIf(env.HISTORY_SOAK === "1")("fleet histories", () => {
  it.live.each(backends)(
    "seeded fleet histories keep the fleet's invariants ($backend)",
    (b) =>
      Effect.gen(function*() {
        assert.isTrue(existsSync(bin), `${bin} is missing: npm run build first`)
        const failures: Array<string> = []
        for (const { length, seed } of historiesOf(b.backend)) {
          const verdict = yield* checkFleetSeed(seed, b.backend, {
            length,
            features,
            shrinkBudget: Number(env.HISTORY_SHRINK ?? 4),
            ...(replay !== undefined ? { history: replay } : {})
          })
          if (env.HISTORY_VERBOSE === "1") {
            const spent = Object.entries(verdict.outcome.spent).map(([what, ms]) =>
              `${what} ${(ms / 1000).toFixed(1)} s`
            )
            console.log(
              `${verdict.outcome.log.join("\n")}\nseconds by action (seed ${seed}, ${b.backend}): ${spent.join(", ")}`
            )
          }
          if (verdict.outcome.violations.length > 0) failures.push(describeFleetFailure(verdict))
        }
        assert.deepStrictEqual(failures, [])
      }),
    15 * 60_000
  )
})

describe.skipIf(env.HISTORY_SOAK !== "1" || env.HISTORY_FLEET !== "1")("soak of fleet histories", () => {
  it.live("fleet histories until the time is up, on each backend in turn", () =>
    Effect.gen(function*() {
      assert.isTrue(existsSync(bin), `${bin} is missing: npm run build first`)
      const deadline = Date.now() + Number(env.HISTORY_MINUTES ?? 10) * 60_000
      const firstSeed = Number(env.HISTORY_SEED ?? 1)
      const jobs = Math.max(1, Number(env.HISTORY_JOBS ?? 1))
      const started = Date.now()
      const failures: Array<FleetVerdict> = []
      const spent: Record<string, number> = {}
      const counts: Record<string, number> = {}
      let next = firstSeed
      const worker = Effect.gen(function*() {
        while (Date.now() < deadline) {
          const seed = next++
          const backend = backends[seed % backends.length]!.backend
          const verdict = yield* checkFleetSeed(seed, backend, { length, features, shrinkBudget: 6 })
          counts[backend] = (counts[backend] ?? 0) + 1
          for (const [what, ms] of Object.entries(verdict.outcome.spent)) spent[what] = (spent[what] ?? 0) + ms
          if (verdict.outcome.violations.length > 0) {
            console.error(describeFleetFailure(verdict))
            failures.push(verdict)
          }
          console.log(
            `fleet soak: seed ${seed} (${backend}) ${verdict.outcome.violations.length === 0 ? "ok" : "FAILED"}`
          )
        }
      })
      yield* Effect.all(Array.from({ length: jobs }, () => worker), { concurrency: "unbounded", discard: true })
      const minutes = (Date.now() - started) / 60_000
      const result = {
        at: new Date().toISOString(),
        fleet: true,
        minutes: Number(minutes.toFixed(1)),
        firstSeed,
        lastSeed: next - 1,
        length,
        jobs,
        histories: counts,
        secondsByKind: Object.fromEntries(
          Object.entries(spent).sort(([, a], [, b]) => b - a).map(([what, ms]) => [what, Math.round(ms / 1000)])
        ),
        failures: failures.map((f) => ({
          seed: f.seed,
          backend: f.backend,
          violations: f.outcome.violations,
          shrunk: f.shrunk?.history
        }))
      }
      console.log(`fleet soak: ${JSON.stringify(result)}`)
      if (env.HISTORY_SOAK_OUT) writeFileSync(env.HISTORY_SOAK_OUT, JSON.stringify(result, null, 2) + "\n")
      assert.deepStrictEqual(failures.map(describeFleetFailure), [])
    }), 24 * 60 * 60_000)
})
