/**
 * What tasks keep inside themselves: the sub-collections (products, services, additional costs: PUT upserts items
 * by their key, DELETE takes a JSON array of keys), the questionnaire answers (202, queued, visible under
 * `questionnaires[].answers[]` only after the answer delay), and the trace a deleted task leaves for
 * `GET /tasks/GetDeletedTasks`.
 */
import { Effect } from "effect"
import type { Resource } from "../Resources.js"
import { resource } from "../Resources.js"
import type { Call } from "./Call.js"
import { collectionProperty } from "./Collections.js"
import { brazilDateTime } from "./Dates.js"
import { checkRefs, checkValues, coerce, isUnset } from "./Fields.js"
import { findOr404 } from "./Records.js"
import type { Account, Rec } from "./Store.js"
import { idKey, idName, sameText } from "./Store.js"
import type { Outcome } from "./Wire.js"
import { HttpFailure, isObject, noContent, reject, result, show } from "./Wire.js"

/** One object or an array of objects, as sub-collection and attachment PUTs take. */
export const itemsOf = Effect.fn("Tasks.itemsOf")(function* (body: unknown) {
  const items = Array.isArray(body) ? body : [body]
  if (items.length === 0 || !items.every(isObject)) return yield* reject(400, "the body must be a JSON object or an array of objects")
  return items as ReadonlyArray<Rec>
})

/** Runs `check` on each item, naming the item in the error when there are several. */
export const eachItem = <A>(items: ReadonlyArray<Rec>, check: (item: Rec) => Effect.Effect<A, HttpFailure>) =>
  Effect.forEach(items, (item, i) =>
    items.length === 1 ? check(item) : Effect.mapError(check(item), (e) => new HttpFailure({ status: e.status, error: `item ${i + 1}: ${e.error}` }))
  )

const childFields = (child: Resource) => child.fields.filter((f) => f.name !== child.parent?.field)

/** PUT `/tasks/{id}/products|services|additional-costs`: items upserted by the sub-collection's key. */
export const upsertItems = Effect.fn("Tasks.upsertItems")(function* (child: Resource, call: Call) {
  const parent = resource(child.parent!.resource)
  const owner = yield* findOr404(call.account, parent, call.id)
  const fields = childFields(child)
  const key = child.key!
  const items = yield* eachItem(yield* itemsOf(call.body), (item) =>
    Effect.gen(function* () {
      const { [child.parent!.field]: _parentId, ...rest } = item
      const coerced = yield* coerce(fields, rest)
      yield* checkValues(fields, coerced)
      yield* checkRefs(call.account, fields, coerced, new Set(Object.keys(coerced)))
      return coerced
    })
  )
  const property = collectionProperty(child)
  const collection = [...((owner[property] as Array<Rec> | undefined) ?? [])]
  for (const item of items) {
    const at = collection.findIndex((x) => idKey(x[key]) === idKey(item[key]))
    if (at >= 0) collection[at] = { ...collection[at], ...item }
    else collection.push(item)
  }
  call.account.insert(parent.name, { ...owner, [property]: collection })
  return result(200, collection, true) satisfies Outcome as Outcome
})

/** DELETE `/tasks/{id}/products|…`: the body is a JSON array of item keys; all must be on the task. */
export const deleteItems = Effect.fn("Tasks.deleteItems")(function* (child: Resource, call: Call) {
  const parent = resource(child.parent!.resource)
  const owner = yield* findOr404(call.account, parent, call.id)
  const key = child.key!
  const body = call.body
  if (!Array.isArray(body) || body.length === 0 || !body.every((x) => typeof x === "number" || typeof x === "string")) {
    return yield* reject(400, `the body must be a JSON array of ${key} values`)
  }
  const property = collectionProperty(child)
  const collection = (owner[property] as Array<Rec> | undefined) ?? []
  const wanted = new Set(body.map(idKey))
  const missing = [...wanted].filter((k) => !collection.some((x) => idKey(x[key]) === k))
  if (missing.length > 0) {
    return yield* reject(404, `${child.title}: ${key} ${missing.join(", ")} not on ${parent.name} ${show(call.id)}`)
  }
  call.account.insert(parent.name, { ...owner, [property]: collection.filter((x) => !wanted.has(idKey(x[key]))) })
  return noContent
})

// --- questionnaire answers ------------------------------------------------------------------------------------

/** PUT `/tasks/{id}/questionnaire-response`: one answer, validated now, applied after the answer delay. */
export const queueAnswer = Effect.fn("Tasks.queueAnswer")(function* (answers: Resource, call: Call) {
  const tasks = resource(answers.parent!.resource)
  const task = yield* findOr404(call.account, tasks, call.id)
  if (!isObject(call.body)) return yield* reject(400, "the body must be one answer: a JSON object")
  const fields = childFields(answers)
  const { [answers.parent!.field]: _taskId, ...rest } = call.body
  const answer = yield* coerce(fields, rest)
  yield* checkValues(fields, answer)
  const equipment = answer["codigoEquipamento"]
  if (!isUnset(equipment)) {
    const onTask = ((task["equipmentsId"] as Array<unknown> | undefined) ?? []).map(idKey)
    if (!onTask.includes(idKey(equipment))) {
      return yield* reject(422, `field "codigoEquipamento": equipment ${show(equipment)} is not one of the task's equipments (equipmentsId)`)
    }
  }
  const taskId = task[idName(tasks)] as number
  call.account.pendingAnswers.push({ taskId, receivedAt: call.now, visibleAt: call.now + call.settings.answerDelayMs, answer })
  return result(
    202,
    { message: "Answer queued for processing", taskId, itemID: answer["itemID"], codigoChecklist: answer["codigoChecklist"], codigoPergunta: answer["codigoPergunta"] },
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
    let instance = instances.find((q) => sameText(q["itemID"], answer["itemID"]) && sameText(q["codigoChecklist"], answer["codigoChecklist"]))
    if (instance === undefined) {
      instance = { itemID: answer["itemID"], codigoChecklist: answer["codigoChecklist"], answers: [] }
      instances.push(instance)
    }
    const equipmentId = isUnset(answer["codigoEquipamento"]) ? null : answer["codigoEquipamento"]
    const reply: Rec = { questionId: answer["codigoPergunta"], reply: answer["resposta"], replyDate: brazilDateTime(receivedAt), equipmentId }
    const list = instance["answers"] as Array<Rec>
    const at = list.findIndex((a) => sameText(a["questionId"], reply["questionId"]) && String(a["equipmentId"]) === String(equipmentId))
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
