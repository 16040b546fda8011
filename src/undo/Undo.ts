/**
 * `undo RUN_DIR`: a run like any other — a run directory with a journal, reports and a summary, continued by
 * `resume` and rerun by `rerun` — whose rows are the undo's plan (Steps.ts), written once to `undo.json` (and as a
 * readable table to `undo.csv`, the source its reports repeat) when it starts.
 *
 * A small runner rather than the import pipeline: an undo mixes deletes, patches and creates in one run, checks
 * each record against what the undone run wrote before touching it (`conflict`), and writes bodies from JSON
 * before-images, none of which a file of one resource in one mode can carry. What it shares with imports is the
 * rest: the journal (a `sending` line before each write, `done` after), the lock, the reconciliation of rows in
 * flight on resume, the report and summary formats, and the writes themselves (`Send.send`).
 *
 * Before anything is sent, the current records are read in batches (list calls, never a GET per row) and each
 * row is decided: unchanged since the run → undone; changed on the server → `conflict` naming the fields (unless
 * `--force`); already as before the run → `unchanged` (or, for a row in flight when a session stopped, the write
 * that landed).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as Path from "node:path"
import { Api, type ListFailed, type RunTraffic, trafficSince } from "../client/Api.js"
import { Notices } from "../console/Output.js"
import { RunProgress } from "../console/Progress.js"
import { RunError } from "../Errors.js"
import { openCsvWriter, writeFileAtomic } from "../files/Write.js"
import {
  type Header,
  type Intent,
  type JournalContents,
  journalFile,
  type Mode,
  openJournal,
  readJournal
} from "../import/Journal.js"
import { lockWriters } from "../import/Locks.js"
import { findRecords, type Found, listedAs, recordId } from "../import/Lookup.js"
import { resumeHint } from "../import/Pipeline.js"
import { openReports, type Summary } from "../import/Report.js"
import { createRunDir, existingRunDir, lockRunDir, nowIso, reportCsv } from "../import/RunDir.js"
import { endSession, runTraffic, summaryOf } from "../import/RunEnd.js"
import { send, wouldBe } from "../import/Send.js"
import { type Action, intentOf } from "../import/WritePlan.js"
import { isResourceName, type Resource, resource as resourceOf, type ResourceName } from "../Resources.js"
import { RunStop } from "../Signals.js"
import { endedWell, type Outcome, type Status } from "../Status.js"
import { formatRate } from "../Units.js"
import { type Change, changes, recordDifferences } from "../validate/Compare.js"
import {
  itemCells,
  makePlan,
  planFile,
  pointingAt,
  recreateBody,
  referrersOf,
  rowColumns,
  rowsFile,
  type UndoItem,
  UndoPlan
} from "./Steps.js"

/** What the caller of an undo may set; its stop, progress and lines are services (`RunStop`, `RunProgress`, `Notices`). */
interface UndoTools {
  /** Rows undone at once within one step (default 8). */
  readonly concurrency?: number | undefined
}

export interface UndoRequest extends UndoTools {
  /** The run (or onboarding) directory to undo. */
  readonly target: string
  /** The undo's own run directory (created; refused if it holds a run). */
  readonly runDir: string
  readonly dryRun: boolean
  readonly force: boolean
}

/** A record created again from its before-image: its new id, and what named the old one. */
interface Recreated {
  readonly resource: string
  readonly row: number
  readonly from: string | number | null
  readonly to: string | number
  readonly pointing: ReadonlyArray<string>
}

interface UndoSummary extends Summary {
  /** The run (or onboarding) directory undone, and the run directories it covered, in undo order. */
  readonly undoes: string
  readonly runs: ReadonlyArray<string>
  readonly force: boolean
  /** Rows that cannot be undone (reported `skipped`, with why). */
  readonly cannotUndo: number
  readonly recreated: ReadonlyArray<Recreated>
}

export interface UndoResult {
  readonly runDir: string
  readonly summary: UndoSummary
  readonly exitCode: number
  readonly interrupted: boolean
}

const cannotPrefix = "cannot be undone: "

