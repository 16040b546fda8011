/**
 * An export of a slow service (issue 23): the pages of a list and of a date window, and the resources of an
 * export, are fetched several at once, within the client's in-flight limit, and taken in page order, so the files
 * are byte for byte those of a walk one page at a time.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { safeInFlight } from "../../src/client/Config.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { accountA, apiOf, seedEverything, startTestSandbox, tempDir } from "./support.js"

describe("an export of a slow service", () => {
  it.scopedLive(
    "walks pages several at once, never more than the in-flight limit, and writes what a page-by-page walk writes",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const seeding = yield* apiOf(sandbox, accountA)
        yield* Effect.forEach(
          Array.from({ length: 120 }, (_, i) => i + 1),
          (i) => seeding.request({ method: "POST", path: "/segments", body: { description: `Segmento ${i}` } }),
          { concurrency: 8, discard: true }
        )
        yield* seeding.request({ method: "POST", path: "/users", body: { login: "ana", name: "Ana" } })
        yield* Effect.forEach(
          Array.from({ length: 150 }, (_, i) => i),
          (i) =>
            seeding.request({
              method: "POST",
              path: "/tasks",
              body: {
                externalId: `OS-${i}`,
                idUserFrom: 1,
                taskDate: `2026-06-${String(1 + (i % 28)).padStart(2, "0")}`
              }
            }),
          { concurrency: 8, discard: true }
        )
        // Pages of 10 take 50 ms: long enough for the next pages to be asked while one is answered.
        yield* sandbox.control.setFaults({ pageLatencyPerRecordMs: 5 })

        const exportWith = (concurrency: number) =>
          Effect.gen(function*() {
            // Windows of at most 3 pages: the tasks come in several windows, the next walked while one is written.
            const api = yield* apiOf(sandbox, accountA, { concurrency, maxWindowPages: 3 })
            const out = yield* tempDir
            const from = (yield* sandbox.control.requests).length
            const result = yield* runExport(
              yield* prepareExport({
                resources: ["segments", "tasks"],
                out,
                format: "csv",
                since: "2026-01-01",
                until: "2026-12-31",
                pageSize: 10,
                say: () => Effect.void
              })
            ).pipe(Effect.provideService(Api, api))
            const lists = (yield* sandbox.control.requests).slice(from).filter((e) =>
              e.method === "GET" && /\/(segments|tasks)$/.test(e.path)
            )
            return { out, result, lists }
          })

        const oneByOne = yield* exportWith(1)
        const together = yield* exportWith(safeInFlight)
        for (const file of ["segments.csv", "tasks.csv"]) {
          const a = Fs.readFileSync(Path.join(oneByOne.out, file))
          const b = Fs.readFileSync(Path.join(together.out, file))
          assert.isTrue(a.equals(b), `${file} differs from the page-by-page export`)
        }
        assert.deepStrictEqual(
          together.result.manifest.resources.map((r) => [r.name, r.rows, r.sha256]),
          oneByOne.result.manifest.resources.map((r) => [r.name, r.rows, r.sha256])
        )
        assert.strictEqual(together.result.manifest.resources.find((r) => r.name === "segments")!.rows, 120)
        assert.strictEqual(together.result.manifest.resources.find((r) => r.name === "tasks")!.rows, 150)

        const most = (lists: ReadonlyArray<{ readonly inFlight: number }>) => Math.max(...lists.map((e) => e.inFlight))
        assert.strictEqual(most(oneByOne.lists), 1)
        const segments = together.lists.filter((e) => e.path.endsWith("/segments"))
        const tasks = together.lists.filter((e) => e.path.endsWith("/tasks"))
        assert.isAbove(most(segments), 1, "the pages of a list were asked one at a time")
        assert.isAbove(most(tasks), 1, "the pages of a date window were asked one at a time")
        assert.isAtMost(most(together.lists), safeInFlight)
        // No page was asked twice: a walk fetched ahead only the pages the first page's count said exist.
        assert.strictEqual(segments.length, oneByOne.lists.filter((e) => e.path.endsWith("/segments")).length)

        // The year is counted alone, then the windows its count needs (150 tasks, pages of 10, at most 3 a window:
        // 8 of them) are counted at once: the next requests are in flight together.
        const alone = yield* tempDir
        const from = (yield* sandbox.control.requests).length
        yield* runExport(
          yield* prepareExport({
            resources: ["tasks"],
            out: alone,
            format: "csv",
            since: "2026-01-01",
            until: "2026-12-31",
            pageSize: 10,
            say: () => Effect.void
          })
        ).pipe(Effect.provideService(Api, yield* apiOf(sandbox, accountA, { maxWindowPages: 3 })))
        const probes = (yield* sandbox.control.requests).slice(from).filter((e) => e.path.endsWith("/tasks"))
        assert.strictEqual(probes[0]!.inFlight, 1)
        assert.isAbove(
          Math.max(...probes.slice(1, 9).map((e) => e.inFlight)),
          1,
          "the windows were counted one after the other"
        )
        assert.isTrue(
          Fs.readFileSync(Path.join(alone, "tasks.csv")).equals(Fs.readFileSync(Path.join(together.out, "tasks.csv")))
        )
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )

  it.scopedLive(
    "walks the resources of a whole-account export concurrently, within the in-flight limit, with the files and manifest of walks one at a time",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        yield* Effect.promise(() => seedEverything(sandbox))
        // Slow answers, as the live service's: a walk's requests are in flight long enough for others to join them.
        yield* sandbox.control.setFaults({ latencyMs: 100 })
        const exportWith = (concurrency: number) =>
          Effect.gen(function*() {
            const api = yield* apiOf(sandbox, accountA, { concurrency })
            const out = yield* tempDir
            const from = (yield* sandbox.control.requests).length
            const result = yield* runExport(
              yield* prepareExport({
                resources: [],
                out,
                format: "csv",
                since: undefined,
                until: undefined,
                say: () => Effect.void
              })
            ).pipe(Effect.provideService(Api, api))
            const gets = (yield* sandbox.control.requests).slice(from).filter((e) =>
              e.method === "GET" && !/\/login$/i.test(e.path)
            )
            return { out, result, gets }
          })
        const oneAtATime = yield* exportWith(1)
        const together = yield* exportWith(safeInFlight)

        const entries = (r: typeof together.result) =>
          r.manifest.resources.map((e) => [e.name, e.file, e.rows, e.sha256])
        assert.deepStrictEqual(
          entries(together.result),
          entries(oneAtATime.result),
          "the same files, in the same order"
        )
        assert.isAbove(together.result.manifest.resources.length, 5)
        for (const e of together.result.manifest.resources) {
          const a = Fs.readFileSync(Path.join(oneAtATime.out, e.file))
          assert.isTrue(a.equals(Fs.readFileSync(Path.join(together.out, e.file))), `${e.file} differs`)
        }
        // Every list of this account fits in one page: walked one after another, one request is in flight at a
        // time; walked concurrently, several resources' pages are asked at once, never more than the limit.
        const most = (gets: typeof together.gets) => Math.max(...gets.map((e) => e.inFlight))
        assert.strictEqual(most(oneAtATime.gets), 1)
        assert.isAtLeast(most(together.gets), 3, "resources were walked one after another")
        assert.isAtMost(most(together.gets), safeInFlight)
        // No page more than walks one at a time; only a 404 answered while others were in flight is asked again
        // alone (it may be a burst's), so 404s are left out of the count.
        const pages = (gets: typeof together.gets) => gets.filter((e) => e.status !== 404).length
        assert.strictEqual(pages(together.gets), pages(oneAtATime.gets), "no page more than walks one at a time")
      }).pipe(Effect.provide(NodeContext.layer)),
    90_000
  )
})
