/**
 * `rerun REPORT|RUN_DIR`: a new run of the rows of an earlier report whose `_status` is selected (default
 * `failed,in-doubt`; `invalid` too when `--fixed FILE` brings their corrections, matched by `_row`, else by key).
 * An invalid row is rerun only when a correction names it. A correction lays its non-blank cells over the row
 * (`#clear` empties a cell), and the merged rows are validated against every row of the report, so a corrected
 * key that repeats another row's stays invalid.
 *
 * The selected rows (with their corrections) are first copied into the new run directory as `rows.csv`, with their
 * original `_row`, so the new run stands on its own: its report keeps the original row numbers and `resume`
 * works even if the parent run is resumed (and its report rewritten) meanwhile. That copy holds the values as the
 * user typed them and is not formula-guarded: it is the run's input, not a file for spreadsheets.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as Path from "node:path"
import type { Api } from "../client/Api.js"
import { Notices } from "../console/Output.js"
import { InputError, RunError, UsageError } from "../Errors.js"
import { readJsonFile } from "../files/JsonFile.js"
import type { SourceRow } from "../files/Source.js"
import { openCsvWriter } from "../files/Write.js"
import { normalKey } from "../Identity.js"
import { applyProfile } from "../mapping/Apply.js"
import type { ProfileRecord } from "../mapping/Profile.js"
import { isResourceName, type Resource, resource as resourceOf, type ResourceName } from "../Resources.js"
import { Status, statusOfShown } from "../Status.js"
import {
  defaultMaxAttachmentBytes,
  formatErrors,
  type Formats,
  inferFormats,
  makeValidator,
  type ParseOptions,
  planColumns
} from "../validate/Validate.js"
import { openInput, verdictColumn } from "./Input.js"
import {
  journalFile,
  type Mode,
  type OnConflict,
  type ParentRun,
  readJournal,
  type ReadSettings,
  type StaleCheck
} from "./Journal.js"
import { recordRerun, rerunsOf } from "./Lineage.js"
import type { ExportOrigin } from "./Origin.js"
import type { ImportError, ImportJob, RunResult } from "./Pipeline.js"
import { runImport } from "./Pipeline.js"
import { type RunTarget, runTargetOf } from "./Resume.js"
import { createRunDir, reportCsv, reportXlsx, summaryFile } from "./RunDir.js"
import type { ImportServices } from "./Services.js"
import { RunKind } from "./SummaryFile.js"

export const rowsFile = "rows.csv"
const defaultOnly: ReadonlyArray<Status> = ["failed", "in-doubt"]

interface RerunRequest {
  /** A report (CSV or XLSX) or a run directory. */
  readonly target: string
  readonly only: ReadonlyArray<Status> | undefined
  readonly fixed: string | undefined
  readonly dryRun: boolean
  /** `--attachments-root`: replaces the parent run's. */
  readonly attachmentsRoot?: string | undefined
  /** `--merge` / `--overwrite` for rows whose records changed on the server since the parent's export. */
  readonly onConflict?: OnConflict | undefined
  /** The new run directory; default from `defaultRunDir(resource)`. */
  readonly out: (resource: ResourceName) => string
}

type RerunOptions = Pick<ImportJob, "graceMs" | "concurrency">

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
  /** The parent's stale-edit check: its rows came from an export, whose fingerprints the rerun keeps. */
  readonly stale?: StaleCheck | undefined
  /** The export the parent's rows came from: the rerun's rows (its report) carry its ids too. */
  readonly origin?: ExportOrigin | undefined
  /**
   * The mapping profile the parent read its file through, as its journal (or summary) recorded it: its report is
   * in the customer's columns, and the rerun reads its rows and corrections through the same profile.
   */
  readonly map?: ProfileRecord | undefined
}

