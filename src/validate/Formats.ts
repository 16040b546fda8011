/**
 * Resolves `--date-format auto` and `--decimal auto` for a whole file, from the
 * evidence its date and number cells carry (`25/12/2026` is day-first, `12,5` has a decimal comma). It never
 * guesses: a file whose every year-last date reads both ways, or whose numbers could be either, or whose cells
 * contradict each other, stops with the column, a row and the flag that settles it. Cells an XLSX reader wrote
 * from number values are no evidence (their `.` is the reader's, and they are read with it whatever the file's
 * mark). Memory is flat: only the first sighting of each kind of evidence is kept.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { InputError } from "../Errors.js"
import type { SourceRow } from "../files/Source.js"
import { t } from "../Messages.js"
import { splitList } from "./Cells.js"
import { cellText } from "./CellText.js"
import { dateShape, readings } from "./Dates.js"
import { quote } from "./Invalid.js"
import type { ColumnPlan, Formats, ParseOptions } from "./Model.js"
import { decimalShape, numberReadings } from "./Numbers.js"

interface Sighting {
  readonly text: string
  readonly row: number
  readonly column: string
}

interface Watched {
  readonly index: number
  readonly name: string
  readonly list: boolean
}

const at = (s: Sighting) => t("formats.at", { value: quote(s.text), row: s.row, column: `"${s.column}"` })

const dateFlags = "--date-format dd/mm/yyyy or --date-format mm/dd/yyyy"
const decimalFlags = "--decimal , or --decimal ."

/** Evidence gathered so far; `observe*` return an error as soon as two cells contradict each other. */
class Evidence {
  dayFirst: Sighting | undefined
  monthFirst: Sighting | undefined
  eitherDate: Sighting | undefined
  dot: Sighting | undefined
  comma: Sighting | undefined
  eitherDecimal: Sighting | undefined

  constructor(readonly file: string) {}

  observeDate(text: string, row: number, column: string): InputError | undefined {
    switch (dateShape(text)) {
      case "dayFirst":
        this.dayFirst ??= { text, row, column }
        break
      case "monthFirst":
        this.monthFirst ??= { text, row, column }
        break
      case "either":
        this.eitherDate ??= { text, row, column }
        return undefined
      default:
        return undefined
    }
    if (this.dayFirst === undefined || this.monthFirst === undefined) return undefined
    const [first, second] = this.dayFirst.row <= this.monthFirst.row
      ? [this.dayFirst, this.monthFirst]
      : [this.monthFirst, this.dayFirst]
    const order = (s: Sighting) => t(s === this.dayFirst ? "formats.dayFirst" : "formats.monthFirst")
    return new InputError({
      file: this.file,
      row: second.row,
      column: second.column,
      detail: t("formats.datesDisagree", {
        first: at(first),
        firstOrder: order(first),
        second: quote(second.text),
        secondOrder: order(second),
        flags: dateFlags
      })
    })
  }

  observeNumber(text: string, row: number, column: string): InputError | undefined {
    switch (decimalShape(text)) {
      case "dot":
        this.dot ??= { text, row, column }
        break
      case "comma":
        this.comma ??= { text, row, column }
        break
      case "either":
        this.eitherDecimal ??= { text, row, column }
        return undefined
      default:
        return undefined
    }
    if (this.dot === undefined || this.comma === undefined) return undefined
    const [first, second] = this.dot.row <= this.comma.row ? [this.dot, this.comma] : [this.comma, this.dot]
    const mark = (s: Sighting) => t(s === this.dot ? "formats.aDecimalPoint" : "formats.aDecimalComma")
    return new InputError({
      file: this.file,
      row: second.row,
      column: second.column,
      detail: t("formats.numbersDisagree", {
        first: at(first),
        firstMark: mark(first),
        second: quote(second.text),
        secondMark: mark(second),
        flags: decimalFlags
      })
    })
  }

  dateFormat(): Effect.Effect<Formats["dateFormat"], InputError> {
    if (this.dayFirst !== undefined) return Effect.succeed("dd/mm/yyyy")
    if (this.monthFirst !== undefined) return Effect.succeed("mm/dd/yyyy")
    const s = this.eitherDate
    if (s === undefined) return Effect.succeed("yyyy-mm-dd")
    return new InputError({
      file: this.file,
      row: s.row,
      column: s.column,
      detail: t("formats.unsettledDates", { readings: readings(s.text), flags: dateFlags })
    })
  }

  decimal(): Effect.Effect<Formats["decimal"], InputError> {
    if (this.comma !== undefined) return Effect.succeed(",")
    if (this.dot !== undefined) return Effect.succeed(".")
    const s = this.eitherDecimal
    if (s === undefined) return Effect.succeed(".")
    return new InputError({
      file: this.file,
      row: s.row,
      column: s.column,
      detail: t("formats.unsettledDecimal", { readings: numberReadings(s.text), flags: decimalFlags })
    })
  }
}

const watch = (plan: ColumnPlan, tag: "date" | "number"): ReadonlyArray<Watched> =>
  plan.columns.flatMap((c) =>
    c.kind === "field" && c.column !== undefined && c.column.field.type._tag === tag
      ? [{ index: c.index, name: c.name, list: c.column.field.list === true }]
      : []
  )

