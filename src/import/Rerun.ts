/**
 * `rerun REPORT|RUN_DIR`: a new run of the rows of an earlier report whose `_status` is selected (default
 * `failed,in-doubt`; `invalid` too when `--fixed FILE` brings their corrections, matched by `_row`, else by key).
 *
 * The selected rows (with their corrections) are first copied into the new run directory as `rows.csv`, with their
 * original `_row`, so the new run stands on its own: its report keeps the original row numbers and `resume`
 * works even if the parent run is resumed (and its report rewritten) meanwhile. That copy holds the values as the
 * user typed them and is not formula-guarded: it is the run's input, not a file for spreadsheets.
 */
import * as fs from "node:fs"
import * as Path from "node:path"
import { Effect, Either, Stream } from "effect"
import { type InputError, RunError, UsageError } from "../Errors.js"
import type { SourceRow } from "../files/Source.js"
import { openCsvWriter } from "../files/Write.js"
import type { Api } from "../client/Api.js"
import type { RunTarget } from "../cli/Connection.js"
import { isResourceName, resource as resourceOf, type Resource, type ResourceName } from "../Resources.js"
import { openInput } from "./Input.js"
import { journalFile, type Mode, type ParentRun, readJournal, type ReadSettings } from "./Journal.js"
import type { ImportError, ImportJob, RunResult } from "./Pipeline.js"
import { runImport } from "./Pipeline.js"
import { runTargetOf } from "./Resume.js"
import { createRunDir, reportCsv, reportXlsx, summaryFile } from "./RunDir.js"
import { Status } from "./Status.js"

export const rowsFile = "rows.csv"
export const defaultOnly: ReadonlyArray<Status> = ["failed", "in-doubt"]

export interface RerunRequest {
  /** A report (CSV or XLSX) or a run directory. */
  readonly target: string
  readonly only: ReadonlyArray<Status> | undefined
  readonly fixed: string | undefined
  readonly dryRun: boolean
  /** `--attachments-root`: replaces the parent run's. */
  readonly attachmentsRoot?: string | undefined
  /** The new run directory; default from `defaultRunDir(resource)`. */
  readonly out: (resource: ResourceName) => string
}

export type RerunOptions = Pick<ImportJob, "stop" | "graceMs" | "concurrency" | "progress" | "resolver" | "say">

/** What the parent run was, from its journal (or, for a `validate` run, its summary). */
interface ParentInfo {
  readonly runDir: string
  readonly report: string
  readonly resource: ResourceName
  readonly mode: Mode
  readonly dateFormat: ImportJob["dateFormat"]
  readonly decimal: ImportJob["decimal"]
  readonly baseDir: string | undefined
  readonly attachmentsRoot: string | undefined
  readonly maxAttachmentBytes: number | undefined
  /** Where the parent's rows were sent (none for a `validate` run). */
  readonly sentTo: RunTarget | undefined
}

const parentOf = Effect.fn("Rerun.parent")(function*(target: string) {
  const isDir = fs.existsSync(target) && fs.statSync(target).isDirectory()
  const runDir = Path.resolve(isDir ? target : Path.dirname(target))
  const report = isDir
    ? [reportCsv, reportXlsx].map((f) => Path.join(runDir, f)).find((f) => fs.existsSync(f))
    : Path.resolve(target)
  if (report === undefined || !fs.existsSync(report)) {
    return yield* new RunError({ message: `${target}: no report to rerun (expected ${isDir ? `${reportCsv} in it` : "a report file"})` })
  }
  const journal = Path.join(runDir, journalFile)
  if (fs.existsSync(journal)) {
    const { header: h } = yield* readJournal(journal)
    if (!isResourceName(h.resource)) return yield* new RunError({ message: `${journal} names an unknown resource "${h.resource}"` })
    const formats = h.formats as { dateFormat?: ImportJob["dateFormat"]; decimal?: ImportJob["decimal"] } | undefined
    return {
      runDir,
      report,
      resource: h.resource,
      mode: h.mode,
      // The formats the whole file resolved to: a handful of its rows may no longer settle `auto` by themselves.
      dateFormat: formats?.dateFormat ?? h.parse.dateFormat,
      decimal: formats?.decimal ?? h.parse.decimal,
      baseDir: h.parse.baseDir,
      attachmentsRoot: h.parse.attachmentsRoot,
      maxAttachmentBytes: h.parse.maxAttachmentBytes,
      sentTo: runTargetOf(h)
    } satisfies ParentInfo
  }
  const summaryPath = Path.join(runDir, summaryFile)
  const summary = yield* Effect.try({
    try: () => JSON.parse(fs.readFileSync(summaryPath, "utf8")) as { resource?: unknown; mode?: unknown },
    catch: () =>
      new RunError({ message: `${target}: cannot tell which resource the report is for: keep it in its run directory (beside ${journalFile} or ${summaryFile})` })
  })
  const mode = summary.mode
  if (typeof summary.resource !== "string" || !isResourceName(summary.resource) || !(mode === "upsert" || mode === "create" || mode === "update" || mode === "delete")) {
    return yield* new RunError({ message: `${summaryPath} does not name the resource and mode of the run` })
  }
  return {
    runDir,
    report,
    resource: summary.resource,
    mode,
    dateFormat: "auto",
    decimal: "auto",
    baseDir: undefined,
    attachmentsRoot: undefined,
    maxAttachmentBytes: undefined,
    sentTo: undefined
  } satisfies ParentInfo
})