const parentOf = Effect.fn("Rerun.parent")(function*(target: string) {
  const isDir = fs.existsSync(target) && fs.statSync(target).isDirectory()
  const runDir = Path.resolve(isDir ? target : Path.dirname(target))
  const report = isDir
    ? [reportCsv, reportXlsx].map((f) => Path.join(runDir, f)).find((f) => fs.existsSync(f))
    : Path.resolve(target)
  if (report === undefined || !fs.existsSync(report)) {
    return yield* new RunError({
      message: `${target}: no report to rerun (expected ${isDir ? `${reportCsv} in it` : "a report file"})`
    })
  }
  const journal = Path.join(runDir, journalFile)
  if (fs.existsSync(journal)) {
    const { header: h } = yield* readJournal(journal)
    if (!isResourceName(h.resource)) {
      return yield* new RunError({ message: `${journal} names an unknown resource "${h.resource}"` })
    }
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
      sentTo: runTargetOf(h),
      stale: h.stale,
      origin: h.origin,
      map: h.read.map
    } satisfies ParentInfo
  }
  const summaryPath = Path.join(runDir, summaryFile)
  const summary = yield* readJsonFile(summaryPath, RunKind).pipe(
    Effect.mapError((error) =>
      new RunError({
        message: error.reason === "Missing"
          ? `${target}: cannot tell which resource the report is for: keep it in its run directory (beside ${journalFile} or ${summaryFile})`
          : `${error.message}: cannot tell which resource and mode the run had`
      })
    )
  )
  const mode = summary.mode
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
    sentTo: undefined,
    map: summary.mapping
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

/**
 * A correction cell that clears the original value (a blank cell keeps it: a corrections sheet is rectangular, so
 * most of its cells are blank). Compared trimmed and case-insensitively; `#` starts no number, date or key, and a
 * spreadsheet keeps it as typed.
 */
const clearMarker = "#clear"

/** The original cell under a correction's cell: kept when the correction is blank, emptied by the clear marker. */
const overlay = (original: string, correction: string | undefined): string => {
  if (correction === undefined || correction.trim() === "") return original
  return correction.trim().toLowerCase() === clearMarker ? "" : correction
}

interface Correction {
  /** Its row in the corrections file. */
  readonly line: number
  /** Column name (lower case) → cell. */
  readonly values: Map<string, string>
}

interface Corrections {
  readonly file: string
  readonly byRow: boolean
  /** Its columns, as written (tool columns left out). */
  readonly columns: ReadonlyArray<string>
  /** Identity (row number, or key values) → the correction. */
  readonly rows: Map<string, Correction>
  readonly identity: (cells: (name: string) => string, row: number) => string | undefined
}

const readCorrections = Effect.fn("Rerun.corrections")(
  function*(file: string, r: Resource, decimal: ImportJob["decimal"], mapped: ProfileRecord | undefined) {
    const input = yield* openInput(file, autoRead, r.name)
    const header = input.source.header
    const lower = header.map((h) => h.trim().toLowerCase())
    const byRow = lower.includes("_row")
    if (!byRow && mapped !== undefined) {
      // The corrections are in the customer's columns, where the key may be composed from several of them.
      return yield* new UsageError({
        message:
          `--fixed ${file}: needs a _row column (the run read its file through the mapping profile ${mapped.file}: corrections in the customer's columns are matched by the report's _row)`
      })
    }
    const groups = identityNames(r)
    if (!byRow && (r.key === undefined || groups.length === 0)) {
      return yield* new UsageError({
        message: `--fixed ${file}: needs a _row column (${r.name} records have no key to match the rows by)`
      })
    }
    const absent = groups.find((names) => !names.some((n) => lower.includes(n.toLowerCase())))
    if (!byRow && absent !== undefined) {
      // A misspelt key column would leave every correction unmatched.
      return yield* new InputError({
        file: input.file,
        column: absent[0]!,
        detail: `a corrections file needs a _row column or the column its rows are matched by: ${
          absent.map((n) => `"${n}"`).join(" or ")
        }`
      })
    }
    const identity = (cell: (name: string) => string, row: number): string | undefined => {
      if (byRow) return String(row)
      // Keys name records as the service compares them (`C-2` and `c-2` are one record).
      const parts = groups.map((names) => names.map((n) => normalKey(cell(n))).find((v) => v !== "") ?? "")
      return parts.some((p) => p === "") ? undefined : parts.join("\u0000")
    }
    const rows = new Map<string, Correction>()
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
          return yield* new UsageError({
            message: `--fixed ${file} (row ${row.row}): _row "${row.cells[rowIndex] ?? ""}" is not a row number`
          })
        }
        const id = identity((n) => values.get(n.toLowerCase()) ?? "", number)
        if (id === undefined) {
          return yield* new UsageError({
            message: `--fixed ${file} (row ${row.row}): the key to match the row by is empty`
          })
        }
        if (rows.has(id)) {
          return yield* new UsageError({
            message: `--fixed ${file} (row ${row.row}): a second correction for the same row`
          })
        }
        rows.set(id, { line: row.row, values })
      }))
    return { file: input.file, byRow, columns: input.columns, rows, identity } satisfies Corrections
  }
)

