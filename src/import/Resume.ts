/**
 * `resume RUN_DIR`: continues a run from its journal. The header says what was run (resource, mode, source,
 * parse options, the formats `auto` resolved to); rows already done are not sent again; rows that were in flight
 * are reconciled by key before any resend (see `Plan.plan`, `interrupted`). The journal is appended to, then the
 * reports and summary are rewritten.
 */
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import { RunError } from "../Errors.js"
import { isResourceName } from "../Resources.js"
import { type Header, journalFile, readJournal } from "./Journal.js"
import { continueRun, type ImportJob } from "./Pipeline.js"
import { readPlan } from "./Plan.js"
import { existingRunDir } from "./RunDir.js"

/** What the caller of a resume may set (its services aside: `Services.ts`); everything else comes from the journal. */
type ResumeOptions = Pick<ImportJob, "graceMs" | "concurrency" | "writerLock">

/** Where a run's rows were sent, from its journal, and the options that shaped its sending. */
export interface RunTarget {
  readonly baseUrl: string
  /** The embedded, in-memory sandbox of the command that started the run (gone with it). */
  readonly embedded: boolean
  /** The request budget the run was started with (`20/10s`), absent in journals of older versions. */
  readonly rate?: string | undefined
  /** `--concurrency` as the run was started with it, when it was given. */
  readonly concurrency?: number | undefined
}

/** Where the run's rows were sent: `resume` and `rerun` continue there (see `continuingConnection`). */
export const runTargetOf = (h: Header): RunTarget => ({
  baseUrl: h.baseUrl,
  embedded: h.embedded === true,
  rate: h.rate,
  concurrency: h.concurrency
})

/** The job a run directory's journal describes, and the journal itself. */
export const loadRun = Effect.fn("Resume.load")(function*(runDir: string) {
  const dir = yield* existingRunDir(runDir)
  const prior = yield* readJournal(Path.join(dir, journalFile))
  const h = prior.header
  if (!isResourceName(h.resource)) {
    return yield* new RunError({ message: `${dir}: the journal names an unknown resource "${h.resource}"` })
  }
  // A run that applies a plan goes on applying it, only it: the plan must still be the one the run recorded.
  const plan = h.plan !== undefined ? yield* readPlan(h.plan.file) : undefined
  if (plan !== undefined && plan.sha256 !== h.plan?.sha256) {
    return yield* new RunError({
      message: `${plan.file} changed since this run started applying it (sha256 ${
        plan.sha256.slice(0, 12)
      }…, the run recorded ${h.plan?.sha256.slice(0, 12)}…): nothing was sent`
    })
  }
  const job: ImportJob = {
    command: "resume",
    resource: h.resource,
    file: h.source.file,
    read: h.read,
    dateFormat: h.parse.dateFormat,
    decimal: h.parse.decimal,
    mode: h.mode,
    dryRun: h.dryRun,
    verify: h.verify,
    verifyWaitMs: h.verifyWaitMs,
    sendWriteOnly: h.sendWriteOnly,
    runDir: dir,
    baseDir: h.parse.baseDir,
    attachmentsRoot: h.parse.attachmentsRoot,
    maxAttachmentBytes: h.parse.maxAttachmentBytes,
    rowColumn: h.source.rowColumn,
    parent: h.parent,
    // The run's own server was checked against the plan when it started; resume continues there.
    ...(plan !== undefined
      ? { applying: { plan, approvedBy: h.plan?.approvedBy, otherTarget: true, signer: h.plan?.signer } }
      : {})
  }
  return { dir, prior, job }
})

export const resumeRun = Effect.fn("Resume.run")(function*(runDir: string, options: ResumeOptions = {}) {
  const { job, prior } = yield* loadRun(runDir)
  return yield* continueRun({ ...job, ...options }, prior)
})
