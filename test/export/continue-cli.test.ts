/**
 * An export killed mid-way (a latency fault keeps it slow, then SIGKILL of a spawned `node dist/bin.js export`)
 * continues when run again with the same `--out`: CSV from its last complete page, XLSX from the start of the
 * unfinished resource, finished resources kept and not fetched again; the result equals an uninterrupted export.
 * Also prints (does not assert) the requests an export spends against the minimum.
 *
 * The CSV and the XLSX tests read one account seeded once for the file (`seeded`): its 1,100 customers and 1,100
 * tasks are two pages of each, one complete page before a kill and one after. Seeding is the file's largest cost:
 * about 5.5–7 ms of the test process's CPU a record, written through the sandbox's HTTP (the CSV test's own 2,100
 * customers and 1,100 tasks were 19.3 s of its 28.6 s of CPU at load 10, and the XLSX test seeded 1,100 customers
 * more).
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import type { ChildProcess } from "node:child_process"
import { appendFileSync, existsSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { runVerify } from "../../src/export/Verify.js"
import { openSource } from "../../src/files/Read.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { oncePerFile } from "../support.js"
import { accountA, apiOf, cliEnv, runCli, seedBulk, startTestSandbox, tempDir } from "./support.js"

const counts = { customers: 1100, tasks: 1100 }
const resources = ["segments", "customers", "tasks"]

/**
 * The account the CSV and XLSX tests export, seeded once: they only read it (each sets the sandbox's latency for its
 * kills and puts it back to none; each counts the requests it made from its own point of the request log).
 */
const seeded = oncePerFile(Effect.tap(startTestSandbox(), (sandbox) => Effect.promise(() => seedBulk(sandbox, counts))))

const checkpointOf = (dir: string): any => {
  try {
    return JSON.parse(readFileSync(Path.join(dir, ".export-progress.json"), "utf8"))
  } catch {
    return undefined // not written yet, or caught between write and rename
  }
}

/** Where the walk of `resource` stands in a checkpoint (resources are walked concurrently). */
const underWay = (c: any, resource: string): any => c?.running?.find((p: any) => p.resource === resource)

const isDone = (c: any, resource: string): boolean => c.done.some((d: any) => d.name === resource)

/** Spawns the export and SIGKILLs it as soon as its checkpoint satisfies `when`. */
const exportKilledWhen = (
  sandbox: RunningSandbox,
  args: ReadonlyArray<string>,
  dir: string,
  when: (checkpoint: any) => boolean
) =>
  Effect.promise(() => {
    let child: ChildProcess | undefined
    let timer: NodeJS.Timeout | undefined
    const run = runCli(["export", ...args, "--out", dir], cliEnv(sandbox, accountA), (c) => {
      child = c
      timer = setInterval(() => {
        const checkpoint = checkpointOf(dir)
        if (checkpoint !== undefined && when(checkpoint)) {
          clearInterval(timer)
          child!.kill("SIGKILL")
        }
      }, 5)
    })
    return run.finally(() => clearInterval(timer))
  })

const requestsSince = (sandbox: RunningSandbox, from: number, path: string) =>
  Effect.map(
    sandbox.control.requests,
    (log) => log.slice(from).filter((e) => e.method === "GET" && e.path.toLowerCase() === `/v2${path}`).length
  )

const dataRows = (file: string) =>
  Effect.flatMap(
    openSource(file, { encoding: "auto", delimiter: "auto" }),
    (source) => Effect.map(Stream.runCollect(source.rows), (rows) => [...rows].map((r) => r.cells.join("\u0001")))
  )

