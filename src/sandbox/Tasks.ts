/**
 * What tasks keep inside themselves: the sub-collections (products, services, additional costs: PUT upserts the
 * wrapped items by their key and answers with the task, DELETE takes a JSON array of the keys as strings), the questionnaire answers (202, queued, visible under
 * `questionnaires[].answers[]` only after the answer delay), and the trace a deleted task leaves for
 * `GET /tasks/GetDeletedTasks`.
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type { Field, Resource } from "../Resources.js"
import { readName, resource } from "../Resources.js"
import type { Call } from "./Call.js"
import { collectionProperty } from "./Collections.js"
import { brazilDateTime } from "./Dates.js"
import { checkRefs, checkValues, coerce, isUnset } from "./Fields.js"
import { readBack } from "./ReadBack.js"
import { findOr404 } from "./Records.js"
import type { Account, Rec } from "./Store.js"
import { idKey, idName, sameText } from "./Store.js"
import type { Outcome } from "./Wire.js"
import { HttpFailure, noContent, reject, result, show } from "./Wire.js"

/** One object or an array of objects, as sub-collection and attachment PUTs take. */
export const itemsOf = Effect.fnUntraced(function*(body: unknown) {
  const items = Array.isArray(body) ? body : [body]
  if (items.length === 0 || !items.every(Predicate.isRecord)) {
    return yield* reject(400, "the body must be a JSON object or an array of objects")
  }
  return items as ReadonlyArray<Rec>
})

/** Runs `check` on each item, naming the item in the error when there are several. */
export const eachItem = <A>(items: ReadonlyArray<Rec>, check: (item: Rec) => Effect.Effect<A, HttpFailure>) =>
  Effect.forEach(
    items,
    (item, i) =>
      items.length === 1
        ? check(item)
        : Effect.mapError(check(item), (e) => new HttpFailure({ status: e.status, error: `item ${i + 1}: ${e.error}` }))
  )

const childFields = (child: Resource) => child.fields.filter((f) => f.name !== child.parent?.field)

/**
 * The body of a sub-collection PUT as the API takes it: `{"taskProducts": [items]}` (the table's `items.wrapper`),
 * item properties under their API names (`ProductId`, `Quantity` …, any case), turned back into the table's names.
 */
const wrappedItems = Effect.fnUntraced(function*(child: Resource, body: unknown) {
  const wire = child.items!
  const list = Predicate.isRecord(body)
    ? Object.entries(body).find(([k]) => k.toLowerCase() === wire.wrapper.toLowerCase())?.[1]
    : undefined
  if (!Array.isArray(list) || list.length === 0 || !list.every(Predicate.isRecord)) {
    return yield* reject(
      400,
      `the body must be {"${wire.wrapper}": [items]}, each item an object such as {${
        Object.values(wire.names).map((n) => `"${n}": "…"`).join(", ")
      }}`
    )
  }
  const byWireName = new Map(Object.entries(wire.names).map(([name, wireName]) => [wireName.toLowerCase(), name]))
  return (list as ReadonlyArray<Rec>).map((item) =>
    Object.fromEntries(Object.entries(item).map(([k, v]) => [byWireName.get(k.toLowerCase()) ?? k, v]))
  )
})

/** The product a task item names by its GUID `productId` (the reference's `sendAs`), as the item keeps it. */
const sentAsTarget = (account: Account, child: Resource, item: Rec): Effect.Effect<Rec, HttpFailure> => {
  const field = child.fields.find((f) => f.name === child.key)
  const sendAs = field?.ref?.sendAs
  if (field === undefined || sendAs === undefined) return Effect.succeed(item)
  const target = resource(field.ref!.resource)
  const value = item[field.name]
  if (typeof value !== "string" || isUnset(value)) {
    return reject(
      400,
      `field "${child.items!.names[field.name]}": ${show(value)} is not a ${target.name} ${sendAs} (a GUID string)`
    )
  }
  const found = account.table(target.name).values().find((rec) => sameText(rec[sendAs], value))
  if (found === undefined) {
    return reject(422, `field "${child.items!.names[field.name]}": no ${target.name} with ${sendAs} ${show(value)}`)
  }
  // Read back as the API shows it: the product's GUID and its code.
  return Effect.succeed({ ...item, [field.name]: String(found[sendAs]), [readName(field)]: found[idName(target)] })
}

/** The item key as stored: the `sendAs` GUID when the reference has one, else the key field's value. */
const itemKey = (child: Resource, item: Rec): string => idKey(item[child.key!])

/**
 * PUT `/tasks/{id}/products|services|additional-costs`: the wrapped items (values as JSON strings: decimal text,
 * ids as text), upserted by the sub-collection's key; answers 200 with the whole task.
 */
export const upsertItems = Effect.fnUntraced(function*(child: Resource, call: Call) {
  const parent = resource(child.parent!.resource)
  const owner = yield* findOr404(call.account, parent, call.id)
  const key = child.key!
  const keyField = child.fields.find((f) => f.name === key)!
  // The key is checked against its `sendAs` property, not the referenced record's id.
  const fields = childFields(child).map((f): Field => {
    if (f !== keyField || f.ref?.sendAs === undefined) return f
    const { ref: _ref, ...rest } = f
    return { ...rest, type: { _tag: "guid" } }
  })
  const items = yield* eachItem(yield* wrappedItems(child, call.body), (item) =>
    Effect.gen(function*() {
      const { [child.parent!.field]: _parentId, ...rest } = item
      const coerced = yield* coerce(fields, rest)
      yield* checkValues(fields, coerced)
      yield* checkRefs(call.account, fields, coerced, new Set(Object.keys(coerced)))
      return yield* sentAsTarget(call.account, child, coerced)
    }))
  const property = collectionProperty(child)
  const collection = [...((owner[property] as Array<Rec> | undefined) ?? [])]
  for (const item of items) {
    const at = collection.findIndex((x) => itemKey(child, x) === itemKey(child, item))
    if (at >= 0) collection[at] = { ...collection[at], ...item }
    else collection.push(item)
  }
  const updated = { ...owner, [property]: collection }
  call.account.insert(parent.name, updated)
  return result(200, readBack(parent, updated), true) satisfies Outcome as Outcome
})

