/** The onboarding workbooks and customer files the fleet's tests submit. */
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { customersFile } from "../drills/support.js"
import { writeCustomerWorkbook } from "./customer-workbook.mjs"

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

/**
 * A customer's workbook: `Segmentos` (Descrição) and `Clientes` (Código, Nome, Segmento), `customers` rows, each name
 * padded with `noise` random characters (so that a big workbook stays big once zipped), a picture of `picture` random
 * bytes beside the segments when asked (megabytes without rows: no reader of rows parses them); and the two profiles.
 */
export const customerWorkbook = (dir: string, customers: number, noise = 0, picture = 0) =>
  Effect.promise(() => writeCustomerWorkbook(dir, customers, noise, "cadastro.xlsx", picture))

/**
 * A customer's onboarding directory as a Brazilian implementer exports it: `segments.csv` and `customers.csv` in
 * Windows-1252, `;`, CRLF, Portuguese headers (Descrição; Código, Nome, Segmento) and accented names, read through
 * `--map` profiles; `customers` rows. The files' bytes are given to compare what the store keeps.
 */
export const customerCsvDirectory = (dir: string, customers: number) => {
  const input = Path.join(dir, "cadastro")
  mkdirSync(input, { recursive: true })
  const csv = (rows: ReadonlyArray<ReadonlyArray<string>>) =>
    Buffer.from(rows.map((r) => r.join(";")).join("\r\n") + "\r\n", "latin1")
  const files = {
    "segments.csv": csv([["Descrição"], ["Varejo"], ["Atacado"]]),
    "customers.csv": csv([
      ["Código", "Nome", "Segmento"],
      ...Array.from({ length: customers }, (_, i) => [
        `C-${i + 1}`,
        `Padaria São João ${i + 1}`,
        i % 3 === 2 ? "Atacado" : "Varejo"
      ])
    ])
  }
  for (const [name, bytes] of Object.entries(files)) writeFileSync(Path.join(input, name), bytes)
  const profile = (name: string, body: Record<string, unknown>) => {
    const path = Path.join(dir, name)
    writeFileSync(path, JSON.stringify(body))
    return path
  }
  const maps = [
    `segments=${profile("segmentos.map.json", { resource: "segments", columns: { "Descrição": "description" } })}`,
    `customers=${
      profile("clientes.map.json", {
        resource: "customers",
        columns: { "Código": "externalId", "Nome": "name", "Segmento": "segmentDescription" }
      })
    }`
  ]
  return { input, files, maps: maps.flatMap((m) => ["--map", m]) }
}

/**
 * A customer's CSV as an implementer has it (`clientes.csv` in `dir`): Windows-1252, `;`, CRLF, Portuguese headers
 * (`Código;Nome;CPF/CNPJ`, read through the headers' aliases), accented names; the keys and valid CPFs of the drills'
 * file of `rows` customers.
 */
export const clientesCsv = (dir: string, rows: number) => {
  const source = customersFile(dir, "origem.csv", rows)
  const [, ...lines] = readFileSync(source.file, "utf8").trimEnd().split("\n")
  const text = ["Código;Nome;CPF/CNPJ", ...lines.map((l) => l.replaceAll(",", ";").replace("Cliente", "Ação São João"))]
    .join("\r\n") + "\r\n"
  const file = Path.join(dir, "clientes.csv")
  writeFileSync(file, Buffer.from(text, "latin1"))
  return { file, keys: source.valid }
}
