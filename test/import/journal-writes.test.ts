/**
 * The journal's writes, counted by the kernel (`syscw` of /proc/self/io: write calls of every thread of this
 * process): lines appended while a synced write is on its way go together in the next one. Linux only; elsewhere
 * the test is skipped. And the appends waiting for a write, counted by the fiber runtime: each is woken once.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Supervisor } from "effect"
import { existsSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { openJournal } from "../../src/import/Journal.js"
import { tempDir } from "./support.js"

const counted = existsSync("/proc/self/io")
const writeCalls = () => Number(/^syscw: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))![1])

/** Counts the times the fibers it supervises resume (start, or wake up from a wait). */
class Resumes extends Supervisor.AbstractSupervisor<number> {
  count = 0
  get value() {
    return Effect.sync(() => this.count)
  }
  override onResume() {
    this.count += 1
  }
}

describe("journal writes", () => {
  it.scoped.skipIf(!counted)(
    "rows finishing together are journaled in a few synced writes, not one a row, each line whole and on disk",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const path = Path.join(dir, "journal.ndjson")
        const journal = yield* openJournal(path)
        const at = new Date(0).toISOString()
        yield* journal.append({ state: "done", row: 1, status: "created", at })
        const rows = 400
        const before = writeCalls()
        // As the sending finishes rows: many at once (a dry run, rows that send nothing, answers arriving together).
        yield* Effect.forEach(
          Array.from({ length: rows }, (_, i) => i + 2),
          (row) => journal.append({ state: "done", row, status: "created", at }),
          { concurrency: "unbounded", discard: true }
        )
        const writes = writeCalls() - before
        // One write a line before; now the first line's write, then the lines that queued behind it, together.
        assert.isAtMost(writes, 20, `${writes} write calls for ${rows} lines`)
        const lines = readFileSync(path, "utf8").split("\n")
        assert.strictEqual(lines.length, rows + 2)
        assert.strictEqual(lines.at(-1), "")
        const journaled = lines.slice(0, -1).map((l) => (JSON.parse(l) as { row: number }).row).sort((a, b) => a - b)
        assert.deepStrictEqual(journaled, Array.from({ length: rows + 1 }, (_, i) => i + 1))
      })
  )

  it.scoped("rows waiting on the journal are woken once each, not at every write that ends before theirs", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const journal = yield* openJournal(Path.join(dir, "journal.ndjson"))
      const at = new Date(0).toISOString()
      const lines = 2_000
      const resumes = new Resumes()
      // As the sending does: 32 rows at a time, each waiting for its line to be on disk before the next row starts.
      yield* Effect.supervised(
        Effect.forEach(
          Array.from({ length: lines }, (_, i) => i + 1),
          (row) => journal.append({ state: "done", row, status: "created", at }),
          { concurrency: 32, discard: true }
        ),
        resumes
      )
      // A fiber starts, then wakes when its line is written: 2 a line. Behind a semaphore, each release woke every
      // waiting append and all but one waited again (34 a line with 32 waiting); each wake-up's objects lived
      // through a synced write, so the old generation filled with them (docs/benchmarks.md).
      assert.isAtMost(resumes.count / lines, 4, `${resumes.count} resumptions for ${lines} lines`)
    }))
})
