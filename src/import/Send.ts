/**
 * Sending one planned write through the API port and turning the answer into the row's outcome; and, for a dry
 * run, the outcome the write would have had. Attachment files are read and base64-encoded here, at send time,
 * one at a time per row in flight (never the whole file's attachments in memory).
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { Api, type ApiAborted, type Reply } from "../client/Api.js"
import type { Resource } from "../Resources.js"
import type { Outcome, Status } from "../Status.js"
import { readAttachment } from "../validate/Attachment.js"
import { changes, formatChanges } from "../validate/Compare.js"
import type { FileCell } from "../validate/Validate.js"
import { createBody, patchOps, pathDeleteBody, pathPutBody, rowProblem, upsertBody } from "./Bodies.js"
import type { RecordImage } from "./Journal.js"
import { listedAs, recordId } from "./Lookup.js"
import type { Action } from "./WritePlan.js"

const evidenceOf = (reply: Reply): Omit<Outcome, "status"> => ({
  ...(reply.evidence.status !== undefined ? { http: reply.evidence.status } : {}),
  ...(reply.evidence.requestId !== undefined ? { requestId: reply.evidence.requestId } : {}),
  attempts: reply.evidence.attempts,
  retryOutcomes: reply.evidence.retryOutcomes
})

/** The outcome of an answer: `ok` maps the success status, failures keep the server's message. */
const outcomeOf = (
  resource: Resource,
  reply: Reply,
  ok: (status: number | undefined) => Status,
  options: {
    readonly id?: string | number | undefined
    readonly explain?: (status: number | undefined, error: string) => string
  } = {}
): Outcome => {
  const evidence = evidenceOf(reply)
  const fromBody = Predicate.isRecord(reply.result) ? recordId(resource, reply.result) : undefined
  const id = fromBody ?? options.id
  const withId = id !== undefined ? { recordId: id } : {}
  if (reply.inDoubt) {
    return {
      status: "in-doubt",
      ...evidence,
      error: reply.error ?? "no answer: the write may or may not have happened"
    }
  }
  if (reply.ok) {
    return {
      status: ok(reply.status),
      ...evidence,
      ...withId,
      ...(reply.reconciled ? { error: "the answer was lost; the record was found on the server by its key" } : {})
    }
  }
  const error = reply.error ?? (reply.status !== undefined ? `HTTP ${reply.status}` : "no answer")
  return { status: "failed", ...evidence, error: options.explain ? options.explain(reply.status, error) : error }
}

const upsertStatus = (
  status: number | undefined
): Status => (status === 201 ? "created" : status === 202 ? "queued" : "updated")

/**
 * The body of an upload (contract: "the tool sends it base64-encoded"): `[{name, file}]`, each file field holding
 * the file's bytes in base64, read now; `name` defaults to the local file's name.
 */
const attachments = (resource: Resource, body: Readonly<Record<string, unknown>>, files: ReadonlyArray<FileCell>) =>
  Effect.gen(function*() {
    const item: Record<string, unknown> = { ...body }
    for (const f of files) {
      const bytes = yield* Effect.tryPromise({
        // Checked again on the file opened: it may have been swapped for a link or a pipe since validation.
        try: () => readAttachment(f.path, f.maxBytes),
        catch: (cause) => (cause instanceof Error ? cause.message : String(cause))
      })
      item[f.field] = bytes.toString("base64")
      if (resource.fields.some((x) => x.name === "name") && (item.name === undefined || item.name === "")) {
        item.name = f.name
      }
    }
    return [item]
  })

/** What a write did: the row's outcome, and the record as the write left it (its answer), when it gave one. */
export interface Sent {
  readonly outcome: Outcome
  readonly after: RecordImage | undefined
}

interface SendOptions {
  /**
   * The read before the write found no record with the row's key (the journal's `absent`): the proof a record
   * found after a lost answer is this write's. Without it such a record is someone else's as far as the run knows.
   */
  readonly absent?: boolean | undefined
  /** Called when the write's first attempt leaves for the server (after its permit and budget). */
  readonly onSent?: (() => void) | undefined
}

/**
 * A create whose answer was lost and whose record was then found by its key: `created` only with proof that the
 * record is this write's — the read before found none (`absent`) and the record found holds what was sent —;
 * otherwise `in-doubt` (it may have been there before, or made by someone else), so undo never deletes it.
 */
const provenCreate = (
  resource: Resource,
  outcome: Outcome,
  sentBody: Readonly<Record<string, unknown>>,
  found: unknown,
  absent: boolean
): Outcome => {
  if (outcome.status !== "created" || !Predicate.isRecord(found)) return outcome
  const id = outcome.recordId !== undefined ? ` (id ${String(outcome.recordId)})` : ""
  const { recordId: _id, ...rest } = outcome
  if (!absent) {
    return {
      ...rest,
      status: "in-doubt",
      error:
        `the answer was lost; a ${resource.name} record with this key is on the server${id}, but nothing shows this run created it (no read before the request found the key absent): not counted as created, and undo leaves it; check it, then rerun the row`
    }
  }
  const differ = changes(resource, sentBody, found)
  if (differ.length === 0) return outcome
  return {
    ...rest,
    status: "in-doubt",
    error:
      `the answer was lost; a ${resource.name} record with this key is on the server${id}, but it does not hold what this run sent (${
        differ.map((c) => c.field).join(", ")
      }): someone else may have created it; not counted as created, and undo leaves it`
  }
}

