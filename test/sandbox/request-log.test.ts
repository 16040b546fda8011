/**
 * The request log's `answeredAt`: when each answer was handed back, on the clock of `at`, so a benchmark measures
 * the time a sandbox served (first arrival to last answer) from the sandbox's own log instead of guessing the last
 * answer as its arrival plus a whole page (0.09 s over for a last page of 91 tasks at 1 s a page of 100).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { servedMs } from "../bench/served.mjs"
import { session } from "./harness.js"

describe("sandbox: the request log says when each answer was sent", () => {
  it.scopedLive("answeredAt follows the page latency of the records answered; servedMs ends at the last answer", () =>
    Effect.gen(function*() {
      const perRecordMs = 20
      const { call, sandbox } = yield* session({ faults: { pageLatencyPerRecordMs: perRecordMs } })
      for (const description of ["Hospitais", "Supermercados", "Padarias"]) {
        yield* call("POST", "/segments", { body: { description } })
      }
      yield* call("GET", "/segments", { query: { pageSize: 2, page: 1 } })
      yield* call("GET", "/segments", { query: { pageSize: 2, page: 2 } })
      const log = yield* sandbox.control.requests
      const lists = log.filter((e) => e.method === "GET")
      assert.strictEqual(lists.length, 2)
      for (const e of log) assert.isAtLeast(e.answeredAt!, e.at, `${e.method} ${e.path}: answered after it came`)
      // A page of 2 records waits 2 × 20 ms, the short last page 1 × 20 ms (Effect's sleep: never less).
      assert.isAtLeast(lists[0]!.answeredAt! - lists[0]!.at, 2 * perRecordMs)
      assert.isAtLeast(lists[1]!.answeredAt! - lists[1]!.at, perRecordMs)
      assert.strictEqual(servedMs(log), lists[1]!.answeredAt! - log[0]!.at)
    }))
})
