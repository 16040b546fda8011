/**
 * The source file of a run as the pipeline sees it: opened through the readers, fingerprinted (so `resume` can
 * refuse a file that changed since), optionally renumbered by its own `_row` column (a rerun's rows keep the
 * row numbers of the original file), split into the columns a report repeats, and planned for validation.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { statSync } from "node:fs"
import * as Path from "node:path"
import { InputError } from "../Errors.js"
import { restore } from "../files/Guard.js"
import { openSource } from "../files/Read.js"
import type { Source, SourceRow } from "../files/Source.js"
import { sha256File } from "../files/Write.js"
import { applyProfile, type MappingInfo, planLines, skippedRows } from "../mapping/Apply.js"
import { propose } from "../mapping/Propose.js"
import { t } from "../Messages.js"
import { isResourceName, type Resource, resource as resourceOf } from "../Resources.js"
import { shellCommand } from "../Shell.js"
import {
  checked,
  type ColumnPlan,
  defaultMaxAttachmentBytes,
  type ParseOptions,
  planColumns,
  type RowResult,
  type RowValidator
} from "../validate/Validate.js"
import type { ReadSettings } from "./Journal.js"
import { isToolColumn } from "./ToolColumns.js"

/**
 * The column of a rerun's `rows.csv` that holds the verdict the rerun reached against the whole original file: a
 * row it names as invalid (its key repeats another row's …) stays invalid, even though it passes on its own.
 */
export const verdictColumn = "_error"

export interface Input {
  readonly source: Source
  /** Absolute path. */
  readonly file: string
  /**
   * The file's sha256, the first time it is asked for: from the pass over the rows that read the whole file, when
   * one has (a CSV's hash rides on its read), else read for it (an import records it; `validate` never asks).
   */
  readonly sha256: Effect.Effect<string, InputError>
  /** The data rows, numbered as the report shows them. */
  readonly rows: Stream.Stream<SourceRow, InputError>
  /** The source's own columns (an earlier report's tool columns left out), as the report repeats them. */
  readonly columns: ReadonlyArray<string>
  /**
   * A row's cells for those columns, as the user typed them (the formula guard of a tool-written file undone).
   * Cells read from a workbook's number values take `decimal` as their mark (default `.`): a copy read back with
   * that mark (a report a rerun reads) gets the same numbers.
   */
  readonly cellsOf: (row: SourceRow, decimal?: "." | ",") => ReadonlyArray<string>
  /** A rerun's rows (numbered by `_row`): the errors its `_error` cell gives the row, if any. */
  readonly verdictOf: (row: SourceRow) => string | undefined
  /** What a mapping profile (`--map`) did to the file: its header row, column plan, ignored columns, skipped rows. */
  readonly mapping?: MappingInfo
}

