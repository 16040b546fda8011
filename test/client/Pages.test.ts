import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import type { Page } from "../../src/client/Api.js"
import { dayOf, defaultUntil, formatDay } from "../../src/Days.js"
import { resource } from "../../src/Resources.js"
import { makeClient, requestsTo, startTestSandbox } from "./support.js"

const collect = <E>(s: Stream.Stream<Page, E>) => Effect.map(Stream.runCollect(s), Chunk.toArray)

describe("dates of the windows", () => {
  it("reads and writes yyyy-MM-dd days, rejecting impossible ones", () => {
    assert.strictEqual(formatDay(dayOf("2024-02-29")!), "2024-02-29")
    assert.isUndefined(dayOf("2023-02-29"))
    assert.isUndefined(dayOf("01/02/2024"))
    assert.strictEqual(defaultUntil(Date.UTC(2026, 4, 17, 23)), "2028-05-17")
  })
})

describe("list walks against the sandbox", () => {
  it.scopedLive(
    "follows full pages, stops on a short page or a missing nextPage link, and reads a confirmed 404 as the end",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { pageSize: 10 })
        yield* Effect.forEach(
          Array.from({ length: 23 }, (_, i) => i),
          (i) => api.request({ method: "POST", path: "/keywords", body: { description: `k${i}` } }),
          {
            concurrency: 8
          }
        )
        yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => api.request({ method: "POST", path: "/segments", body: { description: `s${i}` } }),
          {
            concurrency: 8
          }
        )

        const keywords = yield* collect(api.pages("/keywords"))
        assert.deepStrictEqual(keywords.map((p) => [p.page, p.records.length]), [[1, 10], [2, 10], [3, 3]])
        assert.strictEqual(new Set(keywords.flatMap((p) => p.records.map((r) => r.id))).size, 23)

        // 20 records in pages of 10: page 2 is full but has no nextPage link, so there is no third request.
        const segments = yield* collect(api.pages("/segments"))
        assert.deepStrictEqual(
          segments.map((p) => p.records.length),
          [10, 10]
        )

        const none = yield* collect(api.pages("/expensetypes"))
        assert.deepStrictEqual(none, [])

        // A list refused for another reason than "no records" fails the walk, with the API's message.
        const refused = yield* Effect.flip(collect(api.pages("/tickets")))
        assert.strictEqual(refused._tag, "ListFailed")
        if (refused._tag === "ListFailed") {
          assert.strictEqual(refused.status, 400)
          assert.strictEqual(refused.message, "Invalid Date")
        }

        const resumed = yield* collect(api.pages("/keywords", { fromPage: 2 }))
        assert.deepStrictEqual(resumed.map((p) => p.page), [2, 3])

        const filtered = yield* collect(api.pages("/keywords", { filter: { description: "k7" } }))
        assert.deepStrictEqual(filtered.flatMap((p) => p.records.map((r) => r.description)), ["k7"])

        const log = yield* sandbox.control.requests
        assert.strictEqual(requestsTo(log, "GET", /\/keywords$/).length, 3 + 2 + 1)
        assert.strictEqual(requestsTo(log, "GET", /\/segments$/).length, 2)
        // A 404 answered while no other request was in flight is the end at once (one answered in a burst is asked
        // again alone: limits.test.ts).
        assert.strictEqual(requestsTo(log, "GET", /\/expensetypes$/).length, 1)
        assert.isTrue(requestsTo(log, "GET", /\/(keywords|segments)$/).every((e) => e.status === 200))
      }),
    30_000
  )

  it.scopedLive(
    "walks date windows, splitting the crowded ones, and resumes from any page of any window",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* makeClient(sandbox, { pageSize: 4, maxWindowPages: 2, concurrency: 8 })
        const user = yield* api.request({
          method: "POST",
          path: "/users",
          body: { login: "ana", password: "Troque@2026", name: "Ana" }
        })
        const userId = (user.result as { userID: number }).userID
        // 30 tasks on the days of November 2025, one on the last minute of a day, and a few spread over the years.
        const dates = [
          ...Array.from({ length: 30 }, (_, i) => `2025-11-${String(i + 1).padStart(2, "0")}T09:00:00`),
          "2025-12-31T23:59:59",
          "2021-03-04T10:00:00",
          "2023-07-08T00:00:00",
          "2026-01-01T00:00:00"
        ]
        yield* Effect.forEach(
          dates,
          (taskDate, i) =>
            api.request({
              method: "POST",
              path: "/tasks",
              body: { externalId: `T${i}`, idUserFrom: userId, taskDate }
            }),
          { concurrency: 8 }
        )
        const tasks = resource("tasks")
        const options = { resource: tasks, since: "2020-01-01", until: "2026-06-30" }
        const pages = yield* collect(api.pages("/tasks", options))
        const ids = pages.flatMap((p) => p.records.map((r) => r.taskID))
        assert.strictEqual(ids.length, dates.length)
        assert.strictEqual(new Set(ids).size, dates.length)

        // Windows (those with records) follow each other without overlapping, and none needs more than 2 pages.
        const windows = [...new Map(pages.map((p) => [p.window!.start, p.window!])).values()]
        assert.isTrue(windows[0]!.start >= "2020-01-01")
        assert.isTrue(windows.at(-1)!.end <= "2026-06-30")
        for (let i = 1; i < windows.length; i++) assert.isAbove(dayOf(windows[i]!.start)!, dayOf(windows[i - 1]!.end)!)
        assert.isAbove(windows.length, 4)
        for (const page of pages) {
          assert.isAtMost(page.page, 2)
          for (const record of page.records) {
            const day = String(record.taskDate).slice(0, 10)
            assert.isTrue(
              day >= page.window!.start && day <= page.window!.end,
              `${day} outside ${page.window!.start}..${page.window!.end}`
            )
          }
        }

        // An export interrupted after any page continues in that window from the next page, over the same range.
        for (const [i, done] of pages.entries()) {
          const rest = yield* collect(
            api.pages("/tasks", { ...options, window: done.window!, fromPage: done.page + 1 })
          )
          assert.deepStrictEqual(
            rest.flatMap((p) => p.records.map((r) => r.taskID)),
            pages.slice(i + 1).flatMap((p) => p.records.map((r) => r.taskID)),
            `resuming after page ${done.page} of ${done.window!.start}`
          )
        }

        // Every list call carried the window in paramFilter (tasks answer 400 without one).
        const log = yield* sandbox.control.requests
        assert.isTrue(requestsTo(log, "GET", /\/tasks$/).every((e) => e.status === 200 || e.status === 404))
      }),
    60_000
  )
})
