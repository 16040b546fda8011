/**
 * A copy of an account (`fsm-bulk sandbox --seed EXPORT_DIR`): the records an export holds, read back into the
 * sandbox's stored form, so that every account the sandbox serves starts as the exported account was — the same
 * ids, references, read-only lists and server-kept dates. The export is read and checked by `export/Copy.ts`;
 * this module only knows how the sandbox keeps records: top-level records in their tables, a task's products,
 * services and additional costs inside the task (products named by their GUID), questionnaire answers grouped
 * per checklist instance, deleted tasks in their own table (their ids are not given again).
 */
import type { Field, Resource, ResourceName } from "../Resources.js"
import { readName, resource } from "../Resources.js"
import { collectionProperty } from "./Collections.js"
import { isUnset } from "./Fields.js"
import { Account, idName, keyOf, type Rec, sameText } from "./Store.js"

/** The records of an export, per resource, in write names (rows decoded by `export/Copy.ts`). */
export interface AccountCopy {
  /** Where the records come from (the export directory), for messages. */
  readonly source: string
  readonly resources: ReadonlyArray<{ readonly name: ResourceName; readonly records: ReadonlyArray<Rec> }>
}

/** Lists the service works out from other records (a team's users, a group's customers): never stored. */
const derivedList = (r: Resource): boolean => r.kind === "readonly" && r.path.includes("{")

/** A sub-collection item as the sandbox keeps it; a product is named by its GUID, its code read back beside it. */
const storedItem = (account: Account, child: Resource, row: Rec): Rec => {
  const item: Rec = {}
  for (const field of child.fields) {
    if (field.name === child.parent!.field || row[field.name] === undefined) continue
    item[field.name] = row[field.name]
  }
  const keyField: Field | undefined = child.fields.find((f) => f.name === child.key)
  const sendAs = keyField?.ref?.sendAs
  if (keyField !== undefined && sendAs !== undefined) {
    const target = resource(keyField.ref!.resource)
    const found = account.table(target.name).get(row[keyField.name])
    if (found !== undefined) {
      item[keyField.name] = String(found[sendAs])
      item[readName(keyField)] = found[idName(target)]
    }
  }
  return item
}

/** Answers grouped per task, checklist instance (`itemID`, `codigoChecklist`) as `settleAnswers` keeps them. */
const addAnswer = (child: Resource, owner: Rec, row: Rec): void => {
  const property = collectionProperty(child)
  const groupFields = child.fields.filter((f) => f.name !== child.parent!.field && f.readAs === undefined)
  const answerFields = child.fields.filter((f) => f.readAs !== undefined)
  const instances = (owner[property] as Array<Rec> | undefined) ?? []
  let instance = instances.find((q) => groupFields.every((f) => sameText(q[f.name] ?? "", row[f.name] ?? "")))
  if (instance === undefined) {
    const created: Rec = Object.fromEntries([...groupFields.map((f) => [f.name, row[f.name] ?? ""]), ["answers", []]])
    instances.push(created)
    instance = created
  }
  const answer: Rec = {}
  for (const f of answerFields) answer[readName(f)] = isUnset(row[f.name]) ? (f.ref ? null : "") : row[f.name]
  // The export does not carry when an answer was given.
  answer["replyDate"] = ""
  ;(instance["answers"] as Array<Rec>).push(answer)
  owner[property] = instances
}

/**
 * The copy as one account's state (tables and id counters), built once: every account the sandbox serves starts
 * from a clone of it. Top-level resources first, so the items kept inside a task find the task and its product.
 * A read-only list the export has replaces the sandbox's own sample rows of it.
 */
export const copyAccount = (copy: AccountCopy): Account => {
  const account = new Account()
  const parents = copy.resources.filter(({ name }) => resource(name).parent === undefined)
  const children = copy.resources.filter(({ name }) => resource(name).parent !== undefined)
  for (const { name, records } of parents) {
    const r = resource(name)
    if (derivedList(r)) continue
    records.forEach((rec, i) => {
      const stored = { ...rec }
      // Positions have no id in the API: the sandbox keeps one only to store them.
      if (r.id !== undefined && isUnset(stored[idName(r)])) stored[idName(r)] = i + 1
      account.insert(name, stored)
    })
  }
  for (const { name, records } of children) {
    const child = resource(name)
    if (derivedList(child) || child.kind === "readonly") continue
    const parent = resource(child.parent!.resource)
    for (const row of records) {
      const owner = account.table(parent.name).get(row[child.parent!.field])
      if (owner === undefined) continue
      const property = collectionProperty(child)
      if (child.readBackItems !== undefined) addAnswer(child, owner, row)
      else owner[property] = [...((owner[property] as Array<Rec> | undefined) ?? []), storedItem(account, child, row)]
    }
  }
  // A deleted task keeps its id: new tasks are numbered above it, as on the service.
  const deletedNext = account.nextIds.get("deleted-tasks")
  if (deletedNext !== undefined && deletedNext > (account.nextIds.get("tasks") ?? 1)) {
    account.nextIds.set("tasks", deletedNext)
  }
  return account
}

/** Puts the copy into a new account: the copied lists replace the sample rows it was seeded with. */
export const applyCopy = (template: Account, account: Account): void => {
  for (const [name, copied] of template.tables) {
    const own = account.table(name)
    for (const rec of own.values()) own.remove(keyOf(resource(name), rec))
    for (const rec of copied.values()) account.insert(name, structuredClone(rec))
  }
  for (const [name, next] of template.nextIds) {
    if (next > (account.nextIds.get(name) ?? 1)) account.nextIds.set(name, next)
  }
}
