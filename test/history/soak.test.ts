/**
 * The soak of the generated histories (`npm run soak`, scripts/soak.mjs): histories one after another until the
 * time is up, the built CLI among their actions (imports killed with SIGKILL at random points), every failure
 * shrunk and printed with its seed; the counts and findings go to HISTORY_SOAK_OUT (JSON). Skipped unless
 * HISTORY_SOAK=1: `npm test` runs the bounded histories of history.test.ts instead.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, writeFileSync } from "node:fs"
import { bin } from "../import/support.js"
import type { Feature } from "./model.js"
import { KNOWN_OPEN } from "./model.js"
import { checkSeed, describeFailure, featuresOf } from "./support.js"

const env = process.env
const minutes = Number(env.HISTORY_MINUTES ?? 10)
const maxHistories = Number(env.HISTORY_COUNT ?? 1_000_000)
const firstSeed = Number(env.HISTORY_SEED ?? 1)
const length = Number(env.HISTORY_LENGTH ?? 12)
const all = env.HISTORY_ALL === "1"
/** Histories at once, each with a sandbox of its own: they spend most of their time waiting on loopback and CLIs. */
const jobs = Math.max(1, Number(env.HISTORY_JOBS ?? 1))

describe.skipIf(env.HISTORY_SOAK !== "1")("soak of generated histories", () => {
  it.live("histories until the time is up: every invariant holds after every step", () =>
    Effect.gen(function*() {
      assert.isTrue(existsSync(bin), `${bin} is missing: npm run build first`)
      const features = new Set<Feature>([...featuresOf(all), "cli"])
      const deadline = Date.now() + minutes * 60_000
      const started = Date.now()
      const failures: Array<{ seed: number; violations: ReadonlyArray<string>; shrunk: unknown; text: string }> = []
      const spent: Record<string, number> = {}
      let next = firstSeed
      let count = 0
      let steps = 0
      // `jobs` workers take the next seed until the time is up: the seeds run are firstSeed… without a gap.
      const worker = Effect.gen(function*() {
        while (Date.now() < deadline && next - firstSeed < maxHistories) {
          const seed = next++
          const verdict = yield* checkSeed(seed, { length, features, shrinkBudget: 30 })
          count++
          steps += verdict.outcome.log.length
          for (const [what, ms] of Object.entries(verdict.outcome.spent)) spent[what] = (spent[what] ?? 0) + ms
          if (verdict.outcome.violations.length > 0) {
            const text = describeFailure(
              verdict,
              `HISTORY_SEED=${seed} HISTORY_LENGTH=${length}${all ? " HISTORY_ALL=1" : ""}${
                env.HISTORY_FOCUS ? ` HISTORY_FOCUS=${env.HISTORY_FOCUS}` : ""
              } HISTORY_CLI=1 npx vitest run test/history/history.test.ts`
            )
            console.error(text)
            failures.push({ seed, violations: verdict.outcome.violations, shrunk: verdict.shrunk?.history, text })
          }
          if (count % 25 === 0) {
            const perMinute = count / ((Date.now() - started) / 60_000)
            console.log(
              `soak: ${count} histories (${perMinute.toFixed(1)}/min), ${steps} steps, ${failures.length} failing`
            )
          }
        }
      })
      yield* Effect.all(Array.from({ length: jobs }, () => worker), { concurrency: "unbounded", discard: true })
      const elapsedMinutes = (Date.now() - started) / 60_000
      // Where the time went, summed over the histories (of the first run of each; shrinking not counted).
      const timeByKind = Object.fromEntries(
        Object.entries(spent).sort(([, a], [, b]) => b - a).map(([what, ms]) => [what, Math.round(ms / 1000)])
      )
      const result = {
        at: new Date().toISOString(),
        minutes,
        firstSeed,
        lastSeed: firstSeed + count - 1,
        length,
        jobs,
        histories: count,
        steps,
        historiesPerMinute: Number((count / elapsedMinutes).toFixed(1)),
        secondsByKind: timeByKind,
        features: [...features],
        leftOut: Object.fromEntries(Object.entries(KNOWN_OPEN).filter(([f]) => !features.has(f as Feature))),
        failures: failures.map(({ text: _, ...f }) => f)
      }
      console.log(
        `soak: ${count} histories (seeds ${firstSeed}–${firstSeed + count - 1}, ${jobs} at once) in ${
          elapsedMinutes.toFixed(1)
        } min (${
          (count / elapsedMinutes).toFixed(1)
        }/min), ${steps} steps, ${failures.length} failing; seconds by kind: ${JSON.stringify(timeByKind)}`
      )
      if (env.HISTORY_SOAK_OUT) writeFileSync(env.HISTORY_SOAK_OUT, JSON.stringify(result, null, 2) + "\n")
      assert.deepStrictEqual(failures.map((f) => f.text), [])
    }), 24 * 60 * 60_000)
})
