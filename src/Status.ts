/**
 * Row statuses (the contract's list, plus `valid` for `fsm-bulk validate`) and the compact outcome kept per row:
 * what the report's tool columns show and what the journal's `done` lines carry.
 */
import * as Schema from "effect/Schema"

export const Status = Schema.Literal(
  "created",
  "updated",
  "unchanged",
  "deleted",
  "queued",
  "confirmed",
  "unconfirmed",
  "invalid",
  "failed",
  "in-doubt",
  "skipped",
  // Not sent: the server's record changed since the export the row comes from (stale edit); see `Stale.ts`.
  "conflict",
  // Extension: `validate` reports rows that passed every check as `valid`.
  "valid"
)
export type Status = typeof Status.Type

/** Statuses after which a row needs nothing more (contract, "Exit codes"). */
const wellEnded: ReadonlySet<Status> = new Set<Status>([
  "created",
  "updated",
  "unchanged",
  "deleted",
  "queued",
  "confirmed",
  "valid"
])

/**
 * Whether a row ended well. In a dry run `skipped` is also fine: it marks rows whose current state the API
 * cannot read back (sub-collections, actions), which a dry run compares with nothing.
 */
export const endedWell = (status: Status, dryRun: boolean): boolean =>
  wellEnded.has(status) || (dryRun && status === "skipped")

/** The outcome of one row: the report's tool columns. */
export const Outcome = Schema.Struct({
  status: Status,
  http: Schema.optional(Schema.Number),
  requestId: Schema.optional(Schema.String),
  attempts: Schema.optional(Schema.Number),
  retryOutcomes: Schema.optional(Schema.Array(Schema.String)),
  recordId: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  error: Schema.optional(Schema.String),
  /** Dry run only: the fields that would change. */
  changes: Schema.optional(Schema.String)
})
export type Outcome = typeof Outcome.Type

/** Counts per status, every status present (zeros included) so summaries have a stable shape. */
export const countStatuses = (outcomes: Iterable<Status>): Record<Status, number> => {
  const counts = Object.fromEntries(Status.literals.map((s) => [s, 0])) as Record<Status, number>
  for (const s of outcomes) counts[s] += 1
  return counts
}

/**
 * A dry run's statuses as its reports, summaries and pages show them: what the row *would* get, never what happened
 * (`would-create`, not `created`). Statuses that are true of a rehearsal as well (`unchanged`, `invalid`, `skipped`,
 * `conflict`, `failed`) stay as they are. The journal keeps the contract's statuses; only what people read changes.
 */
export const plannedStatuses = {
  created: "would-create",
  updated: "would-update",
  deleted: "would-delete",
  queued: "would-queue"
} as const satisfies Partial<Record<Status, string>>

/** A status as a report shows it: in a dry run, its planned form. */
export const shownStatus = (status: Status, dryRun: boolean): string =>
  dryRun ? (plannedStatuses as Partial<Record<Status, string>>)[status] ?? status : status

const fromPlanned: ReadonlyMap<string, Status> = new Map(
  Object.entries(plannedStatuses).map(([status, planned]) => [planned, status as Status])
)

/** A report's `_status` text read back (`would-create` → `created`); any other text as it is, lower-cased. */
export const statusOfShown = (text: string): string => {
  const lower = text.trim().toLowerCase()
  return fromPlanned.get(lower) ?? lower
}

/** Counts keyed by the statuses as shown (a dry run's planned forms), zeros left out, in the contract's order. */
export const shownCounts = (counts: Readonly<Record<string, number>>, dryRun: boolean): Record<string, number> =>
  Object.fromEntries(
    Object.entries(counts).filter(([, n]) => n > 0).map(([s, n]) => [shownStatus(s as Status, dryRun), n])
  )
