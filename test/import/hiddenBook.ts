/** The workbook of the hidden-rows tests (in process and through the CLI): a sheet a user filtered. */
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Path from "node:path"

/**
 * A customers sheet as a user leaves it: row 3 hidden by hand, an AutoFilter that hides row 5, and the `note`
 * column (an internal remark) hidden. Data rows 2 to 6.
 */
export const filteredWorkbook = (dir: string) =>
  Effect.promise(async () => {
    const wb = new ExcelJS.Workbook()
    wb.creator = "Microsoft Excel"
    const ws = wb.addWorksheet("clientes")
    ws.addRow(["externalId", "name", "note", "city"])
    ws.addRow(["C-1", "Padaria São João", "Inadimplente", "São Paulo"])
    ws.addRow(["C-2", "Mercado Oculto", "linha escondida", "Campinas"])
    ws.addRow(["C-3", "Açougue Central", "ok", "Santos"])
    ws.addRow(["C-4", "Loja Filtrada", "filtrada", "Recife"])
    ws.addRow(["C-5", "Farmácia Boa", "ok", "São Paulo"])
    ws.getRow(3).hidden = true
    ws.autoFilter = "A1:D6"
    ws.getRow(5).hidden = true
    ws.getColumn(3).hidden = true
    const path = Path.join(dir, "clientes.xlsx")
    await wb.xlsx.writeFile(path)
    return path
  })
