/**
 * The scheduling of a date-windowed walk of a slow list (issue 23, the slow-export bench): the walk keeps the
 * client's in-flight limit busy (8 requests at once) as soon as the counts are answered and never goes over it,
 * every window is counted (`pageSize=1`, a fraction of a page's time) before its pages are asked, and no page is
 * asked twice; a small list costs its count and its page, an empty one its count. In-flight counts come from the sandbox's request log (its count on the token when each
 * request arrived); the queries from the walk's GETs, sent through the real client.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import type { ApiRequest, ListOptions } from "../../src/client/Api.js"
import { ClientConfig, safeInFlight } from "../../src/client/Config.js"
import { type Get, makePages } from "../../src/client/Pages.js"
import { resource } from "../../src/Resources.js"
import { oncePerFile } from "../support.js"
import { makeClient, requestsTo, startTestSandbox } from "./support.js"

const tasks = 240
const pageSize = 10
const dayOfYear = (i: number) =>
  new Date(Date.UTC(2026, 0, 1 + Math.floor((i * 365) / tasks))).toISOString().slice(0, 10)

/**
 * A sandbox holding a year of 240 tasks spread evenly, seeded once for the file: the walks only read it (each walk
 * seeded its own, 240 requests, eight times).
 */
const theYear = oncePerFile(Effect.gen(function*() {
  const sandbox = yield* startTestSandbox()
  const api = yield* makeClient(sandbox, { concurrency: 8 })
  const user = yield* api.request({ method: "POST", path: "/users", body: { login: "ana", name: "Ana" } })
  const idUserFrom = (user.body as { result: { userID?: number; id?: number } }).result
  yield* Effect.forEach(
    Array.from({ length: tasks }, (_, i) => i),
    (i) =>
      api.request({
        method: "POST",
        path: "/tasks",
        body: {
          externalId: `OS-${i}`,
          idUserFrom: idUserFrom.userID ?? idUserFrom.id,
          taskDate: `${dayOfYear(i)}T09:00:00`
        }
      }),
    { concurrency: 8, discard: true }
  )
  return sandbox
}))

/**
 * The year's tasks walked in pages of 10 with windows of at most `maxWindowPages` pages from a
 * sandbox answering a page in `pageMs`: the pages read, the queries asked (in order) and the sandbox's log of them.
 */
const walkTheYear = (
  maxWindowPages: number,
  pageMs: number,
  range: { readonly since: string; readonly until: string } = { since: "2026-01-01", until: "2026-12-31" },
  /** A continued walk: the window and page it goes on after, and that page's size. */
  continued?: Pick<ListOptions, "fromPage" | "fromPageSize" | "window">
) =>
  Effect.gen(function*() {
    const sandbox = yield* theYear
    const overrides = { pageSize, concurrency: safeInFlight, maxWindowPages }
    // A client of its own (its own token, which the sandbox counts the requests in flight on), logged in and with its
    // connections open before the walk, as when each walk's client had seeded the year first: connecting during the
    // walk's first rounds kept one of its 8 requests from overlapping the others at load 10 (7 in flight, 2026-11-29).
    const api = yield* makeClient(sandbox, overrides)
    yield* Effect.forEach(
      Array.from({ length: safeInFlight }, () => ({ method: "GET" as const, path: "/users/1" })),
      (req) => api.request(req),
      { concurrency: "unbounded", discard: true }
    )
    yield* sandbox.control.setFaults({ pageLatencyPerRecordMs: pageMs / pageSize })
    const from = (yield* sandbox.control.requests).length

    const asked: Array<string> = []
    const get: Get = (path, query, trustNotFound) =>
      Effect.suspend(() => {
        asked.push(JSON.stringify(query))
        const req: ApiRequest = { method: "GET", path, query, ...(trustNotFound === true ? { trustNotFound } : {}) }
        return api.request(req)
      })
    const settings = ClientConfig.make({
      baseUrl: sandbox.url,
      credentials: sandbox.accounts[0]!,
      rate: { limit: 10_000, windowMs: 1_000 },
      ...overrides
    })
    const pages = Chunk.toArray(
      yield* Stream.runCollect(
        makePages(settings, get)("/tasks", { resource: resource("tasks"), ...range, ...continued })
      )
    )
    const lists = requestsTo((yield* sandbox.control.requests).slice(from), "GET", /\/tasks$/)

    // Every task of the range, once; no page of a window asked twice; every request answered (none over the limit).
    const ids = pages.flatMap((p) => p.records.map((r) => r.taskID ?? r.id))
    const read = continued?.fromPage !== undefined ? (continued.fromPage - 1) * continued.fromPageSize! : 0
    const inRange = Array.from({ length: tasks }, (_, i) =>
      dayOfYear(i)).filter((d) => d >= range.since && d <= range.until).length - read
    assert.strictEqual(ids.length, inRange)
    assert.strictEqual(new Set(ids).size, inRange)
    assert.strictEqual(new Set(asked).size, asked.length, `a page was asked twice:\n${asked.join("\n")}`)
    assert.strictEqual(lists.length, asked.length)
    // (An empty range answers its count 404, as the live service does.)
    assert.isTrue(
      lists.every((e) =>
        e.status === 200 || (e.status === 404 && inRange === 0)
      ),
      "an error answer: the walk went over the limit"
    )
    assert.isAtMost(Math.max(...lists.map((e) => e.inFlight)), safeInFlight)
    return { pages, asked, lists }
  })