export const openInput = Effect.fn("Input.open")(function*(
  file: string,
  read: ReadSettings,
  resource: string,
  /** Number rows by this column's values instead of their position (`_row` of a rerun). */
  rowColumn?: string
) {
  const absolute = Path.resolve(file)
  const sheet = read.sheet ?? read.map?.profile.sheet
  const opened = yield* openSource(absolute, {
    encoding: read.encoding,
    delimiter: read.delimiter,
    resource,
    ...(sheet !== undefined ? { sheet } : {}),
    ...(read.map !== undefined ? { lenientHeader: true } : {}),
    ...(read.includeHidden === true ? { includeHidden: true } : {})
  })
  const mapped = read.map !== undefined && isResourceName(resource)
    ? yield* applyProfile(opened, read.map, resourceOf(resource), rowColumn !== undefined)
    : undefined
  const source = mapped?.source ?? opened
  const mapping = mapped?.mapping
  const sha256 = yield* Effect.cached(
    Effect.suspend(() => {
      const read = source.sha256?.()
      return read !== undefined ? Effect.succeed(read) : sha256File(absolute)
    }).pipe(
      Effect.mapError((e) =>
        new InputError({
          file: absolute,
          detail: `cannot be read: ${e.cause instanceof Error ? e.cause.message : e.message}`,
          cause: e
        })
      )
    )
  )
  // With a mapping profile, the report repeats the file's own header and cells, not the rewritten ones.
  const reportHeader = mapping?.sourceHeader ?? source.header
  const kept = reportHeader.flatMap((name, index) => (isToolColumn(name) ? [] : [{ name, index }]))
  const cellsOf = (row: SourceRow, decimal: "." | "," = "."): ReadonlyArray<string> => {
    const own = row.original ?? row
    const cells = kept.map(({ index }) => {
      const c = own.cells[index] ?? ""
      if (own.numbers?.has(index) === true) return decimal === "," ? c.replace(".", ",") : c
      // The guard is reversed in every file (Guard.restore): a spreadsheet's copy of ours keeps it as text.
      return restore(c)
    })
    // A ragged row's cells beyond the header are kept, so the report loses nothing the user typed.
    if (own.cells.length > reportHeader.length) {
      for (const c of own.cells.slice(reportHeader.length)) cells.push(restore(c))
    }
    return cells
  }

  let rows = source.rows
  let verdictOf: Input["verdictOf"] = () => undefined
  if (rowColumn !== undefined) {
    const at = source.header.findIndex((h) => h.trim().toLowerCase() === verdictColumn)
    if (at >= 0) verdictOf = (row) => (row.cells[at] ?? "").trim() || undefined
    const index = source.header.findIndex((h) => h.trim().toLowerCase() === rowColumn.toLowerCase())
    if (index < 0) {
      return yield* new InputError({ file: absolute, column: rowColumn, detail: `the ${rowColumn} column is missing` })
    }
    rows = Stream.mapEffect(source.rows, (row) => {
      const text = (row.cells[index] ?? "").trim()
      const n = Number(text)
      return Number.isInteger(n) && n >= 2
        ? Effect.succeed({ ...row, row: n })
        : Effect.fail(
          new InputError({ file: absolute, row: row.row, column: rowColumn, detail: `"${text}" is not a row number` })
        )
    })
  }
  return {
    source,
    file: absolute,
    sha256,
    rows,
    columns: kept.map((k) => k.name),
    cellsOf,
    verdictOf,
    ...(mapping !== undefined ? { mapping } : {})
  } satisfies Input
})

/** How a job reads its rows (what `import` and `validate` jobs share). */
export interface RowSettings {
  readonly dateFormat: ParseOptions["dateFormat"]
  readonly decimal: ParseOptions["decimal"]
  readonly mode: ParseOptions["mode"]
  /** Attachment paths are relative to this directory (default: the source file's). */
  readonly baseDir?: string | undefined
  /** `--attachments-root`: attachments must lie inside it (default: `baseDir`). */
  readonly attachmentsRoot?: string | undefined
  readonly maxAttachmentBytes?: number | undefined
}

const sizeOf = (file: string): number | undefined => {
  try {
    return statSync(file).size
  } catch {
    return undefined
  }
}

/** The validation options of `input`'s rows and its column plan; the plan's warnings are said. */
export const planInput = Effect.fn("Input.plan")(function*(
  r: Resource,
  input: Input,
  settings: RowSettings,
  say: (line: string) => Effect.Effect<void>
) {
  const parse: ParseOptions = {
    dateFormat: settings.dateFormat,
    decimal: settings.decimal,
    mode: settings.mode,
    baseDir: settings.baseDir ?? Path.dirname(input.file),
    ...(settings.attachmentsRoot !== undefined ? { attachmentsRoot: Path.resolve(settings.attachmentsRoot) } : {}),
    maxAttachmentBytes: settings.maxAttachmentBytes ?? defaultMaxAttachmentBytes,
    restoreGuard: true,
    ...(input.source.hiddenColumns !== undefined ? { hiddenColumns: input.source.hiddenColumns } : {}),
    ...(input.source.format === "csv" ? { sourceBytes: sizeOf(input.file) } : {}),
    ...(input.mapping !== undefined
      ? { send: input.mapping.send, alternateKeys: input.mapping.alternateKeys }
      : {})
  }
  const mapping = input.mapping
  if (mapping !== undefined) {
    yield* say(
      t("mapping.readWith", {
        file: mapping.record.file,
        sha: mapping.record.sha256.slice(0, 12),
        row: mapping.headerRow
      })
    )
    for (const line of planLines(mapping)) yield* say(line)
  }
  const columns = yield* planColumns(r, input.file, input.source.header, parse).pipe(
    Effect.catchTag(
      "InputError",
      (e) =>
        mapping !== undefined ?
          Effect.fail(e) :
          Effect.flatMap(
            headerHint(r, input),
            (hint) => Effect.fail(new InputError({ ...e, detail: `${e.detail}${hint}` }))
          )
    )
  )
  for (const w of columns.warnings) yield* say(`warning: ${w}`)
  return { parse, columns }
})

