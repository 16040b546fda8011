/** Step 3 of an import run: references resolved and existing records looked up; each valid row planned. */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import { Api, type ListFailed } from "../client/Api.js"
import { type Fingerprint, fingerprintKey } from "../export/Fingerprint.js"
import { keyProperty, keyText, normalKey, recordKey } from "../Identity.js"
import { resource as resourceOf, type ResourceName } from "../Resources.js"
import { changes } from "../validate/Compare.js"
import { type makeValidator } from "../validate/Validate.js"
import { confirmable, itemsIn } from "./Confirm.js"
import { type Input } from "./Input.js"
import type { ImportJob, Valid } from "./Job.js"
import { type JournalWriter, type StaleCheck } from "./Journal.js"
import { findRecords, type Found, listedAs } from "./Lookup.js"
import { type PlanCollector } from "./Plan.js"
import { plannedRow } from "./Refs.js"
import { type RunState, serverUnique, shownValue } from "./RunState.js"
import { type ScanResult, waitingRows } from "./Scan.js"
import { References } from "./Services.js"
import { absentBefore, beforeImage, createOnlyGiven, type Existing, isUpdate, plan } from "./WritePlan.js"

export interface SendInput {
  readonly job: ImportJob
  readonly resourceName: ResourceName
  readonly input: Input
  readonly validator: () => ReturnType<typeof makeValidator>
  readonly journal: JournalWriter
  readonly state: RunState
  readonly stale: StaleCheck | undefined
  /** The export's fingerprints, by `fingerprintKey`. */
  readonly bases: ReadonlyMap<string, Fingerprint> | undefined
  /** The rows came from an export of another server or account: why, and its manifest. */
  readonly foreign: { readonly why: string; readonly manifest: string } | undefined
  /** `--dry-run --plan`: each row's entry of the plan. */
  readonly collector: PlanCollector | undefined
}

/**
 * Preparing the sending (step 3): the references and the records the rows write, read in batches before anything
 * is sent (from what the scan gathered), and the plan of each row once its references are resolved. Sends nothing.
 */
