/**
 * A customer's pt-BR onboarding workbook and its two `--map` profiles, written to a folder: sheets `Segmentos`
 * (Descrição) and `Clientes` (Código, Nome, Segmento), `customers` rows, each name padded with `noise` random
 * characters (so that a big workbook stays big once zipped), and, when asked, a picture of `picture` bytes beside
 * the segments (a logo or a photo, as implementers' workbooks carry: megabytes that no reader of rows parses). Plain
 * JavaScript: the fleet's onboarding tests (test/fleet/workbook.ts) and the submit-onboard bench
 * (test/bench/submit-onboard.mjs) build the same input.
 */
import ExcelJS from "exceljs"
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"

/**
 * @param {string} dir
 * @param {number} customers
 * @param {number} [noise]
 * @param {string} [name] the workbook's file name
 * @param {number} [picture] the bytes of a picture on the `Segmentos` sheet (none when 0): random, so they stay as
 *   many once zipped
 * @returns {Promise<{ file: string, maps: Array<string> }>} the workbook's path and `--map` arguments
 */
export const writeCustomerWorkbook = async (dir, customers, noise = 0, name = "cadastro.xlsx", picture = 0) => {
  const book = new ExcelJS.Workbook()
  const segments = book.addWorksheet("Segmentos")
  segments.addRows([["Descrição"], ["Varejo"], ["Atacado"]])
  if (picture > 0) {
    const image = book.addImage({ buffer: randomBytes(picture), extension: "jpeg" })
    segments.addImage(image, "C1:F8")
  }
  const sheet = book.addWorksheet("Clientes")
  sheet.addRow(["Código", "Nome", "Segmento"])
  for (let i = 0; i < customers; i++) {
    sheet.addRow([
      `C-${i + 1}`,
      `Padaria São João ${i + 1}${noise > 0 ? ` ${randomBytes(noise).toString("base64")}` : ""}`,
      i % 3 === 2 ? "Atacado" : "Varejo"
    ])
  }
  const file = Path.join(dir, name)
  writeFileSync(file, new Uint8Array(await book.xlsx.writeBuffer()))
  /** @type {(file: string, body: Record<string, unknown>) => string} */
  const profile = (file, body) => {
    const path = Path.join(dir, file)
    writeFileSync(path, JSON.stringify(body))
    return path
  }
  const segmentsMap = profile("segmentos.map.json", {
    resource: "segments",
    sheet: "Segmentos",
    columns: { "Descrição": "description" }
  })
  const clients = profile("clientes.map.json", {
    resource: "customers",
    sheet: "Clientes",
    columns: { "Código": "externalId", "Nome": "name", "Segmento": "segmentDescription" }
  })
  return { file, maps: ["--map", `segments=${segmentsMap}`, "--map", `customers=${clients}`] }
}
