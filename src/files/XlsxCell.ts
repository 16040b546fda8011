/**
 * An exceljs cell as the text a user sees: dates as `yyyy-MM-dd` / `yyyy-MM-ddTHH:mm:ss` (times alone as
 * `HH:mm:ss`), numbers in plain decimal notation (and marked as numbers), booleans as `true`/`false`, rich text
 * joined, a hyperlink's text, and a formula's cached result — never the formula itself. Excel's escapes of
 * characters XML cannot carry (`_x000D_` for a CR) are decoded; an error value (`#DIV/0!`, `#N/A` …), typed or a
 * formula's saved result, is a cell without a usable value: its row is invalid, never sent.
 */
import * as Predicate from "effect/Predicate"
import { t } from "../Messages.js"
import { spreadsheetNumber } from "./Decimal.js"

/**
 * A cell that holds no usable value; the reader marks it on its row (`SourceRow.cellProblems`), which is then
 * invalid, naming the column. `shown` is what the report repeats of the cell (the error code, or nothing).
 */
export class CellProblem extends Error {
  constructor(message: string, readonly shown = "") {
    super(message)
  }
}

/**
 * The error values spreadsheets show in a cell (Excel's, its newer ones, LibreOffice's): a cell holding exactly
 * one is an error a spreadsheet saved as text (a CSV saved by Excel writes `#N/A`), never data.
 */
const errorValues = new Set([
  "#NULL!",
  "#DIV/0!",
  "#VALUE!",
  "#REF!",
  "#NAME?",
  "#NUM!",
  "#N/A",
  "#GETTING_DATA",
  "#SPILL!",
  "#CALC!",
  "#FIELD!",
  "#BLOCKED!",
  "#CONNECT!",
  "#UNKNOWN!",
  "#BUSY!"
])

/** The error value a cell's text is, if it is one (`#DIV/0!`, `#N/A`; LibreOffice's `Err:502`). */
export const errorValueOf = (text: string): string | undefined => {
  const t = text.trim()
  if (t.length < 4 || t.length > 14) return undefined
  // Every error value starts with `#` or `Err:`: other cells (nearly all, a cell of each row checked) stop here.
  const first = t.charCodeAt(0)
  if (first !== 35 && first !== 69 && first !== 101) return undefined
  const upper = t.toUpperCase()
  return errorValues.has(upper) || /^ERR:\d{3}$/.test(upper) ? t : undefined
}

/** Excel's date formats: any y, m, d, h, s outside quotes and brackets (`[Red]`, `[$-416]`). */
const isDateFormat = (format: string | undefined): boolean =>
  format !== undefined &&
  /[ymdhsb]/i.test(format.replace(/\[[^\]]*]/g, "").replace(/"[^"]*"/g, "").replace(/[\\_*]./g, ""))

/**
 * What ExcelSax.ts puts before the text of an error cell (`<c t="e">`), which exceljs would otherwise read as a
 * number (NaN) when it is a formula's result. XML cannot carry U+0001, so no text of a cell starts with it.
 */
export const errorMark = "\u0001"

/**
 * exceljs's streaming reader drops what a sheet hides (`<row hidden="1">`, which is also how an AutoFilter hides
 * the rows it filters out, and `<col hidden="1">` or a width of 0). The mend hands it on as hyperlink events (the
 * only events whose attributes exceljs passes through as they are), with one of these refs: the `r:id` is the
 * row's number, or the hidden columns' numbers (1-based) joined by commas. They come before the rows they concern.
 */
export const hiddenRowRef = "fsm-bulk:hidden-row"
export const hiddenColumnsRef = "fsm-bulk:hidden-columns"

/** `_x000D_` → CR: Excel's escape of a character, and `_x005F_` before a literal `_xHHHH_`. */
const excelEscape = /_x([0-9A-Fa-f]{4})_/g
const unescapeExcel = (t: string): string =>
  t.includes("_x") ? t.replace(excelEscape, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : t

const errorProblem = (code: string, formula: boolean) =>
  new CellProblem(
    formula
      ? t("cell.formulaError", { code })
      : t("cell.errorValue", { code }),
    code.startsWith("#") ? code : ""
  )

const msPerDay = 86_400_000
/** Days from Excel's epoch (1899-12-30, or 1904-01-01 in the 1904 date system) to 1970-01-01. */
const epochOffset = (date1904: boolean) => (date1904 ? 24107 : 25569)

const serialToDate = (serial: number, date1904: boolean): Date =>
  new Date(Math.round((serial - epochOffset(date1904)) * msPerDay))

/** A date to the second; the zero day of either date system carries a time alone. */
const dateText = (date: Date): string => {
  if (Number.isNaN(date.getTime())) return ""
  const iso = new Date(Math.round(date.getTime() / 1000) * 1000).toISOString()
  const day = iso.slice(0, 10)
  const time = iso.slice(11, 19)
  if (day === "1899-12-30" || day === "1904-01-01") return time
  return time === "00:00:00" ? day : `${day}T${time}`
}

interface CellInput {
  readonly value: unknown
  readonly numFmt?: string | undefined
}

const richText = (v: Record<string, unknown>): string | undefined =>
  Array.isArray(v["richText"])
    ? unescapeExcel(
      (v["richText"] as Array<{ readonly text?: unknown }>).map((run) => (typeof run.text === "string" ? run.text : ""))
        .join("")
    )
    : undefined

/** A cell's text; `number`: written from a number value, so in plain notation with `.`, whatever the file's mark. */
interface CellReading {
  readonly text: string
  readonly number: boolean
}

const text = (t: string): CellReading => ({ text: t, number: false })

const plain = (value: unknown, numFmt: string | undefined, date1904: boolean): CellReading => {
  if (value === null || value === undefined) return text("")
  if (typeof value === "string") {
    if (value.startsWith(errorMark)) throw errorProblem(value.slice(1), false)
    return text(unescapeExcel(value))
  }
  if (typeof value === "boolean") return text(value ? "true" : "false")
  if (typeof value === "number") {
    if (Number.isNaN(value)) throw errorProblem("#NUM!", false)
    return isDateFormat(numFmt)
      ? text(dateText(serialToDate(value, date1904)))
      : { text: spreadsheetNumber(value), number: true }
  }
  if (value instanceof Date) return text(dateText(value))
  if (Predicate.isRecord(value)) {
    const rich = richText(value)
    if (rich !== undefined) return text(rich)
    if ("formula" in value || "sharedFormula" in value || "result" in value) {
      const result = value["result"]
      if (typeof result === "string" && result.startsWith(errorMark)) throw errorProblem(result.slice(1), true)
      if (Predicate.isRecord(result) && typeof result["error"] === "string") throw errorProblem(result["error"], true)
      // Without ExcelSax's mark, the streaming reader parses every non-text formula result as a number.
      if (typeof result === "number" && Number.isNaN(result)) throw errorProblem("(#N/A, #DIV/0! …)", true)
      if (result === undefined) {
        throw new CellProblem(t("cell.formulaNoResult"))
      }
      return plain(value["result"], numFmt, date1904)
    }
    if (typeof value["error"] === "string") throw errorProblem(value["error"], false)
    if ("hyperlink" in value || "text" in value) return plain(value["text"], numFmt, date1904)
  }
  throw new CellProblem(t("cell.unreadable", { value: JSON.stringify(value) }))
}

export const readCell = (cell: CellInput, date1904: boolean): CellReading => plain(cell.value, cell.numFmt, date1904)
