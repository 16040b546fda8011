/**
 * Collections the server keeps inside a record: a task's products, services, additional costs, attachments and
 * questionnaire answers; the attachments of customers, products, equipments and expenses. They are derived from
 * the table (sub-collections and actions under `/<parent>/{id}/…`), start empty, and are only changed through
 * their own endpoints: record writes that carry them are ignored for them.
 */
import type { Resource } from "../Resources.js"
import { resources } from "../Resources.js"

const camel = (segment: string): string => segment.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())

/** The property of the parent record that holds a sub-collection's or an action's items. */
export const collectionProperty = (child: Resource): string =>
  // The table names it when it differs from the path (answers written to `/questionnaire-response` come back
  // under `questionnaires[]`); attachments are kept under `attachments`.
  child.readBackIn ?? camel(child.path.split("/").pop()!)

/** The child resources kept inside records of `r`. */
const childCollections = (r: Resource): ReadonlyArray<Resource> =>
  [...resources.values()].filter(
    (child) =>
      child.parent?.resource === r.name && (child.kind === "subcollection" || child.kind === "action") &&
      child.path.includes("{id}")
  )

/** The properties of `r`'s records that hold server-kept collections. */
export const managedProperties = (r: Resource): ReadonlyArray<string> => childCollections(r).map(collectionProperty)
