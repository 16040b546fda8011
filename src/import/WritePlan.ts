/**
 * What one valid row's write is, per mode and per what the resource's API can do: a POST, a PUT on the collection,
 * a PATCH of the changed fields, a PUT or DELETE by id, a PUT/DELETE on a sub-collection or action path, or no
 * request at all (`Settle`: unchanged, not found, refused before sending). Pure: the lookups are done beforehand.
 *
 * Resources without an upsert in the API (teams, groups, segments, keywords …) get one emulated: the record is
 * looked up by key; found → PATCH (or PUT /{id}) of the fields that differ, absent → POST with correlation.
 */
import { type Fingerprint, recordValue } from "../export/Fingerprint.js"
import type { Resource } from "../Resources.js"
import type { Outcome } from "../Status.js"
import { type Change, changes as diff, formatChanges, isEmpty, unreadable } from "../validate/Compare.js"
import type { FileCell } from "../validate/Validate.js"
import type { Intent, Mode } from "./Journal.js"
import { listedAs, recordId } from "./Lookup.js"
import { type OnConflict, staleness } from "./Stale.js"

export type ServerId = string | number

/** A valid row whose references are resolved: ready to be planned and sent. */
interface ReadyRow {
  readonly row: number
  readonly payload: Readonly<Record<string, unknown>>
  readonly key: string | undefined
  readonly id: ServerId | undefined
  readonly files: ReadonlyArray<FileCell>
}

/** The existing record a row's key (or id) names, as the batched lookup found it. */
export type Existing =
  | { readonly _tag: "NotLooked" }
  | { readonly _tag: "Unavailable"; readonly message: string }
  | {
    readonly _tag: "Found"
    readonly records: ReadonlyArray<Record<string, unknown>>
    readonly by: string
    readonly value: string
  }

export type Action =
  | {
    readonly _tag: "Post"
    readonly body: Record<string, unknown>
    readonly correlation: { readonly key: string; readonly value: string } | undefined
  }
  | {
    readonly _tag: "PutCollection"
    readonly path: string
    readonly body: unknown
    readonly existed: boolean | undefined
    readonly changes: ReadonlyArray<Change>
  }
  | { readonly _tag: "Patch"; readonly id: ServerId; readonly changes: ReadonlyArray<Change> }
  | {
    readonly _tag: "PutId"
    readonly id: ServerId
    readonly body: Record<string, unknown>
    readonly changes: ReadonlyArray<Change>
  }
  | { readonly _tag: "Delete"; readonly id: ServerId }
  | {
    readonly _tag: "PutPath"
    readonly path: string
    readonly body: unknown
    readonly files: ReadonlyArray<FileCell>
    /**
     * What the write changes on the parent's item as read before it (a new item: every field it gives); undefined
     * when nothing was read to compare with (actions, an item with a file, a parent a dry run would create).
     */
    readonly changes?: ReadonlyArray<Change> | undefined
  }
  | {
    readonly _tag: "DeletePath"
    readonly path: string
    readonly body: unknown
    /** The item was read in its parent before and is there (undefined: nothing was read). */
    readonly found?: true | undefined
  }
  | { readonly _tag: "Settle"; readonly outcome: Outcome }

export const intentOf = (action: Action): Intent | undefined => {
  switch (action._tag) {
    case "Post":
      return "create"
    case "PutCollection":
      return "upsert"
    case "Patch":
      return "patch"
    case "PutId":
      return "update"
    case "Delete":
    case "DeletePath":
      return "delete"
    case "PutPath":
      return "put"
    case "Settle":
      return undefined
  }
}

/**
 * The before-image of a write: the one existing record the lookup found, for every write to an existing record
 * (PATCH, PUT /{id}, DELETE, the API's upsert of a record that exists); undefined for a create, for writes the API
 * cannot read back (sub-collections, actions) and when nothing was looked up.
 */
export const beforeImage = (action: Action, existing: Existing): Record<string, unknown> | undefined => {
  switch (action._tag) {
    case "Patch":
    case "PutId":
    case "Delete":
    case "PutCollection":
      return existing._tag === "Found" && existing.records.length === 1 ? existing.records[0] : undefined
    default:
      return undefined
  }
}

