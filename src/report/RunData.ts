/**
 * What a run's `report.html` shows, gathered from the run directory alone (`summary.json`, `journal.ndjson`),
 * so the page can be written at the end of a run and again later for any run (`fsm-bulk report RUN_DIR`).
 * The journal is streamed, twice: memory holds aggregates (time buckets, a latency histogram, the slowest rows,
 * error kinds with a few examples) and one number per row, never the rows' lines.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as Path from "node:path"
import * as readline from "node:readline"
import { type ErrorKind, ErrorTally } from "../console/ErrorKinds.js"
import { RunError } from "../Errors.js"
import { parseRate, type Rate } from "../Units.js"

/** The fields of a run summary (import, rerun, resume, validate, or an onboarding's top level) the page uses. */
const ErrorKinds = Schema.Array(Schema.Struct({
  kind: Schema.String,
  count: Schema.Number,
  examples: Schema.Array(Schema.Struct({ row: Schema.Number, error: Schema.String }))
}))

const SummaryFields = Schema.Struct({
  command: Schema.String,
  resource: Schema.optional(Schema.String),
  mode: Schema.optional(Schema.String),
  source: Schema.optional(Schema.String),
  baseUrl: Schema.optional(Schema.NullOr(Schema.String)),
  started: Schema.optional(Schema.String),
  finished: Schema.optional(Schema.NullOr(Schema.String)),
  rows: Schema.Number,
  counts: Schema.Record({ key: Schema.String, value: Schema.Number }),
  requests: Schema.optional(Schema.Number),
  rateLimited: Schema.optional(Schema.Number),
  retries: Schema.optional(Schema.Number),
  exitCode: Schema.Number,
  dryRun: Schema.optional(Schema.Boolean),
  interrupted: Schema.optional(Schema.Boolean),
  aborted: Schema.optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Boolean))),
  version: Schema.optional(Schema.String),
  /** The request budget the run was held to, when the summary records it. */
  budget: Schema.optional(Schema.Struct({ limit: Schema.Number, windowMs: Schema.Number })),
  /** Errors by kind, tallied as the reports were written (absent in summaries of older versions). */
  errors: Schema.optional(ErrorKinds),
  /** The plan the run applied (`fsm-bulk apply`). */
  plan: Schema.optional(Schema.Struct({
    file: Schema.String,
    sha256: Schema.String,
    approvedBy: Schema.optional(Schema.String),
    target: Schema.Struct({ baseUrl: Schema.String, embedded: Schema.optional(Schema.Boolean) }),
    signer: Schema.optional(Schema.Struct({ keyId: Schema.String, trusted: Schema.Boolean }))
  })),
  /** The plan an onboarding's dry run wrote (`--plan`): its file and sha256. */
  wrotePlan: Schema.optional(Schema.Struct({ file: Schema.String, sha256: Schema.String })),
  /** Source columns not sent. */
  ignoredColumns: Schema.optional(Schema.Array(Schema.String)),
  /** The mapping profile (`--map`): its file and hash, header row, rows skipped, and the column plan. */
  mapping: Schema.optional(Schema.Struct({
    file: Schema.String,
    sha256: Schema.String,
    headerRow: Schema.Number,
    skippedRows: Schema.Array(Schema.Struct({ row: Schema.Number, why: Schema.String })),
    plan: Schema.optional(Schema.Array(Schema.Struct({
      source: Schema.String,
      target: Schema.optional(Schema.String),
      how: Schema.String,
      valueMap: Schema.optional(Schema.Boolean)
    })))
  })),
  /** An onboarding's sheets (files) with no rows: not steps; and whether it read a workbook or a directory. */
  empty: Schema.optional(Schema.Array(Schema.String)),
  /** An onboarding's sheets (files) of read-only lists (an export's): skipped, the API cannot write them. */
  readOnly: Schema.optional(Schema.Array(Schema.String)),
  input: Schema.optional(Schema.String),
  steps: Schema.optional(Schema.Array(Schema.Struct({
    resource: Schema.String,
    runDir: Schema.String,
    rows: Schema.Number,
    counts: Schema.Record({ key: Schema.String, value: Schema.Number }),
    exitCode: Schema.Number,
    requests: Schema.optional(Schema.Number),
    /** The step's kinds of error with the most rows (an onboarding's summary). */
    errors: Schema.optional(ErrorKinds)
  })))
})
export type RunSummary = typeof SummaryFields.Type

const decodeSummary = Schema.decodeUnknownOption(Schema.parseJson(SummaryFields))

