/**
 * Request bodies as the live service takes them (the vendor's API Blueprint), built from a row's payload, which
 * keeps the table's field names and values (what validation, comparison and the journal work with):
 *
 * - task products / services / additional costs: `{"taskProducts": [{"ProductId": "<GUID>", "Quantity": "2", …}]}`,
 *   item properties PascalCase, values JSON strings; a product is named by its GUID `productId`, looked up from
 *   its code when the row is sent; DELETE bodies are arrays of those ids as strings;
 * - attachments: `{"removeAllAttachmentsInsertedByMe": false, "attachments": [{name, file}]}`, and for expenses
 *   `{"deleteAttachment": false, "attachment": "<base64>"}`;
 * - customers' upsert carries the name as `description` too; an expense's patch addresses `expenseDate`;
 *   webhooks' `entity`/`action` are written as names; tasks' `keyWords` as strings; integer references as numbers.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import { Api, type ApiAborted } from "../client/Api.js"
import type { Field, Resource } from "../Resources.js"
import { resource as resourceOf } from "../Resources.js"

type Body = Record<string, unknown>

const fieldOf = (r: Resource, name: string): Field | undefined => r.fields.find((x) => x.name === name)

/** One value as the field is written on the wire (labels, ids as text or as numbers). */
const wireValue = (field: Field | undefined, value: unknown): unknown => {
  if (field === undefined || value === undefined || value === null) return value
  if (Array.isArray(value)) return value.map((v) => wireValue(field, v))
  if (field.sendLabel === true && field.type._tag === "enum" && typeof value === "number") {
    return field.type.values.find((v) => v.value === value)?.label ?? value
  }
  if (field.sendText === true && typeof value === "number") return String(value)
  // A reference resolved from a list that sends integer ids as text (products' `code` "456") is still an integer.
  if (
    field.ref !== undefined && field.type._tag === "integer" && typeof value === "string" && /^\d+$/.test(value.trim())
  ) return Number(value)
  return value
}

/** The body of a create (POST) or an update by id (PUT /{id}). */
export const createBody = (r: Resource, body: Readonly<Body>): Body => {
  const out: Body = {}
  for (const [k, v] of Object.entries(body)) out[k] = wireValue(fieldOf(r, k), v)
  return out
}

/** The body of an upsert (PUT on the collection): a create's, plus the names the upsert reads (`description`). */
export const upsertBody = (r: Resource, body: Readonly<Body>): Body => {
  const out = createBody(r, body)
  for (const field of r.fields) {
    if (field.upsertAs !== undefined && out[field.name] !== undefined && out[field.upsertAs] === undefined) {
      out[field.upsertAs] = out[field.name]
    }
  }
  return out
}

/** The JSON Patch operations of the changed fields. */
export const patchOps = (r: Resource, changes: ReadonlyArray<{ readonly field: string; readonly to: unknown }>) =>
  changes.map((c) => {
    const field = fieldOf(r, c.field)
    return { op: "replace", path: field?.patchAs ?? c.field, value: wireValue(field, c.to) }
  })

// --- sub-collections and uploads ------------------------------------------------------------------------------

/** Ids found for `sendAs` references, per API service (one run), so each product is read once. */
const sentIds = new WeakMap<object, Map<string, string>>()

/** The property `field.ref.sendAs` of the record whose id is `id` (a product's GUID from its code). */
const sendAsValue = Effect.fn("Bodies.sendAsValue")(function*(field: Field, id: unknown) {
  const api = yield* Api
  const ref = field.ref!
  const target = resourceOf(ref.resource)
  let cache = sentIds.get(api)
  if (cache === undefined) sentIds.set(api, cache = new Map())
  const key = `${target.name}\u0000${String(id)}`
  const known = cache.get(key)
  if (known !== undefined) return known
  const reply = yield* api.request({ method: "GET", path: `${target.path}/${encodeURIComponent(String(id))}` })
  const record = Predicate.isRecord(reply.result) ? reply.result : undefined
  const value = record?.[ref.sendAs!]
  if (!reply.ok || (typeof value !== "string" && typeof value !== "number") || String(value) === "") {
    const why = !reply.ok
      ? (reply.error ?? (reply.status !== undefined ? `HTTP ${reply.status}` : "no answer"))
      : `it has no ${ref.sendAs}`
    return yield* Effect.fail(
      `${field.name} ${String(id)}: cannot read the ${ref.sendAs} of ${target.name} ${String(id)} (${why})`
    )
  }
  cache.set(key, String(value))
  return String(value)
})

/** A sub-collection item's value as text: numbers as decimal text, the referenced record as its `sendAs`. */
const itemValue = (field: Field | undefined, value: unknown): Effect.Effect<unknown, string | ApiAborted, Api> => {
  if (field?.ref?.sendAs !== undefined && value !== undefined && value !== null && value !== "") {
    return sendAsValue(field, value)
  }
  if (typeof value === "number" || typeof value === "boolean") return Effect.succeed(String(value))
  return Effect.succeed(value)
}

const uploadBody = (r: Resource, sent: unknown): unknown => {
  const upload = r.upload!
  const item: Body = Array.isArray(sent) ? (sent[0] as Body) : (sent as Body)
  const fileField = r.fields.find((x) => x.type._tag === "file")?.name ?? "file"
  const flag = item[upload.flag] === true
  if (upload._tag === "single") return { [upload.flag]: flag, attachment: item[fileField] }
  return { [upload.flag]: flag, attachments: [{ name: item["name"], file: item[fileField] }] }
}

/**
 * The body of a PUT on a sub-collection or action path: the wrapped items, the upload form, or the payload as it
 * is (questionnaire answers, employee stock). Fails with a message when a referenced record cannot be read.
 */
export const pathPutBody = Effect.fn("Bodies.pathPutBody")(
  function*(r: Resource, body: unknown): Effect.fn.Return<unknown, string | ApiAborted, Api> {
    if (r.upload !== undefined) return uploadBody(r, body)
    if (!Predicate.isRecord(body)) return body
    if (r.items === undefined) return createBody(r, body)
    const item: Body = {}
    for (const [k, v] of Object.entries(body)) {
      if (v === undefined) continue
      item[r.items.names[k] ?? k] = yield* itemValue(fieldOf(r, k), v)
    }
    return { [r.items.wrapper]: [item] }
  }
)

/** The body of a DELETE on a sub-collection: the items' ids, as the API names them, as strings. */
export const pathDeleteBody = Effect.fn("Bodies.pathDeleteBody")(
  function*(r: Resource, body: unknown): Effect.fn.Return<unknown, string | ApiAborted, Api> {
    if (r.items === undefined || !Array.isArray(body) || r.key === undefined) return body
    const key = fieldOf(r, r.key)
    const out: Array<unknown> = []
    for (const id of body) out.push(yield* itemValue(key, id))
    return out
  }
)

/** A body whose building failed for this row only (a string) as a value; a failure of the run stays a failure. */
export const rowProblem = <A, R>(
  body: Effect.Effect<A, string | ApiAborted, R>
): Effect.Effect<Either.Either<A, string>, ApiAborted, R> =>
  body.pipe(
    Effect.map((a) => Either.right(a)),
    Effect.catchIf((e): e is string => typeof e === "string", (e) => Effect.succeed(Either.left(e)))
  )