/**
 * Whether the read before a create or upsert found no record with the row's key: the proof, kept in the journal's
 * `sending` line, that a record found after its answer was lost is this write's.
 */
export const absentBefore = (action: Action, existing: Existing): boolean =>
  (action._tag === "Post" || action._tag === "PutCollection") && existing._tag === "Found" &&
  existing.records.length === 0

/**
 * What a write sends, as write names and values (the journal's `sent`): undefined for a DELETE by id. Write-only
 * fields (passwords) are left out: the journal never holds a secret, and no read can restore one anyway.
 */
export const written = (r: Resource, action: Action): unknown => {
  const open = (body: unknown): unknown => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) return body
    return Object.fromEntries(
      Object.entries(body).filter(([name]) => r.fields.find((f) => f.name === name)?.writeOnly !== true)
    )
  }
  switch (action._tag) {
    case "Post":
    case "PutId":
    case "PutCollection":
    case "PutPath":
    case "DeletePath":
      return open(action.body)
    case "Patch":
      return open(Object.fromEntries(action.changes.map((c) => [c.field, c.to])))
    case "Delete":
    case "Settle":
      return undefined
  }
}

const settle = (outcome: Outcome): Action => ({ _tag: "Settle", outcome })
const fail = (error: string): Action => settle({ status: "failed", error })

const has = (r: Resource, op: Resource["ops"][number]) => r.ops.includes(op)

/** How a record of this resource is written when it is not the API's own upsert. */
export const isPathWrite = (r: Resource) =>
  r.kind === "subcollection" || (r.kind === "action" && r.path.includes("{id}"))

/**
 * Why `mode` cannot be used with this resource at all (checked once, before anything is read or sent), or
 * undefined when it can.
 */
export const modeProblem = (r: Resource, mode: Mode): string | undefined => {
  const can = r.ops.filter((o) => o !== "list" && o !== "get").join(", ")
  switch (mode) {
    case "upsert":
      return has(r, "upsert") || has(r, "create") ? undefined : `${r.name} cannot be written through the API`
    case "create":
      return isPathWrite(r) || !has(r, "create")
        ? `${r.name} cannot be created one by one through the API (it offers: ${can}); use --mode upsert`
        : undefined
    case "update":
      return has(r, "patch") || has(r, "update")
        ? undefined
        : `the API cannot change an existing ${r.title.toLowerCase()} record (it offers: ${can}); use --mode upsert or create`
    case "delete":
      return has(r, "delete") ? undefined : `the API cannot delete ${r.title.toLowerCase()} (it offers: ${can})`
  }
}

const idName = (r: Resource) => r.id?.name

/** The payload without the fields that never go in a write body (the id when the key decides, server-only fields). */
const bodyOf = (r: Resource, row: ReadyRow, keepId: boolean): Record<string, unknown> => {
  const body: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(row.payload)) {
    if (v === undefined) continue
    if (!keepId && k === idName(r)) continue
    body[k] = v
  }
  return body
}

/** The create-only fields (Resources.ts: passwords) to which `payload` gives a value. */
export const createOnlyGiven = (r: Resource, payload: Readonly<Record<string, unknown>>): ReadonlyArray<string> =>
  r.fields.filter((f) => f.createOnly === true && !isEmpty(payload[f.name])).map((f) => f.name)

/** Whether `action` writes to a record that existed (or leaves it as it is): create-only fields are not sent. */
export const isUpdate = (action: Action): boolean =>
  action._tag === "Patch" || action._tag === "PutId" ||
  (action._tag === "PutCollection" && action.existed === true) ||
  (action._tag === "Settle" && (action.outcome.status === "unchanged" || action.outcome.status === "updated"))

const withoutCreateOnly = (r: Resource, body: Record<string, unknown>): Record<string, unknown> => {
  const out = { ...body }
  for (const f of r.fields) if (f.createOnly === true) delete out[f.name]
  return out
}

/** `/tasks/{id}/products` with the parent's id, and the body without the parent field. */
const pathWrite = (r: Resource, row: ReadyRow): { path: string; body: Record<string, unknown> } | string => {
  const body = bodyOf(r, row, true)
  if (!r.path.includes("{id}")) return { path: r.path, body }
  const parentField = r.parent?.field ?? "id"
  const parentId = body[parentField]
  if (parentId === undefined || parentId === null || parentId === "") {
    return `${parentField}: the ${r.parent?.resource ?? "parent"} record is not given`
  }
  delete body[parentField]
  return { path: r.path.replace("{id}", encodeURIComponent(String(parentId))), body }
}