/** A row of the report as the rerun sees it: its original number and status, its cells with the correction laid over. */
interface MergedRow {
  /** The `_row` cell (the row of the original file). */
  readonly rowText: string
  readonly row: number
  readonly selected: boolean
  /** The identity of the correction laid over it. */
  readonly corrected: string | undefined
  /** The report's columns, then the columns only the corrections have, then a ragged row's cells beyond them. */
  readonly cells: ReadonlyArray<string>
  readonly ragged: boolean
}

/**
 * The report's rows merged with their corrections. A row is selected when its status is; an invalid row only
 * when it has a correction (without one it would fail the same way, or, worse, pass in isolation).
 */
const mergedReport = Effect.fn("Rerun.report")(
  function*(report: string, r: Resource, only: ReadonlySet<string>, corrections: Corrections | undefined) {
    const input = yield* openInput(report, autoRead, r.name)
    const lower = input.source.header.map((h) => h.trim().toLowerCase())
    const rowAt = lower.indexOf("_row")
    const statusAt = lower.indexOf("_status")
    if (rowAt < 0 || statusAt < 0) {
      return yield* new UsageError({
        message: `${report} is not a report of this tool: it has no _row and _status columns`
      })
    }
    const columns = input.columns
    const colLower = columns.map((c) => c.trim().toLowerCase())
    // Columns the corrections add (a value the original file did not have a column for).
    const added = (corrections?.columns ?? []).filter((c) => !colLower.includes(c.trim().toLowerCase()))
    const rows = Stream.map(input.source.rows, (row): MergedRow => {
      const rowText = (row.cells[rowAt] ?? "").trim()
      const number = Number(rowText)
      // A dry run's report says `would-create`: its rows are selected as `created`.
      const status = statusOfShown(row.cells[statusAt] ?? "")
      const all = input.cellsOf(row)
      const cells = all.slice(0, columns.length)
      // A ragged row's cells beyond the header stay beyond every column (and keep the row invalid).
      const beyond = all.slice(columns.length)
      const id = corrections?.identity((n) => cells[colLower.indexOf(n.toLowerCase())] ?? "", number)
      const fix = id === undefined ? undefined : corrections!.rows.get(id)
      const selected = only.has(status) && (status !== "invalid" || fix !== undefined)
      const merged = selected && fix !== undefined
        ? [
          ...cells.map((c, i) => overlay(c, fix.values.get(colLower[i]!))),
          ...added.map((c) => overlay("", fix.values.get(c.trim().toLowerCase())))
        ]
        : [...cells, ...added.map(() => "")]
      return {
        rowText,
        row: number,
        selected,
        corrected: fix !== undefined ? id : undefined,
        cells: [...merged, ...beyond],
        ragged: beyond.some((c) => c.trim() !== "")
      }
    })
    return { header: [...columns, ...added], rows }
  }
)

interface Survey {
  readonly count: number
  /** Selected rows invalid against the whole original file: row → `_error`. */
  readonly invalid: ReadonlyMap<number, string>
  /** Identities of corrections laid over a selected row, and of those that match a row of the report at all. */
  readonly used: ReadonlySet<string>
  readonly matched: ReadonlySet<string>
  readonly formats: Formats | undefined
}

/**
 * The reports of the whole family of the run `runDir`, oldest first: the original import's, then every rerun's in
 * the order they started — the run's own ancestors, and every other rerun of any of them (`reruns.ndjson`: a
 * second rerun of one run sees the keys an earlier rerun of it used). Dry runs changed nothing and are left out
 * (but `runDir` itself, whose rows are being rerun, is not). A rerun's report holds only its own rows, so the whole
 * file is the original report with the later reports laid over it.
 */
