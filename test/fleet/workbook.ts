/** The onboarding workbook the fleet's onboarding tests submit. */
import "../../src/files/ExcelSax.js" // before exceljs: mends its UTF-8 decoding
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"

/** Two segments, `customers` customers (every third in the second segment), an equipment for each of the first 5. */
export const workbookFile = (dir: string, name: string, customers: number) =>
  Effect.promise(async () => {
    const book = new ExcelJS.Workbook()
    book.addWorksheet("README").addRows([["notes, not data"]])
    book.addWorksheet("segments").addRows([["description"], ["Varejo"], ["Atacado"]])
    book.addWorksheet("customers").addRows([
      ["externalId", "name", "segmentDescription"],
      ...Array.from(
        { length: customers },
        (_, i) => [`C-${i + 1}`, `Cliente ${i + 1}`, i % 3 === 2 ? "Atacado" : "Varejo"]
      )
    ])
    book.addWorksheet("equipments").addRows([
      ["externalId", "name", "associatedCustomerExternalId"],
      ...Array.from({ length: 5 }, (_, i) => [`E-${i + 1}`, `Split ${i + 1}`, `C-${i + 1}`])
    ])
    const file = Path.join(dir, name)
    writeFileSync(file, new Uint8Array(await book.xlsx.writeBuffer()))
    return file
  })
