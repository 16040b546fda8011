/**
 * Number and date fidelity end to end. Ids beyond 2^53 (a server whose ids are 64-bit) keep every digit from the
 * answer's JSON to the export's file, its fingerprints and back into an import's id column (a double would round
 * two records into one id). A date-time with a zone is refused on import, naming the column and the local time to
 * write, instead of losing its zone (the API takes local time without one: a dropped `Z` shifted tasks by 3 h).
 * The real sandbox over loopback, behind a proxy that gives its records 64-bit ids.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { losslessJson, parseBody } from "../../src/client/Body.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { runImport } from "../../src/import/Pipeline.js"
import { ImportServices } from "../../src/import/Services.js"
import { apiOf, importInto, job, put, readReport, startTestSandbox, tempDir, writes } from "../import/support.js"

const big = ["9007199254740993", "9007199254740992"] as const

/** A proxy in front of `target` that answers ids 1 and 2 as the 64-bit ids `big` (as the bytes of the answer). */
const bigIdProxy = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<Http.Server>((resolve) => {
        const server = Http.createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c) => chunks.push(c))
          req.on("end", async () => {
            // Asked by a 64-bit id, the sandbox is asked by its own.
            const down = (t: string) => t.split(big[0]).join("1").split(big[1]).join("2")
            const url = new URL(down(req.url!), "http://x")
            const upstream = await fetch(`${target}${url.pathname.replace(/^\/v2/, "")}${url.search}`, {
              method: req.method!,
              headers: Object.fromEntries(
                Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k))
              ) as Record<string, string>,
              ...(chunks.length > 0 ? { body: down(Buffer.concat(chunks).toString("utf8")) } : {})
            })
            const text = (await upstream.text())
              .replace(/"id":\s*1(?=[,}\s])/g, `"id":${big[0]}`)
              .replace(/"id":\s*2(?=[,}\s])/g, `"id":${big[1]}`)
            res.writeHead(upstream.status, {
              "content-type": upstream.headers.get("content-type") ?? "application/json"
            })
            res.end(text)
          })
        })
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
    ),
    (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

describe("numbers and dates keep their meaning", () => {
  it("an answer's integers beyond 2^53 are kept to the digit; other numbers and strings are untouched", () => {
    const text = `{"result":[{"id":${big[0]},"note":"id ${big[1]} \\" 12345678901234567","n":-12.5,"e":1e21,` +
      `"neg":-${big[0]},"small":42}]}`
    const parsed = parseBody(text) as { result: Array<Record<string, unknown>> }
    assert.deepStrictEqual(parsed.result[0], {
      id: big[0],
      note: `id ${big[1]} " 12345678901234567`,
      n: -12.5,
      e: 1e21,
      neg: `-${big[0]}`,
      small: 42
    })
    assert.strictEqual(losslessJson("{\"id\":1}"), "{\"id\":1}")
  })

  it.scopedLive("two records with 64-bit ids are exported with two ids, and the ids read back whole on import", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\n"),
        runDir: Path.join(dir, "seed")
      })
      const proxy = yield* bigIdProxy(sandbox.url)
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v2`
      const out = Path.join(dir, "export")
      const api = yield* Effect.provide(Api, apiOf(sandbox, undefined, { baseUrl: proxyUrl }))
      yield* runExport(
        yield* prepareExport({
          resources: ["customers"],
          out,
          format: "csv",
          since: undefined,
          until: undefined,
          say: () => Effect.void
        })
      ).pipe(Effect.provideService(Api, api))
      const rows = parse(readFileSync(Path.join(out, "customers.csv")), { columns: true, bom: true }) as Array<
        Record<string, string>
      >
      assert.deepStrictEqual(rows.map((r) => `${r.externalId}:${r.id}`).sort(), [`K-1:${big[0]}`, `K-2:${big[1]}`])

      // Read back as an import file, keyless: each row keeps its own id (dry run, through the proxy).
      const keyless = put(dir, "keyless.csv", `id,name\n${big[0]},Um novo\n${big[1]},Dois\n`)
      const dry = yield* runImport(job({
        resource: "customers",
        file: keyless,
        runDir: Path.join(dir, "dry"),
        mode: "update",
        dryRun: true
      })).pipe(Effect.provideService(Api, api), Effect.provide(ImportServices.quiet))
      assert.deepStrictEqual(readReport(dry.runDir).map((r) => `${r._status}:${r._record_id}`), [
        `would-update:${big[0]}`,
        `unchanged:${big[1]}`
      ])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a date-time with a zone is refused naming the column and the local time; without one it is sent as written", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const mark = (yield* sandbox.control.requests).length
      const run = yield* importInto(sandbox, {
        resource: "equipments",
        file: put(
          dir,
          "e.csv",
          "externalId;name;warrantyStartDate\nEQ-1;Split;2026-03-01T10:00:00Z\nEQ-2;Split 2;2026-03-01T10:00:00\n" +
            "EQ-3;Split 3;2026-03-01T10:00:00-02:00\n"
        ),
        runDir: Path.join(dir, "run")
      })
      assert.strictEqual(run.exitCode, 1)
      const report = readReport(run.runDir)
      assert.deepStrictEqual(report.map((r) => r._status), ["invalid", "created", "invalid"])
      assert.include(report[0]!._error, "warrantyStartDate")
      assert.include(report[0]!._error, "carries a time zone (Z)")
      assert.include(report[0]!._error, "in Brasília time: 2026-03-01T07:00:00")
      assert.include(report[2]!._error, "in Brasília time: 2026-03-01T09:00:00")
      assert.strictEqual(writes((yield* sandbox.control.requests).slice(mark)).length, 1)
      const stored = yield* sandbox.control.records("sandbox-key", "equipments")
      assert.deepStrictEqual(stored.map((e) => `${e.externalId}:${String(e.warrantyStartDate).slice(0, 19)}`), [
        "EQ-2:2026-03-01T10:00:00"
      ])
    }).pipe(Effect.provide(NodeContext.layer)))
})