describe("continuing an interrupted export", () => {
  it.scopedLive(
    "a killed CSV export continues from its last complete page and equals an uninterrupted one",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seeded

        const reference = yield* tempDir
        const api = yield* apiOf(sandbox, accountA)
        const prepared = yield* prepareExport({
          resources,
          out: reference,
          format: "csv",
          since: undefined,
          until: undefined,
          say: () => Effect.void
        })
        const full = yield* runExport(prepared).pipe(Effect.provideService(Api, api))

        // Measured, not asserted: a full export's requests against the fewest that can prove every list complete
        // (a login, and per list its pages of 1000 up to a short one; per-parent lists once per parent).
        const everything = yield* runExport(
          yield* prepareExport({
            resources: [],
            out: yield* tempDir,
            format: "csv",
            since: undefined,
            until: undefined,
            say: () => Effect.void
          })
        ).pipe(Effect.provideService(Api, api))
        const parents = (name: string) => everything.manifest.resources.find((e) => e.name === name)!.rows
        const minimum = 1 +
          everything.manifest.resources
            .filter((e) => e.derivedFrom === undefined)
            .reduce((n, e) =>
              n + (e.name === "customer-group-clients"
                ? parents("customer-groups")
                : e.name === "team-users"
                ? parents("teams")
                : Math.floor(e.rows / 1000) + 1), 0)
        const records = everything.manifest.resources.reduce((n, e) => n + e.rows, 0)
        console.log(
          `full export of ${records} records: ${everything.requests} requests = ${
            (everything.requests / minimum).toFixed(2)
          } × the minimum of ${minimum}`
        )
        console.log(
          `export of ${resources.join(", ")}: ${full.requests} requests (keys of the resources they reference included)`
        )

        // Slow enough that the kill lands between the customers' two pages even on a busy machine (the tasks' walk
        // waits for the customers' file, whose keys its reference columns need: Export.ts ensureKeys).
        const dir = Path.join(yield* tempDir, "export")
        yield* sandbox.control.setFaults({ latencyMs: 300 })
        const first = yield* exportKilledWhen(sandbox, resources, dir, (c) =>
          underWay(c, "customers")?.page >= 1 && isDone(c, "segments"))
        assert.strictEqual(first.signal, "SIGKILL", `${first.code} ${first.stderr}`)
        const atKill = checkpointOf(dir)
        assert.deepStrictEqual(
          atKill.done.map((d: any) =>
            d.name
          ),
          ["segments"]
        )
        // A page written after the last checkpoint (killed before it was recorded) must not survive.
        appendFileSync(Path.join(dir, "customers.csv.partial"), "BULK-XXXXX,written after the checkpoint\r\n")

        // As slow, so the kill lands between the tasks' two pages.
        const before = (yield* sandbox.control.requests).length
        const second = yield* exportKilledWhen(sandbox, resources, dir, (c) =>
          underWay(c, "tasks")?.page >= 1)
        assert.strictEqual(second.signal, "SIGKILL", `${second.code} ${second.stderr}`)
        assert.match(second.stderr, /continuing the interrupted export .*segments\.csv.*customers from page \d/)
        assert.strictEqual(
          yield* requestsSince(sandbox, before, "/segments"),
          0,
          "a finished resource is not fetched again"
        )
        const customerPages = yield* requestsSince(sandbox, before, "/customers")
        assert.isAtLeast(customerPages, 1)
        assert.isBelow(
          customerPages,
          Math.floor(counts.customers / 1000) + 1,
          "customers continued after their last complete page"
        )

        yield* sandbox.control.setFaults({ latencyMs: 0 })
        const beforeLast = (yield* sandbox.control.requests).length
        const last = yield* Effect.promise(() =>
          runCli(["export", ...resources, "--out", dir, "--json"], cliEnv(sandbox, accountA))
        )
        assert.strictEqual(last.code, 0, last.stderr)
        const summary = JSON.parse(last.stdout.trim().split("\n").pop()!)
        assert.isTrue(summary.continued)
        assert.deepStrictEqual(
          summary.files.filter((f: any) => f.kept).map((f: any) => f.name),
          ["segments", "customers"]
        )
        assert.strictEqual(yield* requestsSince(sandbox, beforeLast, "/customers"), 0)
        assert.isFalse(existsSync(Path.join(dir, ".export-progress.json")))

        const manifest = JSON.parse(readFileSync(Path.join(dir, "manifest.json"), "utf8"))
        for (const entry of full.manifest.resources) {
          const continued = manifest.resources.find((e: any) => e.name === entry.name)
          assert.strictEqual(continued.rows, entry.rows, entry.name)
          assert.strictEqual(
            continued.sha256,
            entry.sha256,
            `${entry.file} is byte for byte the uninterrupted export's`
          )
        }
        assert.deepStrictEqual(manifest.resources.map((e: any) => e.rows), [2, counts.customers, counts.tasks])
        assert.isTrue((yield* runVerify(dir)).ok)
      }).pipe(Effect.provide(NodeContext.layer)),
    // Four exports, two of them slowed on purpose: about 20 s on a quiet machine, 50–111 s at load 11–13 (the old
    // build as the new), and over 120 s once in a clean-clone run beside other work. A bound against a hang only.
    300_000
  )

  it.scopedLive(
    "a date-windowed list interrupted in a later window continues in that window, from the page after the last one on disk",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        yield* Effect.promise(() => seedBulk(sandbox, { customers: 1, tasks: 300 }))
        // Small pages and windows of at most two pages: the 300 tasks are walked in several windows (12 pages, as the 600
        // in pages of 50 before them: half the records to seed and write).
        const api = yield* apiOf(sandbox, accountA, { maxWindowPages: 2 })
        const request = {
          resources: ["tasks"],
          format: "csv" as const,
          since: undefined,
          until: undefined,
          pageSize: 25,
          say: () => Effect.void
        }
        const reference = yield* tempDir
        const full = yield* runExport(yield* prepareExport({ ...request, out: reference })).pipe(
          Effect.provideService(Api, api)
        )

        const dir = Path.join(yield* tempDir, "export")
        yield* sandbox.control.setFaults({ latencyMs: 30 })
        const fiber = yield* Effect.fork(Effect.flatMap(prepareExport({ ...request, out: dir }), (p) =>
          runExport(p).pipe(Effect.provideService(Api, api))))
        let atStop: any
        while (atStop === undefined) {
          yield* Effect.sleep(5)
          const c = checkpointOf(dir)
          const at = underWay(c, "tasks")
          if (at?.window !== undefined && at.window.start !== c.since && at.page >= 2) {
            atStop = c
          }
        }
        yield* Fiber.interrupt(fiber)
        yield* sandbox.control.setFaults({ latencyMs: 0 })
        const stoppedAt = underWay(checkpointOf(dir), "tasks")
        assert.notStrictEqual(stoppedAt.window.start, "2000-01-01", "stopped in a later window")

        const before = (yield* sandbox.control.requests).length
        const continued = yield* runExport(yield* prepareExport({ ...request, out: dir })).pipe(
          Effect.provideService(Api, api)
        )
        assert.isTrue(continued.continued)
        assert.strictEqual(continued.files[0]!.resumedAfterPage, stoppedAt.page)
        assert.strictEqual(
          continued.manifest.resources[0]!.sha256,
          full.manifest.resources[0]!.sha256,
          "tasks.csv equals the uninterrupted export's"
        )
        assert.strictEqual(continued.manifest.resources[0]!.rows, 300)
        assert.isBelow(
          (yield* sandbox.control.requests).length - before,
          full.requests,
          "the continued walk did not start again"
        )
      }).pipe(Effect.provide(NodeContext.layer)),
    60_000
  )

  it.scopedLive(
    "a killed XLSX export keeps its finished workbooks and writes the unfinished one again from its first page",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seeded
        const reference = yield* tempDir
        const api = yield* apiOf(sandbox, accountA)
        const prepared = yield* prepareExport({
          resources: ["segments", "customers"],
          out: reference,
          format: "xlsx",
          since: undefined,
          until: undefined,
          say: () => Effect.void
        })
        yield* runExport(prepared).pipe(Effect.provideService(Api, api))

        const dir = Path.join(yield* tempDir, "export")
        yield* sandbox.control.setFaults({ latencyMs: 150 })
        const first = yield* exportKilledWhen(sandbox, ["segments", "customers", "--format", "xlsx"], dir, (c) =>
          underWay(c, "customers") !== undefined && isDone(c, "segments"))
        assert.strictEqual(first.signal, "SIGKILL", `${first.code} ${first.stderr}`)
        const segments = readFileSync(Path.join(dir, "segments.xlsx"))
        yield* sandbox.control.setFaults({ latencyMs: 0 })

        const before = (yield* sandbox.control.requests).length
        const again = yield* Effect.promise(() =>
          runCli(["export", "segments", "customers", "--format", "xlsx", "--out", dir], cliEnv(sandbox, accountA))
        )
        assert.strictEqual(again.code, 0, again.stderr)
        assert.match(again.stderr, /customers from its first page \(XLSX cannot be continued\)/)
        assert.strictEqual(yield* requestsSince(sandbox, before, "/segments"), 0)
        assert.strictEqual(
          yield* requestsSince(sandbox, before, "/customers"),
          Math.floor(counts.customers / 1000) + 1
        )
        assert.isTrue(
          readFileSync(Path.join(dir, "segments.xlsx")).equals(segments),
          "the finished workbook is kept as it was"
        )
        for (const file of ["segments.xlsx", "customers.xlsx"]) {
          assert.deepStrictEqual(
            yield* dataRows(Path.join(dir, file)),
            yield* dataRows(Path.join(reference, file)),
            file
          )
        }
        assert.isTrue((yield* runVerify(dir)).ok)
      }).pipe(Effect.provide(NodeContext.layer)),
    120_000
  )
})