const familyReports = Effect.fn("Rerun.family")(function*(runDir: string) {
  const dirs = new Map<string, { started: string; dryRun: boolean }>()
  let dir = Path.resolve(runDir)
  let origin = dir
  for (;;) {
    const journal = Path.join(dir, journalFile)
    if (!fs.existsSync(journal) || dirs.has(dir)) break
    const header = (yield* readJournal(journal)).header
    dirs.set(dir, { started: header.started, dryRun: header.dryRun })
    origin = dir
    if (header.parent === undefined) break
    const parentDir = Path.resolve(header.parent.runDir)
    if (!fs.existsSync(parentDir)) {
      return yield* new RunError({
        message:
          `${dir} is a rerun of ${parentDir}, which has no report any more: its rows cannot be checked against the whole original file`
      })
    }
    if (!fs.existsSync(Path.join(parentDir, journalFile))) {
      // The parent is a `validate` run: its report is the whole file.
      dirs.set(parentDir, { started: "", dryRun: false })
      origin = parentDir
      break
    }
    dir = parentDir
  }
  if (!dirs.has(origin)) dirs.set(origin, { started: "", dryRun: false })
  for (const rerun of yield* rerunsOf(origin)) {
    if (!dirs.has(rerun.runDir)) dirs.set(rerun.runDir, { started: rerun.header.started, dryRun: rerun.header.dryRun })
  }
  const members = [...dirs]
    .filter(([d, m]) => d === origin || d === Path.resolve(runDir) || !m.dryRun)
    .sort(([a, x], [b, y]) => (a === origin ? -1 : b === origin ? 1 : x.started.localeCompare(y.started)))
  const reports: Array<string> = []
  for (const [d] of members) {
    const report = [reportCsv, reportXlsx].map((f) => Path.join(d, f)).find((f) => fs.existsSync(f))
    if (report === undefined) {
      return yield* new RunError({
        message: `${d} has no report any more: the rows of ${runDir} cannot be checked against the whole original file`
      })
    }
    reports.push(report)
  }
  return reports
})

/**
 * Every row of the original file as it stands now, in order: the original report's rows, each replaced by its
 * latest rerun's (the reports of `ancestors` after the first, then `rows`, the report being rerun, with its
 * corrections). Only the rows of the reruns are held in memory.
 */
const wholeFile = Effect.fn("Rerun.wholeFile")(function*(
  ancestors: ReadonlyArray<string>,
  header: ReadonlyArray<string>,
  rows: Stream.Stream<MergedRow, InputError>,
  r: Resource
) {
  if (ancestors.length <= 1) return rows
  const positions = header.map((h) => h.trim().toLowerCase())
  /** A report's rows: `_row` and its cells placed under `header`'s columns. */
  const readReport = (report: string) =>
    Effect.gen(function*() {
      const input = yield* openInput(report, autoRead, r.name)
      const rowAt = input.source.header.findIndex((h) => h.trim().toLowerCase() === "_row")
      if (rowAt < 0) {
        return yield* new UsageError({ message: `${report} is not a report of this tool: it has no _row column` })
      }
      const at = input.columns.map((c) => positions.indexOf(c.trim().toLowerCase()))
      return Stream.map(input.source.rows, (row) => {
        const all = input.cellsOf(row)
        const cells = header.map(() => "")
        at.forEach((p, i) => {
          if (p >= 0) cells[p] = all[i] ?? ""
        })
        return { row: Number((row.cells[rowAt] ?? "").trim()), cells }
      })
    })
  const later = new Map<number, MergedRow>()
  for (const report of ancestors.slice(1)) {
    yield* Stream.runForEach(
      yield* readReport(report),
      (x) =>
        Effect.sync(() =>
          later.set(x.row, {
            rowText: String(x.row),
            row: x.row,
            selected: false,
            corrected: undefined,
            cells: x.cells,
            ragged: false
          })
        )
    )
  }
  // The rows being rerun, as corrected, over everything; their other rows stand as the latest report left them.
  yield* Stream.runForEach(
    rows,
    (m) => Effect.sync(() => (m.selected || !later.has(m.row) ? later.set(m.row, m) : undefined))
  )
  const original = yield* readReport(ancestors[0]!)
  return Stream.map(
    original,
    (x): MergedRow =>
      later.get(x.row) ??
        { rowText: String(x.row), row: x.row, selected: false, corrected: undefined, cells: x.cells, ragged: false }
  )
})

/**
 * Counts the selected rows and, when corrections change them, validates the merged rows in the context of every
 * row of the original file: a corrected key that repeats another row's (in any case) stays invalid, as it would
 * have been in the original file.
 */