/**
 * The parts of a plan file (`import/Plan.ts`, an import's or an onboarding's) the page draws: each step's resource,
 * counts and the rows that send a write. Other fields are ignored, so newer plans still read.
 */
const PlanRowFields = Schema.Struct({
  row: Schema.Number,
  status: Schema.String,
  intent: Schema.optional(Schema.String),
  key: Schema.optional(Schema.String),
  id: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  recordId: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  state: Schema.optional(Schema.Struct({ id: Schema.optional(Schema.Union(Schema.String, Schema.Number)) })),
  changes: Schema.optional(
    Schema.Array(Schema.Struct({ field: Schema.String, from: Schema.Unknown, to: Schema.Unknown }))
  ),
  refs: Schema.optional(Schema.Array(Schema.Struct({ field: Schema.String, to: Schema.Array(Schema.Unknown) })))
})
const PlanStepFields = Schema.Struct({
  resource: Schema.String,
  rows: Schema.Number,
  counts: Schema.Record({ key: Schema.String, value: Schema.Number }),
  plan: Schema.Array(PlanRowFields)
})
const decodePlan = Schema.decodeUnknownOption(
  Schema.parseJson(Schema.Union(Schema.Struct({ steps: Schema.Array(PlanStepFields) }), PlanStepFields))
)

/** A row of a plan that sends a write, as the page lists it. */
interface PlannedWrite {
  readonly step: string
  readonly row: number
  readonly status: string
  readonly intent: string
  readonly key: string | undefined
  readonly recordId: string | undefined
  readonly changes: ReadonlyArray<{ readonly field: string; readonly from: unknown; readonly to: unknown }>
  /** References to records an earlier step's row creates: field, resource and row. */
  readonly planned: ReadonlyArray<{ readonly field: string; readonly resource: string; readonly row: number }>
}

/** The plan a run wrote or applied, read back from its file when that file is still the one the run named. */
interface PlanView {
  readonly role: "written" | "applied"
  readonly file: string
  readonly sha256: string
  /** `read`: the file has the sha256 the run named; else what is drawn comes from the summary alone. */
  readonly found: { readonly state: "read" } | { readonly state: "missing" } | {
    readonly state: "changed"
    readonly sha256: string
  }
  readonly steps: ReadonlyArray<
    { readonly resource: string; readonly rows: number; readonly counts: Readonly<Record<string, number>> }
  >
  /** The rows that send a write, in step and row order: the first `changesKept`, and how many there are. */
  readonly writes: { readonly rows: ReadonlyArray<PlannedWrite>; readonly total: number }
}

const plannedRefs = (refs: ReadonlyArray<{ readonly field: string; readonly to: ReadonlyArray<unknown> }>) =>
  refs.flatMap((r) =>
    r.to.flatMap((to) => {
      const t = to as { readonly resource?: unknown; readonly row?: unknown } | null
      return typeof t === "object" && t !== null && typeof t.resource === "string" && typeof t.row === "number"
        ? [{ field: r.field, resource: t.resource, row: t.row }]
        : []
    })
  )

/** Reads the plan `named` (the summary's `plan` or `wrotePlan`); the page says when its file is gone or changed. */
const readPlanView = Effect.fn("RunData.plan")(function*(
  role: PlanView["role"],
  named: { readonly file: string; readonly sha256: string }
) {
  const none = { steps: [], writes: { rows: [], total: 0 } }
  const bytes = yield* Effect.promise(() => fs.promises.readFile(named.file).catch(() => undefined))
  if (bytes === undefined) return { role, ...named, found: { state: "missing" }, ...none } satisfies PlanView
  const now = createHash("sha256").update(bytes).digest("hex")
  const decoded = decodePlan(bytes.toString("utf8"))
  if (now !== named.sha256 || Option.isNone(decoded)) {
    return { role, ...named, found: { state: "changed", sha256: now }, ...none } satisfies PlanView
  }
  const steps = "steps" in decoded.value ? decoded.value.steps : [decoded.value]
  const rows: Array<PlannedWrite> = []
  let total = 0
  for (const step of steps) {
    for (const p of step.plan) {
      if (p.intent === undefined) continue
      total += 1
      if (rows.length >= changesKept) continue
      const record = p.recordId ?? p.id ?? p.state?.id
      rows.push({
        step: step.resource,
        row: p.row,
        status: p.status,
        intent: p.intent,
        key: p.key,
        recordId: record === undefined ? undefined : String(record),
        changes: p.changes ?? [],
        planned: plannedRefs(p.refs ?? [])
      })
    }
  }
  return {
    role,
    ...named,
    found: { state: "read" },
    steps: steps.map((s) => ({ resource: s.resource, rows: s.rows, counts: s.counts })),
    writes: { rows, total }
  } satisfies PlanView
})

