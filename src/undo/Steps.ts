/**
 * What undoing a run means, row by row, read from its journal alone: the records it created are deleted, the
 * records it updated get back the before-image values of the fields it changed, the records it deleted are
 * created again from their before-image; everything else the run wrote is said to be impossible to undo, and why
 * (questionnaire answers, attachments, resources the API cannot delete, writes without a before-image).
 *
 * An onboarding directory (one run directory per step) is undone step by step in reverse dependency order: the
 * records that point at others go before the records they point at.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as Path from "node:path"
import * as readline from "node:readline"
import { writeForm } from "../client/Body.js"
import { RunError } from "../Errors.js"
import { keyText, recordProperty } from "../Identity.js"
import { journalFile, Line, readJournal } from "../import/Journal.js"
import { rerunsOf } from "../import/Lineage.js"
import { recordId } from "../import/Lookup.js"
import { existingRunDir } from "../import/RunDir.js"
import {
  dependencyOrder,
  isResourceName,
  readName,
  type Resource,
  resource as resourceOf,
  type ResourceName,
  resources
} from "../Resources.js"
import { shellQuote } from "../Shell.js"
import type { Outcome } from "../Status.js"
import { changes } from "../validate/Compare.js"

/** A server record as JSON, or a write's body (write names). */
type Image = Readonly<Record<string, unknown>>

const UndoKind = Schema.Literal("delete", "restore", "recreate", "cannot")
type UndoKind = typeof UndoKind.Type

const ImageSchema = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** One row of an undo: what to do to one record a run wrote. */
export const UndoItem = Schema.Struct({
  /** The row number in the undo's report (2, 3 … like the rows of a file under its header). */
  row: Schema.Number,
  /** The run directory whose row this undoes. */
  run: Schema.String,
  /** That run's row. */
  runRow: Schema.Number,
  resource: Schema.String,
  kind: UndoKind,
  /** The record: the id the run created, updated or deleted. */
  id: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  /** What the run wrote (write names): compared with the server's record before anything is undone. */
  sent: Schema.optional(ImageSchema),
  /** The values to put back (write names): the before-image's values of the fields the run changed. */
  restore: Schema.optional(ImageSchema),
  /**
   * The record as the run left it (its write's answer, read names): a record is undone only while it still equals
   * this in every field; absent in journals of older versions.
   */
  after: Schema.optional(ImageSchema),
  /** `cannot`: why not. */
  why: Schema.optional(Schema.String)
})
export type UndoItem = typeof UndoItem.Type

/** `undo.json`: the undo's rows, computed once when it starts; `resume` works from it. */
export const UndoPlan = Schema.Struct({
  version: Schema.Literal(1),
  /** The run directory given (a run, or an onboarding holding one per step). */
  of: Schema.String,
  /** The run directories undone, in the order they are undone. */
  runs: Schema.Array(Schema.String),
  force: Schema.Boolean,
  items: Schema.Array(UndoItem)
})
export type UndoPlan = typeof UndoPlan.Type

export const planFile = "undo.json"
/** The undo's rows as a readable table: the source its reports repeat. */
export const rowsFile = "undo.csv"
export const rowColumns = ["resource", "run", "run_row", "record_id", "undo", "fields"] as const

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The fields an item writes or checks, for the report's `fields` column. */
export const itemCells = (item: UndoItem): ReadonlyArray<string> => [
  item.resource,
  item.run,
  String(item.runRow),
  item.id !== undefined ? String(item.id) : "",
  item.kind,
  Object.keys(item.kind === "restore" ? item.restore ?? {} : {}).join("|")
]

// --- reading the undone run -----------------------------------------------------------------------------------

/** A row of the undone run as its journal's last lines tell it, with the images the journal carries. */
interface RunRow {
  readonly row: number
  readonly outcome: Outcome
  readonly before: Image | undefined
  readonly sent: unknown
  readonly after: Image | undefined
  readonly intent: string | undefined
  /** The read before the write found no record with the row's key (the proof a record found later is the run's). */
  readonly absent: boolean
}

