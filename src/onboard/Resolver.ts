/**
 * The one reference resolver an onboarding shares across its steps. Every record a step writes is learned (the
 * pipeline calls `learn`), so later steps find the ids of records created moments before with no request;
 * values no step wrote fall back to the server (`serverResolver`: one list lookup per resource and property).
 *
 * After each step it is told how the step's rows ended: a reference to a row that failed, was invalid or was
 * skipped does not resolve, and the row naming it is `skipped` (not attempted) with an `_error` that says which
 * row it was (`customerExternalId "CLI-0004": row 5 of customers failed`). In a dry run nothing is written, so rows that would be created resolve to a stand-in that names them,
 * and the plan of later steps shows what would really happen instead of "not found".
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { KeyMap, keyText, normalKey } from "../Identity.js"
import {
  type RefDemand,
  refFailed,
  type RefResolver,
  refSkipped,
  type Resolution,
  type ServerId,
  type Unresolved,
  wouldBeCreated
} from "../import/Refs.js"
import { importable, refKey, resource as resourceOf, type ResourceName, writableFields } from "../Resources.js"
import { endedWell, type Outcome, type Status } from "../Status.js"
import type { PendingRef } from "../validate/Validate.js"

/** Per resource, the properties other rows may name its records by (`customers` → `externalId` …). */
export const namedBy: ReadonlyMap<ResourceName, ReadonlySet<string>> = (() => {
  const map = new Map<ResourceName, Set<string>>()
  for (const r of importable) {
    for (const f of writableFields(r)) {
      if (f.ref === undefined) continue
      const set = map.get(f.ref.resource) ?? new Set<string>()
      set.add(refKey(f.ref))
      map.set(f.ref.resource, set)
    }
  }
  return map
})()

/** How a step's row ended, with the values (by property) later rows may name it by. */
export interface EndedRow {
  readonly row: number
  readonly outcome: Outcome
  readonly values: ReadonlyMap<string, string>
}

interface OnboardResolver {
  /** What each step's import is given. */
  readonly resolver: RefResolver
  /**
   * Before a step: the values the step's own rows write, which other rows of the same sheet may name. A value the
   * pipeline still cannot resolve when such a row is sent belongs to a row that did not end well (in a dry run,
   * to one that would be created).
   */
  readonly beginStep: (resource: ResourceName, produced: ReadonlyMap<string, KeyMap<number>>) => Effect.Effect<void>
  /** After a step: how its rows ended (only rows that did not end well, and in a dry run those that would be written). */
  readonly afterStep: (resource: ResourceName, rows: ReadonlyArray<EndedRow>) => Effect.Effect<void>
  /** Whether a row's `_error` says a parent row did not end well (the row was skipped for that reason). */
  readonly isParentProblem: (error: string | undefined) => boolean
}

const tableKey = (resource: ResourceName, by: string) => `${resource}\u0000${by}`

/** The resource whose records a step writes (`customers-complete` writes customers). */
export const recordsOf = (resource: ResourceName): ResourceName => resourceOf(resource).readVia ?? resource

/** "failed", "was invalid" …: what happened to a parent row, as the message shows it. */
const happened = (status: Status, dryRun: boolean): string => {
  switch (status) {
    case "failed":
      return dryRun ? "would fail" : "failed"
    case "invalid":
      return dryRun ? "is invalid" : "was invalid"
    case "skipped":
      return dryRun ? "would be skipped" : "was skipped"
    case "in-doubt":
      return "is in doubt (it may or may not have been written)"
    case "unconfirmed":
      return "was not confirmed"
    default:
      return `ended ${status}`
  }
}

/** The text a parent problem is recognised by, without the warnings the pipeline may append. */
const withoutWarnings = (error: string) => {
  const at = error.indexOf("; warning: ")
  return at < 0 ? error : error.slice(0, at)
}

