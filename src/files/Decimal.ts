/**
 * Numbers as cell text: plain decimal notation with `.` as the decimal mark, never an exponent. Spreadsheet
 * values are first rounded to the 15 significant digits Excel itself keeps, which removes binary float noise
 * (`0.1 + 0.2` is stored as `0.30000000000000004` but shown, and meant, as `0.3`).
 */

/** `n` in plain decimal notation; `significant` rounds first (Excel keeps 15 digits). */
export const decimalText = (n: number, significant?: number): string => {
  if (!Number.isFinite(n)) return String(n)
  const value = significant === undefined ? n : Number(n.toPrecision(significant))
  if (Object.is(value, -0) || value === 0) return "0"
  const text = String(value)
  if (!/e/i.test(text)) return text
  const [mantissa, exponent] = value.toExponential().split("e") as [string, string]
  const negative = mantissa.startsWith("-")
  const digits = mantissa.replace("-", "").replace(".", "")
  // `digits` is d.ddd…: the decimal point sits after (exponent + 1) digits.
  const point = Number(exponent) + 1
  const body = point <= 0
    ? `0.${"0".repeat(-point)}${digits}`
    : point >= digits.length
    ? `${digits}${"0".repeat(point - digits.length)}`
    : `${digits.slice(0, point)}.${digits.slice(point)}`
  return negative ? `-${body}` : body
}

/** A number read from a spreadsheet cell, as the text a user typed. */
export const spreadsheetNumber = (n: number): string => decimalText(n, 15)