/** The plan of an undo run directory. */
const readPlan = Effect.fn("Undo.readPlan")(function*(dir: string) {
  const path = Path.join(dir, planFile)
  const text = yield* Effect.try({
    try: () => fs.readFileSync(path, "utf8"),
    catch: (cause) => new RunError({ message: `${dir}: cannot read ${planFile} (${String(cause)})`, cause })
  })
  return yield* Schema.decodeUnknown(Schema.parseJson(UndoPlan))(text).pipe(
    Effect.mapError((cause) => new RunError({ message: `${path} is not an undo plan: ${cause.message}`, cause }))
  )
})

/**
 * The undo run directory `target` (a run directory, or a report inside one) names, or undefined when it is not an
 * undo run: `resume` and `rerun` hand undo runs over to the undo.
 */
export const undoRunOf = (target: string): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    const dir = fs.existsSync(target) && !fs.statSync(target).isDirectory() ? Path.dirname(target) : target
    return fs.existsSync(Path.join(dir, journalFile)) && fs.existsSync(Path.join(dir, planFile)) ? dir : undefined
  }).pipe(
    Effect.flatMap((dir) =>
      dir === undefined
        ? Effect.succeed(undefined)
        : readJournal(Path.join(dir, journalFile)).pipe(
          Effect.map((j) => (j.header.command === "undo" ? dir : undefined)),
          Effect.orElseSucceed(() => undefined)
        )
    )
  )

/** Writes the plan and its readable table into a new undo run directory. */
const writePlan = Effect.fn("Undo.writePlan")(function*(dir: string, plan: UndoPlan) {
  yield* writeFileAtomic(Path.join(dir, planFile), `${JSON.stringify(plan)}\n`)
  yield* Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* openCsvWriter(Path.join(dir, rowsFile), ["_row", ...rowColumns], {
        bom: false,
        guard: true
      })
      for (const item of plan.items) yield* writer.write([String(item.row), ...itemCells(item)])
      yield* writer.close
    })
  )
})

/** Starts an undo of `request.target`. */
export const runUndo = Effect.fn("Undo.run")(function*(request: UndoRequest) {
  const plan = yield* makePlan(request.target, request.force)
  return yield* startPlan(request, plan, undefined)
})

/** A new undo run of `plan` (a fresh undo, or a rerun of some of an undo's rows). */
const startPlan = Effect.fn("Undo.start")(function*(
  request: Omit<UndoRequest, "target">,
  plan: UndoPlan,
  parent: { readonly runDir: string; readonly only: ReadonlyArray<Status> } | undefined
) {
  const runDir = yield* createRunDir(request.runDir)
  return yield* Effect.scoped(
    Effect.gen(function*() {
      yield* lockRunDir(runDir, "undo")
      yield* writePlan(runDir, plan)
      return yield* execute({ ...request, runDir, command: "undo", parent }, plan, undefined)
    })
  )
})

/** `resume` of an undo run: rows done are kept, rows in flight are looked at before anything is sent again. */
export const resumeUndo = Effect.fn("Undo.resume")(function*(dir: string, tools: UndoTools = {}) {
  const runDir = yield* existingRunDir(dir)
  return yield* Effect.scoped(
    Effect.gen(function*() {
      yield* lockRunDir(runDir, "resume")
      const prior = yield* readJournal(Path.join(runDir, journalFile))
      const plan = yield* readPlan(runDir)
      return yield* execute(
        { ...tools, runDir, command: "resume", dryRun: prior.header.dryRun, force: plan.force, parent: undefined },
        plan,
        prior
      )
    })
  )
})

/**
 * `rerun` of an undo run: a new undo of the rows whose status in its report is one of `only` (default
 * `failed,in-doubt`; `conflict` with `--force` takes over records changed on the server since).
 */
export const rerunUndo = Effect.fn("Undo.rerun")(function*(
  dir: string,
  request: Omit<UndoRequest, "target"> & { readonly only: ReadonlyArray<Status> | undefined }
) {
  const undoDir = yield* existingRunDir(dir)
  const plan = yield* readPlan(undoDir)
  const journal = yield* readJournal(Path.join(undoDir, journalFile))
  const only = request.only ?? ["failed", "in-doubt"]
  const selected = plan.items.filter((item) => {
    const s = journal.rows.get(item.row)
    return s?.last === "done" && s.outcome !== undefined && only.includes(s.outcome.status)
  })
  if (selected.length === 0) {
    return yield* new RunError({
      message: `nothing to rerun: no row of ${undoDir}/${reportCsv} has the status ${only.join(" or ")}`
    })
  }
  return yield* startPlan(
    request,
    { ...plan, force: request.force, items: selected },
    { runDir: undoDir, only }
  )
})

