/**
 * An export interrupted by an earlier version and continued by this one (issue 23). Versions before this one chose
 * other date windows: the one released before the count probes walked windows of 2^k days from `--since` (the
 * largest that needs at most `maxWindowPages` pages), so its checkpoint names a window this version never chooses.
 * The checkpoint is built as that version wrote it (its `running` list, and the single `current` of the versions
 * before resources were walked concurrently), with its partial files holding what it had written: the continued
 * export must write every task exactly once, the interrupted window's pages first, then the days after it.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { checkpointFile } from "../../src/export/Checkpoint.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { accountA, apiOf, csvCells, dayOfYear, seedTasksOfYear, startTestSandbox, tempDir } from "./support.js"

const tasks = 120
const dayOf = (i: number) => dayOfYear(i, tasks)
/** The earlier version's first window of 2026 with pages of 10 and at most 9 a window: 256 days, 84 tasks. */
const oldWindow = { start: "2026-01-01", end: "2026-09-13" }
const pagesDone = 5

const cells = csvCells

describe("an export interrupted by an earlier version", () => {
  it.scopedLive(
    "continues in the window its checkpoint names and writes every record once",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const seeding = yield* Effect.promise(() => seedTasksOfYear(sandbox, tasks))
        // Windows of at most 9 pages of 10: this version splits the year (12 pages) in halves, 2026-07-02 the
        // first's last day; the earlier one walked 2026-01-01..2026-09-13 first.
        const api = yield* apiOf(sandbox, accountA, { maxWindowPages: 9 })
        const exportTo = (out: string) =>
          Effect.flatMap(
            prepareExport({
              resources: ["tasks"],
              out,
              format: "csv",
              since: "2026-01-01",
              until: "2026-12-31",
              pageSize: 10,
              say: () => Effect.void
            }),
            runExport
          ).pipe(Effect.provideService(Api, api))

        const fresh = yield* tempDir
        const done = yield* exportTo(fresh)
        const outputs = done.manifest.resources
        const freshRows = cells(Path.join(fresh, "tasks.csv"))
        const header = freshRows[0]!
        const ext = header.indexOf("externalId")
        assert.isAtLeast(ext, 0, `no externalId column in ${header.join(";")}`)
        assert.strictEqual(freshRows.length - 1, tasks)

        // What the earlier version had on disk: the first 5 pages of its window, as the service lists them.
        const written: Array<string> = []
        for (let page = 1; page <= pagesDone; page++) {
          const filter = JSON.stringify({
            startDate: `${oldWindow.start}T00:00:00`,
            endDate: `${oldWindow.end}T23:59:59`
          })
          const answer = yield* Effect.promise(() =>
            seeding.send("GET", `/tasks?paramFilter=${encodeURIComponent(filter)}&page=${page}&pageSize=10`)
          )
          written.push(...(answer.entityList as Array<{ externalId: string }>).map((t) => t.externalId))
        }
        assert.strictEqual(written.length, pagesDone * 10)
        const text = Fs.readFileSync(Path.join(fresh, "tasks.csv"), "utf8")
        const eol = text.includes("\r\n") ? "\r\n" : "\n"
        const [head, ...lines] = text.split(eol).filter((l) => l !== "")
        const lineOf = new Map(lines.map((l, i) => [freshRows[i + 1]![ext]!, l]))

        for (const format of ["running", "current"] as const) {
          const out = yield* tempDir
          const files = outputs.map((o) => {
            const rows = o.name === "tasks" ? written.map((id) => lineOf.get(id)!) : []
            const freshText = Fs.readFileSync(Path.join(fresh, o.file), "utf8")
            const firstLine = o.name === "tasks" ? head! : freshText.split(eol)[0]!
            const content = [firstLine, ...rows].map((l) => `${l}${eol}`).join("")
            Fs.writeFileSync(Path.join(out, `${o.file}.partial`), content)
            return { name: o.name, file: o.file, bytes: Buffer.byteLength(content), rows: rows.length }
          })
          Fs.writeFileSync(Path.join(out, "tasks.csv.fingerprints.ndjson"), "")
          const position = { resource: "tasks", page: pagesDone, window: oldWindow, pages: pagesDone, files }
          Fs.writeFileSync(
            Path.join(out, checkpointFile),
            JSON.stringify({
              tool: "fsm-bulk",
              baseUrl: done.manifest.baseUrl,
              ...(done.manifest.account !== undefined ? { account: done.manifest.account } : {}),
              format: "csv",
              since: "2026-01-01",
              until: "2026-12-31",
              resources: outputs.map((o) => o.name),
              started: "2026-11-27T20:00:00.000Z",
              done: [],
              ...(format === "running" ? { running: [position] } : { current: position })
            })
          )

          const continued = yield* exportTo(out)
          const ids = cells(Path.join(out, "tasks.csv")).slice(1).map((r) => r[ext]!)
          // Every task once.
          assert.strictEqual(new Set(ids).size, ids.length, `${format}: a task written twice`)
          assert.deepStrictEqual([...ids].sort(), freshRows.slice(1).map((r) => r[ext]!).sort(), format)
          assert.strictEqual(continued.manifest.resources.find((r) => r.name === "tasks")!.rows, tasks)
          // The rows on disk kept, then the rest of the interrupted window, then the days after it.
          assert.deepStrictEqual(ids.slice(0, written.length), written)
          const dates = ids.map((id) => dayOf(Number(id.slice(3))))
          const lastInWindow = dates.length - 1 - [...dates].reverse().findIndex((d) => d <= oldWindow.end)
          const firstAfter = dates.findIndex((d) => d > oldWindow.end)
          assert.isBelow(lastInWindow, firstAfter, `${format}: a task after the window came before its last page`)
          assert.isFalse(Fs.existsSync(Path.join(out, checkpointFile)))
        }
      }).pipe(Effect.provide(NodeContext.layer)),
    120_000
  )
})
