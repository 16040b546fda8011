/**
 * An import's read before write under the live service's burst errors (api-notes, "Live behaviour reported by
 * more public clients"): a 404 or 500 to a list call is never "no such record", so no burst makes a duplicate.
 * Segments are keyed by description, which the server does not keep unique: a wrong "absent" creates a second one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { importInto, put, readReport, startTestSandbox, tempDir } from "./support.js"

const names = ["Varejo", "Atacado", "Indústria", "Serviços", "Agro", "Saúde", "Educação", "Logística"]

describe("import under burst errors", () => {
  it.scopedLive(
    "a lookup that meets 404s and 500s on lists never creates a record that exists: one record per key",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const apiKey = sandbox.accounts[0]!.apiKey
        const file = put(dir, "segmentos.csv", ["description", ...names].join("\n") + "\n")
        const first = yield* importInto(sandbox, { resource: "segments", file, runDir: Path.join(dir, "first") })
        assert.strictEqual(first.exitCode, 0)
        // Every call made while another is in flight on the token fails (404 or 500), every empty filtered list
        // may answer 500: the lookups of the second run meet both.
        yield* sandbox.control.setFaults({ burstAbove: 1, burstRate: 1, latencyMs: 100, emptyListFailRate: 0.5 })
        yield* importInto(sandbox, { resource: "segments", file, runDir: Path.join(dir, "second") })
        yield* sandbox.control.setFaults({ burstAbove: 0, latencyMs: 0, emptyListFailRate: 0 })
        const log = yield* sandbox.control.requests
        assert.isAbove(log.filter((e) => e.method === "GET" && e.status === 404).length, 0)
        const stored = yield* sandbox.control.records(apiKey, "segments")
        assert.deepStrictEqual(stored.map((s) => s.description).sort(), [...names].sort())
        for (const row of readReport(Path.join(dir, "second"))) {
          assert.notStrictEqual(row._status, "created", JSON.stringify(row))
        }
      }),
    60_000
  )
})
