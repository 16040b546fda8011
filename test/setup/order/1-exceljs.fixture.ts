// Loaded first in its worker by test/setup/excel-order-cli.test.ts: a file that imports exceljs itself, as a test
// that writes a workbook does, without importing src/files/ExcelSax.ts first.
import { assert, it } from "@effect/vitest"
import ExcelJS from "exceljs"

it("imports exceljs before anything of src/", () => {
  assert.isFunction(ExcelJS.Workbook)
})
