/**
 * Plan files (`import … --dry-run --plan PLAN`, `fsm-bulk apply PLAN`): what a dry run saw and would send, row by
 * row, bound to the input's bytes (sha256), the mapping profile, the target and the options that change what is
 * sent. The dry run collects one entry per row (`PlanCollector`) and writes the file at its end; `apply` reads it
 * back (`readPlan`, its own sha256 kept for the journal) and, per row, lets the write go only when the record as
 * read now is the record the plan read and the write is the one the plan shows (`planVerdict`); anything else is
 * a `conflict`, not sent.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as Path from "node:path"
import { UsageError } from "../Errors.js"
import { fieldHashes, hashText } from "../export/Fingerprint.js"
import { decodeJsonText } from "../files/JsonFile.js"
import { type WriteError, writeFileAtomic } from "../files/Write.js"
import { listedAs } from "../Identity.js"
import type { Resource } from "../Resources.js"
import { Status } from "../Status.js"
import { valueText } from "../validate/Compare.js"
import { Intent, Mode, ParseSettings, PlanTarget, ReadSettings, SourceInfo } from "./Journal.js"
import { plannedRow } from "./Refs.js"
import type { Action, Existing } from "./WritePlan.js"
import { intentOf } from "./WritePlan.js"

const planFormat = "fsm-bulk-plan"

const Id = Schema.Union(Schema.String, Schema.Number)

/**
 * The record a row names, as the dry run read it: `absent` (looked up, not there), `record` (one record: its id,
 * `dateLastUpdate` and a hash per field the server lists back), or `unread` (the API cannot list it, or the lookup
 * failed): nothing to compare at apply time.
 */
const PlanState = Schema.Union(
  Schema.Struct({ read: Schema.Literal("absent") }),
  Schema.Struct({
    read: Schema.Literal("record"),
    id: Schema.optional(Id),
    dateLastUpdate: Schema.optional(Schema.String),
    /** Per field (write names), the short hash of its value as read (`Fingerprint.fieldHashes`). */
    fields: Schema.Record({ key: Schema.String, value: Schema.String })
  }),
  Schema.Struct({ read: Schema.Literal("unread") })
)
type PlanState = typeof PlanState.Type

const PlanChange = Schema.Struct({ field: Schema.String, from: Schema.Unknown, to: Schema.Unknown })

/**
 * A reference a row's write carries, as the dry run resolved it: the cell's values and, per value, the record's
 * id, or `{resource, row}` when it is the record an earlier step's row of an onboarding would create (the dry run
 * cannot read it). `apply` sends the row only when each resolves to the same record now: that id, or the record
 * that very row created.
 */
export const PlanRef = Schema.Struct({
  field: Schema.String,
  to: Schema.Array(Schema.Union(Id, Schema.Struct({ resource: Schema.String, row: Schema.Number })))
})
export type PlanRef = typeof PlanRef.Type

export const PlanRow = Schema.Struct({
  row: Schema.Number,
  /** The status the dry run gave the row (what the apply should end with). */
  status: Status,
  /** The write the row sends (`create`, `patch`, `update`, `upsert`, `delete`, `put`); absent: nothing is sent. */
  intent: Schema.optional(Intent),
  key: Schema.optional(Schema.String),
  id: Schema.optional(Id),
  /** The server id of the record the write changes, when one was found. */
  recordId: Schema.optional(Id),
  state: Schema.optional(PlanState),
  /** The fields the write changes: the value as read, and the value the row sends. */
  changes: Schema.optional(Schema.Array(PlanChange)),
  /** The write's fields and values (a create's body), hashed: what the apply must send again. */
  write: Schema.optional(Schema.String),
  /** The references the write carries, resolved (absent in plans made before they were recorded). */
  refs: Schema.optional(Schema.Array(PlanRef)),
  error: Schema.optional(Schema.String)
})
export type PlanRow = typeof PlanRow.Type

export const PlanFile = Schema.Struct({
  format: Schema.Literal(planFormat),
  version: Schema.Literal(1),
  tool: Schema.Literal("fsm-bulk"),
  toolVersion: Schema.optional(Schema.String),
  /** `import`, or `onboard` for one step of an onboarding. */
  command: Schema.String,
  created: Schema.String,
  resource: Schema.String,
  mode: Mode,
  /** The options that change what is sent. */
  options: Schema.Struct({ sendWriteOnly: Schema.Boolean }),
  source: SourceInfo,
  /** How the file was read, the mapping profile (its file, sha256 and content) included. */
  read: ReadSettings,
  parse: ParseSettings,
  formats: Schema.Unknown,
  target: PlanTarget,
  rows: Schema.Number,
  counts: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /** One entry per row of the input, in row order. */
  plan: Schema.Array(PlanRow)
})
export type PlanFile = typeof PlanFile.Type

