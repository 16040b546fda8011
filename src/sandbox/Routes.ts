/**
 * The sandbox's routes, derived from the resource table: each resource's path and operations become method/path
 * pairs, plus the two endpoints the table does not describe (login and the legacy service catalog). Matching is
 * case-insensitive and ignores a trailing slash, as the live service does; a literal segment wins over `{id}`
 * (`/tasks/GetDeletedTasks` before `/tasks/{id}`).
 */
import type { Operation, Resource } from "../Resources.js"
import { resource, resources } from "../Resources.js"

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export type Action =
  | { readonly _tag: "Login" }
  | { readonly _tag: "ServiceCatalog"; readonly resource: Resource }
  | { readonly _tag: "Record"; readonly resource: Resource; readonly op: Operation }
  | { readonly _tag: "SubCollection"; readonly resource: Resource; readonly op: "upsert" | "delete" }
  | { readonly _tag: "Attachments"; readonly resource: Resource }
  | { readonly _tag: "Answer"; readonly resource: Resource }
  | { readonly _tag: "Stock"; readonly resource: Resource }
  | {
    readonly _tag: "Complete"
    readonly resource: Resource
    readonly target: Resource
    readonly op: "create" | "upsert"
  }
  | { readonly _tag: "Children"; readonly resource: Resource }

interface Route {
  readonly method: Method
  /** The path as the spec writes it, relative to `/v2`. */
  readonly path: string
  /** Lower-cased literal segments; undefined for the `{id}` parameter. */
  readonly segments: ReadonlyArray<string | undefined>
  readonly action: Action
}

const route = (method: Method, path: string, action: Action): Route => ({
  method,
  path,
  segments: path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => (s.startsWith("{") ? undefined : s.toLowerCase())),
  action
})

const collectionMethods: Partial<Record<Operation, Method>> = { list: "GET", create: "POST", upsert: "PUT" }
const itemMethods: Partial<Record<Operation, Method>> = { get: "GET", patch: "PATCH", delete: "DELETE", update: "PUT" }

/** The record resource an action such as `/customers/complete` writes to: the one whose path it extends. */
export const extendedRecord = (action: Resource): Resource | undefined =>
  [...resources.values()]
    .filter((r) => r.kind === "record" && action.path.startsWith(`${r.path}/`))
    .sort((a, b) => b.path.length - a.path.length)[0]

const routesOf = (r: Resource): ReadonlyArray<Route> => {
  const hasParam = r.path.includes("{")
  switch (r.kind) {
    case "record":
      return r.ops.map((op) =>
        collectionMethods[op] !== undefined
          ? route(collectionMethods[op], r.path, { _tag: "Record", resource: r, op })
          : route(itemMethods[op]!, `${r.path}/{id}`, { _tag: "Record", resource: r, op })
      )
    case "readonly":
      if (hasParam) return [route("GET", r.path, { _tag: "Children", resource: r })]
      return r.ops.map((op) =>
        op === "list"
          ? route("GET", r.path, { _tag: "Record", resource: r, op })
          : route(itemMethods[op]!, `${r.path}/{id}`, { _tag: "Record", resource: r, op })
      )
    case "subcollection":
      return r.ops.map((op) =>
        route(op === "delete" ? "DELETE" : "PUT", r.path, {
          _tag: "SubCollection",
          resource: r,
          op: op === "delete" ? "delete" : "upsert"
        })
      )
    case "action": {
      if (r.fields.some((f) => f.type._tag === "file")) {
        return [route("PUT", r.path, { _tag: "Attachments", resource: r })]
      }
      if (r.name === "questionnaire-answers") return [route("PUT", r.path, { _tag: "Answer", resource: r })]
      if (r.name === "employee-product-stock") return [route("PUT", r.path, { _tag: "Stock", resource: r })]
      const target = extendedRecord(r)
      if (target === undefined || hasParam) throw new Error(`sandbox: no handler for the action resource ${r.name}`)
      return r.ops.map((op) =>
        route(op === "create" ? "POST" : "PUT", r.path, {
          _tag: "Complete",
          resource: r,
          target,
          op: op === "create" ? "create" : "upsert"
        })
      )
    }
  }
}

export const routes: ReadonlyArray<Route> = [
  route("POST", "/login", { _tag: "Login" }),
  route("GET", "/login", { _tag: "Login" }),
  route("GET", "/services/obterListaServicos", { _tag: "ServiceCatalog", resource: resource("services") }),
  ...[...resources.values()].flatMap(routesOf)
]

type Match =
  | { readonly _tag: "Found"; readonly route: Route; readonly id: string | undefined }
  | { readonly _tag: "MethodNotAllowed"; readonly allowed: ReadonlyArray<Method> }
  | { readonly _tag: "NotFound" }

/** The route of a method and a path relative to `/v2` (any case, trailing slash or not). */
export const match = (method: string, path: string): Match => {
  const segments = path.split("/").filter((s) => s !== "")
  const lower = segments.map((s) => s.toLowerCase())
  const candidates = routes.filter((r) =>
    r.segments.length === lower.length && r.segments.every((s, i) => s === undefined || s === lower[i])
  )
  const literals = (r: Route) => r.segments.filter((s) => s !== undefined).length
  const found = candidates.filter((r) => r.method === method).sort((a, b) => literals(b) - literals(a))[0]
  if (found === undefined) {
    return candidates.length === 0
      ? { _tag: "NotFound" }
      : { _tag: "MethodNotAllowed", allowed: [...new Set(candidates.map((r) => r.method))] }
  }
  const at = found.segments.indexOf(undefined)
  return { _tag: "Found", route: found, id: at >= 0 ? segments[at] : undefined }
}
