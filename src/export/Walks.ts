/**
 * What an export walks and writes, read from the resource table: the list walks in dependency order (so the keys
 * a reference column needs come from files already written), the files each walk produces, and the files derived
 * from another resource's records (a task's products, services, additional costs and questionnaire answers come
 * back inside the task: they are not list endpoints of their own).
 */
import * as Either from "effect/Either"
import { UsageError } from "../Errors.js"
import type { Resource, ResourceName } from "../Resources.js"
import { dependencyOrder, exportable, importable, isResourceName, resource, resources } from "../Resources.js"
import { didYouMean } from "../Words.js"
import type { RowMapper } from "./Cells.js"
import { rowMapper } from "./Cells.js"
import type { ExportFormat } from "./Manifest.js"

export interface Output {
  readonly resource: Resource
  /** File name inside the export directory. */
  readonly file: string
  readonly mapper: RowMapper
  /** The resource whose records this file is read from, when it is not a list of its own. */
  readonly derivedFrom?: ResourceName
}

export interface Walk {
  /** The list walked. */
  readonly resource: Resource
  /** Per-parent lists (`/teams/{id}/users`): walked once for each record of the parent. */
  readonly parent?: Resource
  readonly outputs: ReadonlyArray<Output>
}

/** Resources read back inside the records of `r` (under `readBackIn`), exported from `r`'s walk. */
export const derivedFrom = (r: Resource): ReadonlyArray<Resource> =>
  importable.filter((child) => child.parent?.resource === r.name && child.readBackIn !== undefined)

const derivable: ReadonlyArray<Resource> = exportable.flatMap(derivedFrom)

/** Every name `export` accepts, in table order. */
export const exportNames: ReadonlyArray<ResourceName> = [...resources.values()]
  .filter((r) => exportable.includes(r) || derivable.includes(r))
  .map((r) => r.name)

const unknownName = (name: string): UsageError =>
  new UsageError({
    message: isResourceName(name)
      ? `${name} cannot be exported: the API has no list of it. Export knows: ${exportNames.join(", ")}`
      : `unknown resource "${name}"${didYouMean(name, exportNames)}. Export knows: ${exportNames.join(", ")}`
  })

/**
 * The walks of an export of `names` (all exportable resources when empty), in order. A walk comes after every
 * walk whose records its files reference, so its reference columns read keys from finished files; keys of
 * resources not exported are fetched from the API.
 */
export const planExport = (
  names: ReadonlyArray<string>,
  format: ExportFormat
): Either.Either<ReadonlyArray<Walk>, UsageError> => {
  const unknown = names.filter((n) => !(exportNames as ReadonlyArray<string>).includes(n))
  if (unknown.length > 0) return Either.left(unknownName(unknown[0]!))
  const wanted = new Set<ResourceName>(names.length === 0 ? exportNames : (names as ReadonlyArray<ResourceName>))

  const output = (r: Resource, from?: Resource): Output => ({
    resource: r,
    file: `${r.name}.${format}`,
    mapper: rowMapper(r),
    ...(from ? { derivedFrom: from.name } : {})
  })

  const walks = new Map<ResourceName, Walk>()
  for (const r of exportable) {
    const derived = derivedFrom(r).filter((d) => wanted.has(d.name))
    if (!wanted.has(r.name) && derived.length === 0) continue
    const outputs = [...(wanted.has(r.name) ? [output(r)] : []), ...derived.map((d) => output(d, r))]
    const parent = r.path.includes("{id}") && r.parent ? resource(r.parent.resource) : undefined
    walks.set(r.name, { resource: r, outputs, ...(parent ? { parent } : {}) })
  }

  // A walk takes the place of the last of its files in the import order: a task's derived files reference
  // products, services and additional costs, which must be written before the tasks are walked.
  const importOrder = dependencyOrder(
    [...walks.values()].flatMap((w) => w.outputs.map((o) => o.resource.name)).filter((n) =>
      importable.some((r) => r.name === n)
    )
  )
  const position = (w: Walk): number => Math.max(-1, ...w.outputs.map((o) => importOrder.indexOf(o.resource.name)))
  const ordered = [...walks.values()].filter((w) => position(w) >= 0).sort((a, b) => position(a) - position(b))
  // Read-only lists are never imported: they come last, after the parents whose ids they walk.
  return Either.right([...ordered, ...[...walks.values()].filter((w) => position(w) < 0)])
}

/** The files of a plan, in order. */
export const plannedFiles = (walks: ReadonlyArray<Walk>): ReadonlyArray<Output> => walks.flatMap((w) => w.outputs)
