/**
 * A customers CSV as Brazilian implementers hand it over, for measuring `validate` on text like theirs (the
 * bench's own file, data.mjs, is all ASCII and Latin-1): Windows-1252, `;`, CRLF, decimal commas, accented names
 * and addresses (ç, ã, é: Latin-1), dashes in half the company names and a third of the addresses, typographic
 * quotes and € in some notes (“ ” – €: in Windows-1252, but beyond Latin-1 once decoded, so about two rows in three
 * hold a two-byte string in V8), and some rows a report must
 * treat with care: invalid values, formulas, control characters, a line break inside a cell, a duplicate key.
 *
 *   node test/bench/varied.mjs [rows=200000]   (prints the file's path; generated once into test/bench/data/)
 */
import { once } from "node:events"
import { createWriteStream, existsSync, mkdirSync, renameSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { customerCells, dataDir, offlineColumns } from "./data.mjs"

const names = ["Padaria São João", "Açougue Irmãos Câmara", "Farmácia Popular", "Mercadinho Conceição", "Ótica Visão"]
const streets = ["Rua da Consolação", "Av. Brigadeiro Faria Lima", "Praça da Sé", "Rua Três Corações", "Av. Atlântica"]
const notes = [
  "",
  "cliente antigo",
  "entregar após às 14h – portão lateral",
  "pediu “orçamento” de manutenção",
  "contrato renovado: R$ 1.234,50 (≈ € 210,00)",
  "atenção: cão no quintal",
  "falar com o Sr. Antônio — gerente"
]

/** Row `i`'s cells: the bench's customer with pt-BR text, and one row in 13 with a value a report must handle. */
export const variedCells = (i) => {
  const cells = customerCells(i, offlineColumns)
  const at = (column) => offlineColumns.indexOf(column)
  cells[at("name")] = `${names[i % names.length]} ${i + 1}`
  cells[at("legalName")] = `${names[i % names.length]} Comércio de Alimentos Ltda${i % 2 === 0 ? " – ME" : ""}`
  cells[at("address")] = `${streets[i % streets.length]}, ${(i % 1500) + 1}${i % 3 === 0 ? " –" : ","} São Paulo/SP`
  cells[at("note")] = notes[i % notes.length]
  switch (i % 13) {
    case 1:
      cells[at("cpfCnpj")] = "123.456.789-00" // wrong check digits
      break
    case 3:
      cells[at("name")] = "=HIPERLINK(\"http://exemplo\";\"clique\")"
      break
    case 5:
      cells[at("note")] = "linha 1\r\nlinha 2 com \"aspas\" e ; no meio"
      break
    case 7:
      cells[at("latitude")] = "-23.5.1" // not a number
      break
    case 8:
      cells[at("note")] = "controle\u0001\u0007 e\ttab"
      break
    case 10:
      cells[at("active")] = "talvez"
      break
    case 11:
      cells[at("email")] = "joão@@exemplo"
      break
    case 12:
      cells[at("externalId")] = "CLI-0000001" // the first row's key again
      break
  }
  return cells
}

const cell = (text) => (/[;"\r\n]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text)

/** Windows-1252 bytes of text whose every character is in that code page. */
const cp1252 = new Map([["€", 0x80], ["–", 0x96], ["—", 0x97], ["“", 0x93], ["”", 0x94]])
const encode = (text) => {
  const bytes = Buffer.allocUnsafe(text.length)
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const byte = code < 256 ? code : cp1252.get(text[i])
    // ≈ has no Windows-1252 byte: written as "~", as a user's export would.
    bytes[i] = byte ?? 0x7e
  }
  return bytes
}

/** `customers-varied-<rows>.csv` in test/bench/data/, written once (under a .tmp name, then renamed). */
export const variedCsv = async (rows) => {
  const path = join(dataDir, `customers-varied-${rows}.csv`)
  if (existsSync(path)) return path
  mkdirSync(dataDir, { recursive: true })
  const out = createWriteStream(`${path}.tmp`)
  let chunk = `${offlineColumns.join(";")}\r\n`
  for (let i = 0; i < rows; i++) {
    chunk += `${variedCells(i).map(cell).join(";")}\r\n`
    if (chunk.length > 1 << 20) {
      if (!out.write(encode(chunk))) await once(out, "drain")
      chunk = ""
    }
  }
  out.end(encode(chunk))
  await once(out, "close")
  renameSync(`${path}.tmp`, path)
  return path
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await variedCsv(Number(process.argv[2] ?? 200_000)))
}
