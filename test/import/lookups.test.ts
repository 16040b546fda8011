/**
 * What a failed lookup does to a run. A list that cannot be read (the server keeps failing) is a per-row problem:
 * the rows that needed it end `failed`, naming it, and the run goes on. A login the API refuses is not: it aborts
 * the run with `ApiAborted` (exit 3) before any write, whichever lookup meets it first.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { runImport } from "../../src/import/Pipeline.js"
import {
  apiOf,
  job,
  put,
  readJournalLines,
  readReport,
  readSummary,
  startTestSandbox,
  tempDir,
  writes
} from "./support.js"

describe("lookups before sending", () => {
  it.scopedLive(
    "a list the server keeps failing leaves its rows failed and the run ends (exit 1), no write",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "s.csv", "description\nVarejo\nAtacado\n")
        const runDir = Path.join(dir, "run")
        const result = yield* Effect.gen(function*() {
          // Logged in first: from then on every request is answered 500 (nothing applied), lists included.
          yield* (yield* Api).request({ method: "GET", path: "/segments" })
          yield* sandbox.control.setFaults({ failRate: 1 })
          return yield* runImport(job({ resource: "segments", file, runDir }))
        }).pipe(Effect.provide(apiOf(sandbox, undefined, { maxAttempts: 2 })))
        assert.strictEqual(result.exitCode, 1)
        assert.isFalse(result.interrupted)
        assert.strictEqual(result.summary.aborted, null)
        const report = readReport(runDir)
        assert.deepStrictEqual(report.map((r) => r._status), ["failed", "failed"])
        assert.isTrue(
          report.every((r) => /^could not look existing segments records up: /.test(r._error!)),
          JSON.stringify(report)
        )
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)
      }),
    30_000
  )

  it.scopedLive(
    "rejected credentials abort the run before any write: ApiAborted, rows not attempted, the journal kept",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const wrong = { credentials: { apiKey: "sandbox-key", apiToken: "wrong" } }
        const cases = [
          {
            name: "keys",
            job: { resource: "segments" as const, file: put(dir, "s.csv", "description\nVarejo\nAtacado\n") }
          },
          {
            name: "update",
            job: {
              resource: "customers" as const,
              file: put(dir, "u.csv", "externalId,name\nK-1,Um\n"),
              mode: "update" as const
            }
          },
          {
            name: "dry",
            job: { resource: "customers" as const, file: put(dir, "d.csv", "externalId,name\nK-1,Um\n"), dryRun: true }
          },
          {
            name: "refs",
            job: {
              resource: "customers" as const,
              file: put(dir, "r.csv", "externalId,name,segmentDescription\nK-1,Um,Varejo\n")
            }
          }
        ]
        for (const c of cases) {
          const runDir = Path.join(dir, c.name)
          const outcome = yield* Effect.either(
            runImport(job({ ...c.job, runDir })).pipe(Effect.provide(apiOf(sandbox, undefined, wrong)))
          )
          assert.isTrue(Either.isLeft(outcome), c.name)
          assert.strictEqual(Either.isLeft(outcome) ? outcome.left._tag : "", "ApiAborted", c.name)
          const summary = readSummary(runDir)
          assert.strictEqual(summary.exitCode, 3, c.name)
          assert.match(summary.aborted, /rejected the credentials/, c.name)
          assert.isTrue(readReport(runDir).every((r) => r._status === "skipped"), c.name)
          const end = readJournalLines(runDir).at(-1)!
          assert.strictEqual(end.state, "end", c.name)
          assert.match(end.aborted, /rejected the credentials/, c.name)
        }
        assert.strictEqual(writes(yield* sandbox.control.requests).length, 0)
      }),
    30_000
  )
})
