/**
 * The sandbox's fault dice can be seeded (`faultSeed`), so a generated history replays with the same faults: two
 * sandboxes with one seed answer one sequence of requests with the same statuses; another seed, other statuses.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { startTestSandbox } from "../import/support.js"

/** The statuses of 40 logins, one after another, with half of all requests failing. */
const statuses = (faultSeed: number) =>
  Effect.scoped(
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ faultSeed, faults: { ...noFaults, failRate: 0.5 } })
      const seen: Array<number> = []
      for (let i = 0; i < 40; i++) {
        const answer = yield* Effect.promise(() =>
          fetch(`${sandbox.url}/login`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(sandbox.accounts[0])
          })
        )
        seen.push(answer.status)
        yield* Effect.promise(() => answer.arrayBuffer())
      }
      return seen
    })
  )

describe("faultSeed", () => {
  it.live("one seed, one sequence of faults; another seed, another", () =>
    Effect.gen(function*() {
      const first = yield* statuses(7)
      assert.isTrue(first.some((s) => s >= 500) && first.some((s) => s < 300), first.join(" "))
      assert.deepStrictEqual(yield* statuses(7), first)
      assert.notDeepEqual(yield* statuses(8), first)
    }))
})
