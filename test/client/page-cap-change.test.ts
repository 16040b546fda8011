/**
 * A page limit the server lowers while a list is walked (issue 23). Page K of pages of 10 is not page K of pages of
 * 4: a later page refused for its size (400 "You cannot request more than 4 keywords per page.") must not fail the
 * walk, nor be asked again as the same page number in the smaller size (records skipped). The walk goes on from
 * the record it reached, each record once, in the service's order, and its pages say their size (what an export's
 * checkpoint records).
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { makeClient, requestsTo, startTestSandbox } from "./support.js"

describe("a walk whose page limit falls under it", () => {
  it.scopedLive("goes on from the record it reached in pages the server takes, each record once", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const api = yield* makeClient(sandbox, { pageSize: 10, concurrency: 1 })
      yield* Effect.forEach(
        Array.from({ length: 27 }, (_, i) => i),
        (i) => api.request({ method: "POST", path: "/keywords", body: { description: `k${i}` } }),
        { discard: true }
      )
      const listed = (yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "keywords"))
        .map((r) => r["description"])
      const before = (yield* sandbox.control.requests).length
      let lowered = false
      // The cap falls once the first page is in: pages 2 on of 10 are refused.
      const pages = Chunk.toArray(
        yield* Stream.runCollect(
          api.pages("/keywords").pipe(
            Stream.tap(() =>
              lowered ? Effect.void : Effect.andThen(sandbox.control.setPageCap("keywords", 4), () => (lowered = true))
            )
          )
        )
      )
      const read = pages.flatMap((p) => p.records.map((r) => r["description"]))
      assert.deepStrictEqual(read, listed, "every record once, in the service's order")
      // Page 1 of 10, then records 11–12 (page 3 of 4 without its first 2), then pages 4–7 of 4.
      assert.deepStrictEqual(pages.map((p) => [p.page, p.size, p.records.length]), [
        [1, 10, 10],
        [3, 4, 2],
        [4, 4, 4],
        [5, 4, 4],
        [6, 4, 4],
        [7, 4, 3]
      ])
      const log = (yield* sandbox.control.requests).slice(before)
      assert.strictEqual(requestsTo(log, "GET", /\/keywords$/).filter((e) => e.status === 400).length, 1)
    }))
})
