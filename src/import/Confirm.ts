/**
 * `--verify`: confirming writes the API only queued (202). A questionnaire answer shows on its task "within up to
 * 5 minutes" (spec), so the rows stay `queued` until they are seen: the parent records are read again every
 * `pollMs` (one GET per distinct parent still waited on, never per row) until every row is found in the parent's
 * read-back items (`readBackIn`, grouped under `readBackItems`) or `waitMs` has passed: `confirmed` or
 * `unconfirmed`.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { Api } from "../client/Api.js"
import { formatDuration } from "../console/Progress.js"
import { type Resource, resource as resourceOf } from "../Resources.js"
import type { Outcome } from "../Status.js"
import { changes } from "../validate/Compare.js"

export interface Queued {
  readonly row: number
  /** What was sent, references resolved (the parent's id included). */
  readonly payload: Readonly<Record<string, unknown>>
  readonly outcome: Outcome
}

interface ConfirmOptions {
  readonly waitMs: number
  readonly pollMs: number
  /** Completes when waiting should end early (the rows left stay `queued`). */
  readonly stop?: Effect.Effect<void> | undefined
}

/** Whether a resource's queued writes can be seen again: read back inside a parent the API can GET. */
export const confirmable = (r: Resource): boolean =>
  r.readBackIn !== undefined && r.parent !== undefined && resourceOf(r.parent.resource).ops.includes("get")

/** The items a parent record holds for `r`, each group's shared properties (`itemID` …) copied onto its items. */
export const itemsIn = (
  r: Resource,
  parent: Readonly<Record<string, unknown>>
): ReadonlyArray<Record<string, unknown>> => {
  const groups = Array.isArray(parent[r.readBackIn!])
    ? (parent[r.readBackIn!] as ReadonlyArray<unknown>).filter(Predicate.isRecord)
    : []
  const nested = r.readBackItems
  if (nested === undefined) return groups
  return groups.flatMap((group) => {
    const { [nested]: items, ...shared } = group
    return (Array.isArray(items) ? items.filter(Predicate.isRecord) : []).map((item) => ({ ...shared, ...item }))
  })
}

/**
 * The final outcome of each queued row: `confirmed` when its parent shows it, else `unconfirmed` with the reason.
 * Rows left when `stop` completes keep their `queued` outcome (they are not in the result).
 */
export const confirmQueued = Effect.fn("Confirm.queued")(
  function*(r: Resource, rows: ReadonlyArray<Queued>, options: ConfirmOptions) {
    const api = yield* Api
    const parent = resourceOf(r.parent!.resource)
    const parentField = r.parent!.field
    const pending = new Map(rows.map((q) => [q.row, q]))
    const result = new Map<number, Outcome>()
    const problems = new Map<string, string>()
    const started = yield* Clock.currentTimeMillis
    const deadline = started + options.waitMs
    let stopped = false

    while (pending.size > 0) {
      const byParent = new Map<string, Array<Queued>>()
      for (const q of pending.values()) {
        const id = String(q.payload[parentField] ?? "")
        const list = byParent.get(id)
        if (list === undefined) byParent.set(id, [q])
        else list.push(q)
      }
      yield* Effect.forEach(
        byParent,
        ([id, waiting]) =>
          Effect.gen(function*() {
            const reply = yield* api.request({ method: "GET", path: `${parent.path}/${encodeURIComponent(id)}` })
            if (!reply.ok || !Predicate.isRecord(reply.result)) {
              problems.set(
                id,
                `the ${parent.name} record ${id} could not be read (${reply.error ?? `HTTP ${reply.status ?? "-"}`})`
              )
              return
            }
            problems.delete(id)
            const items = itemsIn(r, reply.result)
            for (const q of waiting) {
              const { [parentField]: _parent, ...wanted } = q.payload
              if (items.some((item) => changes(r, wanted, item).length === 0)) {
                pending.delete(q.row)
                result.set(q.row, { ...q.outcome, status: "confirmed" })
              }
            }
          }),
        { concurrency: 4, discard: true }
      )
      const now = yield* Clock.currentTimeMillis
      if (pending.size === 0 || now >= deadline) break
      const pause = Effect.sleep(Math.min(options.pollMs, deadline - now))
      if (options.stop === undefined) yield* pause
      else if (yield* Effect.raceFirst(Effect.as(pause, false), Effect.as(options.stop, true))) {
        stopped = true
        break
      }
    }
    if (!stopped) {
      for (const q of pending.values()) {
        const why = problems.get(String(q.payload[parentField] ?? "")) ??
          `not seen on the ${parent.name} record within ${formatDuration(options.waitMs)}`
        result.set(q.row, { ...q.outcome, status: "unconfirmed", error: why })
      }
    }
    return result
  }
)