export const prepareRows = Effect.fn("Import.prepareRows")(function*(s: SendInput, scan: ScanResult) {
  const { job } = s
  const r = resourceOf(s.resourceName)

  // 3. References and existing records.
  const resolver = yield* (yield* References).forRun(yield* Api)
  yield* resolver.prepare(scan.demands)
  // A list that cannot be read leaves its rows `failed` ("could not look … up"); an `ApiAborted` (credentials
  // rejected, token refused twice) is not a lookup problem: it aborts the run before any write.
  const lookup = (by: string, values: ReadonlySet<string>) =>
    values.size === 0
      ? Effect.succeed(undefined)
      : findRecords(r, by, values).pipe(
        Effect.map((found): Either.Either<Found, ListFailed> => Either.right(found)),
        Effect.catchTag("ListFailed", (e) => Effect.succeed(Either.left(e))),
        Effect.map((found) => ({ by, found }))
      )
  const byKey = r.key !== undefined ? yield* lookup(r.key, scan.keys) : undefined
  const byId = r.id !== undefined ? yield* lookup(r.id.name, scan.ids) : undefined
  // One lookup per alternate key for all the rows (filtered calls or a walk, whichever costs less), as for keys.
  const byAlternate: Array<{ by: string; found: Either.Either<Found, ListFailed>; severity: "invalid" | "warning" }> =
    []
  for (const [by, values] of scan.alternates) {
    const looked = yield* lookup(by, values)
    const severity = s.input.mapping?.alternateKeys[by] ??
      (serverUnique(r).some((f) => f.name === by) ? "invalid" : undefined)
    if (looked !== undefined && severity !== undefined) byAlternate.push({ ...looked, severity })
  }
  const listed = listedAs(r)
  /**
   * A server record holding the row's alternate key (its CPF/CNPJ) under another key: the row names a record
   * that already exists, and writing it would make a second one. `invalid` (the profile's choice) stops the row
   * unsent; `warning` notes it on the row. A list that cannot be read leaves the row `failed`, unsent.
   */
  const alternateCheck = (
    v: Valid
  ): { readonly invalid?: string; readonly failed?: string; readonly warnings: Array<string> } => {
    const warnings: Array<string> = []
    if (listed === undefined) return { warnings }
    const idProperty = r.id !== undefined ? keyProperty(listed, r.id.name) : undefined
    const keyOf = r.key !== undefined ? keyProperty(listed, r.key) : undefined
    for (const a of byAlternate) {
      const value = keyText(v.payload[a.by]).trim()
      if (value === "") continue
      if (Either.isLeft(a.found)) {
        return { failed: `${a.by}: could not check "${value}" against the server: ${a.found.left.message}`, warnings }
      }
      const others = (a.found.right.get(value) ?? []).filter((record) => {
        if (v.id !== undefined && idProperty !== undefined && recordKey(record, idProperty) === String(v.id)) {
          return false
        }
        return keyOf === undefined || v.key === undefined || normalKey(recordKey(record, keyOf)) !== normalKey(v.key)
      })
      if (others.length === 0) continue
      const record = others[0]!
      const named = [
        keyOf !== undefined && recordKey(record, keyOf) !== "" ? `${r.key} "${recordKey(record, keyOf)}"` : undefined,
        idProperty !== undefined ? `id ${recordKey(record, idProperty)}` : undefined
      ].filter((x) => x !== undefined).join(", ")
      const more = others.length > 1 ? ` (and ${others.length - 1} more)` : ""
      const unique = serverUnique(r).find((f) => f.name === a.by)
      const message = unique !== undefined
        ? `${a.by}: the service keeps one ${r.title.toLowerCase().replace(/s$/, "")} per ${a.by}, and "${
          shownValue(unique, value)
        }" already has one: ${named || "another record"}${more}; delete that one first, or give its ${r.key ?? "key"}`
        : `${a.by}: "${value}" is already on the server, in the record of ${
          named || "another key"
        }${more}: ${a.by} is an alternate key, so this row would make a second record of it`
      if (a.severity === "invalid") return { invalid: message, warnings }
      warnings.push(message)
    }
    return { warnings }
  }
  const existingOf = (v: Valid): Existing => {
    const from = (l: { by: string; found: Either.Either<Found, ListFailed> } | undefined, value: string): Existing => {
      if (l === undefined) return { _tag: "NotLooked" }
      if (Either.isLeft(l.found)) return { _tag: "Unavailable", message: l.found.left.message }
      return { _tag: "Found", records: l.found.right.get(value) ?? [], by: l.by, value }
    }
    if (v.key !== undefined) return from(byKey, v.key.trim())
    if (v.id !== undefined) return from(byId, String(v.id))
    return { _tag: "NotLooked" }
  }

  // Rows naming records that other rows of the file create wait for a later pass.
  const waiting = new Map(
    yield* waitingRows(
      scan,
      (by, value) =>
        Effect.map(
          resolver.resolve({ field: "", column: "", resource: r.name, by, values: [value], list: false }),
          Either.isRight
        )
    )
  )

  // A sub-collection's items are read inside their parent (a task's products): one GET per parent, before its
  // rows are planned, so that an upsert of an item the parent already holds as the file gives it sends nothing, and
  // a delete of an item it does not hold sends nothing either.
  const parent = r.parent !== undefined ? resourceOf(r.parent.resource) : undefined
  const readsItems = (job.mode === "upsert" || job.mode === "delete") && r.kind === "subcollection" &&
    r.key !== undefined && confirmable(r)
  const api = yield* Api
  const parentItems = yield* Effect.cachedFunction((id: string) =>
    Effect.map(
      api.request({ method: "GET", path: `${parent!.path}/${encodeURIComponent(id)}` }),
      (reply): Either.Either<ReadonlyArray<Record<string, unknown>> | undefined, string> =>
        reply.ok && Predicate.isRecord(reply.result)
          ? Either.right(itemsIn(r, reply.result))
          // No such parent: the write says so itself, as it did before anything was read.
          : reply.status === 404
          ? Either.right(undefined)
          : Either.left(
            `the ${parent!.name} record ${id} could not be read (${reply.error ?? `HTTP ${reply.status ?? "-"}`})`
          )
    )
  )
  /** The parent's items with the row's key, as read now; undefined when the resource is not read that way. */
  const itemsOf = (payload: Readonly<Record<string, unknown>>) =>
    Effect.gen(function*() {
      if (!readsItems) return undefined
      const parentId = payload[r.parent!.field]
      const key = payload[r.key!]
      // A parent a dry run would create (`plannedRow`) has no items yet to read.
      if (parentId === undefined || parentId === null || parentId === "" || key === undefined) return undefined
      if (plannedRow(parentId) !== undefined) return undefined
      const read = yield* parentItems(String(parentId))
      if (Either.isLeft(read)) return { _tag: "Unavailable", message: read.left } satisfies Existing
      if (read.right === undefined) return undefined
      const records = read.right.filter((item) => changes(r, { [r.key!]: key }, item).length === 0)
      return { _tag: "Found", records, by: r.key!, value: String(key) } satisfies Existing
    })

  /** The row's write, its references resolved into `payload`, and the before-image of the record it changes. */
  const planRow = (v: Valid, payload: Readonly<Record<string, unknown>>, items?: Existing) => {
    const existing = items ?? existingOf(v)
    const earlier = s.state.priorSending.get(v.row)
    const action = plan({
      resource: r,
      mode: job.mode,
      dryRun: job.dryRun || job.applying !== undefined,
      row: { row: v.row, payload, key: v.key, id: v.id, files: v.files },
      existing,
      interrupted: earlier?.intent,
      interruptedAbsent: earlier?.absent,
      ...(s.stale !== undefined
        ? { base: s.bases?.get(fingerprintKey(v.key, v.id) ?? ""), onConflict: s.stale.onConflict }
        : {}),
      sendWriteOnly: job.sendWriteOnly
    })
    // A row an earlier session left in flight keeps that session's before-image: the record read now may already
    // hold that session's write.
    const before = earlier !== undefined ? earlier.before : beforeImage(action, existing)
    // So does its proof that the record was not there before (the lookup now may find that session's record).
    const absent = earlier !== undefined ? earlier.absent === true : absentBefore(action, existing)
    // A write of an earlier session found landed: the record as the lookup found it is the record as it left it.
    const found = existing._tag === "Found" && existing.records.length === 1 ? existing.records[0] : undefined
    // Create-only fields (passwords) the row gives but an update leaves out: noted on the row.
    const withheld = job.sendWriteOnly === true || !isUpdate(action) ? [] : createOnlyGiven(r, payload)
    return { action, before, absent, found, withheld, existing }
  }
  return { total: scan.total, resolver, waiting, planRow, itemsOf, alternateCheck }
})