const survey = Effect.fn("Rerun.survey")(
  function*(info: ParentInfo, r: Resource, only: ReadonlySet<string>, corrections: Corrections | undefined) {
    const { header, rows } = yield* mergedReport(info.report, r, only, corrections)
    const used = new Set<string>()
    const matched = new Set<string>()
    const count = yield* Stream.runFold(rows, 0, (n, m) => {
      if (m.corrected !== undefined) {
        matched.add(m.corrected)
        if (m.selected) used.add(m.corrected)
      }
      return m.selected ? n + 1 : n
    })
    if (corrections === undefined || count === 0) {
      return { count, invalid: new Map(), used, matched, formats: undefined } satisfies Survey
    }
    const parse: ParseOptions = {
      dateFormat: info.dateFormat,
      decimal: info.decimal,
      mode: info.mode,
      baseDir: info.baseDir ?? Path.dirname(info.report),
      maxAttachmentBytes: info.maxAttachmentBytes ?? defaultMaxAttachmentBytes,
      restoreGuard: false
    }
    const context = yield* wholeFile(yield* familyReports(info.runDir), header, rows, r)
    const sourceRow = (m: MergedRow): SourceRow => ({
      row: m.row,
      cells: m.cells,
      ...(m.ragged ? { ragged: true } : {})
    })
    const selected = new Set<number>()
    const merged = Stream.map(context, (m) => {
      if (m.selected) selected.add(m.row)
      return sourceRow(m)
    })
    // A mapped run's rows are in the customer's columns: validated as the profile makes them, as the run did.
    const through = info.map !== undefined
      ? yield* applyProfile(
        { file: corrections.file, format: "csv", header, headerRow: 1, writtenByTool: true, rows: merged },
        info.map,
        r,
        true
      )
      : undefined
    const checkedRows = through?.source.rows ?? merged
    const checkedParse: ParseOptions = through !== undefined
      ? { ...parse, send: through.mapping.send, alternateKeys: through.mapping.alternateKeys }
      : parse
    // A header the corrections spoil (a column that repeats a field, a misspelt key) is the corrections file's fault.
    const plan = yield* planColumns(r, corrections.file, through?.source.header ?? header, checkedParse)
    const formats = yield* inferFormats(plan, checkedRows, checkedParse)
    const validator = makeValidator(plan, formats, checkedParse)
    const invalid = new Map<number, string>()
    yield* Stream.runForEach(checkedRows, (row) =>
      Effect.map(validator.validate(row), (result) => {
        if (selected.has(row.row) && result._tag === "Invalid") invalid.set(row.row, formatErrors(result.errors))
      }))
    return { count, invalid, used, matched, formats } satisfies Survey
  }
)

/**
 * Copies the selected rows of the report (corrected) into `rows.csv` of the new run. A row found invalid against
 * the whole original file carries that verdict in `_error`, so the run (and a resume of it) reports it invalid.
 */
const copyRows = Effect.fn("Rerun.copyRows")(function*(
  info: ParentInfo,
  r: Resource,
  only: ReadonlySet<string>,
  corrections: Corrections | undefined,
  invalid: ReadonlyMap<number, string>,
  dir: string
) {
  const { header, rows } = yield* mergedReport(info.report, r, only, corrections)
  yield* Effect.scoped(
    Effect.gen(function*() {
      const writer = yield* openCsvWriter(Path.join(dir, rowsFile), ["_row", verdictColumn, ...header], {
        bom: false,
        guard: false
      })
      yield* Stream.runForEach(
        rows,
        (m) => (m.selected ? writer.write([m.rowText, invalid.get(m.row) ?? "", ...m.cells]) : Effect.void)
      )
      yield* writer.close
    })
  )
})

interface RerunOutcome {
  /** Undefined when no row of the report had a selected status (nothing was run). */
  readonly result: RunResult | undefined
  readonly parent: ParentRun
  readonly selected: number
}