/** The journal lines the page reads (other fields are ignored, so newer journals still read). */
const JournalLine = Schema.Struct({
  state: Schema.String,
  row: Schema.optional(Schema.Number),
  at: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  http: Schema.optional(Schema.Number),
  requestId: Schema.optional(Schema.String),
  attempts: Schema.optional(Schema.Number),
  retryOutcomes: Schema.optional(Schema.Array(Schema.String)),
  error: Schema.optional(Schema.String),
  changes: Schema.optional(Schema.String),
  recordId: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  /** The header's and a `resumed` line's: when the session began and the budget it was sent under. */
  started: Schema.optional(Schema.String),
  rate: Schema.optional(Schema.String)
})
const decodeFields = Schema.decodeUnknownOption(JournalLine)
/**
 * A journal line's fields, or none for a line that is not JSON or not a journal line. `JSON.parse` then the
 * struct's decode: `Schema.parseJson` around it took twice the time, most of `report`'s on a large run (1.3 s
 * against 0.75 s for 300,000 lines; the journal is read twice).
 */
const decodeLine = (text: string): Option.Option<typeof JournalLine.Type> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return Option.none()
  }
  return decodeFields(parsed)
}

interface TimeBucket {
  /** Start of the bucket, epoch ms. */
  readonly start: number
  /** Attempts sent in the bucket (each row's write, its retries included). */
  readonly sends: number
  /** Attempts answered with a rate limit. */
  readonly rateLimited: number
  readonly rows: number
}

interface SlowRow {
  readonly row: number
  readonly ms: number
  readonly status: string
  readonly http: number | undefined
  readonly requestId: string | undefined
  readonly attempts: number
}

interface WouldChange {
  readonly row: number
  readonly status: string
  readonly recordId: string | undefined
  readonly changes: string | undefined
}

/** A session of the run (the first, then one per `resume`): when it ran and the budget it was held to. */
export interface Session {
  readonly start: number
  readonly budget: Rate | undefined
}

/** How many rows of a dry run the page lists with their changes (report.csv has them all). */
const changesKept = 500

export interface RunData {
  readonly runDir: string
  readonly summary: RunSummary
  /** The run's sessions in order, each with its own budget (a resume may be given another `--rate`). */
  readonly sessions: ReadonlyArray<Session>
  /** Bucket width in ms (1 s … 1 h, so a run has at most about 60 buckets). */
  readonly bucketMs: number
  readonly buckets: ReadonlyArray<TimeBucket>
  /** Rows that sent something: time from `sending` to `done` (budget waits and retries included). */
  readonly latency: {
    readonly bounds: ReadonlyArray<number>
    readonly counts: ReadonlyArray<number>
    readonly rows: number
  }
  /** Rows per number of attempts (1, 2, 3 …). */
  readonly attempts: ReadonlyMap<number, number>
  /** Earlier attempts' outcomes (`503`, `timeout`, `rate-limited` …) and how often each happened. */
  readonly retryOutcomes: ReadonlyMap<string, number>
  readonly slowest: ReadonlyArray<SlowRow>
  readonly errors: ReadonlyArray<ErrorKind>
  /**
   * A dry run's rows that would change a record (created, updated, deleted), in row order, with the fields they
   * would change: the first `changesKept`, and how many there are in all.
   */
  readonly wouldChange: { readonly rows: ReadonlyArray<WouldChange>; readonly total: number }
  /** The plan the run wrote (an onboarding's `--dry-run --plan`) or applied (`fsm-bulk apply`), read from its file. */
  readonly plan: PlanView | undefined
  /** Steps of an onboarding, each with its own page. */
  readonly steps: ReadonlyArray<
    {
      readonly resource: string
      readonly dir: string
      readonly rows: number
      readonly counts: Readonly<Record<string, number>>
      readonly exitCode: number
      readonly requests: number | undefined
    }
  >
}

/** Upper bounds of the latency histogram, in ms (the last bucket holds everything slower). */
const latencyBounds: ReadonlyArray<number> = [100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000]

const slowestKept = 10

const bucketWidth = (spanMs: number): number => {
  for (const w of [1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000]) {
    if (spanMs / w <= 60) return w
  }
  return 3_600_000
}

