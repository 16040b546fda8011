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