const decodeLine = Schema.decodeUnknownOption(Line)

/** Every row's last `sending` and `done`, including the before-image and what was sent (read from the raw lines). */
const runRows = Effect.fn("Undo.runRows")(function*(path: string) {
  const rows = new Map<number, { before?: Image; intent?: string; absent?: boolean; done?: Record<string, unknown> }>()
  yield* Stream.runForEach(
    Stream.fromAsyncIterable(
      readline.createInterface({ input: fs.createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity }),
      (cause) => new RunError({ message: `cannot read the journal ${path}: ${String(cause)}`, cause })
    ),
    (text) =>
      Effect.sync(() => {
        let raw: unknown
        try {
          raw = JSON.parse(text)
        } catch {
          return // the fragment a crash leaves; readJournal has judged the file already
        }
        const line = decodeLine(raw)
        if (Option.isNone(line) || !isObject(raw)) return
        const l = line.value
        if (l.state === "sending") {
          rows.set(l.row, {
            ...(isObject(raw.before) ? { before: raw.before } : {}),
            intent: l.intent,
            absent: l.absent === true
          })
        } else if (l.state === "done") {
          rows.set(l.row, { ...rows.get(l.row), done: raw })
        }
      })
  )
  const out: Array<RunRow> = []
  for (const [row, r] of rows) {
    if (r.done === undefined) continue
    const { after, at: _a, row: _r, sent, state: _s, ...outcome } = r.done
    out.push({
      row,
      outcome: outcome as unknown as Outcome,
      before: r.before,
      sent,
      after: isObject(after) ? after : undefined,
      intent: r.intent,
      absent: r.absent === true
    })
  }
  return out.sort((a, b) => a.row - b.row)
})

// --- the items of one row ---------------------------------------------------------------------------------------

const cannotWhy = (r: Resource, what: string): string | undefined => {
  if (r.name === "questionnaire-answers") {
    return `questionnaire answers cannot be taken back through the API (${what})`
  }
  if (r.upload !== undefined) return `attachments cannot be removed through the API (${what})`
  if (r.kind === "action") return `the API has no way to take back ${r.title.toLowerCase()} (${what})`
  if (r.kind === "subcollection" && r.parent !== undefined) {
    return `${r.title.toLowerCase()} come back only inside their ${r.parent.resource} record, so the journal holds no ` +
      `before-image of them and cannot tell an item this run added from one it replaced (${what}); they go with ` +
      `their ${r.parent.resource.replace(/s$/, "")} when the undo deletes it`
  }
  return undefined
}

/** The before-image's values of `fields` (write names), in write form; `null` for a value the record did not have. */
const beforeValues = (r: Resource, before: Image, fields: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const name of fields) {
    const field = r.fields.find((x) => x.name === name)
    const v = writeForm(field, recordProperty(before, field !== undefined ? readName(field) : name))
    out[name] = v === undefined ? null : v
  }
  return out
}

/** The body that creates the record again: the before-image's writable fields (never the id or server-only ones). */
export const recreateBody = (r: Resource, before: Image): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const field of r.fields) {
    if (field.readOnly === true || field.writeOnly === true || field.type._tag === "file") continue
    if (r.id !== undefined && field.name === r.id.name) continue
    if (field.resolves !== undefined) continue
    const v = writeForm(field, recordProperty(before, readName(field)))
    if (v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0)) continue
    out[field.name] = v
  }
  return out
}

type Draft = Omit<UndoItem, "row">

/** Notes of outcomes taken from a record found after a lost answer, not from the write's own answer. */
const foundNotes = ["reconciled after an interruption", "the record was found on the server by its key"]

/**
 * A `created` row whose record was found after a lost answer, with no proof that the read before the write found
 * its key absent: what journals of versions before that proof counted as created. Such a record may be older than
 * the run.
 */
