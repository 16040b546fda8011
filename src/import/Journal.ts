/**
 * The run's journal, `journal.ndjson`: append-only, one JSON object per line, written with O_DSYNC so a line is on
 * disk before the write it announces is sent. A header line, then per row `sending` (before its write) and `done`
 * (after, or straight away for rows that send nothing) — or `unsent` when the run was aborted before the write
 * left —, a `resumed` line per resume, an `end` line per session.
 *
 * The reader streams the file (memory grows with the rows, not the bytes) and tolerates the truncated line a
 * crash can leave: at the very end, or just before the `resumed` line of the session that continued it.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { RunError } from "../Errors.js"
import { chainAlgorithm, type ChainTail, lineHash, readChainTail } from "../evidence/Chain.js"
import { cannotWrite, type WriteError } from "../files/Write.js"
import { ProfileRecord } from "../mapping/Profile.js"
import { redactKnown } from "../Secrets.js"
import { Outcome, Status } from "../Status.js"
import { ExportOrigin } from "./Origin.js"

export const journalFile = "journal.ndjson"

export const Mode = Schema.Literal("upsert", "create", "update", "delete")
export type Mode = typeof Mode.Type

/** What a row's write does: decides how `resume` reconciles a row that was in flight when the run stopped. */
export const Intent = Schema.Literal(
  "create", // POST: may have created a record; only a key lookup can tell
  "upsert", // PUT on the collection: idempotent
  "patch", // PATCH /{id}: idempotent in effect (replace operations)
  "update", // PUT /{id}: idempotent
  "delete", // DELETE /{id} or DELETE on a sub-collection
  "put" // PUT on a sub-collection or action path: idempotent upsert
)
export type Intent = typeof Intent.Type

export const ParentRun = Schema.Struct({
  runDir: Schema.String,
  /** The report the rows were taken from. */
  report: Schema.String,
  /** Statuses selected from it. */
  only: Schema.Array(Status),
  /** The corrections file, when one was given. */
  fixed: Schema.optional(Schema.String)
})
export type ParentRun = typeof ParentRun.Type

export const SourceInfo = Schema.Struct({
  /** Absolute path. */
  file: Schema.String,
  format: Schema.Literal("csv", "xlsx"),
  sha256: Schema.String,
  sheet: Schema.optional(Schema.String),
  encoding: Schema.optional(Schema.String),
  delimiter: Schema.optional(Schema.String),
  /** Rows are numbered by this source column (`_row` of a rerun's rows) instead of their position. */
  rowColumn: Schema.optional(Schema.String)
})
type SourceInfo = typeof SourceInfo.Type

export const ReadSettings = Schema.Struct({
  sheet: Schema.optional(Schema.String),
  encoding: Schema.Literal("auto", "utf-8", "windows-1252"),
  delimiter: Schema.Literal("auto", ",", ";", "\t"),
  /** `--include-hidden`: an XLSX's hidden rows and columns are read as any other (resume reads the same way). */
  includeHidden: Schema.optional(Schema.Boolean),
  /** `--map`: the mapping profile (its file, sha256 and content), applied again as it was by resume and rerun. */
  map: Schema.optional(ProfileRecord)
})
export type ReadSettings = typeof ReadSettings.Type

export const ParseSettings = Schema.Struct({
  dateFormat: Schema.Literal("auto", "yyyy-mm-dd", "dd/mm/yyyy", "mm/dd/yyyy"),
  decimal: Schema.Literal("auto", ".", ","),
  /** Directory that attachment paths are relative to (the original file's, even for a rerun). */
  baseDir: Schema.String,
  /** `--attachments-root`, when given: attachments must lie inside it (else inside `baseDir`). */
  attachmentsRoot: Schema.optional(Schema.String),
  maxAttachmentBytes: Schema.Number
})
export type ParseSettings = typeof ParseSettings.Type

/** What a record changed on the server since the export a row comes from gets: `conflict`, merged, overwritten. */
export const OnConflict = Schema.Literal("stop", "merge", "overwrite")
export type OnConflict = typeof OnConflict.Type

/** The stale-edit check of a run whose file came from an export (`Stale.ts`). */
export const StaleCheck = Schema.Struct({
  /** The export's fingerprints file of the source (absolute path). */
  fingerprints: Schema.String,
  onConflict: OnConflict
})
export type StaleCheck = typeof StaleCheck.Type

/** The server and account a plan was made against (`Plan.ts`); the account is `accountOf` the apiKey. */
export const PlanTarget = Schema.Struct({
  baseUrl: Schema.String,
  account: Schema.optional(Schema.String),
  embedded: Schema.optional(Schema.Boolean)
})
export type PlanTarget = typeof PlanTarget.Type

