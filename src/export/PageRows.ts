/**
 * The rows one page of a list gives each file of its walk: the records themselves, the per-parent lists' records
 * with their parent's id, and the items read back inside each record (a task's products, services, additional
 * costs and questionnaire answers), which name their parent by the key of the record in hand.
 */
import * as Predicate from "effect/Predicate"
import type { Cell } from "../files/Write.js"
import { keyProperty } from "../Identity.js"
import type { Resource } from "../Resources.js"
import { idReadName } from "../Resources.js"
import type { KeyLookup } from "./Cells.js"
import { propertyOf } from "./Cells.js"
import type { Walk } from "./Walks.js"

/** The items of a derived resource inside one record of its parent, each carrying the parent's id. */
const derivedRecords = (
  child: Resource,
  parent: Resource,
  record: Readonly<Record<string, unknown>>
): ReadonlyArray<Record<string, unknown>> => {
  const parentId = { [child.parent!.field]: propertyOf(record, idReadName(parent) ?? "id") }
  const groups = Array.isArray(record[child.readBackIn!])
    ? (record[child.readBackIn!] as ReadonlyArray<unknown>).filter(Predicate.isRecord)
    : []
  const nested = child.readBackItems
  if (nested === undefined) return groups.map((item) => ({ ...item, ...parentId }))
  return groups.flatMap((group) => {
    const { [nested]: items, ...shared } = group
    return (Array.isArray(items) ? items.filter(Predicate.isRecord) : []).map((item) => ({
      ...shared,
      ...item,
      ...parentId
    }))
  })
}

/** The rows one page gives each output of a walk. */
export const pageRows = (
  walk: Walk,
  records: ReadonlyArray<Record<string, unknown>>,
  keys: KeyLookup,
  parentId: string | undefined
) =>
  walk.outputs.map((output): ReadonlyArray<ReadonlyArray<Cell>> => {
    if (output.derivedFrom === undefined) {
      const field = walk.parent && walk.resource.parent ? walk.resource.parent.field : undefined
      return records.map((record) =>
        output.mapper.row(field !== undefined ? { ...record, [field]: parentId } : record, keys)
      )
    }
    const parent = walk.resource
    const parentKey = parent.key !== undefined ? keyProperty(parent, parent.key) : undefined
    return records.flatMap((record) => {
      const own = String(propertyOf(record, idReadName(parent) ?? "id") ?? "")
      // The derived items name their parent by its key, taken from the parent record in hand.
      const lookup: KeyLookup = (name, key, id) =>
        name === parent.name && id === own && parentKey !== undefined && key === parent.key
          ? String(propertyOf(record, parentKey) ?? "") || undefined
          : keys(name, key, id)
      return derivedRecords(output.resource, parent, record).map((item) => output.mapper.row(item, lookup))
    })
  })