/**
 * An onboarding's plan (`onboard … --dry-run --plan PLAN`): its workbook or directory, the target, and one step
 * per resource in the order the onboarding runs them, each an import's plan (its input's sha256, how it was read,
 * its profile, its rows).
 */
export const OnboardPlanFile = Schema.Struct({
  format: Schema.Literal(planFormat),
  version: Schema.Literal(1),
  tool: Schema.Literal("fsm-bulk"),
  toolVersion: Schema.optional(Schema.String),
  command: Schema.Literal("onboard"),
  created: Schema.String,
  /** The workbook or directory (absolute). */
  input: Schema.String,
  target: PlanTarget,
  options: Schema.Struct({ sendWriteOnly: Schema.Boolean }),
  rows: Schema.Number,
  counts: Schema.Record({ key: Schema.String, value: Schema.Number }),
  steps: Schema.Array(PlanFile)
})
export type OnboardPlanFile = typeof OnboardPlanFile.Type

/**
 * A plan is applied only against the server and account it read, unless `otherTarget` (`--force-base-url`: a plan
 * rehearsed on a copy). An embedded sandbox's plan applies to the embedded sandbox of the apply (its address is new
 * each time; both start from the same sample records). Checked before anything is sent — for an onboarding before
 * its first step — by the one rule for import and onboarding plans alike.
 */
export const ensurePlanTarget = Effect.fn("Plan.ensureTarget")(function*(
  plan: { readonly file: string; readonly content: { readonly target: PlanTarget } },
  api: { readonly baseUrl: string; readonly account?: string | undefined; readonly embedded?: boolean | undefined },
  otherTarget: boolean
) {
  const target = plan.content.target
  if (otherTarget || (target.embedded === true && api.embedded === true)) return
  const sameServer = target.baseUrl === api.baseUrl
  const sameAccount = target.account === undefined || target.account === api.account
  if (sameServer && sameAccount) return
  return yield* new UsageError({
    message: `the plan ${plan.file} was made against ${
      !sameServer ? target.baseUrl : `another account of ${target.baseUrl}`
    }, not ${api.baseUrl}${
      !sameServer ? "" : " with these credentials"
    }: nothing was sent. Apply it where it was made, or pass --force-base-url to apply a plan rehearsed on a copy (each row is still sent only if the record here reads as the plan read it)`
  })
})

/** A plan read back for `apply`: the file, its sha256 (recorded by the run) and its rows by number. */
export interface LoadedPlan {
  readonly file: string
  readonly sha256: string
  readonly content: PlanFile
  readonly rows: ReadonlyMap<number, PlanRow>
}

/** An onboarding's plan read back: the file, its sha256, and each step as the plan of its import. */
export interface LoadedOnboardPlan {
  readonly file: string
  readonly sha256: string
  readonly content: OnboardPlanFile
  readonly steps: ReadonlyMap<string, LoadedPlan>
}

const loaded = (file: string, sha256: string, content: PlanFile): LoadedPlan => ({
  file,
  sha256,
  content,
  rows: new Map(content.plan.map((r) => [r.row, r]))
})

/** Either kind of plan: an import's or an onboarding's. */
export const readAnyPlan = Effect.fn("Plan.readAny")(function*(file: string) {
  const path = Path.resolve(file)
  const bytes = yield* Effect.tryPromise({
    try: () => readFile(path),
    catch: (e) =>
      new UsageError({ message: `${path}: cannot read the plan (${(e as NodeJS.ErrnoException).code ?? String(e)})` })
  })
  const content = yield* Effect.mapError(
    decodeJsonText(path, bytes.toString("utf8"), Schema.Union(PlanFile, OnboardPlanFile)),
    (e) =>
      new UsageError({
        message:
          `${path}: not a plan written by \`import --dry-run --plan\` or \`onboard --dry-run --plan\` (${e.detail})`
      })
  )
  const sha256 = createHash("sha256").update(bytes).digest("hex")
  if ("steps" in content) {
    return {
      kind: "onboard",
      plan: {
        file: path,
        sha256,
        content,
        steps: new Map(content.steps.map((s) => [s.resource, loaded(path, sha256, s)]))
      } satisfies LoadedOnboardPlan as LoadedOnboardPlan
    } as const
  }
  return { kind: "import", plan: loaded(path, sha256, content) } as const
})

