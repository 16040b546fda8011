/**
 * What a worker reads from an import's journal in the store before it runs the job again (a takeover, a hand-back):
 * whether rows were sent, which decides the exit code and message of a job that must end (2, nothing sent, or 3), and
 * how many rows ended, which the worker's pace counts (src/fleet/Pace.ts). Each line is read by its own `state`. Before,
 * the lines were searched as text for `"state":"sending"` and `"state":"done"`, and a record image in a line (every
 * field the server gave, kept for undo and stale checks) that held a field named `state` was read as a line's state
 * (no record the API documents has such a field, so this was latent: the images keep whatever fields a server sends):
 * a `done` row whose record said `"state":"sending"` told a job that sent nothing that it had sent rows, and a
 * `sending` line whose before-image said `"state":"done"` counted a row as ended twice over.
 *
 * The lines are the journal's own shapes (src/import/Journal.ts), written as the import writes them (one JSON object
 * a line), with the last cut short as a crash leaves it.
 */
import { assert, describe, it } from "@effect/vitest"
import { journalSoFar } from "../../src/fleet/JobRunner.js"
import type { Line } from "../../src/import/Journal.js"

const at = "2026-11-30T03:00:00.000Z"
const header = JSON.stringify({
  state: "header",
  version: 1,
  tool: "fsm-bulk",
  command: "import",
  resource: "customers"
})
const line = (l: Line) => JSON.stringify(l)

describe("journalSoFar", () => {
  it("reads each line's own state, never a field of a record it carries", () => {
    // A row that was looked up and left as it was: its `done` line carries the record as the server has it, whose
    // own field `state` says "sending". Nothing was sent.
    const unchanged = line({
      state: "done",
      row: 1,
      status: "unchanged",
      after: { id: 7, externalId: "C-1", state: "sending" },
      at
    })
    assert.deepStrictEqual(journalSoFar([header, unchanged]), { sent: false, done: 1 })

    // A row on its way: its before-image holds `"state":"done"`; it has not ended.
    const sending = line({
      state: "sending",
      row: 2,
      key: "C-2",
      intent: "update",
      before: { id: 8, externalId: "C-2", state: "done" },
      at
    })
    assert.deepStrictEqual(journalSoFar([header, unchanged, sending]), { sent: true, done: 1 })
  })

  it("counts each done line, and a line cut short by a crash as nothing", () => {
    const sending = (row: number) => line({ state: "sending", row, intent: "create", at })
    const done = (row: number) => line({ state: "done", row, status: "created", at })
    const cut = sending(3).slice(0, 20)
    assert.deepStrictEqual(
      journalSoFar([header, sending(1), done(1), sending(2), done(2), cut]),
      { sent: true, done: 2 }
    )
    assert.deepStrictEqual(journalSoFar([header]), { sent: false, done: 0 })
    assert.deepStrictEqual(journalSoFar([]), { sent: false, done: 0 })
  })
})
