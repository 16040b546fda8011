/**
 * Running generated histories: one seed in a fresh sandbox (its faults seeded too), the invariants checked after
 * every step, and a failing history shrunk and printed with its seed and the command that replays it.
 */
import { Effect } from "effect"
import * as Path from "node:path"
import { startTestSandbox } from "../import/support.js"
import { temporaryDir } from "../support.js"
import { startEchoGateway } from "./echo.js"
import type { Action, Feature, FileShape, Outcome, World } from "./model.js"
import {
  allFeatures,
  checkStep,
  generateHistory,
  KNOWN_OPEN,
  newWorld,
  rng,
  runAction,
  runHistory,
  shrink,
  snapshot
} from "./model.js"

/**
 * Credentials that look like secrets, so invariant (v) finds them wherever they leak. The second account is where
 * an export of the first is onboarded (`export-onboard`); the invariants (i)–(iv) watch the first.
 */
export const accounts = [
  { apiKey: "hist-key-5b1e0c", apiToken: "hist-token-9f27d3a4e1" },
  { apiKey: "hist-key-b-7c4d21", apiToken: "hist-token-b-3e8a60f5d2" }
]

/** The features of the bounded run: all but the known open ones (HISTORY_ALL=1: all). */
export const featuresOf = (all: boolean): ReadonlySet<Feature> =>
  new Set(all ? allFeatures : allFeatures.filter((f) => KNOWN_OPEN[f] === undefined))

/** One history in a sandbox of its own, its faults seeded by `seed`. */
export const runOne = (
  seed: number,
  history: ReadonlyArray<Action>,
  features: ReadonlySet<Feature>,
  inspect?: (dir: string) => Effect.Effect<void>
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const started = performance.now()
      const sandbox = yield* startTestSandbox({ accounts, faultSeed: seed })
      const gateway = yield* startEchoGateway(sandbox.url, rng(seed ^ 0x5eed))
      const dir = yield* temporaryDir("fsm-history-")
      const setUp = performance.now() - started
      const outcome = yield* runHistory(sandbox, gateway, Path.join(dir, "h"), history, features)
      if (inspect !== undefined) yield* inspect(dir)
      return { ...outcome, spent: { ...outcome.spent, "set-up": setUp } }
    })
  ).pipe(Effect.orDie)

/** Two customers as a Brazilian sheet has them (`;`, Windows-1252, accents): the checks' tests' small file. */
export const two: FileShape = {
  delimiter: ";",
  encoding: "windows-1252",
  rows: [
    { key: "CLI-01", name: "Padaria Pão Quente", note: "Cliente desde 2019", phone: "+55 11 93988-2938" },
    { key: "CLI-02", name: "Açougue São João", note: "Pagamento à vista", phone: "" }
  ]
}

/** `use` of a world of its own (a fresh sandbox, `features`: none unless given), within the sandbox's life. */
export const withWorld = <A>(use: (w: World) => Effect.Effect<A>, features: ReadonlySet<Feature> = new Set()) =>
  Effect.scoped(Effect.gen(function*() {
    const sandbox = yield* startTestSandbox({ accounts })
    const gateway = yield* startEchoGateway(sandbox.url, rng(1))
    return yield* use(newWorld(sandbox, gateway, Path.join(yield* temporaryDir("fsm-history-"), "h"), features))
  }))

/** Runs `history` in `w` step by step, `between(i)` before step i; the violations checkStep finds in each step. */
export const runSteps = (
  w: World,
  history: ReadonlyArray<Action>,
  between: (i: number) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function*() {
    const found: Array<Array<string>> = []
    for (const [i, action] of history.entries()) {
      yield* between(i)
      const before = yield* snapshot(w)
      w.snapshots.push(before)
      const step = yield* runAction(w, action)
      found.push(yield* checkStep(w, i, step, before, yield* snapshot(w)))
    }
    return found
  })

/**
 * The outcome of the first of `tries` runs of `history` that breaks an invariant, if any: some failures depend on
 * timing (a stop while rows are in flight), so a candidate of the shrinking gets more than one chance to fail.
 */
const failing = (seed: number, history: ReadonlyArray<Action>, features: ReadonlySet<Feature>, tries = 3) =>
  Effect.gen(function*() {
    for (let i = 0; i < tries; i++) {
      const outcome = yield* runOne(seed, history, features)
      if (outcome.violations.length > 0) return outcome
    }
    return undefined
  })

export interface Verdict {
  readonly seed: number
  readonly history: ReadonlyArray<Action>
  readonly outcome: Outcome
  /** When it failed: the shrunk history and its outcome. */
  readonly shrunk?: { readonly history: ReadonlyArray<Action>; readonly outcome: Outcome }
}

/** Generates and runs the history of `seed`; a failing one is shrunk (at most `shrinkBudget` more runs). */
export const checkSeed = (
  seed: number,
  options: { readonly length: number; readonly features: ReadonlySet<Feature>; readonly shrinkBudget?: number }
) =>
  Effect.gen(function*() {
    const history = generateHistory(seed, options.length, options.features)
    const outcome = yield* runOne(seed, history, options.features)
    if (outcome.violations.length === 0) return { seed, history, outcome } satisfies Verdict
    // The steps after the failing one play no part.
    const cut = history.slice(0, outcome.failedAt! + 1)
    const small = yield* shrink(cut, (h) =>
      Effect.map(failing(seed, h, options.features), (o) => o !== undefined), options.shrinkBudget ?? 40)
    const smallOutcome = (yield* failing(seed, small, options.features)) ??
      (yield* runOne(seed, small, options.features))
    return { seed, history, outcome, shrunk: { history: small, outcome: smallOutcome } } satisfies Verdict
  })

/** A failure as the lead reads it: the seed, the violations, the shrunk history step by step, and the replay. */
export const describeFailure = (v: Verdict, replay: string): string =>
  [
    `history seed ${v.seed} broke an invariant at step ${v.outcome.failedAt}:`,
    ...v.outcome.violations.map((x) => `  ${x}`),
    ...(v.shrunk !== undefined
      ? [
        `shrunk to ${v.shrunk.history.length} of ${v.history.length} actions${
          v.shrunk.outcome.violations.length === 0 ? " (the shrunk history passed 3 runs: a flaky one)" : ""
        }:`,
        ...v.shrunk.outcome.log.map((l) => `  ${l}`),
        ...v.shrunk.outcome.violations.map((x) => `  ✗ ${x}`),
        `shrunk history as JSON (HISTORY_JSON='…' replays it): ${JSON.stringify(v.shrunk.history)}`
      ]
      : []),
    `replay: ${replay}`
  ].join("\n")
