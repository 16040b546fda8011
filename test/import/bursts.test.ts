/**
 * Imports under the live service's burst errors (api-notes, "Live behaviour reported by more public clients"): with
 * more than one request in flight on the token, every call answers 404 or 500, and nothing is applied. A 404 or
 * 500 is then not the truth about the record: a lookup never takes it for "no such record" (no duplicate), and a
 * write never ends `failed` on it (the same write alone succeeds). Every row must end as it would without bursts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { runImport } from "../../src/import/Pipeline.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import {
  apiOf,
  customersCsv,
  importInto,
  job,
  put,
  readReport,
  rowStatuses,
  startTestSandbox,
  tempDir,
  writes
} from "./support.js"

/** Every call made while another is in flight on the token fails (404 or 500); empty filtered lists may answer 500. */
const bursts = (sandbox: RunningSandbox) =>
  sandbox.control.setFaults({ burstAbove: 1, burstRate: 1, latencyMs: 30, emptyListFailRate: 0.5 })

const expected = (n: number, status: string) => Array.from({ length: n }, (_, i) => `${i + 2}:${status}`)

describe("import under burst errors", () => {
  it.scopedLive(
    "lookups that meet 404s and 500s on lists find the records that exist: every row unchanged, one record per key",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const apiKey = sandbox.accounts[0]!.apiKey
        const n = 160
        const file = put(dir, "clientes.csv", customersCsv(n))
        const first = yield* importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "first") })
        assert.strictEqual(first.exitCode, 0)
        yield* bursts(sandbox)
        // Pages of 10 make filtered calls (50 keys each, several at once) cheaper than a walk: a burst's 404 read
        // as "absent" would send a create for a record that exists.
        const runDir = Path.join(dir, "second")
        const second = yield* runImport(job({ resource: "customers", file, runDir })).pipe(
          Effect.provide(apiOf(sandbox, apiKey, { pageSize: 10 }))
        )
        const log = yield* sandbox.control.requests
        assert.isAbove(log.filter((e) => e.method === "GET" && e.status === 404).length, 0, "bursts happened")
        assert.deepStrictEqual(rowStatuses(readReport(runDir)), expected(n, "unchanged"))
        assert.strictEqual(second.exitCode, 0)
        assert.strictEqual(
          writes(log).filter((e) => e.path.endsWith("/customers")).length,
          n,
          "no write the second time"
        )
        const stored = yield* sandbox.control.records(apiKey, "customers")
        assert.strictEqual(stored.length, n, "one record per key")
      }),
    60_000
  )

  it.scopedLive(
    "writes answered 404 or 500 in a burst are asked again alone: update, delete and create rows all end well",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const apiKey = sandbox.accounts[0]!.apiKey
        const n = 8
        const seeded = yield* importInto(sandbox, {
          resource: "customers",
          file: put(dir, "clientes.csv", customersCsv(n)),
          runDir: Path.join(dir, "seed")
        })
        assert.strictEqual(seeded.exitCode, 0)
        yield* bursts(sandbox)
        const runs = [
          {
            mode: "update" as const,
            csv: ["externalId;name", ...Array.from({ length: n }, (_, i) => `K-${i};Cliente Renomeado ${i}`)],
            status: "updated"
          },
          {
            mode: "delete" as const,
            csv: ["externalId", ...Array.from({ length: n / 2 }, (_, i) => `K-${i}`)],
            status: "deleted"
          },
          {
            mode: "create" as const,
            csv: ["externalId;name", ...Array.from({ length: n }, (_, i) => `N-${i};Cliente Novo ${i}`)],
            status: "created"
          }
        ]
        for (const run of runs) {
          const runDir = Path.join(dir, run.mode)
          const before = writes(yield* sandbox.control.requests).length
          const result = yield* importInto(sandbox, {
            resource: "customers",
            file: put(dir, `${run.mode}.csv`, run.csv.join("\r\n") + "\r\n"),
            runDir,
            mode: run.mode
          })
          const report = readReport(runDir)
          assert.deepStrictEqual(
            rowStatuses(report),
            expected(run.csv.length - 1, run.status),
            `${run.mode}: ${report.map((r) => r._error).filter(Boolean).join(" | ")}`
          )
          assert.strictEqual(result.exitCode, 0, run.mode)
          const burst = writes(yield* sandbox.control.requests).slice(before)
            .filter((e) => e.status === 404 || e.status === 500)
          assert.isAbove(burst.length, 0, `${run.mode}: some writes met a burst`)
        }
        const stored = yield* sandbox.control.records(apiKey, "customers")
        const byKey = new Map(stored.map((c) => [String(c.externalId), String(c.description)]))
        assert.strictEqual(byKey.size, stored.length, "one record per key")
        assert.deepStrictEqual(
          [...byKey].sort(),
          [
            ...Array.from({ length: n / 2 }, (_, i) => [`K-${i + n / 2}`, `Cliente Renomeado ${i + n / 2}`]),
            ...Array.from({ length: n }, (_, i) => [`N-${i}`, `Cliente Novo ${i}`])
          ].sort()
        )
      }),
    90_000
  )
})
