/**
 * An export continued after the server lowered a list's page cap (issue 23). The checkpoint says "page K of pages of
 * 50 is on disk"; the service now refuses 50 a page ("You cannot request more than 30 customers per page."). A new
 * run has learned nothing yet, so it asks page K + 1 of 50 as its checkpoint says: the 400 must not fail the run (it
 * did, on every rerun, since the limit is learned per run and the position is in pages of the old size). The walk
 * goes on from the same record in pages the server takes, each record once, and the checkpoint it writes from then on
 * records the new size, so a later continuation asks it at once. A real export, interrupted, on a real sandbox over
 * loopback, its page cap changed between the runs (`setPageCap`, the sandbox's `--page-cap`).
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { checkpointFile } from "../../src/export/Checkpoint.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import type { ResourceName } from "../../src/Resources.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { until } from "../import/support.js"
import { accountA, apiOf, csvCells, seedBulk, seedTasksOfYear, startTestSandbox, tempDir } from "./support.js"

const checkpointOf = (dir: string): any => {
  try {
    return JSON.parse(readFileSync(Path.join(dir, checkpointFile), "utf8"))
  } catch {
    return undefined // not written yet, or caught between write and rename
  }
}
const underWay = (dir: string, resource: string): any =>
  checkpointOf(dir)?.running?.find((p: any) => p.resource === resource)

/** 400 answers to GETs of `path` in the sandbox's log from entry `from` on. */
const refusedSince = (sandbox: RunningSandbox, from: number, path: string) =>
  Effect.map(
    sandbox.control.requests,
    (log) =>
      log.slice(from).filter((e) => e.method === "GET" && e.path.toLowerCase() === `/v2${path}` && e.status === 400)
        .length
  )

/**
 * Exports `resource` in pages of `pageSize`, interrupted once its checkpoint has `stopAt` pages on disk; the cap is
 * lowered to `cap`; the export is continued by a new client (a new run: nothing learned), interrupted again after a
 * page of the new size, and continued once more. Each continuation must equal the uninterrupted export.
 */
const continuedUnderLowerCap = (
  sandbox: RunningSandbox,
  resource: ResourceName,
  request: { readonly pageSize: number; readonly since?: string; readonly until?: string },
  stopAt: number,
  cap: number
) =>
  Effect.gen(function*() {
    const path = `/${resource}`
    const exportTo = (out: string, concurrency: number) =>
      Effect.flatMap(apiOf(sandbox, accountA, { concurrency }), (api) =>
        Effect.flatMap(
          prepareExport({
            resources: [resource],
            out,
            format: "csv",
            since: request.since,
            until: request.until,
            pageSize: request.pageSize,
            say: () => Effect.void
          }),
          runExport
        ).pipe(Effect.provideService(Api, api)))
    /** Runs the export into `dir` one page at a time, slowly, and interrupts it once `stop` holds of its checkpoint. */
    const interrupted = (dir: string, stop: (at: any) => boolean) =>
      Effect.gen(function*() {
        yield* sandbox.control.setFaults({ latencyMs: 40 })
        let ended = false
        const fiber = yield* Effect.fork(exportTo(dir, 1).pipe(Effect.ensuring(Effect.sync(() => (ended = true)))))
        yield* until(() => {
          const at = underWay(dir, resource)
          return ended || (at !== undefined && stop(at))
        }, 60_000)
        if (ended) {
          // Its failure (a refused page size) fails the test as it is; a walk that ended is a stop never reached.
          yield* Fiber.join(fiber)
          assert.fail("the export ended before the checkpoint it was to be interrupted at")
        }
        yield* Fiber.interrupt(fiber)
        yield* sandbox.control.setFaults({ latencyMs: 0 })
        return underWay(dir, resource)
      })

    const reference = yield* tempDir
    const full = yield* exportTo(reference, 8)
    const fullRows = csvCells(Path.join(reference, `${resource}.csv`))

    const dir = Path.join(yield* tempDir, "export")
    const first = yield* interrupted(dir, (at) => at.page >= stopAt)
    assert.strictEqual(first.pageSize, request.pageSize, "the checkpoint records the size asked")
    assert.isBelow(first.files[0].rows, full.manifest.resources[0]!.rows, "interrupted before its end")

    // The service now takes fewer records a page than the checkpoint's.
    yield* sandbox.control.setPageCap(resource, cap)
    const before = (yield* sandbox.control.requests).length
    // Interrupted again once a page of the size the server takes is on disk: that checkpoint records it.
    const second = yield* interrupted(dir, (at) => at.pageSize === cap)
    assert.isAtMost(yield* refusedSince(sandbox, before, path), 1, "the old size asked once, then the new one")
    assert.isAtLeast(second.files[0].rows, first.files[0].rows)

    const again = (yield* sandbox.control.requests).length
    const continued = yield* exportTo(dir, 8)
    assert.strictEqual(yield* refusedSince(sandbox, again, path), 0, "the recorded new size is asked at once")
    assert.isTrue(continued.continued)
    const rows = csvCells(Path.join(dir, `${resource}.csv`))
    assert.strictEqual(rows.length, fullRows.length, "as many rows as the uninterrupted export")
    assert.deepStrictEqual(rows, fullRows, "the same rows in the same order: none written twice, none left out")
    assert.strictEqual(continued.manifest.resources[0]!.sha256, full.manifest.resources[0]!.sha256)
  })

describe("an export continued after the server lowered the page cap", () => {
  it.scopedLive(
    "a list walked without date windows goes on from the record it reached, in pages the server takes",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        yield* Effect.promise(() => seedBulk(sandbox, { customers: 460, tasks: 0 }))
        // Pages of 50, then 30: page K + 1 of 50 starts at record 50K + 1, inside page ⌊50K / 30⌋ + 1 of 30.
        yield* continuedUnderLowerCap(sandbox, "customers", { pageSize: 50 }, 3, 30)
      }).pipe(Effect.provide(NodeContext.layer)),
    180_000
  )

  it.scopedLive(
    "a date-windowed list continues in its window from the record it reached, in pages the server takes",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        yield* Effect.promise(() => seedTasksOfYear(sandbox, 400))
        // Tasks are capped at 100 a page by the table; the service then takes only 40.
        yield* continuedUnderLowerCap(
          sandbox,
          "tasks",
          { pageSize: 100, since: "2026-01-01", until: "2026-12-31" },
          1,
          40
        )
      }).pipe(Effect.provide(NodeContext.layer)),
    180_000
  )
})
