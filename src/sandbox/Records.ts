/**
 * The generic record operations every table resource gets, read from its entry in src/Resources.ts:
 * list, create (POST, 409 on a duplicate unique key), upsert (PUT on the collection: by id, then the key, then
 * `cpfCnpj` with `identifierBycpfCnpj`; 200 updated / 201 created), get, JSON Patch, delete (204) and update
 * (PUT on `/{id}`).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type { Field, Resource } from "../Resources.js"
import { idReadName, readName } from "../Resources.js"
import type { Call } from "./Call.js"
import { managedProperties } from "./Collections.js"
import { brazilDateTime } from "./Dates.js"
import { checkRefs, checkValues, coerce, isUnset } from "./Fields.js"
import { listRows } from "./Lists.js"
import { readBack, stampDates } from "./ReadBack.js"
import type { Account, Rec } from "./Store.js"
import { idKey, idName, keyOf } from "./Store.js"
import type { Outcome } from "./Wire.js"
import { noContent, reject, result, show } from "./Wire.js"

export const notFound = (r: Resource, id: unknown) =>
  reject(404, `${r.title}: no record with ${r.id?.name ?? "id"} ${show(id)}`)

const pathSegment = (raw: string): string => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/** The stored record addressed by the path's `{id}`, or 404. */
export const findOr404 = Effect.fn("Records.findOr404")(
  function*(account: Account, r: Resource, id: string | undefined) {
    const rec = id === undefined ? undefined : account.table(r.name).get(idKey(pathSegment(id)))
    if (rec === undefined) return yield* notFound(r, id)
    return rec
  }
)

const objectBody = (
  body: unknown
) => (Predicate.isRecord(body) ? Effect.succeed(body) : reject(400, "the body must be a JSON object"))

/** Type-checked body without what the server assigns or keeps itself (id, read-only fields, collections). */
const writable = Effect.fnUntraced(function*(r: Resource, body: Rec) {
  const coerced = yield* coerce(r.fields, body)
  const { [idName(r)]: id, ...rest } = coerced
  for (const p of managedProperties(r)) delete rest[p]
  return { id, rest }
})

/** An enumeration's label for its number (`4` → `"Task"`), for messages; other values as they are. */
const enumLabelOf = (field: Field, value: unknown): unknown =>
  field.type._tag === "enum" ? field.type.values.find((v) => v.value === Number(value))?.label ?? value : value

/** 409 when another record of the account already holds one of the resource's unique values. */
const checkUnique = Effect.fnUntraced(
  function*(account: Account, r: Resource, rec: Rec, self: string | undefined) {
    const table = account.table(r.name)
    for (const field of r.fields) {
      if (!field.unique || isUnset(rec[field.name])) continue
      const other = table.findUnique(field.name, rec[field.name])
      if (other !== undefined && keyOf(r, other) !== self) {
        const holder = `${idReadName(r) ?? "id"} ${show(other[idName(r)])}`
        // The live service's own refusal, with its code (webhooks: one subscription per entity, 1026).
        if (field.uniqueCode !== undefined) {
          return yield* reject(
            409,
            `${r.title.replace(/s$/, "")} for ${field.name} ${
              show(enumLabelOf(field, rec[field.name]))
            } already exists (${holder})`,
            field.uniqueCode
          )
        }
        return yield* reject(409, `${field.name} ${show(rec[field.name])} already exists (${holder})`)
      }
    }
  }
)

/** Validates and stores a new record made of the request's `fields` and what the server assigns. */
export const insertNew = Effect.fnUntraced(
  function*(account: Account, r: Resource, fields: Rec, now: number) {
    const rec: Rec = { ...fields }
    for (const field of r.fields) {
      if (!field.readOnly) continue
      if (field.type._tag === "enum") rec[field.name] = field.type.values[0]!.value
      if (field.type._tag === "date") rec[field.name] = brazilDateTime(now)
    }
    for (const p of managedProperties(r)) rec[p] = []
    stampDates(r, rec, brazilDateTime(now), true)
    yield* checkValues(r.fields, rec)
    yield* checkUnique(account, r, rec, undefined)
    yield* checkRefs(account, r.fields, rec, new Set(Object.keys(fields)))
    rec[idName(r)] = account.newId(r)
    account.insert(r.name, rec)
    return rec
  }
)

/** Validates and stores `merged` in place of `existing`; references are checked for the `touched` fields only. */
const replaceExisting = Effect.fnUntraced(
  function*(account: Account, r: Resource, existing: Rec, merged: Rec, touched: ReadonlySet<string>) {
    stampDates(r, merged, brazilDateTime(yield* Clock.currentTimeMillis), false)
    yield* checkValues(r.fields, merged)
    yield* checkUnique(account, r, merged, keyOf(r, existing))
    yield* checkRefs(account, r.fields, merged, touched)
    account.insert(r.name, merged)
    return merged
  }
)

