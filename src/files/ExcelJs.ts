/**
 * exceljs, loaded on first use: it weighs ~22 MB of memory and a sixth of a second of start-up, which a command
 * that never touches a workbook (a CSV import, `validate` of a CSV, the sandbox) should not pay. Loading goes
 * through here only, so its UTF-8 mend (ExcelSax) is always in place first.
 */
import type ExcelJSModule from "exceljs"

export type ExcelJS = typeof ExcelJSModule

let loading: Promise<ExcelJS> | undefined

export const loadExcelJs = (): Promise<
  ExcelJS
> => (loading ??= import("./ExcelSax.js").then(() => import("exceljs")).then((m) => m.default))