const sizeOf = (q: string) => (JSON.parse(q) as { pageSize: number }).pageSize

const windowOf = (q: string) => {
  const f = (JSON.parse(q) as { paramFilter: { startDate: string; endDate: string } }).paramFilter
  return `${f.startDate.slice(0, 10)}..${f.endDate.slice(0, 10)}`
}

describe("a windowed walk of a slow list", () => {
  it.scopedLive(
    "fills the in-flight limit as soon as the windows are counted, with no request but the counts and the pages it reads",
    () =>
      Effect.gen(function*() {
        // Windows of at most 12 pages: the year (24 pages) is split in halves (120 tasks, 12 pages each).
        const { asked, lists, pages } = yield* walkTheYear(12, 500)
        // Nothing asked but three counts (the year, then its halves at once) and the 24 pages read.
        assert.strictEqual(pages.length, tasks / pageSize)
        assert.strictEqual(asked.length, pages.length + 3, `requests beyond the pages:\n${asked.join("\n")}`)
        assert.deepStrictEqual(asked.slice(0, 3).map((q) => `${windowOf(q)} ${sizeOf(q)}`), [
          "2026-01-01..2026-12-31 1",
          "2026-01-01..2026-07-01 1",
          "2026-07-02..2026-12-31 1"
        ])
        assert.isTrue(asked.slice(3).every((q) => sizeOf(q) === pageSize))
        // The counts answered, every page of the year is known: the first 8 pages are asked at once, the 8th
        // arriving with 8 in flight (a page takes 500 ms, a count 50 ms: no page answered before the 8th is asked).
        const most = Math.max(...lists.slice(3, 11).map((e) => e.inFlight))
        assert.strictEqual(most, safeInFlight, `at most ${most} in flight among the first 8 pages`)
      }),
    120_000
  )

  it.scopedLive(
    "keeps the in-flight limit full through split windows, never above it, with each window probed before the one before is all asked",
    () =>
      Effect.gen(function*() {
        // Windows of at most 5 pages: each half holds 12, so it is split, and the year is walked in 8 windows.
        const { asked, lists, pages } = yield* walkTheYear(5, 100)
        const windows = [...new Set(pages.map((p) => `${p.window!.start}..${p.window!.end}`))]
        assert.isAbove(windows.length, 4, "the year was walked in few windows: the test proves nothing")
        // Requests beyond the pages: the year's count and one count of each window, all asked before any page.
        assert.strictEqual(asked.length, pages.length + 1 + windows.length, `requests:\n${asked.join("\n")}`)
        assert.isTrue(asked.slice(0, 1 + windows.length).every((q) => sizeOf(q) === 1))

        // Each window after the first is probed before the window before it is all asked for.
        for (const [before, after] of windows.slice(0, -1).map((w, i) => [w, windows[i + 1]!] as const)) {
          const lastOfBefore = asked.map(windowOf).lastIndexOf(before)
          const firstOfAfter = asked.map(windowOf).indexOf(after)
          assert.isBelow(firstOfAfter, lastOfBefore, `window ${after} was asked only after ${before} was done`)
        }
        const most = Math.max(...lists.map((e) => e.inFlight))
        assert.strictEqual(most, safeInFlight, `at most ${most} requests were in flight`)
      }),
    120_000
  )

  it.scopedLive(
    "costs a small list its count and its one page, and an empty one its count",
    () =>
      Effect.gen(function*() {
        // The first 8 days of the year hold 6 tasks (one page of 10); 2025 holds none.
        const small = yield* walkTheYear(40, 10, { since: "2026-01-01", until: "2026-01-08" })
        assert.strictEqual(small.pages.length, 1)
        assert.strictEqual(small.pages[0]!.records.length, 6)
        assert.deepStrictEqual(small.asked.map(sizeOf), [1, pageSize], `requests:\n${small.asked.join("\n")}`)
        const empty = yield* walkTheYear(40, 10, { since: "2025-01-01", until: "2025-12-31" })
        assert.strictEqual(empty.pages.length, 0)
        assert.deepStrictEqual(empty.asked.map(sizeOf), [1], `requests:\n${empty.asked.join("\n")}`)
      }),
    120_000
  )

  it.scopedLive(
    "asks pages that fill the last round of the in-flight limit, never larger than the walk's size",
    () =>
      Effect.gen(function*() {
        // January to October: 200 tasks, 20 pages of 10, 3 rounds of 8 of which the last would hold 4. In pages of
        // 9 they are 23 (200 / 9), the 3 rounds nearly full.
        const { asked, pages } = yield* walkTheYear(40, 10, { since: "2026-01-01", until: "2026-10-31" })
        assert.deepStrictEqual(asked.slice(0, 1).map(sizeOf), [1])
        assert.deepStrictEqual([...new Set(asked.slice(1).map(sizeOf))], [9], `requests:\n${asked.join("\n")}`)
        assert.strictEqual(pages.length, 23)
        assert.isTrue(pages.every((p) => p.size === 9))
      }),
    120_000
  )

  it.scopedLive(
    "continues an interrupted walk in the size its checkpoint recorded, or from the same record in the size the list takes",
    () =>
      Effect.gen(function*() {
        const year = { start: "2026-01-01", end: "2026-12-31" }
        // 4 pages of 5 read: the walk goes on with page 5 of 5 (pages of 10 would start at record 41).
        const same = yield* walkTheYear(40, 10, undefined, { window: year, fromPage: 5, fromPageSize: 5 })
        assert.deepStrictEqual(JSON.parse(same.asked[0]!).page, 5, `requests:\n${same.asked.join("\n")}`)
        assert.isTrue(same.asked.every((q) => sizeOf(q) === 5), `requests:\n${same.asked.join("\n")}`)
        assert.isTrue(same.pages.every((p) => p.size === 5))
        // 1 page of 150 read, more than tasks' 100 a page: the walk goes on from record 151, in pages of 10 (page 16).
        const over = yield* walkTheYear(40, 10, undefined, { window: year, fromPage: 2, fromPageSize: 150 })
        assert.strictEqual(JSON.parse(over.asked[0]!).page, 16, `requests:\n${over.asked.join("\n")}`)
        assert.isTrue(over.asked.every((q) => sizeOf(q) === pageSize))
        // 1 page of 105: record 106 is the 6th of page 11 of 10, the first 5 of it left out.
        const skip = yield* walkTheYear(40, 10, undefined, { window: year, fromPage: 2, fromPageSize: 105 })
        assert.strictEqual(JSON.parse(skip.asked[0]!).page, 11, `requests:\n${skip.asked.join("\n")}`)
        assert.strictEqual(skip.pages[0]!.records.length, 5)
      }),
    120_000
  )
})
