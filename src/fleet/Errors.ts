/**
 * The fleet's failures of a whole command: the fleet store cannot be reached or used for now (`Unavailable`: a lost
 * connection, a timeout, a server restarting or full; tried again, Transient.ts), the store answered with a refusal
 * that asking again will not change (`Refused`: a statement or script it rejects, a missing table, no permission; not
 * tried again), a name or job that does not exist (`NotFound`), a missing or bad key (`Key`), data the store had and
 * lost (`Lost`: evicted, flushed; never tried again). Which store failure is which is decided in one place,
 * `storeFailure` in Store.ts. Bad input stays a `UsageError`/`InputError`.
 */
import * as Schema from "effect/Schema"

export class FleetError extends Schema.TaggedError<FleetError>()("FleetError", {
  reason: Schema.Literal("Unavailable", "Refused", "NotFound", "Key", "Locked", "Lost"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  get exitCode(): 2 {
    return 2
  }
}

/** What a driver's error says, in one line. */
export const describeCause = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)
