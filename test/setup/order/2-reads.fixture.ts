// Loaded second in the same worker by test/setup/excel-order-cli.test.ts: reads a workbook through src/, which
// needs exceljs mended (src/files/ExcelSax.ts refuses to load when exceljs came first without its mend).
import { assert, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { loadExcelJs } from "../../../src/files/ExcelJs.js"

it("reads back a workbook whose text crosses exceljs's chunks", async () => {
  const ExcelJS = await loadExcelJs()
  const dir = mkdtempSync(Path.join(tmpdir(), "excel-order-"))
  try {
    const file = Path.join(dir, "clientes.xlsx")
    const book = new ExcelJS.Workbook()
    const sheet = book.addWorksheet("Clientes")
    const names = Array.from({ length: 4_000 }, (_, i) => `Manutenção Elétrica São João nº ${i}`)
    for (const name of names) sheet.addRow([name])
    await book.xlsx.writeFile(file)
    const read: Array<string> = []
    for await (const ws of new ExcelJS.stream.xlsx.WorkbookReader(file, {})) {
      for await (const row of ws) {
        read.push(String((row as { getCell: (n: number) => { value: unknown } }).getCell(1).value))
      }
    }
    assert.deepStrictEqual(read, names)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