/** Where the rows of the run `target` (a report or run directory) were sent: a rerun goes there too. */
export const parentTarget = (target: string) => Effect.map(parentOf(target), (info) => info.sentTo)

const autoRead: ReadSettings = { encoding: "auto", delimiter: "auto" }

/** The columns a corrections file is matched by when it has no `_row`: the key (and the parent's), by any of their names. */
const identityNames = (r: Resource): ReadonlyArray<ReadonlyArray<string>> => {
  const namesOf = (field: string | undefined): ReadonlyArray<string> => {
    const f = field === undefined ? undefined : r.fields.find((x) => x.name === field)
    return f === undefined ? [] : f.ref !== undefined ? [f.name, f.ref.column] : [f.name]
  }
  const groups = [namesOf(r.parent?.field !== r.id?.name ? r.parent?.field : undefined), namesOf(r.key)]
  return groups.filter((g) => g.length > 0)
}

interface Corrections {
  readonly file: string
  readonly byRow: boolean
  /** Its columns, as written (tool columns left out). */
  readonly columns: ReadonlyArray<string>
  /** Identity (row number, or key values) → column name (lower case) → cell. */
  readonly rows: Map<string, Map<string, string>>
  readonly used: Set<string>
  readonly identity: (cells: (name: string) => string, row: number) => string | undefined
}

const readCorrections = Effect.fn("Rerun.corrections")(function*(file: string, r: Resource, decimal: ImportJob["decimal"]) {
  const input = yield* openInput(file, autoRead, r.name)
  const header = input.source.header
  const lower = header.map((h) => h.trim().toLowerCase())
  const byRow = lower.includes("_row")
  const groups = identityNames(r)
  if (!byRow && (r.key === undefined || groups.length === 0)) {
    return yield* new UsageError({ message: `--fixed ${file}: needs a _row column (${r.name} records have no key to match the rows by)` })
  }
  const identity = (cell: (name: string) => string, row: number): string | undefined => {
    if (byRow) return String(row)
    const parts = groups.map((names) => names.map((n) => cell(n).trim()).find((v) => v !== "") ?? "")
    return parts.some((p) => p === "") ? undefined : parts.join("\u0000")
  }
  const rows = new Map<string, Map<string, string>>()
  // The rows go to a CSV read with the parent's mark: a workbook's number cells are written with it.
  const restoreCells = (row: SourceRow) => input.cellsOf(row, decimal === "auto" ? "." : decimal)
  const kept = input.columns.map((c) => c.trim().toLowerCase())
  yield* Stream.runForEach(input.source.rows, (row) =>
    Effect.gen(function*() {
      const cells = restoreCells(row)
      const values = new Map<string, string>()
      kept.forEach((name, i) => values.set(name, cells[i] ?? ""))
      const rowIndex = lower.indexOf("_row")
      const number = byRow ? Number((row.cells[rowIndex] ?? "").trim()) : row.row
      if (byRow && !(Number.isInteger(number) && number >= 2)) {
        return yield* new UsageError({ message: `--fixed ${file} (row ${row.row}): _row "${row.cells[rowIndex] ?? ""}" is not a row number` })
      }
      const id = identity((n) => values.get(n.toLowerCase()) ?? "", number)
      if (id === undefined) return yield* new UsageError({ message: `--fixed ${file} (row ${row.row}): the key to match the row by is empty` })
      if (rows.has(id)) return yield* new UsageError({ message: `--fixed ${file} (row ${row.row}): a second correction for the same row` })
      rows.set(id, values)
    })
  )
  return { file: input.file, byRow, columns: input.columns, rows, used: new Set<string>(), identity } satisfies Corrections
})

/**
 * Copies the selected rows of the report (corrected) into `rows.csv` of the new run; returns how many. With
 * `dir` undefined it only counts them.
 */
