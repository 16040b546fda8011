/**
 * Sending one planned write through the API port and turning the answer into the row's outcome; and, for a dry
 * run, the outcome the write would have had. Attachment files are read and base64-encoded here, at send time,
 * one at a time per row in flight (never the whole file's attachments in memory).
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { Api, type ApiAborted, type Reply } from "../client/Api.js"
import type { Resource } from "../Resources.js"
import { readAttachment } from "../validate/Attachment.js"
import type { FileCell } from "../validate/Validate.js"
import { createBody, patchOps, pathDeleteBody, pathPutBody, rowProblem, upsertBody } from "./Bodies.js"
import { formatChanges } from "./Compare.js"
import { listedAs, recordId } from "./Lookup.js"
import type { Outcome, Status } from "./Status.js"
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

/** Sends the action's request(s). `Settle` sends nothing. */
export const send = Effect.fn("Send.send")(function*(
  resource: Resource,
  action: Exclude<Action, { _tag: "Settle" }>
): Effect.fn.Return<Outcome, ApiAborted, Api> {
  const api = yield* Api
  const idPath = (id: string | number) => `${resource.path}/${encodeURIComponent(String(id))}`
  switch (action._tag) {
    case "Post": {
      const lookup = listedAs(resource)
      const reply = yield* api.request({
        method: "POST",
        path: resource.path,
        body: createBody(resource, action.body),
        ...(action.correlation !== undefined && lookup !== undefined
          ? { correlation: { resource: lookup, ...action.correlation } }
          : {})
      })
      return outcomeOf(resource, reply, () => "created", {
        explain: (status, error) => (status === 409 ? `already exists: use --mode upsert (${error})` : error)
      })
    }
    case "PutCollection": {
      const reply = yield* api.request({
        method: "PUT",
        path: action.path,
        body: upsertBody(resource, action.body as Record<string, unknown>)
      })
      return outcomeOf(resource, reply, upsertStatus)
    }
    case "Patch": {
      const ops = patchOps(resource, action.changes)
      const reply = yield* api.request({ method: "PATCH", path: idPath(action.id), body: ops })
      return outcomeOf(resource, reply, () => "updated", { id: action.id, explain: notFoundById(resource, action.id) })
    }
    case "PutId": {
      const reply = yield* api.request({
        method: "PUT",
        path: idPath(action.id),
        body: createBody(resource, action.body)
      })
      return outcomeOf(resource, reply, () => "updated", { id: action.id, explain: notFoundById(resource, action.id) })
    }
    case "Delete": {
      const reply = yield* api.request({ method: "DELETE", path: idPath(action.id) })
      return outcomeOf(resource, reply, () => "deleted", { id: action.id, explain: notFoundById(resource, action.id) })
    }
    case "DeletePath": {
      const wire = yield* rowProblem(pathDeleteBody(resource, action.body))
      if (wire._tag === "Left") return { status: "failed", error: wire.left }
      const reply = yield* api.request({ method: "DELETE", path: action.path, body: wire.right })
      return outcomeOf(resource, reply, () => "deleted")
    }
    case "PutPath": {
      let body: unknown = action.body
      if (action.files.length > 0) {
        const read = yield* Effect.either(attachments(resource, action.body as Record<string, unknown>, action.files))
        if (read._tag === "Left") return { status: "failed", error: `cannot read the attachment: ${read.left}` }
        body = read.right
      }
      const wire = yield* rowProblem(pathPutBody(resource, body))
      if (wire._tag === "Left") return { status: "failed", error: wire.left }
      const reply = yield* api.request({ method: "PUT", path: action.path, body: wire.right })
      return outcomeOf(resource, reply, upsertStatus)
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
    case "PutPath":
    case "DeletePath":
      return notCompared(resource)
  }
}

const notCompared = (resource: Resource): Outcome => ({
  status: "skipped",
  changes: `not compared: the API cannot read ${resource.title.toLowerCase()} back; the row would be sent`
})