// --- deciding each row -------------------------------------------------------------------------------------------

/** The current records, per resource, by id and by key: read in batches with list calls. */
interface Current {
  readonly byId: Map<string, Either.Either<Found, string>>
  readonly byKey: Map<string, Either.Either<Found, string>>
}

const readCurrent = Effect.fn("Undo.readCurrent")(function*(items: ReadonlyArray<UndoItem>) {
  const ids = new Map<ResourceName, Set<string>>()
  const keys = new Map<ResourceName, Set<string>>()
  const add = (m: Map<ResourceName, Set<string>>, r: ResourceName, v: string) => {
    const set = m.get(r) ?? new Set<string>()
    set.add(v)
    m.set(r, set)
  }
  for (const item of items) {
    if (!isResourceName(item.resource)) continue
    const r = resourceOf(item.resource)
    if (listedAs(r) === undefined) continue
    if ((item.kind === "delete" || item.kind === "restore") && item.id !== undefined && r.id !== undefined) {
      add(ids, r.name, String(item.id))
    }
    if (item.kind === "recreate" && r.key !== undefined) {
      const key = item.restore?.[r.key]
      if (key !== undefined && key !== null && String(key).trim() !== "") add(keys, r.name, String(key))
    }
  }
  const read = (m: Map<ResourceName, Set<string>>, by: (r: Resource) => string) =>
    Effect.forEach([...m], ([name, values]) => {
      const r = resourceOf(name)
      return findRecords(r, by(r), values).pipe(
        Effect.map((found): Either.Either<Found, string> => Either.right(found)),
        Effect.catchTag("ListFailed", (e: ListFailed) => Effect.succeed(Either.left(e.message))),
        Effect.map((found) => [name, found] as const)
      )
    }).pipe(Effect.map((entries) => new Map<string, Either.Either<Found, string>>(entries)))
  const current: Current = {
    byId: yield* read(ids, (r) => r.id!.name),
    byKey: yield* read(keys, (r) => r.key!)
  }
  return current
})

const show = (v: unknown): string =>
  v === undefined || v === null || v === "" ? "(empty)" : typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v)

/** `name: the run wrote "Ana", the server has "Ana Maria"`. */
const formatConflict = (list: ReadonlyArray<Change>): string =>
  list.map((c) => `${c.field}: the run wrote ${show(c.to)}, the server has ${show(c.from)}`).join("; ")

/** `note: the run left (empty), the server has "ligar antes"`. */
const formatEdits = (list: ReadonlyArray<Change>): string =>
  list.map((c) => `${c.field}: the run left ${show(c.to)}, the server has ${show(c.from)}`).join("; ")

const camel = (segment: string): string => segment.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())

/**
 * Properties of `r`'s records that hold items the undone runs wrote through their own paths (a task's products
 * when the plan holds task products): those items go with the record, so they are no edit of someone else's.
 */
const writtenInside = (plan: UndoPlan, r: Resource): ReadonlySet<string> => {
  const out = new Set<string>()
  for (const item of plan.items) {
    if (!isResourceName(item.resource)) continue
    const child = resourceOf(item.resource)
    if (child.parent?.resource !== r.name || !child.path.includes("{id}")) continue
    out.add(child.readBackIn ?? camel(child.path.split("/").pop()!))
  }
  return out
}

/**
 * Why the current record is not the one the run left, or undefined when it is: EVERY field it has now must equal
 * the record as the run's write left it (its answer), not only the fields the run sent. A journal without that
 * image (older versions) cannot tell, so the record is left alone.
 */
const editedSince = (
  r: Resource,
  item: UndoItem,
  record: Readonly<Record<string, unknown>>,
  ignore: ReadonlySet<string>
): string | undefined => {
  if (item.after === undefined) {
    return "the journal (of an older version) does not hold the record as the run left it, so an edit made since cannot be told"
  }
  const differ = recordDifferences(r, item.after, record, ignore)
  return differ.length > 0 ? `changed on the server since the run (${formatEdits(differ)})` : undefined
}

