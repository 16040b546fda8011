/**
 * When a write's answer says the write was done. A 2xx status is not enough: a proxy's HTML page, an empty body
 * or `{"foo":1}` answered 200, or a 202 to a create, say nothing about the record. A write is done only on the
 * success its operation has (api-notes B, api-reference 1.9):
 *
 * - record writes (POST create, PUT upsert, PATCH, PUT by id): 200/201 with `{"result": {…}}` carrying the
 *   record's server id;
 * - writes into a parent record (task products/services/additional costs, attachments): 200/201 with a
 *   `{"result": …}` envelope (the whole parent per the Blueprint, the items per the sandbox);
 * - questionnaire answers: 202 (queued, spec) with an empty or JSON body;
 * - employee product stock: 204 with no body, or 200/201 with a `{"result": …}` envelope;
 * - DELETE: 204 (or 200) with no body or a JSON one.
 *
 * Anything else in the 2xx range is `Unconfirmed` (handled like a lost answer: the write may or may not have
 * been applied), except a 202 where the write should have been done at once: `Later` (accepted, maybe applied
 * later: in doubt). Pure functions over the resource table.
 */
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { idReadName, type Resource, resource, resources } from "../Resources.js"
import type { ApiRequest } from "./Api.js"
import { envelopeOf } from "./Body.js"

type WriteAnswer =
  | { readonly _tag: "Done" }
  | { readonly _tag: "Later"; readonly why: string }
  | { readonly _tag: "Unconfirmed"; readonly why: string }

const segments = (path: string) => path.split("?")[0]!.split("/").filter((s) => s !== "").map((s) => s.toLowerCase())

const matches = (template: ReadonlyArray<string>, actual: ReadonlyArray<string>) =>
  template.length === actual.length && template.every((t, i) => t === "{id}" || t === actual[i])

/** The resource a write to `path` belongs to, and whether it addresses one record by id (`/customers/12`). */
const writeTarget = (path: string): { readonly resource: Resource; readonly byId: boolean } | undefined => {
  const actual = segments(path)
  // Exact templates first: `/customers/complete` and `/products/employee-product-stock` are not ids.
  for (const r of resources.values()) if (matches(segments(r.path), actual)) return { resource: r, byId: false }
  for (const r of resources.values()) {
    if (r.kind === "record" && matches([...segments(r.path), "{id}"], actual)) return { resource: r, byId: true }
  }
  return undefined
}

/** The property that carries the server id of what a write to `r` answers with (`/customers/complete` answers a customer). */
const idProperties = (r: Resource): ReadonlyArray<string> => {
  const listed = r.readVia !== undefined ? resource(r.readVia) : r
  const read = idReadName(listed)
  return listed.id === undefined || read === undefined ? [] : [...new Set([read, listed.id.name])]
}

const shown = (body: unknown): string => {
  if (body === undefined) return "an empty body"
  if (typeof body === "string") return /^\s*</.test(body) ? "an HTML page" : "a body that is not JSON"
  if (!Predicate.isRecord(body)) return "JSON that is not an object"
  if (!("result" in body)) return "JSON without the {\"result\": …} envelope"
  return "JSON"
}

const isJsonOrEmpty = (body: unknown) => body === undefined || (typeof body === "object" && body !== null)

const unconfirmed = (status: number, what: string): WriteAnswer => ({
  _tag: "Unconfirmed",
  why: `the API answered ${status} with ${what}`
})

/** Whether the 2xx answer `status`/`body` to the write `req` says it was done. */
export const judgeWrite = (req: ApiRequest, status: number, body: unknown): WriteAnswer => {
  const target = writeTarget(req.path)
  const r = target?.resource
  if (req.method === "DELETE") {
    if ((status === 204 || status === 200) && isJsonOrEmpty(body)) return { _tag: "Done" }
    return unconfirmed(status, status === 202 ? "202 (accepted for later)" : shown(body))
  }
  if (r?.name === "questionnaire-answers") {
    return [200, 201, 202].includes(status) && isJsonOrEmpty(body) ? { _tag: "Done" } : unconfirmed(status, shown(body))
  }
  if (status === 202) {
    return {
      _tag: "Later",
      why:
        `the API answered 202 (accepted for later processing) to ${req.method} ${req.path}, which is written at once when it succeeds; it may or may not be applied later`
    }
  }
  if (r?.name === "employee-product-stock" && status === 204) {
    return body === undefined ? { _tag: "Done" } : unconfirmed(status, shown(body))
  }
  if (status !== 200 && status !== 201) return unconfirmed(status, shown(body))
  const decoded = envelopeOf(body)
  if (Option.isNone(decoded)) return unconfirmed(status, shown(body))
  const answer = decoded.value
  // A path outside the resource table, or a write into a parent record: the envelope is all that is known.
  if (r === undefined || (!target!.byId && r.kind !== "record" && r.readVia === undefined)) {
    return answer.result === undefined || answer.result === null
      ? unconfirmed(status, "an empty result")
      : { _tag: "Done" }
  }
  const ids = idProperties(r)
  if (ids.length === 0) return { _tag: "Done" }
  if (!Predicate.isRecord(answer.result)) return unconfirmed(status, "a result that is not a record")
  const record = answer.result
  const id = ids.map((name) => record[name]).find((v) =>
    (typeof v === "number" || typeof v === "string") && String(v) !== ""
  )
  return id !== undefined
    ? { _tag: "Done" }
    : unconfirmed(status, `a result that does not carry the record's id (${ids.join(" or ")})`)
}