/** The plan a run applies (`fsm-bulk apply`): its file, sha256, approver and the target it was made against. */
export const AppliedPlan = Schema.Struct({
  file: Schema.String,
  sha256: Schema.String,
  approvedBy: Schema.optional(Schema.String),
  target: PlanTarget,
  /** The key that signed the plan (`PLAN.sig`), and whether it was the one given with `apply --public-key`. */
  signer: Schema.optional(Schema.Struct({ keyId: Schema.String, trusted: Schema.Boolean }))
})
export type AppliedPlan = typeof AppliedPlan.Type

export const Header = Schema.Struct({
  state: Schema.Literal("header"),
  version: Schema.Literal(1),
  tool: Schema.Literal("fsm-bulk"),
  command: Schema.String,
  resource: Schema.String,
  mode: Mode,
  dryRun: Schema.Boolean,
  verify: Schema.Boolean,
  verifyWaitMs: Schema.optional(Schema.Number),
  /** `--send-write-only`: updates send create-only fields (passwords) too; `resume` keeps it. */
  sendWriteOnly: Schema.optional(Schema.Boolean),
  /** Where the rows were sent (never a credential). */
  baseUrl: Schema.String,
  /** The rows went to an embedded, in-memory sandbox (gone with its command): `resume` can only rehearse. */
  embedded: Schema.optional(Schema.Boolean),
  /** The request budget the run was sent under (`20/10s`): `resume`, `rerun` and `undo` keep it unless given again. */
  rate: Schema.optional(Schema.String),
  /** `--concurrency` when the run was started with it: kept the same way. */
  concurrency: Schema.optional(Schema.Number),
  source: SourceInfo,
  read: ReadSettings,
  parse: ParseSettings,
  /** The formats `auto` resolved to, reused by `resume` so every row is read the same way. */
  formats: Schema.Unknown,
  started: Schema.String,
  parent: Schema.optional(ParentRun),
  stale: Schema.optional(StaleCheck),
  /** The export the source came from, when one wrote it: its ids are only used against its server and account. */
  origin: Schema.optional(ExportOrigin),
  /** Every later line carries `prev`, the sha256 of the line before it (evidence/Chain.ts); absent in older runs. */
  chain: Schema.optional(Schema.Literal(chainAlgorithm)),
  /** The plan this run applies: only its rows, only their planned writes, are sent (resume included). */
  plan: Schema.optional(AppliedPlan)
})
export type Header = typeof Header.Type

/** A record as the server listed it: the API's JSON object, every field as read. */
export const RecordImage = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type RecordImage = typeof RecordImage.Type

export const Sending = Schema.Struct({
  state: Schema.Literal("sending"),
  row: Schema.Number,
  key: Schema.optional(Schema.String),
  id: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  intent: Intent,
  /**
   * The before-image: the server's record as read (in batches, before any write) for a write to an existing
   * record — update, upsert of an existing record, delete, emulated upsert. Absent for a create, and for writes
   * whose records the API cannot list (sub-collections, actions).
   */
  before: Schema.optional(RecordImage),
  /**
   * The proof that a record found after this write is the write's own: the read before it (in batches, before any
   * write) found no record with the row's key. Only then may a create or upsert whose answer was lost be counted
   * `created` when the record turns up; without it the record may be someone else's (it is `in-doubt`).
   */
  absent: Schema.optional(Schema.Boolean),
  at: Schema.String
})
export type Sending = typeof Sending.Type

export const Done = Schema.Struct({
  state: Schema.Literal("done"),
  row: Schema.Number,
  ...Outcome.fields,
  /**
   * For a row whose write was sent: what was written, as write names and values (the fields a PATCH changed, the
   * body of a POST or PUT, the items of a sub-collection write); absent for a DELETE by id and rows sent nothing.
   */
  sent: Schema.optional(Schema.Unknown),
  /**
   * The record as the write left it: the write's answer (or the record found when a lost answer was reconciled),
   * every field as the API gave it. `undo` takes back only a record that still equals it in every field.
   */
  after: Schema.optional(RecordImage),
  at: Schema.String
})
export type Done = typeof Done.Type

/** A row whose write was announced but never left: the run was aborted first (credentials rejected …). */
const Unsent = Schema.Struct({ state: Schema.Literal("unsent"), row: Schema.Number, at: Schema.String })

export const Resumed = Schema.Struct({
  state: Schema.Literal("resumed"),
  command: Schema.String,
  at: Schema.String,
  /** The budget this session was sent under (`30/10s`), which report.html draws its sends against. */
  rate: Schema.optional(Schema.String)
})

export const End = Schema.Struct({
  state: Schema.Literal("end"),
  at: Schema.String,
  interrupted: Schema.Boolean,
  /** Why the session was aborted (credentials rejected …), when it was. */
  aborted: Schema.optional(Schema.String),
  counts: Schema.Record({ key: Schema.String, value: Schema.Number }),
  requests: Schema.Number,
  rateLimited: Schema.Number,
  retries: Schema.Number
})
export type End = typeof End.Type

