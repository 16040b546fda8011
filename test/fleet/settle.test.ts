/**
 * How a job in parts ends, from its parts' ends (`settled`, used by both stores): every part failed → failed, with
 * the largest of their exit codes and their reasons each said once; some failed → done, exit 3, naming them; none
 * → done with the largest exit code; nothing while a part has not ended.
 */
import { assert, describe, it } from "@effect/vitest"
import { settled } from "../../src/fleet/Store.js"

const part = (state: string, exit_code: number | null, error: string | null = null) => ({ state, exit_code, error })

describe("a job in parts settles from its parts", () => {
  it("every part failed: failed, exit 2 (3 when one had sent rows), the reasons each once", () => {
    const removed = `account "acme" was removed`
    assert.deepStrictEqual(settled([part("failed", 2, removed), part("failed", 2, removed)]), {
      state: "failed",
      exitCode: 2,
      error: `every part failed: ${removed}`
    })
    assert.deepStrictEqual(settled([part("failed", 2, removed), part("failed", 3, "stopped")]), {
      state: "failed",
      exitCode: 3,
      error: `every part failed: ${removed}; stopped`
    })
    const many = ["a", "b", "c", "d", "e"].map((r) => part("failed", 2, r))
    assert.strictEqual(settled(many)?.error, "every part failed: a; b; c; and 2 more")
  })

  it("some failed: done, exit 3, naming them; none: done with the largest exit code", () => {
    assert.deepStrictEqual(settled([part("done", 0), part("failed", 3, "stopped"), part("done", 1)]), {
      state: "done",
      exitCode: 3,
      error: "1 of 3 parts failed: stopped"
    })
    assert.deepStrictEqual(settled([part("done", 0), part("done", 1)]), { state: "done", exitCode: 1 })
    assert.deepStrictEqual(settled([part("done", 0), part("cancelled", null)]), { state: "done", exitCode: 3 })
  })

  it("nothing while a part has not ended", () => {
    assert.isUndefined(settled([part("done", 0), part("running", null)]))
    assert.isUndefined(settled([part("failed", 2, "x"), part("submitting", null)]))
  })
})