const asImage = (reply: Reply): RecordImage | undefined =>
  reply.ok && Predicate.isRecord(reply.result) ? reply.result : undefined

/** Sends the action's request(s). `Settle` sends nothing. */
export const send = Effect.fnUntraced(function*(
  resource: Resource,
  action: Exclude<Action, { _tag: "Settle" }>,
  options: SendOptions = {}
): Effect.fn.Return<Sent, ApiAborted, Api> {
  const api = yield* Api
  const onSent = options.onSent !== undefined ? { onSent: options.onSent } : {}
  const request = (req: Parameters<typeof api.request>[0]) => api.request({ ...req, ...onSent })
  const idPath = (id: string | number) => `${resource.path}/${encodeURIComponent(String(id))}`
  const answered = (outcome: Outcome, reply: Reply): Sent => ({
    outcome,
    after: outcome.status === "in-doubt" || outcome.status === "failed" ? undefined : asImage(reply)
  })
  switch (action._tag) {
    case "Post": {
      const lookup = listedAs(resource)
      const reply = yield* request({
        method: "POST",
        path: resource.path,
        body: createBody(resource, action.body),
        ...(action.correlation !== undefined && lookup !== undefined
          ? { correlation: { resource: lookup, ...action.correlation } }
          : {})
      })
      const outcome = outcomeOf(resource, reply, () => "created", {
        // A 409 of a value the service keeps unique besides the key (a webhook's entity) is no matter of mode.
        explain: (status, error) =>
          status === 409 && !resource.fields.some((f) => f.uniqueCode !== undefined)
            ? `already exists: use --mode upsert (${error})`
            : error
      })
      return answered(
        reply.reconciled
          ? provenCreate(resource, outcome, action.body, reply.result, options.absent === true)
          : outcome,
        reply
      )
    }
    case "PutCollection": {
      const reply = yield* request({
        method: "PUT",
        path: action.path,
        body: upsertBody(resource, action.body as Record<string, unknown>)
      })
      return answered(outcomeOf(resource, reply, upsertStatus), reply)
    }
    case "Patch": {
      const ops = patchOps(resource, action.changes)
      const reply = yield* request({ method: "PATCH", path: idPath(action.id), body: ops })
      return answered(
        outcomeOf(resource, reply, () => "updated", { id: action.id, explain: notFoundById(resource, action.id) }),
        reply
      )
    }
    case "PutId": {
      const reply = yield* request({
        method: "PUT",
        path: idPath(action.id),
        body: createBody(resource, action.body)
      })
      return answered(
        outcomeOf(resource, reply, () => "updated", { id: action.id, explain: notFoundById(resource, action.id) }),
        reply
      )
    }
    case "Delete": {
      const reply = yield* request({ method: "DELETE", path: idPath(action.id) })
      return answered(
        outcomeOf(resource, reply, () => "deleted", { id: action.id, explain: notFoundById(resource, action.id) }),
        reply
      )
    }
    case "DeletePath": {
      const wire = yield* rowProblem(pathDeleteBody(resource, action.body))
      if (wire._tag === "Left") return { outcome: { status: "failed", error: wire.left }, after: undefined }
      const reply = yield* request({ method: "DELETE", path: action.path, body: wire.right })
      return answered(outcomeOf(resource, reply, () => "deleted"), reply)
    }
    case "PutPath": {
      let body: unknown = action.body
      if (action.files.length > 0) {
        const read = yield* Effect.either(attachments(resource, action.body as Record<string, unknown>, action.files))
        if (read._tag === "Left") {
          return { outcome: { status: "failed", error: `cannot read the attachment: ${read.left}` }, after: undefined }
        }
        body = read.right
      }
      const wire = yield* rowProblem(pathPutBody(resource, body))
      if (wire._tag === "Left") return { outcome: { status: "failed", error: wire.left }, after: undefined }
      const reply = yield* request({ method: "PUT", path: action.path, body: wire.right })
      return answered(outcomeOf(resource, reply, upsertStatus), reply)
    }
  }
})

const notFoundById = (resource: Resource, id: string | number) => (status: number | undefined, error: string) =>
  status === 404 ? `no ${resource.name} record with id ${String(id)} (${error})` : error

/** The outcome a dry run reports for a planned action: the status the row would get, and what would change. */
export const wouldBe = (resource: Resource, action: Action): Outcome => {
  const changed = (
    list: ReadonlyArray<{ field: string; from: unknown; to: unknown }>
  ) => (list.length > 0 ? { changes: formatChanges(list) } : {})
  switch (action._tag) {
    case "Settle":
      return action.outcome
    case "Post":
      return { status: "created" }
    case "PutCollection":
      if (listedAs(resource) === undefined) return notCompared(resource)
      return action.existed === true ? { status: "updated", ...changed(action.changes) } : { status: "created" }
    case "Patch":
    case "PutId":
      return { status: "updated", recordId: action.id, ...changed(action.changes) }
    case "Delete":
      return { status: "deleted", recordId: action.id }
    // A task's item read in its task before: what the PUT would change, or the DELETE of an item it holds.
    case "PutPath":
      return action.changes !== undefined ? { status: "updated", ...changed(action.changes) } : notCompared(resource)
    case "DeletePath":
      return action.found === true ? { status: "deleted" } : notCompared(resource)
  }
}

const notCompared = (resource: Resource): Outcome => ({
  status: "skipped",
  changes: `not compared: the API cannot read ${resource.title.toLowerCase()} back; the row would be sent`
})