export const Line = Schema.Union(Header, Sending, Done, Unsent, Resumed, End)
export type Line = typeof Line.Type

const decodeLine = Schema.decodeUnknownOption(Schema.parseJson(Line))

// --- writing -----------------------------------------------------------------------------------------------------

export interface JournalWriter {
  readonly path: string
  /**
   * Appends one line; it is on disk when this succeeds. A line is written whole or not at all: a failed write
   * (disk full mid-line) is cut back off the file, and every later append fails too, so nothing is sent after a
   * line that could not be recorded.
   */
  readonly append: (line: Line) => Effect.Effect<void, WriteError>
}

const journalError = (path: string, cause: unknown) => cannotWrite(path, cause, `cannot write the journal ${path}`)

/** Lines that go to the disk in one write, and the promise their appends wait on. */
interface Batch {
  readonly lines: Array<Buffer>
  readonly written: Promise<void>
  /** Settles `written`: fulfilled without an error, else rejected with it. */
  readonly settle: (error: unknown) => void
}

const makeBatch = (): Batch => {
  let settle: (error: unknown) => void = () => undefined
  const written = new Promise<void>((resolve, reject) => {
    settle = (error) => (error === undefined ? resolve() : reject(error))
  })
  // Never an unhandled rejection: each append that waits on it gets the error.
  written.catch(() => undefined)
  return { lines: [], written, settle }
}

/** The chain's state of the journal at `path`, `size` bytes long and ending with a newline. */
const readTail = async (path: string, size: number): Promise<ChainTail> => {
  const r = await fs.promises.open(path, "r")
  try {
    return await readChainTail(r, size)
  } finally {
    await r.close()
  }
}

/**
 * Opens the journal for appending (created when absent). A crash can leave a last line without its newline:
 * one is added first, so the next line starts clean and the reader skips the fragment.
 */
export const openJournal = Effect.fn("Journal.open")(function*(path: string) {
  const handle = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const flags = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | (fs.constants.O_DSYNC ?? 0)
        const h = await fs.promises.open(path, flags, 0o644)
        const { size } = await h.stat()
        if (size > 0) {
          const last = Buffer.alloc(1)
          const r = await fs.promises.open(path, "r")
          try {
            await r.read(last, 0, 1, size - 1)
          } finally {
            await r.close()
          }
          if (last[0] !== 0x0a) {
            await h.write("\n")
            return { h, size: size + 1, tail: await readTail(path, size + 1) }
          }
        }
        return { h, size, tail: await readTail(path, size) }
      },
      catch: (cause) => journalError(path, cause)
    }),
    ({ h }) => Effect.promise(() => h.close()).pipe(Effect.ignore)
  )
  // The length of the lines written whole; only `drain` writes, one batch at a time.
  let size = handle.size
  // The hash chain: a new journal is chained from its header on; one written before the chain stays unchained.
  let chained = handle.tail.chained || size === 0
  let lastHash = handle.tail.lastHash
  let broken: unknown = undefined
  const writeWhole = async (bytes: Buffer) => {
    let written = 0
    try {
      // A short write (the disk filled up mid-line) is followed by one that says why.
      while (written < bytes.length) {
        written += (await handle.h.write(bytes, written, bytes.length - written)).bytesWritten
      }
      // Without O_DSYNC (Windows) every line is synced by hand.
      if (fs.constants.O_DSYNC === undefined) await handle.h.datasync()
    } catch (error) {
      broken = error
      // Cut the fragment off (freeing space never needs space); if even that fails, the reader skips it.
      if (written > 0) await handle.h.truncate(size).catch(() => undefined)
      throw error
    }
    size += bytes.length
  }
  // Group commit: the lines appended while a write is on its way to the disk go together in the next write, one
  // synced write for all of them instead of one each (a synced write takes about a millisecond: one a row made a
  // 200,000-row dry run wait minutes for its journal). Each append still returns only once its line is on disk.
  //
  // The appends of a batch wait on one promise, settled when the batch's write ends: no lock. An Effect semaphore
  // wakes every fiber waiting for it on each release and all but one queue again, so with the sending's 32 rows
  // waiting on the journal each line cost some 32 wake-ups' worth of short-lived objects. They lived through a
  // synced write, long enough to be promoted, and the old generation filled with them (a 5,000-row dry run
  // promoted 627 MB that died soon after, 288 MB without the lock); V8 sizes that generation at up to four times
  // what a full collection finds alive, so the peak RSS followed whichever collection came at the worst moment,
  // more of them the more rows.
  let next: Batch | undefined
  let writing = false
  const drain = async () => {
    writing = true
    while (next !== undefined) {
      const batch = next
      next = undefined
      try {
        if (broken !== undefined) throw broken
        await writeWhole(batch.lines.length === 1 ? batch.lines[0]! : Buffer.concat(batch.lines))
        batch.settle(undefined)
      } catch (error) {
        batch.settle(error)
      }
    }
    writing = false
  }
  // Lines take their place in the chain in the order they are appended, which is the order they are written.
  const chainLine = (line: Line): Line | (Line & { readonly prev: string }) => {
    if (!chained) return line
    if (line.state === "header" && lastHash === undefined) return { ...line, chain: chainAlgorithm }
    if (lastHash === undefined) {
      chained = false
      return line
    }
    return { ...line, prev: lastHash }
  }
  const append = (line: Line) =>
    Effect.suspend(() => {
      const batch = next ??= makeBatch()
      // The last guard: no secret the process holds is ever written (Secrets.ts).
      const text = redactKnown(JSON.stringify(chainLine(line)))
      const bytes = Buffer.from(`${text}\n`, "utf8")
      if (chained) lastHash = lineHash(bytes.subarray(0, bytes.length - 1))
      batch.lines.push(bytes)
      if (!writing) void drain()
      return Effect.tryPromise({ try: () => batch.written, catch: (cause) => journalError(path, cause) })
    })
  return { path, append } satisfies JournalWriter
})