/** DELETE `/tasks/{id}/products|…`: the body is a JSON array of item ids as strings (products: GUIDs); all must be on the task. */
export const deleteItems = Effect.fnUntraced(function*(child: Resource, call: Call) {
  const parent = resource(child.parent!.resource)
  const owner = yield* findOr404(call.account, parent, call.id)
  const wireKey = child.items?.names[child.key!] ?? child.key!
  const body = call.body
  if (!Array.isArray(body) || body.length === 0 || !body.every((x) => typeof x === "string")) {
    return yield* reject(400, `the body must be a JSON array of ${wireKey} strings`)
  }
  const property = collectionProperty(child)
  const collection = (owner[property] as Array<Rec> | undefined) ?? []
  const wanted = new Set(body.map(idKey))
  const missing = [...wanted].filter((k) => !collection.some((x) => itemKey(child, x) === k))
  if (missing.length > 0) {
    return yield* reject(404, `${child.title}: ${wireKey} ${missing.join(", ")} not on ${parent.name} ${show(call.id)}`)
  }
  call.account.insert(parent.name, { ...owner, [property]: collection.filter((x) => !wanted.has(itemKey(child, x))) })
  return noContent
})

// --- questionnaire answers ------------------------------------------------------------------------------------

/** PUT `/tasks/{id}/questionnaire-response`: one answer, validated now, applied after the answer delay. */
export const queueAnswer = Effect.fnUntraced(function*(answers: Resource, call: Call) {
  const tasks = resource(answers.parent!.resource)
  const task = yield* findOr404(call.account, tasks, call.id)
  if (!Predicate.isRecord(call.body)) return yield* reject(400, "the body must be one answer: a JSON object")
  const fields = childFields(answers)
  const { [answers.parent!.field]: _taskId, ...rest } = call.body
  const answer = yield* coerce(fields, rest)
  yield* checkValues(fields, answer)
  const equipment = answer["codigoEquipamento"]
  if (!isUnset(equipment)) {
    const onTask = ((task["equipmentsId"] as Array<unknown> | undefined) ?? []).map(idKey)
    if (!onTask.includes(idKey(equipment))) {
      return yield* reject(
        422,
        `field "codigoEquipamento": equipment ${show(equipment)} is not one of the task's equipments (equipmentsId)`
      )
    }
  }
  const taskId = task[idName(tasks)] as number
  call.account.pendingAnswers.push({
    taskId,
    receivedAt: call.now,
    visibleAt: call.now + call.settings.answerDelayMs,
    answer
  })
  return result(
    202,
    {
      message: "Answer queued for processing",
      taskId,
      itemID: answer["itemID"],
      codigoChecklist: answer["codigoChecklist"],
      codigoPergunta: answer["codigoPergunta"]
    },
    true
  ) satisfies Outcome as Outcome
})

/**
 * Moves the answers whose delay has passed onto their tasks, in arrival order. An answer for the same
 * itemID + codigoChecklist + codigoPergunta (+ codigoEquipamento) replaces the previous one. Returns whether any
 * task changed.
 */
export const settleAnswers = (account: Account, now: number): boolean => {
  if (account.pendingAnswers.length === 0 || account.pendingAnswers.every((p) => p.visibleAt > now)) return false
  const tasks = resource("tasks")
  const property = collectionProperty(resource("questionnaire-answers"))
  const due = account.pendingAnswers.filter((p) => p.visibleAt <= now)
  account.pendingAnswers = account.pendingAnswers.filter((p) => p.visibleAt > now)
  for (const { taskId, receivedAt, answer } of due) {
    const task = account.table(tasks.name).get(taskId)
    if (task === undefined) continue // deleted while the answer was queued
    const instances = structuredClone((task[property] as Array<Rec> | undefined) ?? [])
    let instance = instances.find((q) =>
      sameText(q["itemID"], answer["itemID"]) && sameText(q["codigoChecklist"], answer["codigoChecklist"])
    )
    if (instance === undefined) {
      instance = { itemID: answer["itemID"], codigoChecklist: answer["codigoChecklist"], answers: [] }
      instances.push(instance)
    }
    const equipmentId = isUnset(answer["codigoEquipamento"]) ? null : answer["codigoEquipamento"]
    const reply: Rec = {
      questionId: answer["codigoPergunta"],
      reply: answer["resposta"],
      replyDate: brazilDateTime(receivedAt),
      equipmentId
    }
    const list = instance["answers"] as Array<Rec>
    const at = list.findIndex((a) =>
      sameText(a["questionId"], reply["questionId"]) && String(a["equipmentId"]) === String(equipmentId)
    )
    if (at >= 0) list[at] = reply
    else list.push(reply)
    account.insert(tasks.name, { ...task, [property]: instances })
  }
  return true
}

// --- deleted tasks --------------------------------------------------------------------------------------------

/** Keeps what `GET /tasks/GetDeletedTasks` lists about a task just deleted. */
export const rememberDeletedTask = (account: Account, task: Rec, now: number): void => {
  const deleted = resource("deleted-tasks")
  const trace: Rec = { deletedDate: brazilDateTime(now) }
  for (const field of deleted.fields) if (field.name in task) trace[field.name] = task[field.name]
  account.insert(deleted.name, trace)
}