/** The one record a lookup found, or the settled outcome that says why there is none to use. */
const single = (
  r: Resource,
  existing: Existing
): { readonly _tag: "One"; readonly record: Record<string, unknown> } | { readonly _tag: "None" } | {
  readonly _tag: "Stop"
  readonly action: Action
} => {
  switch (existing._tag) {
    case "NotLooked":
      return { _tag: "None" }
    case "Unavailable":
      return { _tag: "Stop", action: fail(`could not look existing ${r.name} records up: ${existing.message}`) }
    case "Found":
      if (existing.records.length === 0) return { _tag: "None" }
      if (existing.records.length > 1) {
        return {
          _tag: "Stop",
          action: fail(
            `${existing.records.length} ${r.name} records on the server have ${existing.by} "${existing.value}": resolve the duplicate first`
          )
        }
      }
      return { _tag: "One", record: existing.records[0]! }
  }
}

/** `the tasks record 12 holds no task-products item with productId "…"`. */
const missingItem = (r: Resource, row: ReadyRow, existing: Extract<Existing, { _tag: "Found" }>) =>
  `the ${r.parent?.resource ?? "parent"} record ${String(row.payload[r.parent?.field ?? "id"])} holds no ${r.name} ` +
  `item with ${existing.by} "${existing.value}"`

const notFound = (r: Resource, existing: Existing, row: ReadyRow) =>
  existing._tag === "Found"
    ? `no ${r.name} record with ${existing.by} "${existing.value}"`
    : `no ${r.name} record with id ${String(row.id)}`

interface PlanInput {
  readonly resource: Resource
  readonly mode: Mode
  readonly dryRun: boolean
  readonly row: ReadyRow
  /** The record the row's key (or, without a key, its id) names, when it was looked up. */
  readonly existing: Existing
  /** The intent of this row's write in an earlier session that stopped before its answer (resume). */
  readonly interrupted: Intent | undefined
  /**
   * That earlier session's proof that the record was not there before its write (the journal's `absent`): a
   * record found now was made by it (`created`); without the proof a record found is not counted as this run's.
   */
  readonly interruptedAbsent?: boolean | undefined
  /** The record's fingerprint from the export the file came from (update and upsert only). */
  readonly base?: Fingerprint | undefined
  /** What a record changed on the server since that export gets (default `stop`: `conflict`). */
  readonly onConflict?: OnConflict | undefined
  /** `--send-write-only`: an update sends create-only fields (passwords) too. */
  readonly sendWriteOnly?: boolean | undefined
}

/**
 * The row as it may be written to `record`: unchanged, reduced to the file's changes (`--merge`), or refused as a
 * conflict (`Stale`).
 */
const guarded = (
  input: PlanInput,
  record: Record<string, unknown>
): { readonly _tag: "Row"; readonly row: ReadyRow; readonly note: string | undefined } | {
  readonly _tag: "Stop"
  readonly action: Action
} => {
  const { resource: r, row } = input
  const stale = staleness(r, row.payload, record, input.base, input.onConflict ?? "stop")
  if (stale._tag === "Clear") return { _tag: "Row", row, note: undefined }
  if (stale._tag === "Conflict") {
    const id = recordId(r, record)
    return {
      _tag: "Stop",
      action: settle({ status: "conflict", ...(id !== undefined ? { recordId: id } : {}), error: stale.error })
    }
  }
  // The merged row: the file's values, but the server's for the fields it changed (a PUT replaces the record).
  const listed = listedAs(r) ?? r
  const payload: Record<string, unknown> = { ...row.payload }
  for (const name of stale.kept) {
    const field = listed.fields.find((f) => f.name === name)
    if (name in payload && field !== undefined) payload[name] = recordValue(field, record)
  }
  return {
    _tag: "Row",
    row: { ...row, payload },
    note: `merged: the server's changes since the export to "${stale.kept.join(", ")}" were kept`
  }
}