export const list = (r: Resource, call: Call) => listRows(r, call.account.table(r.name).values(), call)

export const create = Effect.fnUntraced(function*(r: Resource, call: Call) {
  const { rest } = yield* writable(r, yield* objectBody(call.body))
  const rec = yield* insertNew(call.account, r, rest, call.now)
  return result(r.createdStatus ?? 201, readBack(r, rec), true) satisfies Outcome as Outcome
})

/** The record an upsert body designates: by id, then by the resource's key, then by CPF/CNPJ when asked to. */
const locate = (account: Account, r: Resource, id: unknown, fields: Rec): Rec | undefined => {
  const table = account.table(r.name)
  if (!isUnset(id)) {
    const byId = table.get(idKey(id))
    if (byId !== undefined) return byId
  }
  const keyField = r.fields.find((f) => f.name === r.key && f.unique)
  if (keyField !== undefined && !isUnset(fields[keyField.name])) {
    const byKey = table.findUnique(keyField.name, fields[keyField.name])
    if (byKey !== undefined) return byKey
  }
  const cpfCnpj = r.fields.find((f) => f.type._tag === "cpfCnpj")
  if (fields["identifierBycpfCnpj"] === true && cpfCnpj !== undefined && !isUnset(fields[cpfCnpj.name])) {
    return table.values().find((rec) => rec[cpfCnpj.name] === fields[cpfCnpj.name])
  }
  return undefined
}

export const upsertFields = Effect.fnUntraced(
  function*(account: Account, r: Resource, id: unknown, fields: Rec, now: number) {
    const existing = locate(account, r, id, fields)
    if (existing === undefined) return { created: true, rec: yield* insertNew(account, r, fields, now) }
    const merged = yield* replaceExisting(
      account,
      r,
      existing,
      { ...existing, ...fields },
      new Set(Object.keys(fields))
    )
    return { created: false, rec: merged }
  }
)

/**
 * An upsert body with the names the API's upsert reads turned into the table's: customers' upsert carries the
 * name as `description` (the Blueprint; a `name` sent beside it is the same value). A body with only `name` (the
 * spec's field name, which public clients of the live API send on PUT too) is taken as well; one with neither is
 * refused.
 */
const upsertNames = Effect.fnUntraced(function*(r: Resource, body: Rec) {
  const out: Rec = { ...body }
  const problems: Array<string> = []
  for (const field of r.fields) {
    if (field.upsertAs === undefined) continue
    const value = out[field.upsertAs]
    delete out[field.upsertAs]
    if (isUnset(value)) {
      if (field.required && isUnset(out[field.name])) problems.push(`field "${field.upsertAs}" is required`)
      continue
    }
    out[field.name] = value
  }
  if (problems.length > 0) return yield* reject(422, problems.join("; "))
  return out
})

export const upsert = Effect.fnUntraced(function*(r: Resource, call: Call) {
  const { id, rest } = yield* writable(r, yield* upsertNames(r, yield* objectBody(call.body)))
  const { created, rec } = yield* upsertFields(call.account, r, id, rest, call.now)
  return result(created ? 201 : 200, readBack(r, rec), true) satisfies Outcome as Outcome
})

export const get = Effect.fnUntraced(function*(r: Resource, call: Call) {
  return result(200, readBack(r, yield* findOr404(call.account, r, call.id)), false) satisfies Outcome as Outcome
})

export const update = Effect.fnUntraced(function*(r: Resource, call: Call) {
  const existing = yield* findOr404(call.account, r, call.id)
  const { rest } = yield* writable(r, yield* objectBody(call.body))
  const merged = yield* replaceExisting(call.account, r, existing, { ...existing, ...rest }, new Set(Object.keys(rest)))
  return result(200, readBack(r, merged), true) satisfies Outcome as Outcome
})

export const remove = Effect.fnUntraced(
  function*(r: Resource, call: Call, onRemoved: (rec: Rec) => void = () => {}) {
    const existing = yield* findOr404(call.account, r, call.id)
    call.account.table(r.name).remove(keyOf(r, existing))
    onRemoved(existing)
    return noContent
  }
)

// --- JSON Patch -------------------------------------------------------------------------------------------------

type PatchOp = {
  readonly op: "add" | "replace" | "remove"
  readonly pointer: ReadonlyArray<string>
  readonly value: unknown
}