const settle = (outcome: Outcome): Action => ({ _tag: "Settle", outcome })
const reconciled = "reconciled after an interruption: "

/** A record to create again whose key the read before found on no record: the proof a record found later is ours. */
const keyAbsent = (item: UndoItem, current: Current): boolean => {
  if (item.kind !== "recreate" || !isResourceName(item.resource)) return false
  const r = resourceOf(item.resource)
  const key = r.key !== undefined ? item.restore?.[r.key] : undefined
  if (key === undefined || key === null || String(key).trim() === "") return false
  const found = current.byKey.get(r.name)
  return found !== undefined && Either.isRight(found) && (found.right.get(String(key)) ?? []).length === 0
}

/** What to do with one row, given the server's current records and the intent of a write left in flight. */
const decide = (
  item: UndoItem,
  current: Current,
  force: boolean,
  interrupted: Intent | undefined,
  plan: UndoPlan
): Action => {
  if (item.kind === "cannot") return settle({ status: "skipped", error: `${cannotPrefix}${item.why ?? ""}` })
  if (!isResourceName(item.resource)) return settle({ status: "failed", error: `unknown resource ${item.resource}` })
  const r = resourceOf(item.resource)
  const withId = item.id !== undefined ? { recordId: item.id } : {}
  const lookedUp = (m: Map<string, Either.Either<Found, string>>, value: string) => {
    const found = m.get(r.name)
    if (found === undefined) return undefined
    if (Either.isLeft(found)) return found.left
    return found.right.get(value) ?? []
  }
  const conflict = (why: string) =>
    settle({ status: "conflict", ...withId, error: `${why}: not undone (--force undoes it anyway)` })

  switch (item.kind) {
    case "delete": {
      const records = item.id !== undefined ? lookedUp(current.byId, String(item.id)) : undefined
      if (typeof records === "string") {
        return settle({ status: "failed", ...withId, error: `could not read the record: ${records}` })
      }
      if (records !== undefined && records.length === 0) {
        return interrupted === "delete"
          ? settle({ status: "deleted", ...withId, error: `${reconciled}the record is gone` })
          : settle({ status: "unchanged", ...withId, error: "already gone from the server: nothing to delete" })
      }
      if (records !== undefined && !force) {
        const edited = editedSince(r, item, records[0]!, writtenInside(plan, r))
        if (edited !== undefined) return conflict(edited)
      }
      return { _tag: "Delete", id: item.id! }
    }
    case "restore": {
      const restore = item.restore ?? {}
      const records = lookedUp(current.byId, String(item.id))
      if (typeof records === "string") {
        return settle({ status: "failed", ...withId, error: `could not read the record: ${records}` })
      }
      const record = records?.[0]
      if (records !== undefined && record === undefined && !force) {
        return conflict("deleted on the server since the run")
      }
      if (record !== undefined) {
        if (changes(r, restore, record).length === 0) {
          return interrupted === "patch" || interrupted === "update"
            ? settle({ status: "updated", ...withId, error: `${reconciled}the record is as before the run` })
            : settle({ status: "unchanged", ...withId, error: "already as before the run" })
        }
        const differ = changes(r, item.sent ?? {}, record)
        if (differ.length > 0 && !force) {
          return conflict(`changed on the server since the run (${formatConflict(differ)})`)
        }
        // The fields the run wrote are as it left them; every other field must be too (an edit elsewhere in the
        // record is someone's work that a restore would mix with the old values).
        const edited = force ? undefined : editedSince(r, item, record, writtenInside(plan, r))
        if (edited !== undefined) return conflict(edited)
      }
      const list = Object.entries(restore).map(([field, to]) => ({ field, from: item.sent?.[field], to }))
      if (r.ops.includes("patch")) return { _tag: "Patch", id: item.id!, changes: list }
      // PUT /{id} replaces the record: the current record's writable fields with the restored ones laid over.
      return {
        _tag: "PutId",
        id: item.id!,
        body: { ...(record !== undefined ? recreateBody(r, record) : {}), ...restore },
        changes: list
      }
    }
    case "recreate": {
      const body = { ...item.restore }
      const keyValue = r.key !== undefined ? body[r.key] : undefined
      const key = keyValue !== undefined && keyValue !== null && String(keyValue).trim() !== ""
        ? String(keyValue)
        : undefined
      const records = key !== undefined ? lookedUp(current.byKey, key) : undefined
      if (typeof records === "string") return settle({ status: "failed", error: `could not look it up: ${records}` })
      const existing = records?.[0]
      if (existing !== undefined) {
        const id = recordId(r, existing)
        const newId = id !== undefined ? { recordId: id } : {}
        return interrupted === "create"
          ? settle({ status: "created", ...newId, error: `${reconciled}the record was created again` })
          : settle({
            status: "conflict",
            ...newId,
            error: `a ${r.name} record with ${r.key} "${key}" is on the server again${
              id !== undefined ? ` (id ${String(id)})` : ""
            }: not created a second time`
          })
      }
      if (interrupted === "create" && records === undefined) {
        return settle({
          status: "in-doubt",
          error: `the undo stopped while this record was being created again, and ${r.name} records cannot be ` +
            `looked up by a key: check the server before running it again`
        })
      }
      return {
        _tag: "Post",
        body,
        correlation: r.key !== undefined && key !== undefined ? { key: r.key, value: key } : undefined
      }
    }
  }
}

