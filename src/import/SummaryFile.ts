/**
 * What other commands read back from a run's `summary.json` (written by Report.ts), as Schemas: a damaged or
 * older summary is a failure that names the file, never a cast. Properties not listed here are ignored, so a
 * summary that gained fields still reads. (`report RUN_DIR` reads its own view, report/RunData.ts.)
 */
import * as Schema from "effect/Schema"
import { ProfileRecord } from "../mapping/Profile.js"
import { isResourceName } from "../Resources.js"
import { Status } from "../Status.js"
import { Mode } from "./Journal.js"

/** The resource and mode of the run: `rerun` reads them from a `validate` run, which has no journal. */
export const RunKind = Schema.Struct({
  resource: Schema.String.pipe(Schema.filter(isResourceName, { message: () => "not a resource of the API" })),
  mode: Mode,
  /** The run read its file through a mapping profile (`--map`): a rerun reads its report through the same. */
  mapping: Schema.optional(ProfileRecord)
})

/** The rows, counts and traffic of a run: an onboarding keeps them for a step that failed as a whole. */
export const RunCounts = Schema.Struct({
  rows: Schema.Number,
  counts: Schema.Record({ key: Status, value: Schema.Number }),
  requests: Schema.Number,
  rateLimited: Schema.Number,
  retries: Schema.Number
})
export type RunCounts = typeof RunCounts.Type