const copyRows = Effect.fn("Rerun.copyRows")(function*(
  report: string,
  r: Resource,
  only: ReadonlySet<string>,
  corrections: Corrections | undefined,
  dir: string | undefined
) {
  const input = yield* openInput(report, autoRead, r.name)
  const lower = input.source.header.map((h) => h.trim().toLowerCase())
  const rowAt = lower.indexOf("_row")
  const statusAt = lower.indexOf("_status")
  if (rowAt < 0 || statusAt < 0) {
    return yield* new UsageError({ message: `${report} is not a report of this tool: it has no _row and _status columns` })
  }
  const columns = input.columns
  const colLower = columns.map((c) => c.trim().toLowerCase())
  // Columns the corrections add (a value the original file did not have a column for).
  const added = (corrections?.columns ?? []).filter((c) => !colLower.includes(c.trim().toLowerCase()))
  const selected = (cells: ReadonlyArray<string>) => only.has((cells[statusAt] ?? "").trim().toLowerCase())
  const rowOf = (cells: ReadonlyArray<string>) => (cells[rowAt] ?? "").trim()

  if (dir === undefined) {
    return yield* Stream.runFold(input.source.rows, 0, (n, row) => (selected(row.cells) ? n + 1 : n))
  }
  return yield* Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* openCsvWriter(Path.join(dir, rowsFile), ["_row", ...columns, ...added], { bom: false, guard: false })
      let count = 0
      yield* Stream.runForEach(input.source.rows, (row) => {
        if (!selected(row.cells)) return Effect.void
        count += 1
        const all = input.cellsOf(row)
        const cells = all.slice(0, columns.length)
        // A ragged row's cells beyond the header stay beyond every column (and keep the row invalid).
        const beyond = all.slice(columns.length)
        let extra: ReadonlyArray<string> = added.map(() => "")
        if (corrections !== undefined) {
          const number = Number(rowOf(row.cells))
          const id = corrections.identity((n) => cells[colLower.indexOf(n.toLowerCase())] ?? "", number)
          const fix = id === undefined ? undefined : corrections.rows.get(id)
          if (fix !== undefined && id !== undefined) {
            corrections.used.add(id)
            colLower.forEach((name, i) => {
              const v = fix.get(name)
              if (v !== undefined) cells[i] = v
            })
            extra = added.map((c) => fix.get(c.trim().toLowerCase()) ?? "")
          }
        }
        return writer.write([rowOf(row.cells), ...cells, ...extra, ...beyond])
      })
      yield* writer.close
      return count
    })
  )
})

export interface RerunOutcome {
  /** Undefined when no row of the report had a selected status (nothing was run). */
  readonly result: RunResult | undefined
  readonly parent: ParentRun
  readonly selected: number
}

export const rerun = Effect.fn("Rerun.run")(function*(
  request: RerunRequest,
  options: RerunOptions = {}
): Effect.fn.Return<RerunOutcome, ImportError | InputError, Api> {
  const info = yield* parentOf(request.target)
  const r = resourceOf(info.resource)
  const only = request.only ?? (request.fixed !== undefined ? [...defaultOnly, "invalid" as const] : defaultOnly)
  if (only.includes("invalid") && request.fixed === undefined) {
    return yield* new UsageError({ message: "rerunning invalid rows needs their corrections: --fixed FILE (rows matched by _row, else by key)" })
  }
  const parent: ParentRun = {
    runDir: info.runDir,
    report: info.report,
    only: [...only],
    ...(request.fixed !== undefined ? { fixed: Path.resolve(request.fixed) } : {})
  }
  const onlySet = new Set<string>(only)
  const corrections = request.fixed !== undefined ? yield* readCorrections(request.fixed, r, info.decimal) : undefined
  const count = yield* copyRows(info.report, r, onlySet, corrections, undefined)
  if (count === 0) return { result: undefined, parent, selected: 0 }

  const runDir = yield* createRunDir(request.out(info.resource))
  yield* copyRows(info.report, r, onlySet, corrections, runDir)
  if (corrections !== undefined && options.say !== undefined) {
    const unused = [...corrections.rows.keys()].filter((k) => !corrections.used.has(k))
    if (unused.length > 0) {
      const shown = unused.slice(0, 5).map((k) => (corrections.byRow ? `_row ${k}` : `"${k.replace("\u0000", " / ")}"`))
      yield* options.say(
        `warning: ${unused.length} correction${unused.length > 1 ? "s" : ""} in ${corrections.file} match no row selected for the rerun (${shown.join(", ")}${unused.length > 5 ? ", …" : ""})`
      )
    }
  }
  const job: ImportJob = {
    ...options,
    command: "rerun",
    resource: info.resource,
    file: Path.join(runDir, rowsFile),
    read: { encoding: "utf-8", delimiter: "," },
    dateFormat: info.dateFormat,
    decimal: info.decimal,
    mode: info.mode,
    dryRun: request.dryRun,
    verify: false,
    runDir,
    baseDir: info.baseDir ?? Path.dirname(info.report),
    attachmentsRoot: request.attachmentsRoot ?? info.attachmentsRoot,
    maxAttachmentBytes: info.maxAttachmentBytes,
    rowColumn: "_row",
    parent
  }
  // The new run directory already holds rows.csv: the pipeline only refuses directories holding a run.
  const result = yield* runImport(job)
  return { result, parent, selected: count }
})

/** `failed,in-doubt` → the statuses, or why not. */
export const parseOnly = (text: string): Either.Either<ReadonlyArray<Status>, string> => {
  const names = text.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "")
  const bad = names.filter((n) => !(Status.literals as ReadonlyArray<string>).includes(n))
  if (names.length === 0) return Either.left("--only: name at least one status")
  if (bad.length > 0) return Either.left(`--only: unknown status ${bad.map((b) => `"${b}"`).join(", ")} (statuses: ${Status.literals.join(", ")})`)
  return Either.right(names as ReadonlyArray<Status>)
}
