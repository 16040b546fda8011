/**
 * The scheduling of a date-windowed walk of a slow list (issue 23, the slow-export bench): the walk keeps the
 * client's in-flight limit busy (8 requests at once) and never goes over it, windows after the first are probed and
 * walked while the one before is still answered, and no page of a window is asked twice. In-flight counts come from
 * the sandbox's request log (its count on the token when each request arrived); the queries from the walk's GETs,
 * sent through the real client.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import type { ApiRequest } from "../../src/client/Api.js"
import { ClientConfig, safeInFlight } from "../../src/client/Config.js"
import { type Get, makePages } from "../../src/client/Pages.js"
import { resource } from "../../src/Resources.js"
import { makeClient, requestsTo, startTestSandbox } from "./support.js"

const tasks = 240
const pageSize = 10
const dayOfYear = (i: number) =>
  new Date(Date.UTC(2026, 0, 1 + Math.floor((i * 365) / tasks))).toISOString().slice(0, 10)

describe("a windowed walk of a slow list", () => {
  it.scopedLive(
    "keeps the in-flight limit full, never above it, with windows pipelined and no page asked twice",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const overrides = { pageSize, concurrency: safeInFlight, maxWindowPages: 12 }
        const api = yield* makeClient(sandbox, overrides)
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
        // A page of 10 tasks takes 100 ms: long enough for every slot to be taken while pages are answered.
        yield* sandbox.control.setFaults({ pageLatencyPerRecordMs: 10 })
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
            makePages(settings, get)("/tasks", {
              resource: resource("tasks"),
              since: "2026-01-01",
              until: "2026-12-31"
            })
          )
        )

        // Every task, once, in windows read one after the other.
        const ids = pages.flatMap((p) => p.records.map((r) => r.taskID ?? r.id))
        assert.strictEqual(ids.length, tasks)
        assert.strictEqual(new Set(ids).size, tasks)
        const windows = [...new Set(pages.map((p) => `${p.window!.start}..${p.window!.end}`))]
        assert.isAbove(windows.length, 2, "the year was walked in one or two windows: the test proves nothing")

        // Each window after the first is probed before the window before it is all asked for.
        const windowOf = (q: string) => {
          const f = (JSON.parse(q) as { paramFilter: { startDate: string; endDate: string } }).paramFilter
          return `${f.startDate.slice(0, 10)}..${f.endDate.slice(0, 10)}`
        }
        for (const [before, after] of windows.slice(0, -1).map((w, i) => [w, windows[i + 1]!] as const)) {
          const lastOfBefore = asked.map(windowOf).lastIndexOf(before)
          const firstOfAfter = asked.map(windowOf).indexOf(after)
          assert.isBelow(firstOfAfter, lastOfBefore, `window ${after} was asked only after ${before} was done`)
        }

        // No page of a window asked twice (a probe is its window's first page, kept).
        assert.strictEqual(new Set(asked).size, asked.length, `a page was asked twice:\n${asked.join("\n")}`)

        const lists = requestsTo((yield* sandbox.control.requests).slice(from), "GET", /\/tasks$/)
        assert.strictEqual(lists.length, asked.length)
        assert.isTrue(lists.every((e) => e.status === 200), "an error answer: the walk went over the limit")
        const most = Math.max(...lists.map((e) => e.inFlight))
        assert.strictEqual(most, safeInFlight, `at most ${most} requests were in flight`)
      }),
    120_000
  )
})
