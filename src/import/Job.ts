/**
 * What one import run is asked to do (`ImportJob`: data only), what it ends with, and how it can fail. What it runs
 * with (journal, resolver, messages, progress, stop, plan sink) are services: `Services.ts`.
 */
import { type ApiAborted } from "../client/Api.js"
import type { InputError, RunError } from "../Errors.js"
import { type UsageError } from "../Errors.js"
import type { WriteError } from "../files/Write.js"
import { type ResourceName } from "../Resources.js"
import type { RowResult } from "../validate/Validate.js"
import { type RowSettings } from "./Input.js"
import { type AppliedPlan, type Mode, type OnConflict, type ParentRun, type ReadSettings } from "./Journal.js"
import { type ExportOrigin } from "./Origin.js"
import { type LoadedPlan } from "./Plan.js"
import { type Summary } from "./Report.js"

export interface ImportJob extends RowSettings {
  /** `import`, `rerun`, `resume`, `onboard` …: recorded in the journal and the summary. */
  readonly command: string
  readonly resource: ResourceName
  readonly file: string
  readonly read: ReadSettings
  readonly mode: Mode
  readonly dryRun: boolean
  readonly verify: boolean
  /** Created for a new run (refused if it already holds one). */
  readonly runDir: string
  /** Rows are numbered by this column of the source (`_row`: a rerun keeps the original row numbers). */
  readonly rowColumn?: string | undefined
  readonly parent?: ParentRun | undefined
  /** After a stop (`RunStop`), how long rows in flight may take to finish before they are left in doubt (default 10 s). */
  readonly graceMs?: number | undefined
  /** Rows in progress at once (default 32); the client bounds requests in flight and the budget itself. */
  readonly concurrency?: number | undefined
  /** `--concurrency` (the client's requests in flight) when given: recorded so that `resume` keeps it. */
  readonly clientConcurrency?: number | undefined
  /** With `verify`: how long queued rows are waited for (default 6 min: the spec's "within up to 5 minutes"). */
  readonly verifyWaitMs?: number | undefined
  /** With `verify`: between two reads of the records that should show the queued rows (default 10 s). */
  readonly verifyPollMs?: number | undefined
  /**
   * The export fingerprints the rows are checked against (update, upsert); default: those of the export that
   * wrote `file`, when it is one (a rerun passes its parent's).
   */
  readonly fingerprints?: string | undefined
  /**
   * The export the rows came from (default: the export that wrote `file`, when it is one; a rerun passes its
   * parent's): its ids are not used against another server or account (`Origin.ts`).
   */
  readonly origin?: ExportOrigin | undefined
  /** `--merge` / `--overwrite`: what a record changed on the server since the export gets (default `stop`). */
  readonly onConflict?: OnConflict | undefined
  /**
   * Whether the run holds the writer lock of its (server, account, resource) (default true, Locks.ts): a fleet
   * worker does not, its leases keep the chunks of a job apart and they run at once by design.
   */
  readonly writerLock?: boolean | undefined
  /**
   * `--send-write-only`: an update sends create-only fields (Resources.ts: passwords) too. Without it they are
   * sent when a record is created only, and the report says a row's value was not sent.
   */
  readonly sendWriteOnly?: boolean | undefined
  /**
   * `--dry-run --plan PLAN`: the dry run makes a plan (Plan.ts), for this file; the `PlanSink` writes it there (an
   * onboarding's sink gathers its steps' plans in one file instead).
   */
  readonly planOut?: string | undefined
  /**
   * `fsm-bulk apply PLAN`: the plan the run applies. A row is sent only when it is in the plan, the record reads as
   * the plan read it and the write is the planned one; otherwise it is `conflict`, not sent.
   */
  readonly applying?: {
    readonly plan: LoadedPlan
    readonly approvedBy?: string | undefined
    /** `--force-base-url`: the plan was made against another server or account (a rehearsal on a copy). */
    readonly otherTarget?: boolean | undefined
    /** The plan's signer, as `apply` checked it (recorded in the journal and the summary). */
    readonly signer?: AppliedPlan["signer"] | undefined
  } | undefined
}

export interface RunResult {
  readonly runDir: string
  readonly summary: Summary
  /** 0 every row ended well, 1 some did not, 3 the run stopped before every row was sent. */
  readonly exitCode: number
  readonly interrupted: boolean
}

export type ImportError = ApiAborted | InputError | RunError | WriteError | UsageError

export type Valid = Extract<RowResult, { _tag: "Valid" }>