/** An import's plan (`resume` of a run that applies one reads it again). */
export const readPlan = Effect.fn("Plan.read")(function*(file: string) {
  const any = yield* readAnyPlan(file)
  if (any.kind === "import") return any.plan
  return yield* new UsageError({
    message: `${any.plan.file} is an onboarding's plan: apply it with \`fsm-bulk apply\`, which runs the onboarding`
  })
})

// --- what a row's entry holds ------------------------------------------------------------------------------------

/** The record the lookup found for a row, as a plan keeps it. */
export const stateOf = (r: Resource, existing: Existing): PlanState => {
  if (existing._tag !== "Found") return { read: "unread" }
  if (existing.records.length === 0) return { read: "absent" }
  const record = existing.records[0]!
  const listed = listedAs(r) ?? r
  const idName = listed.id !== undefined ? listed.id.name : undefined
  const id = idName !== undefined ? (record[idName] ?? record["id"]) : record["id"]
  const d = record["dateLastUpdate"]
  return {
    read: "record",
    ...(typeof id === "string" || typeof id === "number" ? { id } : {}),
    ...(typeof d === "string" && d !== "" ? { dateLastUpdate: d } : {}),
    fields: fieldHashes(listed, record)
  }
}

const canonical = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(canonical)
  if (typeof v === "object" && v !== null) {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
  }
  return v
}

/**
 * A write as the plan binds it: its intent, the record it names, and the fields it sends with their values —
 * except the values of reference fields, which name records by their server ids (a record another row of the
 * file creates gets its id only when it is created, so those are compared by name: the input's bytes fix them).
 */
export const writeOf = (r: Resource, action: Action): string | undefined => {
  const intent = intentOf(action)
  if (intent === undefined) return undefined
  const refs = new Set(r.fields.filter((f) => f.ref !== undefined).map((f) => f.name))
  const fields = (body: unknown): unknown => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) return canonical(body)
    return Object.fromEntries(
      Object.entries(body).sort(([a], [b]) => a.localeCompare(b)).map((
        [name, value]
      ) => [name, refs.has(name) ? "(reference)" : canonical(value)])
    )
  }
  const shape = (() => {
    switch (action._tag) {
      case "Post":
        return { body: fields(action.body) }
      case "PutCollection":
        return { body: fields(action.body) }
      case "Patch":
        return { id: action.id, body: fields(Object.fromEntries(action.changes.map((c) => [c.field, c.to]))) }
      case "PutId":
        return { id: action.id, body: fields(action.body) }
      case "Delete":
        return { id: action.id }
      case "PutPath":
      case "DeletePath":
        return { body: fields(action.body) }
      case "Settle":
        return {}
    }
  })()
  return hashText(JSON.stringify({ intent, ...shape }))
}

/** The changes a write makes, as a plan shows them (values in the form the API lists them). */
export const changesOf = (r: Resource, action: Action): ReadonlyArray<typeof PlanChange.Type> | undefined => {
  const listed = listedAs(r) ?? r
  const shown = (field: string, v: unknown) => {
    const f = listed.fields.find((x) => x.name === field)
    return v === undefined ? null : f !== undefined ? valueText(f, v) : v
  }
  switch (action._tag) {
    case "Patch":
    case "PutId":
    case "PutCollection":
    case "PutPath":
      return action.changes !== undefined && action.changes.length > 0
        ? action.changes.map((c) => ({ field: c.field, from: shown(c.field, c.from), to: shown(c.field, c.to) }))
        : undefined
    default:
      return undefined
  }
}

/** A row's resolved reference as a plan keeps it: stand-ins of records an onboarding would create name their row. */
export const planRefOf = (field: string, resolved: unknown): PlanRef => ({
  field,
  to: (Array.isArray(resolved) ? resolved : [resolved]).map((id) => plannedRow(id) ?? (id as string | number))
})

const refText = (to: PlanRef["to"][number]): string =>
  typeof to === "object" ? `the record row ${to.row} of ${to.resource} creates` : `id ${String(to)}`

/**
 * Why an applied row is not sent because a reference resolves to another record than the plan's, or undefined.
 * `createdBy` gives the id an earlier step's row created in this run (undefined: it created nothing).
 */
