/**
 * What an onboarding reports: the top-level `summary.json` (contract: one entry per step in `steps`, written
 * atomically after every step so a stopped onboarding still tells how far it got) and the human lines, one per
 * step, that show the plan in a dry run (would create / would update / unchanged / invalid …).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as Path from "node:path"
import type { RunTraffic } from "../client/Api.js"
import type { ErrorKind } from "../console/ErrorKinds.js"
import type { ReadOptions } from "../files/Source.js"
import { writeFileAtomic } from "../files/Write.js"
import type { AppliedPlan } from "../import/Journal.js"
import type { SettledFormats } from "../import/Report.js"
import type { ProfileRecord } from "../mapping/Profile.js"
import { t } from "../Messages.js"
import { refreshRunReport } from "../report/Html.js"
import type { ResourceName } from "../Resources.js"
import { countStatuses, shownStatus, type Status } from "../Status.js"
import type { ParseOptions } from "../validate/Validate.js"

export const summaryFile = "summary.json"

export interface StepSummary extends RunTraffic {
  readonly resource: ResourceName
  /** The file the rows came from (absolute), and its sheet for a workbook. */
  readonly source: string
  readonly sheet?: string
  /** The mapping profile the step read its file through (`--map`): its file and sha256 (the step's summary has it all). */
  readonly mapping?: { readonly file: string; readonly sha256: string }
  /** The step's run directory (`<onboarding run dir>/<resource>`): journal, reports and summary. */
  readonly runDir: string
  readonly rows: number
  readonly counts: Record<Status, number>
  /** Rows not attempted because a parent row did not end well (part of `counts.skipped`). */
  readonly skippedForParent: number
  readonly exitCode: number
  readonly interrupted: boolean
  readonly aborted: boolean
  /** How the step's file was read: what `auto` settled. */
  readonly formats?: SettledFormats
  /** The step's rows that did not end well, grouped by error, most rows first (the first few kinds). */
  readonly errors?: ReadonlyArray<ErrorKind>
}

/** Its traffic counts every request of the onboarding (lookups, logins and `--verify` reads included). */
export interface OnboardSummary extends RunTraffic {
  readonly tool: "fsm-bulk"
  readonly command: string
  /** The workbook or directory (absolute). */
  readonly source: string
  readonly input: "workbook" | "directory"
  readonly mode: "upsert"
  readonly runDir: string
  readonly started: string
  /** Null while the onboarding runs. */
  readonly finished: string | null
  readonly dryRun: boolean
  readonly verify: boolean
  /** The steps planned, in dependency order: the sheets (files) with rows. */
  readonly resources: ReadonlyArray<ResourceName>
  /** The sheets (files) that had no rows: read and checked, not imported (absent when there are none). */
  readonly empty?: ReadonlyArray<ResourceName>
  /** The sheets (files) of read-only lists, an export's: skipped, the API cannot write them (absent when none). */
  readonly readOnly?: ReadonlyArray<ResourceName>
  readonly rows: number
  readonly counts: Record<Status, number>
  /** A dry run only: `counts` as the reports show them, planned (`would-create` …), zeros left out. */
  readonly planned?: Record<string, number>
  /**
   * 0 every row of every step ended well, 1 some did not, 3 stopped or aborted (2 never gets this far); while
   * `finished` is null, the code of the steps so far (1 until every step has run).
   */
  readonly exitCode: number
  readonly interrupted: boolean
  /** Why a step failed as a whole and the onboarding stopped there (credentials rejected …), or null. */
  readonly aborted: string | null
  readonly steps: ReadonlyArray<StepSummary>
  /** Steps never started (the onboarding stopped before them). */
  readonly notRun: ReadonlyArray<ResourceName>
  /** The tool's version, the API it talked to (and whether it was an embedded sandbox), the budget kept to. */
  readonly version?: string
  readonly baseUrl?: string
  readonly embedded?: boolean
  readonly budget?: { readonly limit: number; readonly windowMs: number }
  /** How the files are read and answers awaited: `resume` on this directory continues with the same. */
  readonly settings?: OnboardSettings
  /** `fsm-bulk apply` of an onboarding's plan: the plan (file, sha256, approver, target); `resume` goes on applying it. */
  readonly plan?: AppliedPlan
  /** `--dry-run --plan PLAN`: the plan it wrote (absolute) and that file's sha256, what an approver approves. */
  readonly wrotePlan?: { readonly file: string; readonly sha256: string }
}

