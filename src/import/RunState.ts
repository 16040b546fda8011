/** An import run's mutable state (what an earlier session left, rows in flight, stopped, aborted) and the scan's needs read from it. */
import { type ApiAborted } from "../client/Api.js"
import { type Field, refKey, type Resource, resource as resourceOf } from "../Resources.js"
import { type Outcome } from "../Status.js"
import { confirmable } from "./Confirm.js"
import type { ImportJob } from "./Job.js"
import { type JournalContents, type Sending } from "./Journal.js"
import { listedAs } from "./Lookup.js"
import { type ScanNeeds } from "./Scan.js"
import { isPathWrite } from "./WritePlan.js"

export interface RunState {
  /** The outcomes an earlier session reached (resume). */
  readonly prior: ReadonlyMap<number, Outcome>
  /**
   * Only for a run whose report cannot follow its sending (rows sent in later passes, `--verify`): each row's
   * outcome, for the report written at the end from the source read again. Empty otherwise: outcomes travel with
   * the stream that sends the rows, to the report.
   */
  readonly late: Map<number, Outcome>
  /** Rows whose write was announced in this session and whose answer has not come. */
  readonly inFlight: Set<number>
  /**
   * The outcome of each row this session finished, set as its `done` line is handed to the journal and kept until
   * the row's report line is out: a row interrupted after that (a stop's grace ran out during the write) is
   * reported with it, as the journal has it.
   */
  readonly settled: Map<number, Outcome>
  /**
   * Rows whose write left for the server in this session (an attempt passed its permit and budget): only these,
   * and rows an earlier session left in flight, may have reached it. A row announced but still queued when the run
   * stopped was never sent.
   */
  readonly left: Set<number>
  /** Rows an earlier session left in flight (resume): their `sending` line. */
  readonly priorSending: Map<number, Sending>
  /** Rows an earlier session finished. */
  readonly priorDone: ReadonlySet<number>
  /** Rows an earlier session sent that `--verify` still has to confirm (resume): they are prepared and confirmed. */
  readonly queuedBefore: (row: number) => boolean
  stopped: boolean
  /** Set when a write failed because the whole run must stop (credentials rejected …). */
  aborted: ApiAborted | undefined
}

/**
 * A row an earlier session left in flight whose read before found no record: the record its write lands on now
 * is the one that session created, so the run created it, whatever this session's answer says (a resent upsert
 * answers 200).
 */
export const createdBy = (outcome: Outcome, earlier: Sending | undefined): Outcome =>
  earlier?.absent === true && outcome.status === "updated" ? { ...outcome, status: "created" } : outcome

/** Whether the run confirms the rows the API only queued (`--verify`). */
export const verifyingOf = (job: ImportJob) => job.verify && !job.dryRun && confirmable(resourceOf(job.resource))

export const makeRunState = (prior: JournalContents | undefined, verifying: boolean): RunState => {
  const outcomes = new Map<number, Outcome>()
  const priorSending = new Map<number, Sending>()
  const priorDone = new Set<number>()
  for (const [row, s] of prior?.rows ?? []) {
    if (s.last === "done" && s.outcome !== undefined) {
      outcomes.set(row, s.outcome)
      priorDone.add(row)
    } else if (s.last === "sending" && s.sending !== undefined) priorSending.set(row, s.sending)
  }
  const queuedBefore = (row: number) => verifying && priorDone.has(row) && outcomes.get(row)?.status === "queued"
  return {
    prior: outcomes,
    late: new Map(),
    inFlight: new Set(),
    settled: new Map(),
    left: new Set(),
    priorSending,
    priorDone,
    queuedBefore,
    stopped: false,
    aborted: undefined
  }
}

/**
 * What the scan gathers for the lookups. Read before write: the records an update, upsert or delete touches are
 * read first, in batches, for their before-images and so that rows equal to the server are `unchanged` and send
 * nothing. Sub-collections and actions cannot be read back.
 */
export const scanNeeds = (
  job: ImportJob,
  state: RunState,
  alternateKeys: Readonly<Record<string, unknown>> | undefined
): ScanNeeds => {
  const r = resourceOf(job.resource)
  const listable = listedAs(r) !== undefined
  // Creates are read before too: a key already on the server is refused unsent, and a key found absent is the proof
  // that a record found after a lost answer is the run's own (`absent` in the journal).
  // A plan is applied with the dry run's lookups, so that each row's write is decided as the plan decided it.
  const rehearsed = job.dryRun || job.applying !== undefined
  const lookupMode = listable && (rehearsed || !isPathWrite(r))
  return {
    skip: (row) => state.priorDone.has(row) && !state.queuedBefore(row),
    // Rows an earlier session left in flight are looked up by key whatever the mode.
    lookByKey: (row) => r.key !== undefined && listable && (lookupMode || state.priorSending.has(row)),
    lookById: lookupMode && (rehearsed || job.mode !== "create") && r.id !== undefined,
    resource: r.name,
    selfRefs: r.fields.filter((f) => f.ref?.resource === r.name).map((f) => refKey(f.ref!)),
    // A record that holds a row's alternate key under another key is found before anything is sent (not for
    // deletes, which write nothing).
    alternates: listable && !isPathWrite(r) && job.mode !== "delete"
      ? [...new Set([...Object.keys(alternateKeys ?? {}), ...serverUnique(r).map((f) => f.name)])]
      : []
  }
}

/**
 * Fields besides the key that the live service keeps unique with a refusal of its own (webhooks' `entity`, 1026):
 * a row that would make a second record of one is stopped before sending, naming the record that holds it.
 */
export const serverUnique = (r: Resource): ReadonlyArray<Field> =>
  r.fields.filter((f) => f.unique === true && f.uniqueCode !== undefined && f.name !== r.key && f.list !== true)

/** A value as the user wrote it: an enumeration by its label (`4` → `Task`). */
export const shownValue = (field: Field, value: string): string =>
  field.type._tag === "enum" ? field.type.values.find((v) => String(v.value) === value)?.label ?? value : value