/**
 * A row whose record the export held (it has a fingerprint) and the lookup no longer finds: deleted on the server
 * since the export, so it is a conflict, not a record to create again (unless `overwrite`).
 */
const deletedSinceExport = (input: PlanInput): Action | undefined => {
  const { existing } = input
  if (input.base === undefined || input.onConflict === "overwrite") return undefined
  if (existing._tag !== "Found" || existing.records.length > 0) return undefined
  return settle({
    status: "conflict",
    error:
      `deleted on the server since the export (no ${input.resource.name} record with ${existing.by} "${existing.value}" now); nothing was sent (--overwrite creates it again)`
  })
}

const noted = (action: Action, note: string | undefined): Action =>
  note === undefined || action._tag !== "Settle" || action.outcome.status !== "unchanged"
    ? action
    : settle({ ...action.outcome, error: note })

const reconciledNote = "reconciled after an interruption: the server already holds this row"

/**
 * The status of a write of an earlier session found landed: `created` when that session's read before it found
 * no record (the record is its own), else `updated`.
 */
const landed = (interruptedAbsent: boolean | undefined) => (interruptedAbsent === true ? "created" : "updated")

/** Applies an existing record's changes: nothing to do, PATCH, PUT /{id}, or the API cannot. */
const change = (
  r: Resource,
  record: Record<string, unknown>,
  row: ReadyRow,
  interrupted: Intent | undefined,
  candidates: Record<string, unknown>,
  forUpdate: (body: Record<string, unknown>) => Record<string, unknown>,
  interruptedAbsent?: boolean
): Action => {
  const id = recordId(r, record)
  const list = diff(r, candidates, record)
  if (list.length === 0) {
    // A PATCH/PUT of an earlier session that landed leaves nothing to change: it was that session's write.
    return interrupted === "patch" || interrupted === "update" || interrupted === "upsert"
      ? settle({
        status: landed(interruptedAbsent),
        ...(id !== undefined ? { recordId: id } : {}),
        error: reconciledNote
      })
      : settle({ status: "unchanged", ...(id !== undefined ? { recordId: id } : {}) })
  }
  if (id === undefined) return fail(`the ${r.name} record found has no id`)
  if (has(r, "patch")) return { _tag: "Patch", id, changes: list }
  if (has(r, "update")) return { _tag: "PutId", id, body: forUpdate(bodyOf(r, row, false)), changes: list }
  return fail(`the API cannot change an existing ${r.title.toLowerCase()} record (would change ${formatChanges(list)})`)
}

/** An update leaves create-only fields (passwords) out unless the run asks for them. */
const forUpdateOf = (input: PlanInput) => (body: Record<string, unknown>) =>
  input.sendWriteOnly === true ? body : withoutCreateOnly(input.resource, body)

export const plan = (input: PlanInput): Action => {
  // A POST of an earlier session whose answer never came: the lookup tells whether it landed. The record found is
  // that session's only with proof: its read before the POST found none, and the record holds what the row sends.
  if (input.interrupted === "create") {
    const settled = planInterruptedCreate(input)
    if (settled !== undefined) return settled
  }
  switch (input.mode) {
    case "delete":
      return planDelete(input)
    case "update":
      return planUpdate(input)
    case "create":
      return planCreate(input)
    case "upsert":
      return planUpsert(input)
  }
}

/** A create of an earlier session that stopped before its answer: settled by the lookup, or undefined (plan it). */
const planInterruptedCreate = (input: PlanInput): Action | undefined => {
  const { resource: r, row, existing } = input
  const found = single(r, existing)
  if (found._tag === "Stop") return found.action
  if (found._tag === "One") {
    const id = recordId(r, found.record)
    const withId = id !== undefined ? { recordId: id } : {}
    const differ = diff(r, bodyOf(r, row, false), found.record)
    if (input.interruptedAbsent === true && differ.length === 0) {
      return settle({ status: "created", ...withId, error: reconciledNote })
    }
    return settle({
      status: "in-doubt",
      error: `the run stopped while this row was being created; a ${r.name} record with ${
        existing._tag === "Found" ? `${existing.by} "${existing.value}"` : "its key"
      } is on the server${id !== undefined ? ` (id ${String(id)})` : ""}, but ${
        input.interruptedAbsent === true
          ? `it does not hold what this row sends (${differ.map((c) => c.field).join(", ")})`
          : "nothing shows this run created it (no read before the request found the key absent)"
      }: not counted as created, and undo leaves it; check it, then rerun the row`
    })
  }
  if (existing._tag === "NotLooked") {
    return settle({
      status: "in-doubt",
      error:
        `the run stopped while this row was being created, and ${r.name} records cannot be looked up by a key: check the server, then rerun the row`
    })
  }
  return undefined
}