const unproven = (row: RunRow): boolean =>
  !row.absent && (row.intent === "create" || row.intent === "upsert") &&
  foundNotes.some((note) => row.outcome.error?.includes(note) === true)

const itemsOf = (run: string, r: Resource, row: RunRow): ReadonlyArray<Draft> => {
  const base = { run, runRow: row.row, resource: r.name }
  const { status, recordId: id } = row.outcome
  const sent = isObject(row.sent) ? row.sent : undefined
  const withId = id !== undefined ? { id } : {}
  const after = row.after !== undefined ? { after: row.after } : {}
  const cannot = (why: string): ReadonlyArray<Draft> => [{ ...base, ...withId, kind: "cannot", why }]
  switch (status) {
    case "created": {
      const special = cannotWhy(r, "written by this run")
      if (special !== undefined) return cannot(special)
      if (!r.ops.includes("delete")) return cannot(`the API cannot delete ${r.title.toLowerCase()}`)
      if (id === undefined) return cannot("the run did not record the id of the record it created")
      if (unproven(row)) {
        return cannot(
          "the run found this record on the server after a lost answer, and nothing shows it created it (a journal " +
            "of an older version): it may have been there before the run, so it is not deleted"
        )
      }
      return [{ ...base, id, kind: "delete", ...(sent !== undefined ? { sent } : {}), ...after }]
    }
    case "updated": {
      const special = cannotWhy(r, "changed by this run")
      if (special !== undefined) return cannot(special)
      if (row.before === undefined) return cannot("the journal holds no before-image of this record")
      if (id === undefined) return cannot("the run did not record the id of the record it changed")
      if (!r.ops.includes("patch") && !r.ops.includes("update")) {
        return cannot(`the API cannot change an existing ${r.title.toLowerCase()} record`)
      }
      if (sent === undefined) return cannot("the journal does not say what the run wrote to this record")
      const changed = changes(r, sent, row.before).map((c) => c.field)
      if (changed.length === 0) return [] // the write changed nothing
      const written: Record<string, unknown> = {}
      for (const f of changed) written[f] = sent[f]
      return [{ ...base, id, kind: "restore", sent: written, restore: beforeValues(r, row.before, changed), ...after }]
    }
    case "deleted": {
      const special = cannotWhy(r, "deleted by this run")
      if (special !== undefined) return cannot(special)
      if (row.before === undefined) return cannot("the journal holds no before-image of the deleted record")
      if (!r.ops.includes("create") && !r.ops.includes("upsert")) {
        return cannot(`the API cannot create ${r.title.toLowerCase()} records`)
      }
      const oldId = id ?? recordId(r, row.before)
      return [{
        ...base,
        ...(oldId !== undefined ? { id: oldId } : {}),
        kind: "recreate",
        restore: recreateBody(r, row.before)
      }]
    }
    case "queued":
    case "confirmed":
    case "unconfirmed":
      return cannot(cannotWhy(r, "sent by this run") ?? `the API cannot take back ${r.title.toLowerCase()}`)
    case "in-doubt":
      return cannot("the run does not know whether this row was written: check the server")
    default:
      return []
  }
}

// --- the plan ------------------------------------------------------------------------------------------------------

/**
 * A run and the reruns made of it since (and of those: `reruns.ndjson`), in undo order: the latest rerun first,
 * the run last. Dry runs wrote nothing and are left out.
 */
const withReruns = Effect.fn("Undo.withReruns")(function*(run: string) {
  const reruns = (yield* rerunsOf(run)).filter((x) => !x.header.dryRun && x.header.command !== "undo")
  return [...reruns.map((x) => x.runDir).reverse(), run]
})

/**
 * The run directories an undo of `dir` covers, in undo order: the run itself, or an onboarding's steps reversed,
 * each with its reruns before it (the records a rerun made may point at the run's: they go first).
 */