/** How many rows of the sheet a header problem shows, and how much of each. */
const rowsShown = 5
const rowWidth = 100

const rowLine = (row: number, cells: ReadonlyArray<string>): string => {
  const filled = cells.map((c) => c.trim())
  while (filled.length > 0 && filled[filled.length - 1] === "") filled.pop()
  const text = filled.length === 0 ? t("header.blank") : filled.join(" | ")
  return `  ${t("header.row", { row, text: text.length > rowWidth ? `${text.slice(0, rowWidth - 1)}…` : text })}`
}

/**
 * What a file's columns that do not fit the resource get said besides (no profile): the row read as the header and
 * the first rows of the sheet, and — when a row further down looks more like a header (a title above the table) —
 * which one, with the `map` command that writes a profile for it. The tool never imports with a guessed header.
 */
const headerHint = (r: Resource, input: Input): Effect.Effect<string> => {
  const source = input.source
  const headerRow = source.headerRow ?? 1
  return Stream.runCollect(Stream.take(source.rows, rowsShown - 1)).pipe(
    Effect.map((chunk) => {
      const candidates = [{ row: headerRow, cells: source.header }, ...Array.from(chunk, (row) => row)]
      const lines = candidates.map((c) => rowLine(c.row, c.cells))
      const likely = propose(r, candidates, {}).headerRow
      const map = shellCommand([
        "fsm-bulk",
        "map",
        r.name,
        input.file,
        ...(source.sheet !== undefined && source.format === "xlsx" ? ["--sheet", source.sheet] : [])
      ])
      const sheet = source.sheet !== undefined ? t("header.ofSheet", { sheet: source.sheet }) : ""
      return `\n${t("header.readFrom", { row: headerRow, sheet })}\n${lines.join("\n")}${
        likely > headerRow ? `\n${t("header.likely", { row: likely, command: map })}` : ""
      }`
    }),
    // The hint is a courtesy: a file that cannot be read again keeps the error as it was.
    Effect.orElseSucceed(() => "")
  )
}

/** `input`'s validator: a row its verdict column names as invalid is invalid with those errors, whatever it holds. */
export const withVerdicts = (validator: RowValidator, input: Input): RowValidator => {
  const check = (row: SourceRow) => {
    const verdict = input.verdictOf(row)
    if (verdict === undefined) return validator.check(row)
    // `column: message; …` as the report writes it; cut at the first ": " it reads back the same.
    const cut = verdict.indexOf(": ")
    const error = cut < 0
      ? { column: verdictColumn, message: verdict }
      : { column: verdict.slice(0, cut), message: verdict.slice(cut + 2) }
    const invalid: RowResult = { _tag: "Invalid", row: row.row, errors: [error] }
    // Still validated: its keys count in the file's duplicate checks.
    const result = validator.check(row)
    return Effect.isEffect(result) ? Effect.as(result, invalid) : invalid
  }
  return { validate: (row) => checked(check(row)), check, heldBytes: validator.heldBytes }
}

/**
 * What a summary says about the file's columns and rows beyond the counts: the columns whose values were not sent
 * and, with a profile, the profile (file, sha256, content) and the rows skipped as not data.
 */
export const columnsSummary = (input: Input, plan: ColumnPlan) => {
  const unknown = plan.columns.filter((c) => c.kind === "unknown").map((c) => c.name)
  const ignored = input.mapping !== undefined ? [...input.mapping.ignored, ...unknown] : unknown
  const hidden = (input.source.hiddenColumns ?? []).flatMap((i) => {
    const name = input.source.header[i]?.trim() ?? ""
    return name === "" || isToolColumn(name) ? [] : [name]
  })
  return {
    ...(ignored.length > 0 ? { ignoredColumns: ignored } : {}),
    ...(hidden.length > 0 ? { hiddenColumns: hidden } : {}),
    ...(input.mapping !== undefined
      ? {
        mapping: {
          file: input.mapping.record.file,
          sha256: input.mapping.record.sha256,
          headerRow: input.mapping.headerRow,
          skippedRows: skippedRows(input.mapping),
          plan: input.mapping.plan.filter((p) => p.how !== "tool column"),
          profile: input.mapping.record.profile
        }
      }
      : {})
  }
}