/** `--mode delete`: DELETE by id, by the record the key found, or from a sub-collection. */
const planDelete = (input: PlanInput): Action => {
  const { resource: r, row, existing, interrupted } = input
  if (isPathWrite(r)) {
    const w = pathWrite(r, row)
    if (typeof w === "string") return fail(w)
    const item = r.key !== undefined ? w.body[r.key] : undefined
    if (item === undefined) return fail(`${r.key ?? "the item"}: needed to delete from ${r.name}`)
    // The parent's items as read before (a task's products): an item it does not hold is not sent, as a record
    // the lookup does not find is not.
    const found = single(r, existing)
    if (found._tag === "Stop") return found.action
    if (found._tag === "None" && existing._tag === "Found") {
      return interrupted === "delete"
        ? settle({ status: "deleted", error: "reconciled after an interruption: the item is gone" })
        : fail(`${missingItem(r, row, existing)}: nothing to delete`)
    }
    return { _tag: "DeletePath", path: w.path, body: [item], ...(found._tag === "One" ? { found: true } : {}) }
  }
  if (existing._tag === "NotLooked") {
    return row.id !== undefined
      ? { _tag: "Delete", id: row.id }
      : fail(`delete needs the ${idName(r) ?? "id"}${r.key !== undefined ? ` or the ${r.key}` : ""} column`)
  }
  const found = single(r, existing)
  if (found._tag === "Stop") return found.action
  if (found._tag === "None") {
    return interrupted === "delete"
      ? settle({ status: "deleted", error: "reconciled after an interruption: the record is gone" })
      : fail(notFound(r, existing, row))
  }
  const id = recordId(r, found.record)
  return id === undefined ? fail(`the ${r.name} record found has no id`) : { _tag: "Delete", id }
}

/** `--mode update`: the changed fields of the record the key (or id) names; never a create. */
const planUpdate = (input: PlanInput): Action => {
  const { resource: r, row, existing, interrupted } = input
  const forUpdate = forUpdateOf(input)
  const candidates = forUpdate(bodyOf(r, row, false))
  if (r.key !== undefined) delete candidates[r.key]
  if (existing._tag === "NotLooked") {
    if (row.id === undefined) {
      return fail(`update needs the ${idName(r) ?? "id"}${r.key !== undefined ? ` or the ${r.key}` : ""} column`)
    }
    const list = Object.entries(candidates).map(([field, to]) => ({ field, from: undefined, to }))
    if (list.length === 0) return settle({ status: "unchanged", recordId: row.id })
    return has(r, "patch")
      ? { _tag: "Patch", id: row.id, changes: list }
      : { _tag: "PutId", id: row.id, body: candidates, changes: list }
  }
  const found = single(r, existing)
  if (found._tag === "Stop") return found.action
  if (found._tag === "None") return deletedSinceExport(input) ?? fail(notFound(r, existing, row))
  const g = guarded(input, found.record)
  if (g._tag === "Stop") return g.action
  const wanted = forUpdate(bodyOf(r, g.row, false))
  if (r.key !== undefined) delete wanted[r.key]
  return noted(change(r, found.record, g.row, interrupted, wanted, forUpdate, input.interruptedAbsent), g.note)
}

/** `--mode create`: a POST, refused without a request when the key is already on the server. */
const planCreate = (input: PlanInput): Action => {
  const { resource: r, row, existing } = input
  // Read before the write: a key already on the server is refused without a request (a POST would meet a
  // 409, or, when a gateway loses that answer, find the existing record and take it for its own).
  const found = single(r, existing)
  if (found._tag === "Stop") return found.action
  if (found._tag === "One") {
    const id = recordId(r, found.record)
    return fail(
      `already exists (${r.key} "${row.key}"${id !== undefined ? `, id ${String(id)}` : ""}): use --mode upsert`
    )
  }
  return post(r, row)
}

