/**
 * The endpoints that are not plain records: employee product stock, `/customers/complete` (names resolved into
 * ids as the table's `resolves` says), the child lists of customer groups and teams, and the legacy unpaginated
 * `GET /services/obterListaServicos`.
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type { Resource } from "../Resources.js"
import { resource } from "../Resources.js"
import type { Call } from "./Call.js"
import { checkRefs, checkValues, coerce, isUnset } from "./Fields.js"
import { listRows } from "./Lists.js"
import { readBack } from "./ReadBack.js"
import { findOr404, insertNew, upsertFields } from "./Records.js"
import type { Account, Rec } from "./Store.js"
import { idKey, idName, sameText } from "./Store.js"
import { eachItem, itemsOf } from "./Tasks.js"
import type { Outcome } from "./Wire.js"
import { noContent, reject, result, show } from "./Wire.js"

/** PUT `/products/employee-product-stock`: `{userId, productId, amount}` (or an array); one row per user and product; 204. */
export const putStock = Effect.fnUntraced(function*(stock: Resource, call: Call) {
  const rows = yield* eachItem(yield* itemsOf(call.body), (item) =>
    Effect.gen(function*() {
      const coerced = yield* coerce(stock.fields, item)
      yield* checkValues(stock.fields, coerced)
      yield* checkRefs(call.account, stock.fields, coerced, new Set(Object.keys(coerced)))
      return coerced
    }))
  for (const row of rows) call.account.insert(stock.name, row)
  // The API answers 204 with no body (api-reference §3 row 48).
  return noContent
})

/** Replaces the names of `resolves` fields by the ids of the records they name (422 when none or several match). */
const resolveNames = Effect.fnUntraced(
  function*(complete: Resource, target: Resource, call: Call, fields: Rec) {
    const out: Rec = { ...fields }
    const problems: Array<string> = []
    for (const field of complete.fields) {
      if (field.resolves === undefined) continue
      const value = out[field.name]
      delete out[field.name]
      if (isUnset(value)) continue
      const into = target.fields.find((f) => f.name === field.resolves!.field)!
      const referenced = resource(into.ref!.resource)
      const rows = call.account.table(referenced.name).values()
      const ids: Array<unknown> = []
      for (const name of Array.isArray(value) ? value : [value]) {
        const found = rows.filter((rec) => sameText(rec[field.resolves!.by], name))
        if (found.length === 1) ids.push(found[0]![idName(referenced)])
        else {problems.push(
            `field "${field.name}": ${
              found.length === 0 ? "no" : "more than one"
            } ${referenced.name} record with ${field.resolves.by} ${show(name)}`
          )}
      }
      out[into.name] = into.list ? ids : ids[0]
    }
    if (problems.length > 0) return yield* reject(422, problems.join("; "))
    return out
  }
)

/** POST / PUT `/customers/complete`: the complete form, stored as a record of the resource it extends. */
export const writeComplete = Effect.fnUntraced(
  function*(complete: Resource, target: Resource, op: "create" | "upsert", call: Call) {
    if (!Predicate.isRecord(call.body)) return yield* reject(400, "the body must be a JSON object")
    const coerced = yield* coerce(complete.fields, call.body)
    const resolved = yield* resolveNames(complete, target, call, coerced)
    const { [idName(target)]: id, ...fields } = yield* coerce(target.fields, resolved)
    if (op === "create") {
      return result(
        201,
        readBack(target, yield* insertNew(call.account, target, fields, call.now)),
        true
      ) satisfies Outcome as Outcome
    }
    const { created, rec } = yield* upsertFields(call.account, target, id, fields, call.now)
    return result(created ? 201 : 200, readBack(target, rec), true) satisfies Outcome as Outcome
  }
)

/** The members of one customer group or team, as the child list shows them. */
export const childrenOf = (children: Resource, account: Account, owner: Rec): ReadonlyArray<Rec> => {
  const parent = resource(children.parent!.resource)
  const ownerId = owner[idName(parent)]
  if (children.name === "customer-group-clients") {
    const customers = resource("customers")
    const listed = new Set(((owner["clientsId"] as Array<unknown> | undefined) ?? []).map(idKey))
    const inGroup = (c: Rec) =>
      listed.has(idKey(c[idName(customers)])) ||
      ((c["groupsId"] as Array<unknown> | undefined) ?? []).map(idKey).includes(idKey(ownerId))
    return account.table(customers.name).values().filter(inGroup).map((c) => ({
      [children.parent!.field]: ownerId,
      ...readBack(customers, c)
    }))
  }
  const users = resource("users")
  const members = new Set(((owner["participants"] as Array<unknown> | undefined) ?? []).map(idKey))
  // Teams' member lists carry `userId` (api-notes), not the `userID` of the users list.
  return account
    .table(users.name)
    .values()
    .filter((u) => members.has(idKey(u[idName(users)])))
    .map((u) => ({
      [children.parent!.field]: ownerId,
      userId: u[idName(users)],
      login: u["login"] ?? null,
      name: u["name"] ?? null
    }))
}

/** GET `/customergroups/{id}/clients` and `/teams/{id}/users`: the members of one record, as a list. */
export const listChildren = Effect.fnUntraced(function*(children: Resource, call: Call) {
  const owner = yield* findOr404(call.account, resource(children.parent!.resource), call.id)
  return yield* listRows(children, childrenOf(children, call.account, owner), call, (rec) => rec)
})

/** GET `/services/obterListaServicos` (legacy): every service of the account, unpaginated. */
export const serviceCatalog = Effect.fnUntraced(function*(services: Resource, call: Call) {
  const rows = call.account.table(services.name).values().map((s) => readBack(services, s))
  if (rows.length === 0 && call.settings.emptyListStatus === 404) return yield* reject(404, "No records found")
  return result(200, rows, false) satisfies Outcome as Outcome
})