// --- the run ---------------------------------------------------------------------------------------------------

interface Execution extends UndoTools {
  readonly runDir: string
  readonly command: string
  readonly dryRun: boolean
  readonly force: boolean
  readonly parent: { readonly runDir: string; readonly only: ReadonlyArray<Status> } | undefined
}

const sha256Of = (path: string) =>
  Effect.try({
    try: () => createHash("sha256").update(fs.readFileSync(path)).digest("hex"),
    catch: (cause) => new RunError({ message: `cannot read ${path}: ${String(cause)}`, cause })
  })

/** What the header says was undone: a resource, or `onboarding` for several steps. */
const resourceLabel = (plan: UndoPlan): string =>
  fs.existsSync(Path.join(plan.of, journalFile)) ? plan.items[0]?.resource ?? "undo" : "onboarding"

const execute = Effect.fn("Undo.execute")(function*(
  job: Execution,
  plan: UndoPlan,
  prior: JournalContents | undefined
) {
  const api = yield* Api
  const { say } = yield* Notices
  const statsAtStart = yield* api.stats
  const started = prior?.header.started ?? (yield* nowIso)
  const runDir = job.runDir
  // One writer per (server, account, resource): an import of a resource this undo deletes from waits for it.
  if (!job.dryRun && api.embedded !== true) {
    yield* lockWriters(
      { baseUrl: api.baseUrl, account: api.account ?? "" },
      plan.items.map((item) => item.resource),
      job.command,
      runDir,
      started
    )
  }
  const source = Path.join(runDir, rowsFile)
  const sha256 = yield* sha256Of(source)
  const journal = yield* openJournal(Path.join(runDir, journalFile))
  if (prior === undefined) {
    // The journal's header has no mode for a mix of deletes, patches and creates: the nearest is written, the
    // summary says `undo`, and `command: "undo"` is what `resume` and `rerun` go by.
    const mode: Mode = "delete"
    const header: Header = {
      state: "header",
      version: 1,
      tool: "fsm-bulk",
      command: "undo",
      resource: resourceLabel(plan),
      mode,
      dryRun: job.dryRun,
      verify: false,
      baseUrl: api.baseUrl,
      ...(api.embedded === true ? { embedded: true } : {}),
      rate: formatRate(api.budget),
      source: { file: source, format: "csv", sha256, rowColumn: "_row" },
      read: { encoding: "utf-8", delimiter: "," },
      parse: { dateFormat: "auto", decimal: "auto", baseDir: runDir, maxAttachmentBytes: 0 },
      formats: { undo: plan.of },
      started,
      // The run undone is `formats.undo` (and the summary's `undoes`); `parent` is the undo a rerun took rows from.
      ...(job.parent !== undefined
        ? {
          parent: {
            runDir: job.parent.runDir,
            report: Path.join(job.parent.runDir, reportCsv),
            only: [...job.parent.only]
          }
        }
        : {})
    }
    yield* journal.append(header)
  } else {
    if (prior.header.source.sha256 !== sha256) {
      return yield* new RunError({ message: `${source} was changed since the undo started: it cannot be resumed` })
    }
    if (prior.header.baseUrl !== api.baseUrl) {
      yield* say(`warning: this undo was sent to ${prior.header.baseUrl}; it now continues against ${api.baseUrl}`)
    }
    yield* journal.append({ state: "resumed", command: job.command, at: yield* nowIso, rate: formatRate(api.budget) })
  }

  // Rows an earlier session finished keep their outcome; rows it left in flight are decided again.
  const outcomes = new Map<number, Outcome>()
  const priorSending = new Map<number, Intent>()
  for (const [row, s] of prior?.rows ?? []) {
    if (s.last === "done" && s.outcome !== undefined) outcomes.set(row, s.outcome)
    else if (s.last === "sending" && s.sending !== undefined) priorSending.set(row, s.sending.intent)
  }
  const pending = plan.items.filter((item) => !outcomes.has(item.row))

  if (prior === undefined) {
    const cannot = plan.items.filter((i) => i.kind === "cannot")
    if (cannot.length > 0) {
      yield* say(`${cannot.length} row${cannot.length === 1 ? "" : "s"} cannot be undone:`)
      for (const i of cannot.slice(0, 20)) {
        yield* say(`  ${i.resource} row ${i.runRow}${i.id !== undefined ? ` (id ${String(i.id)})` : ""}: ${i.why}`)
      }
      if (cannot.length > 20) yield* say(`  … and ${cannot.length - 20} more: see ${runDir}/${reportCsv}`)
    }
  }

  const current = yield* readCurrent(pending)
  let stopped = false
  const stop = (yield* RunStop).stopped
  const progress = yield* RunProgress
  if (stop !== undefined) yield* Effect.forkScoped(Effect.tap(stop, () => Effect.sync(() => (stopped = true))))
  yield* progress.begin(plan.items.length, outcomes.size)

  const recreated: Array<Recreated> = []
  const finish = (item: UndoItem, outcome: Outcome) =>
    Effect.gen(function*() {
      let o = outcome
      if (item.kind === "recreate" && outcome.status === "created" && outcome.recordId !== undefined && !job.dryRun) {
        const pointing = item.id !== undefined && isResourceName(item.resource)
          ? pointingAt(plan, item.resource, item.id)
          : []
        recreated.push({
          resource: item.resource,
          row: item.row,
          from: item.id ?? null,
          to: outcome.recordId,
          pointing
        })
        o = {
          ...outcome,
          error: [outcome.error, recreatedNote(item, outcome.recordId, pointing)].filter(Boolean).join("; ")
        }
      }
      outcomes.set(item.row, o)
      yield* journal.append({ state: "done", row: item.row, ...o, at: yield* nowIso })
      yield* progress.row
    })

  const undoOne = (item: UndoItem) =>
    Effect.gen(function*() {
      if (stopped) return
      const action = decide(item, current, plan.force, priorSending.get(item.row), plan)
      if (job.dryRun || action._tag === "Settle") {
        return yield* finish(item, action._tag === "Settle" ? action.outcome : wouldBe(resourceOrNone(item), action))
      }
      const r = resourceOf(item.resource as ResourceName)
      yield* journal.append({
        state: "sending",
        row: item.row,
        ...(item.id !== undefined ? { id: item.id } : {}),
        intent: intentOf(action)!,
        at: yield* nowIso
      })
      const sent = yield* Effect.either(send(r, action, { absent: keyAbsent(item, current) }))
      if (Either.isLeft(sent)) {
        stopped = true
        yield* journal.append({ state: "unsent", row: item.row, at: yield* nowIso })
        return yield* Effect.fail(sent.left)
      }
      yield* finish(item, sent.right.outcome)
    })

  // Step by step in the plan's order (children before the records they name); rows of a step side by side.
  const aborted = yield* Effect.either(
    Effect.forEach(plan.runs, (run) =>
      Effect.forEach(pending.filter((i) => i.run === run), undoOne, {
        concurrency: job.concurrency ?? 8,
        discard: true
      }), { discard: true })
  )
  yield* progress.end
  const abort = Either.isLeft(aborted) ? aborted.left : undefined

  // Reports: one line per row of the plan, in order.
  let unfinished = 0
  const earlier = prior?.ends ?? []
  let session: RunTraffic = { requests: 0, rateLimited: 0, retries: 0 }
  // The summary is made once the last line is written, so that report.xlsx shows it on its first sheet.
  const report = yield* Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* openReports({
        runDir,
        input: { columns: [...rowColumns], cellsOf: (row) => row.cells },
        dryRun: job.dryRun,
        decimal: "."
      })
      for (const item of plan.items) {
        const outcome = outcomes.get(item.row) ?? (() => {
          unfinished += 1
          const why = abort !== undefined ? `the undo was aborted (${abort.message})` : "the undo stopped"
          return priorSending.has(item.row)
            ? { status: "in-doubt" as const, error: `${why} while this row was being sent; ${resumeHint(runDir)}` }
            : { status: "skipped" as const, error: `not attempted: ${why} before this row; ${resumeHint(runDir)}` }
        })()
        yield* writer.write({ row: item.row, cells: itemCells(item) }, outcome)
      }
      return yield* writer.close((tally) =>
        Effect.gen(function*() {
          const interrupted = abort !== undefined || unfinished > 0
          const stats = trafficSince(statsAtStart, yield* api.stats)
          session = stats
          const common = yield* summaryOf(
            {
              command: prior?.header.command ?? "undo",
              resource: prior?.header.resource ?? resourceLabel(plan),
              mode: "undo",
              source,
              runDir,
              started,
              dryRun: job.dryRun,
              parent: prior?.header.parent ??
                (job.parent !== undefined
                  ? {
                    runDir: job.parent.runDir,
                    report: Path.join(job.parent.runDir, reportCsv),
                    only: [...job.parent.only]
                  }
                  : null),
              interrupted,
              aborted: abort?.message ?? null,
              baseUrl: api.baseUrl,
              budget: api.budget
            },
            tally,
            runTraffic(stats, earlier),
            // A row that cannot be undone is `skipped`: the account is not back where it was, so the run does not
            // end well.
            (s) => endedWell(s, false)
          )
          const summary: UndoSummary = {
            ...common,
            undoes: plan.of,
            runs: plan.runs,
            force: plan.force,
            cannotUndo: plan.items.filter((i) => i.kind === "cannot").length,
            recreated: [...recreatedBefore(plan, outcomes), ...recreated].filter((x, i, all) =>
              all.findIndex((y) => y.row === x.row) === i
            )
          }
          return summary
        })
      )
    })
  )
  return (yield* endSession(journal, report, session, abort)) satisfies UndoResult
})