export const makeOnboardResolver = (fallback: RefResolver, dryRun: boolean): OnboardResolver => {
  /** Ids of records written (or, in a dry run, that would be): resource+property → value (a key) → ids. */
  const known = new Map<string, KeyMap<Array<ServerId>>>()
  /** Rows that did not end well: resource+property → value (a key) → the row. */
  const troubled = new Map<string, KeyMap<{ readonly row: number; readonly status: Status }>>()
  /** Values the current step's own rows write. */
  let producedHere:
    | { readonly resource: ResourceName; readonly values: ReadonlyMap<string, KeyMap<number>> }
    | undefined
  const parentProblems = new Set<string>()

  const remember = (resource: ResourceName, by: string, value: string, id: ServerId) => {
    if (normalKey(value) === "") return
    const k = tableKey(resource, by)
    let t = known.get(k)
    if (t === undefined) known.set(k, t = new KeyMap())
    const ids = t.get(value)
    if (ids === undefined) t.set(value, [id])
    else if (!ids.some((x) => String(x) === String(id))) ids.push(id)
  }

  /** What a value resolves to from what the onboarding knows, before asking anyone else. */
  const local = (ref: PendingRef, value: string): Either.Either<ServerId, Unresolved> | undefined => {
    const ids = known.get(tableKey(ref.resource, ref.by))?.get(value)
    if (ids !== undefined && ids.length > 0) {
      return ids.length === 1
        ? Either.right(ids[0]!)
        : Either.left(
          refFailed(`${ref.column}: ${ids.length} ${ref.resource} records have ${ref.by} "${value}": make it unique`)
        )
    }
    const trouble = troubled.get(tableKey(ref.resource, ref.by))?.get(value)
    if (trouble !== undefined) {
      return Either.left(
        refSkipped(
          `${ref.column} "${value}": row ${trouble.row} of ${ref.resource} ${happened(trouble.status, dryRun)}`
        )
      )
    }
    return undefined
  }

  const prepare = (demands: ReadonlyArray<RefDemand>) =>
    fallback.prepare(
      demands
        .map((d) => ({
          ...d,
          values: new Set(
            [...d.values].filter((v) =>
              local({ field: "", column: "", resource: d.resource, by: d.by, values: [v], list: false }, v.trim()) ===
                undefined
            )
          )
        }))
        .filter((d) => d.values.size > 0)
    )

  const resolveOne = (ref: PendingRef, value: string): Effect.Effect<Either.Either<ServerId, Unresolved>> => {
    const fromHere = local(ref, value)
    if (fromHere !== undefined) return Effect.succeed(fromHere)
    return Effect.map(fallback.resolve({ ...ref, values: [value], list: false }), (resolved) => {
      if (Either.isRight(resolved)) return Either.right(resolved.right as ServerId)
      // A row of the same sheet writes this value: the pipeline sends the rows naming it after that row, so a
      // value still unknown by then is a row that did not end well (a dry run: one that would be created).
      const row = producedHere?.resource === ref.resource ? producedHere.values.get(ref.by)?.get(value) : undefined
      if (row === undefined) return Either.left(resolved.left)
      if (dryRun) return Either.right(wouldBeCreated(ref.resource, row))
      return Either.left(refSkipped(`${ref.column} "${value}": row ${row} of ${ref.resource} was not written`))
    })
  }

  const resolve = (ref: PendingRef) =>
    Effect.gen(function*() {
      const ids: Array<ServerId> = []
      for (const raw of ref.values) {
        const value = raw.trim()
        if (value === "") continue
        const one = yield* resolveOne(ref, value)
        if (Either.isLeft(one)) {
          if (one.left.status === "skipped") parentProblems.add(one.left.error)
          return Either.left(one.left)
        }
        ids.push(one.right)
      }
      if (ref.list) return Either.right(ids)
      return ids.length === 1
        ? Either.right(ids[0]!)
        : Either.left(refFailed(`${ref.column}: names ${ids.length} records where one is expected`))
    }) as Effect.Effect<Resolution>

  const learn = (resource: ResourceName, fields: Readonly<Record<string, unknown>>, id: ServerId) =>
    Effect.zipRight(
      Effect.sync(() => {
        const target = recordsOf(resource)
        for (const by of namedBy.get(target) ?? []) remember(target, by, keyText(fields[by]), id)
      }),
      fallback.learn(resource, fields, id)
    )

  const beginStep = (resource: ResourceName, produced: ReadonlyMap<string, KeyMap<number>>) =>
    Effect.sync(() => {
      producedHere = { resource, values: produced }
    })

  const afterStep = (step: ResourceName, rows: ReadonlyArray<EndedRow>) =>
    Effect.sync(() => {
      producedHere = undefined
      const resource = recordsOf(step)
      for (const { outcome, row, values } of rows) {
        // A dry run's "skipped" without a parent problem marks rows it cannot compare: they would be sent.
        const bad = !endedWell(outcome.status, dryRun) ||
          (outcome.status === "skipped" && isParentProblem(outcome.error))
        for (const [by, value] of values) {
          if (normalKey(value) === "") continue
          if (bad) {
            const k = tableKey(resource, by)
            let t = troubled.get(k)
            if (t === undefined) troubled.set(k, t = new KeyMap())
            if (!t.has(value)) t.set(value, { row, status: outcome.status })
          } else if (dryRun && outcome.status === "created") {
            remember(resource, by, value.trim(), wouldBeCreated(resource, row))
          } else if (dryRun && outcome.recordId !== undefined) {
            remember(resource, by, value.trim(), outcome.recordId)
          }
        }
      }
    })

  const isParentProblem = (error: string | undefined) =>
    error !== undefined && parentProblems.has(withoutWarnings(error))

  return { resolver: { prepare, resolve, learn }, beginStep, afterStep, isParentProblem }
}