export const rerun = Effect.fn("Rerun.run")(function*(
  request: RerunRequest,
  options: RerunOptions = {}
): Effect.fn.Return<RerunOutcome, ImportError | InputError, Api | ImportServices> {
  const info = yield* parentOf(request.target)
  const r = resourceOf(info.resource)
  const only = request.only ?? (request.fixed !== undefined ? [...defaultOnly, "invalid" as const] : defaultOnly)
  if (only.includes("invalid") && request.fixed === undefined) {
    return yield* new UsageError({
      message: "rerunning invalid rows needs their corrections: --fixed FILE (rows matched by _row, else by key)"
    })
  }
  const parent: ParentRun = {
    runDir: info.runDir,
    report: info.report,
    only: [...only],
    ...(request.fixed !== undefined ? { fixed: Path.resolve(request.fixed) } : {})
  }
  const onlySet = new Set<string>(only)
  const corrections = request.fixed !== undefined
    ? yield* readCorrections(request.fixed, r, info.decimal, info.map)
    : undefined
  const found = yield* survey(info, r, onlySet, corrections)
  if (corrections !== undefined && corrections.byRow) {
    // A correction for a row the report does not have is a mistake in the corrections (a typo in _row), not a
    // row to skip quietly: stop before anything is sent.
    const stray = [...corrections.rows].find(([id]) => !found.matched.has(id))
    if (stray !== undefined) {
      return yield* new InputError({
        file: corrections.file,
        row: stray[1].line,
        column: "_row",
        detail: `row ${stray[0]} is not a row of ${info.report}`
      })
    }
  }
  if (found.count === 0) return { result: undefined, parent, selected: 0 }

  const runDir = yield* createRunDir(request.out(info.resource))
  // Before anything is sent: the parent knows its rerun (an undo of it takes this one back too).
  const unlinked = yield* recordRerun(info.runDir, runDir)
  const { say } = yield* Notices
  if (unlinked !== undefined) yield* say(`warning: ${unlinked}`)
  yield* copyRows(info, r, onlySet, corrections, found.invalid, runDir)
  if (corrections !== undefined) {
    const unused = [...corrections.rows.keys()].filter((k) => !found.used.has(k))
    if (unused.length > 0) {
      const shown = unused.slice(0, 5).map((
        k
      ) => (corrections.byRow ? `_row ${k}` : `row ${corrections.rows.get(k)!.line}`))
      yield* say(
        `warning: ${unused.length} correction${
          unused.length > 1 ? "s" : ""
        } in ${corrections.file} match no row selected for the rerun (${shown.join(", ")}${
          unused.length > 5 ? ", …" : ""
        })`
      )
    }
  }
  const job: ImportJob = {
    ...options,
    command: "rerun",
    resource: info.resource,
    file: Path.join(runDir, rowsFile),
    // A mapped run's rows are in the customer's columns: read through the profile the parent recorded.
    read: { encoding: "utf-8", delimiter: ",", ...(info.map !== undefined ? { map: info.map } : {}) },
    // The formats the whole merged file settles on, when the parent left them to `auto`.
    dateFormat: found.formats?.dateFormat ?? info.dateFormat,
    decimal: found.formats?.decimal ?? info.decimal,
    mode: info.mode,
    dryRun: request.dryRun,
    verify: false,
    runDir,
    baseDir: info.baseDir ?? Path.dirname(info.report),
    attachmentsRoot: request.attachmentsRoot ?? info.attachmentsRoot,
    maxAttachmentBytes: info.maxAttachmentBytes,
    rowColumn: "_row",
    parent,
    ...(info.stale !== undefined ? { fingerprints: info.stale.fingerprints } : {}),
    ...(info.origin !== undefined ? { origin: info.origin } : {}),
    onConflict: request.onConflict
  }
  // The new run directory already holds rows.csv: the pipeline only refuses directories holding a run.
  const result = yield* runImport(job)
  return { result, parent, selected: found.count }
})

/** `failed,in-doubt` → the statuses, or why not. */
export const parseOnly = (text: string): Either.Either<ReadonlyArray<Status>, string> => {
  const names = text.split(",").map(statusOfShown).filter((s) => s !== "")
  const bad = names.filter((n) => !(Status.literals as ReadonlyArray<string>).includes(n))
  if (names.length === 0) return Either.left("--only: name at least one status")
  if (bad.length > 0) {
    return Either.left(
      `--only: unknown status ${bad.map((b) => `"${b}"`).join(", ")} (statuses: ${Status.literals.join(", ")})`
    )
  }
  return Either.right(names as ReadonlyArray<Status>)
}
