/**
 * The journal's hash chain in process: lines appended at once (one group-committed write for many) chain in the
 * order they were appended, a journal opened again (resume) continues the chain from its last line, a torn
 * fragment included, and the reader still reads it all.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { appendFileSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { checkChain, lineHash } from "../../src/evidence/Chain.js"
import { type Header, openJournal, readJournal } from "../../src/import/Journal.js"
import { tempDir } from "../import/support.js"

const header: Header = {
  state: "header",
  version: 1,
  tool: "fsm-bulk",
  command: "import",
  resource: "customers",
  mode: "create",
  dryRun: false,
  verify: false,
  baseUrl: "http://127.0.0.1:1/v2",
  source: { file: "/tmp/x.csv", format: "csv", sha256: "0".repeat(64) },
  read: { encoding: "auto", delimiter: "auto" },
  parse: { dateFormat: "auto", decimal: "auto", baseDir: "/tmp", maxAttachmentBytes: 1 },
  formats: {},
  started: "2026-11-27T00:00:00.000Z"
}

const sending = (row: number) => ({ state: "sending" as const, row, intent: "create" as const, at: "t" })

describe("the journal's hash chain", () => {
  it.scoped("chains lines appended together, continues after a reopen and a torn fragment, and reads back", () =>
    Effect.gen(function*() {
      const path = Path.join(yield* tempDir, "journal.ndjson")
      yield* Effect.scoped(Effect.gen(function*() {
        const journal = yield* openJournal(path)
        yield* journal.append(header)
        // 100 appends in flight at once: they share the disk writes, never their order in the chain.
        yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => i + 2), (row) => journal.append(sending(row)), {
          concurrency: "unbounded"
        })
      }))
      const first = yield* Effect.promise(() => checkChain(path))
      assert.deepStrictEqual([first.chained, first.lines, first.problems], [true, 101, []])
      const lines = readFileSync(path, "utf8").split("\n")
      assert.strictEqual(JSON.parse(lines[1]!).prev, lineHash(Buffer.from(lines[0]!)))

      appendFileSync(path, `{"state":"done","row":2,"sta`)
      yield* Effect.scoped(Effect.gen(function*() {
        const journal = yield* openJournal(path)
        yield* journal.append({ state: "resumed", command: "resume", at: "t" })
        yield* journal.append(sending(200))
      }))
      const after = yield* Effect.promise(() => checkChain(path))
      assert.deepStrictEqual([after.lines, after.torn, after.problems], [104, [102], []])
      const read = yield* readJournal(path)
      assert.strictEqual(read.rows.size, 101)
      assert.strictEqual(read.header.chain, "sha256")
    }))
})