interface Observer {
  readonly evidence: Evidence
  /** Whether the file has date or number columns whose format is `auto`. */
  readonly watching: boolean
  /** Takes in one row's evidence; the error when it contradicts what came before. */
  readonly observe: (row: SourceRow) => InputError | undefined
  /** Every watched kind has decisive evidence: only a contradiction could still change the outcome. */
  readonly settled: () => boolean
  /** The formats the evidence so far gives (or the error that no evidence settles it). */
  readonly formats: Effect.Effect<Formats, InputError>
}

const observer = (plan: ColumnPlan, options: ParseOptions): Observer => {
  // Delete rows check nothing but the record's id or key: no date or number is ever read.
  const reads = options.mode !== "delete"
  const dates = options.dateFormat === "auto" && reads ? watch(plan, "date") : []
  const numbers = options.decimal === "auto" && reads ? watch(plan, "number") : []
  const evidence = new Evidence(plan.file)
  const visit = (
    columns: ReadonlyArray<Watched>,
    row: SourceRow,
    observe: (text: string, row: number, column: string) => InputError | undefined
  ) => {
    for (const c of columns) {
      // Written by the reader from a number value (XLSX): always `.`, it says nothing of how the file types numbers.
      if (row.numbers?.has(c.index) === true) continue
      const text = cellText(row.cells, c.index, options.restoreGuard).trim()
      if (text === "") continue
      if (!c.list) {
        const error = observe(text, row.row, c.name)
        if (error !== undefined) return error
        continue
      }
      for (const item of splitList(text)) {
        const error = observe(item, row.row, c.name)
        if (error !== undefined) return error
      }
    }
    return undefined
  }
  const observeDate = evidence.observeDate.bind(evidence)
  const observeNumber = evidence.observeNumber.bind(evidence)
  return {
    evidence,
    watching: dates.length > 0 || numbers.length > 0,
    observe: (row) => visit(dates, row, observeDate) ?? visit(numbers, row, observeNumber),
    settled: () =>
      (dates.length === 0 || evidence.dayFirst !== undefined || evidence.monthFirst !== undefined) &&
      (numbers.length === 0 || evidence.dot !== undefined || evidence.comma !== undefined),
    formats: Effect.suspend(() =>
      Effect.all({
        dateFormat: options.dateFormat === "auto" ? evidence.dateFormat() : Effect.succeed(options.dateFormat),
        decimal: options.decimal === "auto" ? evidence.decimal() : Effect.succeed(options.decimal)
      })
    )
  }
}

const observeAll = (rows: Stream.Stream<SourceRow, InputError>, observe: Observer["observe"]) =>
  Stream.mapChunksEffect(rows, (chunk) => {
    for (const row of chunk) {
      const error = observe(row)
      if (error !== undefined) return Effect.fail(error)
    }
    return Effect.succeed(chunk)
  })

/** The formats of the whole file, from one pass over its rows. */
export const inferFormats = Effect.fn("Validate.inferFormats")(function*(
  plan: ColumnPlan,
  rows: Stream.Stream<SourceRow, InputError>,
  options: ParseOptions
) {
  const o = observer(plan, options)
  if (o.watching) yield* Stream.runDrain(observeAll(rows, o.observe))
  return yield* o.formats
})

/** How many rows `settleFormats` holds back, at most, while it waits for decisive evidence. */
const lookaheadRows = 20_000

/**
 * The formats and the rows to read with them, in one pass when the file allows: rows are held back only until
 * every watched kind has decisive evidence (usually the first row with a date or a number), then flow on while
 * the rest of the file is still watched, so a later contradiction fails the stream with the same error
 * `inferFormats` gives. A file that has not settled within `lookaheadRows` rows is read twice, as
 * `inferFormats` does. Needs a scope: the rest of the stream is read within it. Nothing is validated before the formats are final, so a row never reads differently.
 */
export const settleFormats = Effect.fn("Validate.settleFormats")(function*(
  plan: ColumnPlan,
  rows: Stream.Stream<SourceRow, InputError>,
  options: ParseOptions,
  lookahead: number = lookaheadRows
) {
  const o = observer(plan, options)
  if (!o.watching) return { formats: yield* o.formats, rows }
  const pull = yield* Stream.toPull(observeAll(rows, o.observe))
  const held: Array<SourceRow> = []
  let ended = false
  while (!ended && !o.settled() && held.length < lookahead) {
    const chunk = yield* Effect.catchAll(
      pull,
      (end) => (Option.isNone(end) ? Effect.sync(() => void (ended = true)) : Effect.fail(end.value))
    )
    if (chunk !== undefined) { for (const row of chunk) held.push(row) }
  }
  const rest = ended ? Stream.empty : Stream.repeatEffectChunkOption(pull)
  if (ended || o.settled()) return { formats: yield* o.formats, rows: Stream.concat(Stream.fromIterable(held), rest) }
  // Not settled within the look-ahead: the rest of the file decides, as for inferFormats, and is read again.
  held.length = 0
  yield* Stream.runDrain(rest)
  return { formats: yield* o.formats, rows }
})
