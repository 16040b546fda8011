/**
 * Numbers in cells with a decimal point or a decimal comma (pt-BR: `1.234,56`), thousands separators being the
 * other mark in groups of three, and what one cell tells about a file's decimal mark (`decimalShape`).
 */
import { t } from "../Messages.js"
import { Invalid, quote } from "./Invalid.js"
import type { Formats } from "./Model.js"

export type Decimal = Formats["decimal"]

const grammar: Record<Decimal, RegExp> = {
  ".": /^[+-]?(?:(?:[1-9]\d{0,2}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?$/,
  ",": /^[+-]?(?:(?:[1-9]\d{0,2}(?:\.\d{3})+|\d+)(?:,\d+)?|,\d+)(?:[eE][+-]?\d+)?$/
}
const example: Record<Decimal, string> = { ".": "1,234.56", ",": "1.234,56" }
const markName = { ".": "number.decimalPoint", ",": "number.decimalComma" } as const
const other = (d: Decimal): Decimal => (d === "." ? "," : ".")

/**
 * Most cells are digits with at most the decimal mark (`30`, `-23,5000`): a subset of `grammar` read without
 * removing thousands separators (a large file's number cells are read twice, for validation and for the report).
 */
const plainForm: Record<Decimal, RegExp> = { ".": /^[+-]?\d+(?:\.\d+)?$/, ",": /^[+-]?\d+(?:,\d+)?$/ }

/** The cell's number under `decimal`, or undefined when it is not written that way. */
const read = (text: string, decimal: Decimal): number | undefined => {
  let plain: string
  if (plainForm[decimal].test(text)) plain = decimal === "," ? text.replace(",", ".") : text
  else if (grammar[decimal].test(text)) {
    plain = decimal === "." ? text.replaceAll(",", "") : text.replaceAll(".", "").replace(",", ".")
  } else return undefined
  const n = Number(plain)
  return Number.isFinite(n) ? n : undefined
}

export const parseNumber = (text: string, decimal: Decimal): number | Invalid => {
  const n = read(text, decimal)
  if (n !== undefined) return n
  if (read(text, other(decimal)) !== undefined) {
    return new Invalid(
      t("number.wrongMark", { value: quote(text), mark: t(markName[decimal]), example: example[decimal] })
    )
  }
  return new Invalid(t("number.notNumber", { value: quote(text) }))
}

/**
 * `dot`/`comma`: the cell reads as a number only with that decimal mark (`12,5`, `1.234,56`); `either`: it
 * reads both ways with different values (`1,234`); `none`: one value either way (`12`) or not a number.
 */
type DecimalShape = "dot" | "comma" | "either" | "none"

export const decimalShape = (text: string): DecimalShape => {
  const dot = read(text, ".")
  const comma = read(text, ",")
  if (dot !== undefined && comma !== undefined) return dot === comma ? "none" : "either"
  return dot !== undefined ? "dot" : comma !== undefined ? "comma" : "none"
}

/** Message part for a value outside `[min, max]`. */
export const outOfRange = (text: string, min: number | undefined, max: number | undefined): Invalid =>
  new Invalid(
    min !== undefined && max !== undefined
      ? t("number.outOfRange", { value: quote(text), min, max })
      : min !== undefined
      ? t("number.tooSmall", { value: quote(text), min })
      : t("number.tooLargeMax", { value: quote(text), max: String(max) })
  )

/** `"1,234" reads as 1234 with a decimal point and as 1.234 with a decimal comma` — for ambiguity messages. */
export const numberReadings = (text: string): string =>
  t("formats.numberReadings", { value: quote(text), point: String(read(text, ".")), comma: String(read(text, ",")) })