/** `--mode upsert`: the API's own upsert, a sub-collection PUT, or one emulated by the lookup. */
const planUpsert = (input: PlanInput): Action => {
  const { resource: r, row, existing, interrupted } = input
  const forUpdate = forUpdateOf(input)
  if (isPathWrite(r)) {
    const w = pathWrite(r, row)
    if (typeof w === "string") return fail(w)
    // The parent's items as read before (a task's products): an item equal on every field it reads back is not
    // sent, as a record equal to the server is not.
    const found = single(r, existing)
    if (found._tag === "Stop") return found.action
    if (found._tag === "One" && row.files.length === 0 && unreadable(r, w.body).length === 0) {
      const g = guarded(input, found.record)
      if (g._tag === "Stop") return g.action
      const item = pathWrite(r, g.row)
      if (typeof item !== "string" && diff(r, item.body, found.record).length === 0) {
        return interrupted === "put"
          ? settle({ status: landed(input.interruptedAbsent), error: reconciledNote })
          : noted(settle({ status: "unchanged" }), g.note)
      }
      if (typeof item !== "string") {
        return {
          _tag: "PutPath",
          path: item.path,
          body: item.body,
          files: row.files,
          changes: diff(r, item.body, found.record)
        }
      }
    }
    // Read, and not on the parent: a new item, every field it gives a change.
    const added = found._tag === "None" && existing._tag === "Found" && row.files.length === 0
      ? { changes: diff(r, w.body, {}) }
      : {}
    return { _tag: "PutPath", path: w.path, body: w.body, files: row.files, ...added }
  }
  if (has(r, "upsert")) {
    // The API's own upsert finds the record by key itself; the lookup (dry run, resume) only says what it will do.
    const keepId = row.key === undefined
    const w = pathWrite(r, row)
    if (typeof w === "string") return fail(w)
    const found = single(r, existing)
    if (found._tag === "Stop") return found.action
    const body = bodyOf(r, row, keepId)
    if (found._tag === "One") {
      const g = guarded(input, found.record)
      if (g._tag === "Stop") return g.action
      const body = forUpdate(bodyOf(r, g.row, keepId))
      const list = diff(r, body, found.record)
      // Equal on every field the server lists back: nothing is sent, unless the row gives a field that cannot
      // be read back (a password, a file), which only a write can set.
      if (list.length === 0 && (input.dryRun || interrupted === "upsert" || unreadable(r, body).length === 0)) {
        const id = recordId(r, found.record)
        return interrupted === "upsert"
          ? settle({
            status: landed(input.interruptedAbsent),
            ...(id !== undefined ? { recordId: id } : {}),
            error: reconciledNote
          })
          : noted(settle({ status: "unchanged", ...(id !== undefined ? { recordId: id } : {}) }), g.note)
      }
      return { _tag: "PutCollection", path: w.path, body, existed: true, changes: list }
    }
    const deleted = deletedSinceExport(input)
    if (deleted !== undefined) return deleted
    return {
      _tag: "PutCollection",
      path: w.path,
      body,
      existed: existing._tag === "Found" ? false : undefined,
      changes: []
    }
  }
  // Emulated upsert: the lookup decides.
  const found = single(r, existing)
  if (found._tag === "Stop") return found.action
  if (found._tag === "One") {
    const g = guarded(input, found.record)
    if (g._tag === "Stop") return g.action
    return noted(
      change(
        r,
        found.record,
        g.row,
        interrupted,
        forUpdate(bodyOf(r, g.row, false)),
        forUpdate,
        input.interruptedAbsent
      ),
      g.note
    )
  }
  const deleted = deletedSinceExport(input)
  if (deleted !== undefined) return deleted
  if (row.key === undefined && row.id !== undefined) {
    return fail(`${notFound(r, existing, row)} (leave the id empty to create the record)`)
  }
  return post(r, row)
}

const post = (r: Resource, row: ReadyRow): Action => {
  const body = bodyOf(r, row, false)
  const correlation = r.key !== undefined && row.key !== undefined && row.key !== ""
    ? { key: r.key, value: row.key }
    : undefined
  return { _tag: "Post", body, correlation }
}