const readText = (file: string) =>
  Effect.tryPromise({
    try: () => fs.promises.readFile(file, "utf8"),
    catch: (cause) =>
      new RunError({ message: `cannot read ${file}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
  })

/** Gathers what the page shows from a run directory (an import, rerun, resume or validate run, or an onboarding). */
export const readRunData = Effect.fn("RunData.read")(function*(runDir: string) {
  const summaryPath = Path.join(runDir, "summary.json")
  const text = yield* readText(summaryPath)
  const summary = decodeSummary(text)
  if (Option.isNone(summary)) {
    return yield* new RunError({ message: `${summaryPath} is not a run summary written by this tool` })
  }

  interface Done {
    readonly row: number
    readonly at: number
    readonly sentAt: number | undefined
    readonly status: string
    readonly http?: number
    readonly requestId?: string
    readonly attempts: number
    readonly retryOutcomes: ReadonlyArray<string>
    readonly error?: string
    readonly changes?: string
    readonly recordId?: string
  }
  const journal = Path.join(runDir, "journal.ndjson")
  const present = fs.existsSync(journal)
  /**
   * Streams the journal's `done` lines, numbered in order, each with the time its row's `sending` was written; and
   * to `session`, when given, each session's start (the header, a `resumed` line) with the budget it names.
   */
  const eachDone = (f: (d: Done, ordinal: number) => void, session?: (at: number, rate: string | undefined) => void) =>
    Effect.tryPromise({
      try: async () => {
        if (!present) return
        const sentAt = new Map<number, number>()
        let ordinal = 0
        const lines = readline.createInterface({
          input: fs.createReadStream(journal, { encoding: "utf8" }),
          crlfDelay: Infinity
        })
        for await (const text of lines) {
          const line = decodeLine(text)
          if (Option.isNone(line)) continue
          if (session !== undefined && (line.value.state === "header" || line.value.state === "resumed")) {
            const at = Date.parse(line.value.started ?? line.value.at ?? "")
            if (Number.isFinite(at)) session(at, line.value.rate)
            continue
          }
          if (line.value.row === undefined || line.value.at === undefined) continue
          const { row, at, state } = line.value
          const ms = Date.parse(at)
          if (!Number.isFinite(ms)) continue
          if (state === "sending") sentAt.set(row, ms)
          else if (state === "done") {
            const v = line.value
            f({
              row,
              at: ms,
              sentAt: sentAt.get(row),
              status: v.status ?? "",
              ...(v.http !== undefined ? { http: v.http } : {}),
              ...(v.requestId !== undefined ? { requestId: v.requestId } : {}),
              attempts: v.attempts ?? 0,
              retryOutcomes: v.retryOutcomes ?? [],
              ...(v.error !== undefined ? { error: v.error } : {}),
              ...(v.changes !== undefined ? { changes: v.changes } : {}),
              ...(v.recordId !== undefined ? { recordId: String(v.recordId) } : {})
            }, ordinal++)
            sentAt.delete(row)
          }
        }
      },
      catch: (cause) =>
        new RunError({
          message: `cannot read ${journal}: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
    })

  // Two reads of the journal, so that memory holds one number per row, never its lines (they held every row of a
  // run to its end, and the span of the sends, taken as `Math.min(...)` of them all, overflowed the stack past
  // about 120,000 rows sent). The first finds each row's last `done` line (a resumed or rerun row counts with its
  // last outcome only) and the span of the sends; the second tallies.
  const lastDone = new Map<number, number>()
  let sent = 0
  let first = Infinity
  let end = -Infinity
  let lines = 0
  const starts: Array<{ readonly start: number; readonly rate: string | undefined }> = []
  yield* eachDone((d, ordinal) => {
    lines += 1
    lastDone.set(d.row, ordinal)
    if (d.attempts > 0) {
      sent += 1
      first = Math.min(first, d.sentAt ?? d.at)
      end = Math.max(end, d.at)
    }
  }, (start, rate) => starts.push({ start, rate }))
  // Each session's budget: the one its line names; else (journals before sessions named theirs) the last session's
  // is the summary's, and an earlier one's the session's before it (resume keeps the budget unless given another).
  const sessions: Array<Session> = []
  for (const [i, s] of starts.entries()) {
    const named = s.rate === undefined ? undefined : Either.getOrUndefined(parseRate(s.rate))
    sessions.push({
      start: s.start,
      budget: named ??
        (i === starts.length - 1 ? summary.value.budget : sessions[i - 1]?.budget ?? summary.value.budget)
    })
  }
  const bucketMs = sent === 0 ? 60_000 : bucketWidth(end - first)
  const buckets = new Map<number, { sends: number; rateLimited: number; rows: number }>()
  if (sent > 0) {
    const start0 = Math.floor(first / bucketMs) * bucketMs
    for (let t = start0; t <= end; t += bucketMs) buckets.set(t, { sends: 0, rateLimited: 0, rows: 0 })
  }

  const counts = latencyBounds.map(() => 0).concat([0])
  const attempts = new Map<number, number>()
  const retryOutcomes = new Map<string, number>()
  const tally = new ErrorTally()
  let timed = 0
  /** The slowest rows so far, slowest first (at most `slowestKept`). */
  const slowest: Array<SlowRow> = []
  const wouldChange: Array<WouldChange> = []
  let changing = 0
  const dryRun = summary.value.dryRun === true
  yield* eachDone((d, ordinal) => {
    // A line the first read did not see (a run still going) counts in neither.
    if (ordinal >= lines) return
    if (
      dryRun && lastDone.get(d.row) === ordinal &&
      (d.status === "created" || d.status === "updated" || d.status === "deleted")
    ) {
      changing += 1
      // Rows come out of order: the lowest row numbers are kept.
      if (wouldChange.length < changesKept || d.row < wouldChange.at(-1)!.row) {
        const at = wouldChange.findIndex((w) => d.row < w.row)
        wouldChange.splice(at === -1 ? wouldChange.length : at, 0, {
          row: d.row,
          status: d.status,
          recordId: d.recordId,
          changes: d.changes
        })
        if (wouldChange.length > changesKept) wouldChange.pop()
      }
    }
    if (d.attempts > 0) {
      const b = buckets.get(Math.floor(d.at / bucketMs) * bucketMs)!
      b.sends += d.attempts
      b.rows += 1
      b.rateLimited += d.retryOutcomes.filter((o) => o === "rate-limited").length
    }
    if (lastDone.get(d.row) !== ordinal) return
    if (d.attempts > 0) {
      attempts.set(d.attempts, (attempts.get(d.attempts) ?? 0) + 1)
      for (const o of d.retryOutcomes) retryOutcomes.set(o, (retryOutcomes.get(o) ?? 0) + 1)
      if (d.sentAt !== undefined) {
        const ms = d.at - d.sentAt
        const i = latencyBounds.findIndex((b) => ms <= b)
        counts[i === -1 ? latencyBounds.length : i]! += 1
        timed += 1
        if (slowest.length < slowestKept || ms > slowest.at(-1)!.ms) {
          const at = slowest.findIndex((s) => ms > s.ms)
          slowest.splice(at === -1 ? slowest.length : at, 0, {
            row: d.row,
            ms,
            status: d.status,
            http: d.http,
            requestId: d.requestId,
            attempts: d.attempts
          })
          if (slowest.length > slowestKept) slowest.pop()
        }
      }
    }
    if (d.error !== undefined && d.error !== "") tally.add(d.row, d.error)
  })

  const ownErrors = summary.value.errors ?? tally.top(50)
  const stepErrors = (summary.value.steps ?? [])
    .flatMap((s) => (s.errors ?? []).map((e): ErrorKind => ({ ...e, kind: `${s.resource}: ${e.kind}` })))
    .sort((a, b) => b.count - a.count)
  const steps = (summary.value.steps ?? []).map((s) => ({
    resource: s.resource,
    dir: Path.relative(runDir, s.runDir) || s.runDir,
    rows: s.rows,
    counts: s.counts,
    exitCode: s.exitCode,
    requests: s.requests
  }))

  const named = summary.value.plan ?? summary.value.wrotePlan
  const plan = named === undefined
    ? undefined
    : yield* readPlanView(summary.value.plan !== undefined ? "applied" : "written", named)

  return {
    runDir,
    summary: summary.value,
    plan,
    sessions,
    bucketMs,
    buckets: [...buckets.entries()].map(([start, b]) => ({ start, ...b })),
    latency: { bounds: latencyBounds, counts, rows: timed },
    attempts,
    retryOutcomes,
    slowest,
    wouldChange: { rows: wouldChange, total: changing },
    // The writer's tally covers every row (invalid rows too, which the journal of a validate run lacks); an
    // onboarding's page has no rows of its own: its steps' errors, each named by its step.
    errors: ownErrors.length > 0 ? ownErrors : stepErrors,
    steps
  } satisfies RunData
})
