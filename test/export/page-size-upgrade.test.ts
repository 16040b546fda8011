/**
 * Export checkpoints and page sizes (issue 23). Page K of one size is not page K of another: a checkpoint that says
 * "page 2 of tasks is on disk" means records 1–300 when its pages held 150 (versions before tasks were capped at 100
 * a page asked what the export asked) and 1–200 when they held 100. Checkpoints now record the size; one written
 * before says nothing, and the continued walk must go on from the record it really reached, or start the resource
 * again when that cannot be told: every task exactly once. Each checkpoint is built by hand as its version wrote it,
 * with the partial file holding what that version had written, against a sandbox holding more than 100 tasks.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Api } from "../../src/client/Api.js"
import { checkpointFile } from "../../src/export/Checkpoint.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { accountA, apiOf, csvCells, seedTasksOfYear, startTestSandbox, tempDir } from "./support.js"

const tasks = 400
const since = "2026-01-01"
const until = "2026-12-31"
/** The one window the year is walked in (400 tasks: 4 pages of 100, well under a window's 40). */
const window = { start: since, end: until }

const cells = csvCells

describe("an export continued from a checkpoint of another page size", () => {
  it.scopedLive(
    "goes on from the record the checkpoint reached, in the size it recorded or the size the list takes, each task once",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const seeding = yield* Effect.promise(() => seedTasksOfYear(sandbox, tasks))
        const api = yield* apiOf(sandbox, accountA)
        const exportTo = (out: string, say: (line: string) => void = () => {}) =>
          Effect.flatMap(
            prepareExport({
              resources: ["tasks"],
              out,
              format: "csv",
              since,
              until,
              // What the interrupted versions asked: 150 a page (the tasks' cap of 100 applies now).
              pageSize: 150,
              say: (line) => Effect.sync(() => say(line))
            }),
            runExport
          ).pipe(Effect.provideService(Api, api))

        const fresh = yield* tempDir
        const done = yield* exportTo(fresh)
        const freshRows = cells(Path.join(fresh, "tasks.csv"))
        const ext = freshRows[0]!.indexOf("externalId")
        assert.strictEqual(freshRows.length - 1, tasks)
        const text = Fs.readFileSync(Path.join(fresh, "tasks.csv"), "utf8")
        const eol = text.includes("\r\n") ? "\r\n" : "\n"
        const [head, ...lines] = text.split(eol).filter((l) => l !== "")
        const lineOf = new Map(lines.map((l, i) => [freshRows[i + 1]![ext]!, l]))

        // The window's tasks in the service's order (its order does not depend on the page size).
        const listed: Array<string> = []
        for (let page = 1; page <= tasks / 100; page++) {
          const filter = JSON.stringify({ startDate: `${window.start}T00:00:00`, endDate: `${window.end}T23:59:59` })
          const answer = yield* Effect.promise(() =>
            seeding.send("GET", `/tasks?paramFilter=${encodeURIComponent(filter)}&page=${page}&pageSize=100`)
          )
          listed.push(...(answer.entityList as Array<{ externalId: string }>).map((t) => t.externalId))
        }
        assert.strictEqual(listed.length, tasks)

        /** An interrupted export whose partial file holds the window's first `rows` tasks, with this checkpoint. */
        const interrupted = (rows: number, position: object, extra: (p: object) => object) =>
          Effect.gen(function*() {
            const out = yield* tempDir
            const content = [head!, ...listed.slice(0, rows).map((id) => lineOf.get(id)!)]
              .map((l) => `${l}${eol}`).join("")
            Fs.writeFileSync(Path.join(out, "tasks.csv.partial"), content)
            Fs.writeFileSync(Path.join(out, "tasks.csv.fingerprints.ndjson"), "")
            const files = [{ name: "tasks", file: "tasks.csv", bytes: Buffer.byteLength(content), rows }]
            Fs.writeFileSync(
              Path.join(out, checkpointFile),
              JSON.stringify({
                tool: "fsm-bulk",
                baseUrl: done.manifest.baseUrl,
                format: "csv",
                since,
                until,
                resources: ["tasks"],
                started: "2026-11-27T12:00:00.000Z",
                done: [],
                ...extra({ resource: "tasks", window, files, ...position })
              })
            )
            return out
          })

        const cases = [
          {
            // A version before the cap (no account, no `running`, no size): 2 pages of 150 on disk, 300 tasks. Asked
            // as page 3 of 100 the walk wrote tasks 201–300 again.
            name: "before the cap",
            rows: 300,
            position: { page: 2, pages: 2 },
            wrap: (p: object) => ({ current: p }),
            kept: 300
          },
          {
            // This version, after 4 pages of 50 (a size it may choose to fill its last round): asked as page 5 of
            // 100 the walk skipped tasks 201–400.
            name: "a recorded size",
            rows: 200,
            position: { page: 4, pages: 4, pageSize: 50 },
            wrap: (p: object) => ({ account: done.manifest.account, running: [p] }),
            kept: 200
          },
          {
            // A version before sizes were recorded, 100 tasks on disk after one page: of 150 (a short window's
            // page) or of 100, the checkpoint cannot say, so the resource starts again.
            name: "a size that cannot be told",
            rows: 100,
            position: { page: 1, pages: 1 },
            wrap: (p: object) => ({ current: p }),
            kept: 0
          }
        ]
        for (const c of cases) {
          const out = yield* interrupted(c.rows, c.position, c.wrap)
          const said: Array<string> = []
          const continued = yield* exportTo(out, (line) => said.push(line))
          const ids = cells(Path.join(out, "tasks.csv")).slice(1).map((r) => r[ext]!)
          assert.strictEqual(new Set(ids).size, ids.length, `${c.name}: a task written twice`)
          assert.deepStrictEqual([...ids].sort(), [...listed].sort(), `${c.name}: tasks missing`)
          assert.strictEqual(continued.manifest.resources[0]!.rows, tasks, c.name)
          assert.deepStrictEqual(ids, listed, `${c.name}: not in the service's order`)
          assert.strictEqual(continued.files[0]!.resumedAfterPage !== undefined, c.kept > 0, c.name)
          if (c.kept === 0) assert.isTrue(said.some((l) => l.includes("starting this resource again")), said.join("\n"))
        }
      }).pipe(Effect.provide(NodeContext.layer)),
    180_000
  )
})