const resourceOrNone = (item: UndoItem): Resource => resourceOf(item.resource as ResourceName)

const recreatedNote = (item: UndoItem, to: string | number, pointing: ReadonlyArray<string>): string => {
  const was = item.id !== undefined ? ` (was ${String(item.id)})` : ""
  if (item.id === undefined) return `created again with the new id ${String(to)}`
  const named = pointing.length > 0
    ? `; these named the old id and must be pointed at the new one: ${pointing.join(", ")}`
    : ""
  const others = isResourceName(item.resource) ? referrersOf(item.resource) : []
  return `created again with a new id ${String(to)}${was}${named}${
    others.length > 0 ? `; other records naming ${String(item.id)} (${others.join(", ")}) name nothing now` : ""
  }`
}

/** Records an earlier session of this undo created again (for the summary of a resumed undo). */
const recreatedBefore = (plan: UndoPlan, outcomes: ReadonlyMap<number, Outcome>): ReadonlyArray<Recreated> =>
  plan.items.flatMap((item) => {
    const o = outcomes.get(item.row)
    if (item.kind !== "recreate" || o?.status !== "created" || o.recordId === undefined) return []
    return [{
      resource: item.resource,
      row: item.row,
      from: item.id ?? null,
      to: o.recordId,
      pointing: item.id !== undefined && isResourceName(item.resource) ? pointingAt(plan, item.resource, item.id) : []
    }]
  })