const runsOf = Effect.fn("Undo.runsOf")(function*(dir: string) {
  const abs = Path.resolve(dir)
  if (!fs.existsSync(abs)) return yield* new RunError({ message: `${dir} does not exist` })
  if (fs.existsSync(Path.join(abs, journalFile))) return yield* withReruns(yield* existingRunDir(abs))
  const steps = fs.readdirSync(abs).filter((name) =>
    isResourceName(name) && fs.existsSync(Path.join(abs, name, journalFile))
  ) as Array<ResourceName>
  if (steps.length === 0) {
    return yield* new RunError({
      message: `${dir} is not a run directory (no ${journalFile}) nor an onboarding (no step directory holds one)`
    })
  }
  // Dependency order puts parents first: undo goes the other way.
  const order = [...dependencyOrder(steps)]
  const runs: Array<string> = []
  for (const name of order.reverse()) runs.push(...(yield* withReruns(Path.join(abs, name))))
  return runs
})

/** Reads the run(s) under `dir` and lists what undoing them means. */
export const makePlan = Effect.fn("Undo.plan")(function*(dir: string, force: boolean) {
  const runs = yield* runsOf(dir)
  const drafts: Array<Draft> = []
  for (const run of runs) {
    const path = Path.join(run, journalFile)
    const journal = yield* readJournal(path)
    const h = journal.header
    if (h.command === "undo") {
      return yield* new RunError({
        message:
          `${run} is an undo: it cannot itself be undone (run the original import again, or \`fsm-bulk rerun\` it)`
      })
    }
    if (h.dryRun) {
      return yield* new RunError({ message: `${run} is a dry run: it wrote nothing, so there is nothing to undo` })
    }
    if (!isResourceName(h.resource)) {
      return yield* new RunError({ message: `${path}: the journal names an unknown resource "${h.resource}"` })
    }
    const inFlight = [...journal.rows].filter(([, s]) => s.last === "sending").map(([row]) => row)
    if (inFlight.length > 0) {
      return yield* new RunError({
        message: `${run} stopped with rows in flight (row ${inFlight.slice(0, 5).join(", ")}): finish it with ` +
          `\`fsm-bulk resume ${shellQuote(run)}\` first, so the undo knows what it wrote`
      })
    }
    const r = resourceOf(h.resource)
    for (const row of yield* runRows(path)) drafts.push(...itemsOf(run, r, row))
  }
  const plan: UndoPlan = {
    version: 1,
    of: Path.resolve(dir),
    runs,
    force,
    items: drafts.map((d, i) => ({ ...d, row: i + 2 }))
  }
  return plan
})

// --- references to records created again -----------------------------------------------------------------------

/**
 * Where the runs' records point at `id` of `target`: the rows whose before-image or write holds it in a reference
 * field (`tasks row 4 (customerId)`). Only the runs undone are searched: they are what the undo knows.
 */
export const pointingAt = (
  plan: UndoPlan,
  target: ResourceName,
  id: string | number
): ReadonlyArray<string> => {
  const out: Array<string> = []
  const wanted = keyText(id)
  for (const item of plan.items) {
    if (!isResourceName(item.resource)) continue
    const r = resourceOf(item.resource)
    const refs = r.fields.filter((f) => f.ref?.resource === target)
    for (const f of refs) {
      const values = [item.sent?.[f.name], item.restore?.[f.name]].flatMap((v) => (Array.isArray(v) ? v : [v]))
      if (values.some((v) => v !== undefined && v !== null && keyText(v) === wanted)) {
        out.push(
          `${item.resource} ${item.id !== undefined ? `id ${String(item.id)}` : `row ${item.runRow}`} (${f.name})`
        )
      }
    }
  }
  return [...new Set(out)]
}

/** Names of every resource whose fields refer to `target`: what else in the account may point at a record. */
export const referrersOf = (target: ResourceName): ReadonlyArray<string> =>
  [...resources.values()].filter((r) => r.fields.some((f) => f.ref?.resource === target)).map((r) => r.name)
