/**
 * An export during deletions (issue 28, item 9): records deleted before the page being read move the later pages,
 * so a walk that carries on skips records that existed throughout. The walk sees the shift (the list's count
 * changed) and the resource is walked again; the export never reports success with records missing.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { eventually } from "../client/support.js"
import { accountA, apiOf, readCsv, startTestSandbox, tempDir } from "./support.js"

describe("an export while records are deleted", () => {
  it.scopedLive(
    "12 records deleted while page 2 is in transit: the export has every record that existed throughout",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const api = yield* apiOf(sandbox, accountA)
        yield* Effect.forEach(
          Array.from({ length: 60 }, (_, i) => i + 1),
          (i) => api.request({ method: "POST", path: "/segments", body: { description: `Segmento ${i}` } }),
          { concurrency: 1, discard: true }
        )
        const ids = (yield* sandbox.control.records(accountA.apiKey, "segments")).map((s) => Number(s["id"]))
        // Pages of 20 take a second each: page 2 is on its way when the deletions land.
        yield* sandbox.control.setFaults({ pageLatencyPerRecordMs: 50 })
        const out = yield* tempDir
        const said: Array<string> = []
        const exporting = yield* runExport(
          yield* prepareExport({
            resources: ["segments"],
            out,
            format: "csv",
            since: undefined,
            until: undefined,
            pageSize: 20,
            say: (line) => Effect.sync(() => said.push(line))
          })
        ).pipe(Effect.provideService(Api, api), Effect.fork)
        const firstPageAnswered = () =>
          Effect.map(sandbox.control.requests, (log) =>
            log.some((e) => e.method === "GET" && /\/segments$/.test(e.path) && e.status === 200))
        yield* eventually(firstPageAnswered(), 30_000)
        const deleted = ids.slice(0, 12)
        yield* Effect.forEach(
          deleted,
          (id) =>
            api.request({ method: "DELETE", path: `/segments/${id}` }),
          { concurrency: 4, discard: true }
        )
        const result = yield* Fiber.join(exporting)
        const exported = readCsv(Path.join(out, "segments.csv")).rows.map((r) => Number(r["id"]))
        const throughout = ids.filter((id) => !deleted.includes(id))
        assert.includeMembers(exported, throughout)
        assert.strictEqual(new Set(exported).size, exported.length)
        assert.strictEqual(result.manifest.resources.find((e) => e.name === "segments")!.rows, exported.length)
        assert.isTrue(said.some((l) => /changed while it was read/.test(l)), said.join("\n"))
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )
})
