/**
 * The fleet's failures of a whole command: the fleet store cannot be reached or used (`Unavailable`), a name or
 * job that does not exist (`NotFound`), a missing or bad key (`Key`), data the store had and lost (`Lost`: evicted,
 * flushed; never tried again). Bad input stays a `UsageError`/`InputError`.
 */
import * as Schema from "effect/Schema"

export class FleetError extends Schema.TaggedError<FleetError>()("FleetError", {
  reason: Schema.Literal("Unavailable", "NotFound", "Key", "Locked", "Lost"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  get exitCode(): 2 {
    return 2
  }
}

/** What a driver's error says, in one line. */
export const describeCause = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)