export const refsVerdict = (
  planned: PlanRow | undefined,
  now: ReadonlyArray<PlanRef>,
  createdBy: (resource: string, row: number) => string | number | undefined
): string | undefined => {
  if (planned?.refs === undefined) return undefined
  for (const then of planned.refs) {
    const here = now.find((r) => r.field === then.field)
    const expected = then.to.map((t) => typeof t === "object" ? createdBy(t.resource, t.row) : t)
    const got = here?.to ?? []
    const same = expected.length === got.length &&
      expected.every((e, i) => e !== undefined && typeof got[i] !== "object" && String(e) === String(got[i]))
    if (!same) {
      return `${then.field} refers to another record than the plan's (planned: ${
        then.to.map(refText).join(", ")
      }; now: ${got.length === 0 ? "none" : got.map(refText).join(", ")}): nothing was sent; make a new plan`
    }
  }
  return undefined
}

// --- apply: does the row still match its plan? ------------------------------------------------------------------

const describeState = (s: PlanState): string =>
  s.read === "absent" ? "absent" : s.read === "unread" ? "not read" : `id ${String(s.id ?? "?")}`

/**
 * Why a row of an applied plan is not sent (`conflict`), or undefined when the record as read now is the one the
 * plan read and the write is the planned one. `planned` undefined: the row is not in the plan.
 */
export const planVerdict = (
  r: Resource,
  row: number,
  planned: PlanRow | undefined,
  action: Action,
  existing: Existing
): string | undefined => {
  if (planned === undefined) return `row ${row} is not in the plan: nothing was sent`
  const intent = intentOf(action)
  // Nothing to send (unchanged, not found, a write of an interrupted session found landed): the row ends as it
  // reads now, and nothing outside the plan can be written.
  if (intent === undefined) return undefined
  const now = stateOf(r, existing)
  const then = planned.state
  if (then !== undefined && then.read !== "unread") {
    if (now.read !== then.read) {
      return `the record changed on the server since the plan (then ${describeState(then)}, now ${
        describeState(now)
      }): nothing was sent; make a new plan`
    }
    if (now.read === "record" && then.read === "record") {
      const changed = [...new Set([...Object.keys(then.fields), ...Object.keys(now.fields)])]
        .filter((f) => then.fields[f] !== now.fields[f])
      if (String(now.id) !== String(then.id)) {
        return `the record with this key is another one since the plan (id ${String(then.id)} then, ${
          String(now.id)
        } now): nothing was sent; make a new plan`
      }
      if (changed.length > 0) {
        return `the record changed on the server since the plan (${
          changed.join(", ")
        }): nothing was sent; make a new plan`
      }
    }
  }
  if (intent !== planned.intent || writeOf(r, action) !== planned.write) {
    return `the write is not the planned one (planned: ${planned.intent ?? "nothing"} → now: ${
      intent ?? "nothing"
    }): nothing was sent; make a new plan`
  }
  return undefined
}

// --- the dry run's side: collecting and writing -----------------------------------------------------------------

export interface PlanCollector {
  readonly add: (entry: PlanRow) => void
  readonly write: (
    head: Omit<PlanFile, "plan" | "rows" | "counts" | "format" | "version" | "tool">
  ) => Effect.Effect<void, WriteError>
}

/** A plan written to its file, atomically. */
export const writePlanFile = (file: string, content: PlanFile): Effect.Effect<void, WriteError> =>
  writeFileAtomic(Path.resolve(file), JSON.stringify(content, null, 1) + "\n")

/**
 * Collects a dry run's rows (memory grows with the file: one small entry per row) and hands the plan to `save`
 * (its file, or an onboarding that gathers its steps' plans in one file: `Services.ts`' `PlanSink`).
 */
export const makePlanCollector = (
  save: (content: PlanFile) => Effect.Effect<void, WriteError>
): PlanCollector => {
  const rows = new Map<number, PlanRow>()
  return {
    add: (entry) => void rows.set(entry.row, entry),
    write: (head) => {
      const plan = [...rows.values()].sort((a, b) => a.row - b.row)
      const counts: Record<string, number> = {}
      for (const r of plan) counts[r.status] = (counts[r.status] ?? 0) + 1
      const content: PlanFile = {
        format: planFormat,
        version: 1,
        tool: "fsm-bulk",
        ...head,
        rows: plan.length,
        counts,
        plan
      }
      return save(content)
    }
  }
}