// --- reading -----------------------------------------------------------------------------------------------------

/** What the journal says about one row: its last state, and the details of its last `sending`/`done`. */
interface RowState {
  readonly last: "sending" | "done"
  readonly sending: Sending | undefined
  readonly outcome: Outcome | undefined
}

export interface JournalContents {
  readonly header: Header
  readonly rows: ReadonlyMap<number, RowState>
  /** `end` lines, one per session that ended (a killed session leaves none). */
  readonly ends: ReadonlyArray<End>
  /** The last session ended without interruption and no row is in flight. */
  readonly complete: boolean
}

const outcomeOf = (d: Done): Outcome => {
  const { after: _f, at: _a, row: _r, sent: _w, state: _s, ...outcome } = d
  return outcome
}

export const readJournal = Effect.fn("Journal.read")(function*(path: string) {
  const lines = Stream.fromAsyncIterable(
    readline.createInterface({ input: fs.createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity }),
    (cause) =>
      new RunError({
        message: `cannot read the journal ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  )
  let header: Header | undefined
  let lineNo = 0
  let unreadable: number | undefined
  const rows = new Map<number, RowState>()
  const ends: Array<End> = []
  let lastState: Line["state"] | undefined

  yield* Stream.runForEach(lines, (text) =>
    Effect.suspend(() => {
      lineNo += 1
      if (text.trim() === "") return Effect.void
      const decoded = decodeLine(text)
      if (Option.isNone(decoded)) {
        if (unreadable !== undefined) {
          return Effect.fail(new RunError({ message: `${path}: line ${unreadable} is not a journal line` }))
        }
        unreadable = lineNo
        return Effect.void
      }
      const line = decoded.value
      if (unreadable !== undefined && line.state !== "resumed") {
        return Effect.fail(new RunError({ message: `${path}: line ${unreadable} is not a journal line` }))
      }
      unreadable = undefined
      if (header === undefined) {
        if (line.state !== "header") {
          return Effect.fail(new RunError({ message: `${path} does not start with a journal header` }))
        }
        header = line
        return Effect.void
      }
      lastState = line.state
      switch (line.state) {
        case "sending": {
          const prev = rows.get(line.row)
          rows.set(line.row, { last: "sending", sending: line, outcome: prev?.outcome })
          break
        }
        case "done": {
          const prev = rows.get(line.row)
          rows.set(line.row, { last: "done", sending: prev?.sending, outcome: outcomeOf(line) })
          break
        }
        case "unsent": {
          const prev = rows.get(line.row)
          if (prev?.outcome !== undefined) {
            rows.set(line.row, { last: "done", sending: prev.sending, outcome: prev.outcome })
          } else rows.delete(line.row)
          break
        }
        case "end":
          ends.push(line)
          break
        case "header":
          return Effect.fail(new RunError({ message: `${path}: line ${lineNo} is a second header` }))
        case "resumed":
          break
      }
      return Effect.void
    }))
  if (header === undefined) {
    return yield* Effect.fail(new RunError({ message: `${path} is empty: the run wrote nothing` }))
  }
  const lastEnd = ends.at(-1)
  const inFlight = [...rows.values()].some((r) => r.last === "sending")
  const complete = lastState === "end" && lastEnd !== undefined && !lastEnd.interrupted && !inFlight
  return { header, rows, ends, complete } satisfies JournalContents
})