const parsePatch = Effect.fnUntraced(function*(body: unknown) {
  if (!Array.isArray(body)) {
    return yield* reject(400, "the body must be a JSON Patch document: an array of {op, path, value}")
  }
  const ops: Array<PatchOp> = []
  for (const [i, item] of body.entries()) {
    if (!Predicate.isRecord(item)) return yield* reject(400, `patch operation ${i + 1} is not an object`)
    const op = typeof item["op"] === "string" ? item["op"].toLowerCase() : undefined
    if (op !== "add" && op !== "replace" && op !== "remove") {
      return yield* reject(
        400,
        `patch operation ${i + 1}: op ${show(item["op"])} is not supported (add, replace, remove)`
      )
    }
    const path = item["path"]
    if (typeof path !== "string" || path.replace(/^\//, "") === "") {
      return yield* reject(400, `patch operation ${i + 1}: path is missing`)
    }
    if (op !== "remove" && !("value" in item)) return yield* reject(400, `patch operation ${i + 1}: value is missing`)
    // The live service takes the path with or without the leading "/" (api-notes B, PATCH).
    const pointer = path.replace(/^\//, "").split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    ops.push({ op, pointer, value: item["value"] })
  }
  return ops
})

/**
 * The write name a patch path's first segment addresses: a field by its name or read-back name, any case; a
 * field the API patches under another name (`patchAs`: expenses' `expenseDate`) only by that name.
 */
const propertyOf = (r: Resource, segment: string): string => {
  const lower = segment.toLowerCase()
  if (r.id !== undefined && (lower === idName(r).toLowerCase() || lower === idReadName(r)!.toLowerCase())) {
    return idName(r)
  }
  const renamed = r.fields.find((f) => f.patchAs?.toLowerCase() === lower)
  if (renamed !== undefined) return renamed.name
  const field = r.fields.find((f) =>
    f.patchAs === undefined && (f.name.toLowerCase() === lower || readName(f).toLowerCase() === lower)
  )
  return field?.name ?? segment
}

const applyOp = (doc: Rec, property: string, op: PatchOp): string | undefined => {
  const rest = op.pointer.slice(1)
  if (rest.length === 0) {
    if (op.op === "remove") delete doc[property]
    else doc[property] = op.value
    return undefined
  }
  let container: unknown = (doc[property] = structuredClone(doc[property]))
  for (const segment of rest.slice(0, -1)) {
    container = Array.isArray(container)
      ? container[Number(segment)]
      : Predicate.isRecord(container)
      ? container[segment]
      : undefined
  }
  const last = rest[rest.length - 1]!
  if (Array.isArray(container)) {
    const index = last === "-" ? container.length : Number(last)
    if (!Number.isInteger(index) || index < 0 || index > container.length) {
      return `path ${show(op.pointer.join("/"))} does not exist`
    }
    if (op.op === "remove") container.splice(index, 1)
    else if (op.op === "add") container.splice(index, 0, op.value)
    else container[index] = op.value
    return undefined
  }
  if (!Predicate.isRecord(container)) return `path ${show(op.pointer.join("/"))} does not exist`
  if (op.op === "remove") delete container[last]
  else container[last] = op.value
  return undefined
}

export const patch = Effect.fnUntraced(function*(r: Resource, call: Call) {
  const existing = yield* findOr404(call.account, r, call.id)
  const ops = yield* parsePatch(call.body)
  // A field patched under another name (`patchAs`) ignores its own: the live service knows only the other.
  const ignored = new Set([
    idName(r),
    ...r.fields.filter((f) => f.readOnly).map((f) => f.name),
    ...managedProperties(r)
  ])
  const ownNames = new Set(
    r.fields.filter((f) => f.patchAs !== undefined).flatMap((f) => [f.name.toLowerCase(), readName(f).toLowerCase()])
  )
  const doc: Rec = { ...existing }
  const touched = new Set<string>()
  for (const op of ops) {
    const property = propertyOf(r, op.pointer[0]!)
    // Like the live service, a patch of a property the server owns is accepted and ignored.
    if (ignored.has(property) || ownNames.has(op.pointer[0]!.toLowerCase())) continue
    const problem = applyOp(doc, property, op)
    if (problem !== undefined) return yield* reject(422, problem)
    touched.add(property)
  }
  const written = yield* coerce(
    r.fields,
    Object.fromEntries([...touched].filter((p) => p in doc).map((p) => [p, doc[p]]))
  )
  const merged: Rec = { ...existing }
  for (const p of touched) {
    if (p in written) merged[p] = written[p]
    else delete merged[p]
  }
  const stored = yield* replaceExisting(call.account, r, existing, merged, touched)
  return result(200, readBack(r, stored), true) satisfies Outcome as Outcome
})