/** The settings of an onboarding that `resume` needs besides its input (recorded in its summary). */
interface OnboardSettings {
  readonly read: {
    readonly encoding: ReadOptions["encoding"]
    readonly delimiter: ReadOptions["delimiter"]
    readonly includeHidden?: boolean
  }
  readonly dateFormat: ParseOptions["dateFormat"]
  readonly decimal: ParseOptions["decimal"]
  readonly attachmentsRoot?: string
  readonly maxAttachmentBytes?: number
  readonly answerWaitMs: number
  readonly answerPollMs: number
  /** `--map`: the profiles (file, sha256, content) a resume applies again, whatever the files on disk say now. */
  readonly maps?: ReadonlyArray<ProfileRecord>
}

/**
 * The summary of the onboarding in `dir`, when `dir` holds one (an onboarding writes it before its first step);
 * undefined for any other directory.
 */
export const readOnboardSummary = (dir: string): OnboardSummary | undefined => {
  try {
    const s = JSON.parse(fs.readFileSync(Path.join(dir, summaryFile), "utf8")) as OnboardSummary
    return s.tool === "fsm-bulk" && Array.isArray(s.steps) && Array.isArray(s.resources) ? s : undefined
  } catch {
    return undefined
  }
}

/** Counts of every step added up. */
export const totalCounts = (steps: ReadonlyArray<StepSummary>): Record<Status, number> => {
  const total = countStatuses([])
  for (const s of steps) for (const [status, n] of Object.entries(s.counts)) total[status as Status] += n
  return total
}

/**
 * Told after each write of an onboarding's summary: a fleet worker copies the run directory to its store then, so
 * the job's outputs are as far as its summary. By default nothing is told.
 */
export class SummaryCopies extends Context.Reference<SummaryCopies>()("fsm-bulk/onboard/SummaryCopies", {
  defaultValue: (): { readonly saved: (summary: OnboardSummary) => Effect.Effect<void> } => ({
    saved: () => Effect.void
  })
}) {
  static readonly to = (saved: (summary: OnboardSummary) => Effect.Effect<void>): Layer.Layer<SummaryCopies> =>
    Layer.succeed(SummaryCopies, { saved })
}

export const writeOnboardSummary = (summary: OnboardSummary) =>
  writeFileAtomic(Path.join(summary.runDir, summaryFile), `${JSON.stringify(summary, null, 2)}\n`).pipe(
    Effect.zipRight(refreshRunReport(summary.runDir))
  )

/** A dry run's step line says what would happen: `would create 10` (the planned status, in words). */
const plannedLabel = (status: Status): string =>
  status === "failed" ? "would fail" : shownStatus(status, true).replace("-", " ")

/** `created 10, invalid 1, skipped 3 (parent row)`, or in a dry run `would create 10, would send 8 (not compared)`. */
const describeCounts = (step: Pick<StepSummary, "counts" | "skippedForParent">, dryRun: boolean): string => {
  const parts: Array<string> = []
  for (const [status, n] of Object.entries(step.counts) as Array<[Status, number]>) {
    if (n === 0) continue
    if (status === "skipped") {
      const forParent = step.skippedForParent
      // A dry run cannot compare sub-collection and action rows with the server: they are `skipped`, yet would be sent.
      if (n - forParent > 0) {
        parts.push(dryRun ? t("onboard.wouldSend", { count: n - forParent }) : `skipped ${n - forParent}`)
      }
      if (forParent > 0) parts.push(t("onboard.skippedParent", { count: forParent }))
      continue
    }
    parts.push(`${dryRun ? plannedLabel(status) : status} ${n}`)
  }
  return parts.length === 0 ? t("onboard.noRows") : parts.join(", ")
}

/** One line per step: `[ 3/20] customers        10 rows  created 10`. */
export const stepLine = (index: number, total: number, step: StepSummary, dryRun: boolean): string => {
  const width = String(total).length
  const rows = t(step.rows === 1 ? "onboard.rowOne" : "onboard.rows", { rows: step.rows })
  return `[${String(index + 1).padStart(width)}/${total}] ${step.resource.padEnd(22)} ${rows.padStart(9)}  ${
    describeCounts(step, dryRun)
  }${step.interrupted ? t("onboard.stopped") : ""}`
}
