/**
 * The benchmarks' data, one module for all of them: customers with valid (and distinct) CPFs and CNPJs, as a CSV
 * (the import and offline-validation files) and as an XLSX workbook written by exceljs's streaming writer (memory
 * flat while writing), generated once into test/bench/data/ and reused while present; the validation
 * benchmark's CSV (test/validate/bench.mjs); and an account seeded with customers (export, read before write).
 * A file in test/bench/data/ is written under a .tmp name and renamed, so an interrupted generation is never
 * mistaken for a finished file.
 */
import ExcelJS from "exceljs"
import { once } from "node:events"
import { createWriteStream, existsSync, mkdirSync, renameSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const dataDir = fileURLToPath(new URL("./data/", import.meta.url))

const digits = (n, width) => String(n).padStart(width, "0")

/** The two check digits of a CPF whose first nine digits are `base`. */
const cpfOf = (base) => {
  const d = [...base].map(Number)
  const check = (length) => {
    let sum = 0
    for (let i = 0; i < length; i++) sum += d[i] * (length + 1 - i)
    return ((sum * 10) % 11) % 10
  }
  d.push(check(9))
  d.push(check(10))
  return d.join("")
}

/** The two check digits of a CNPJ whose first twelve digits are `base`. */
const cnpjOf = (base) => {
  const d = [...base].map(Number)
  const check = (weights) => {
    const sum = weights.reduce((s, w, i) => s + w * d[i], 0)
    const r = sum % 11
    return r < 2 ? 0 : 11 - r
  }
  d.push(check([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]))
  d.push(check([6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]))
  return d.join("")
}

/** A distinct, valid taxpayer number for row `i`: CNPJs (punctuated, as users type them) and CPFs alternate. */
export const taxNumber = (i) => {
  if (i % 2 === 0) {
    const c = cnpjOf(`${digits(10_000_000 + i, 8)}0001`)
    return `${c.slice(0, 2)}.${c.slice(2, 5)}.${c.slice(5, 8)}/${c.slice(8, 12)}-${c.slice(12)}`
  }
  return cpfOf(digits(100_000_000 + i, 9))
}

/** The columns of the import files: no reference columns, so an import needs no lookups (one request a row). */
export const importColumns = [
  "externalId",
  "name",
  "legalName",
  "cpfCnpj",
  "phoneNumber",
  "email",
  "address",
  "latitude",
  "longitude",
  "active"
]

/** The offline files add the columns that cost validation most: references by key, enums, numbers, notes. */
export const offlineColumns = [
  ...importColumns,
  "maximumVisitTime",
  "unitMaximumTime",
  "groupsDescription",
  "segmentDescription",
  "note"
]

/**
 * The columns of the validation benchmark's file (test/validate/bench.mjs): the offline columns with the id
 * first and `active` before the note.
 */
export const validationColumns = [
  "id",
  ...offlineColumns.filter((c) => c !== "active" && c !== "note"),
  "active",
  "note"
]

/** Row `i` of the validation benchmark's file: one CNPJ, the same phones, visit time and note on every row. */
export const validationCells = (i) => {
  const all = {
    id: String(81000 + i),
    externalId: `CLI-${i}`,
    name: `Padaria ${i}`,
    legalName: `Padaria ${i} Ltda`,
    cpfCnpj: "11.222.333/0001-81",
    phoneNumber: "+55 11 3333-4444|+55 11 99999-0000",
    email: `contato${i}@paoquente.com.br`,
    address: `Av. Paulista, ${i}, São Paulo - SP`,
    latitude: `-23,${5000 + (i % 999)}`,
    longitude: `-46,${6000 + (i % 999)}`,
    maximumVisitTime: "60",
    unitMaximumTime: "minutes",
    groupsDescription: "Redes de varejo|Zona Sul",
    segmentDescription: "Supermercados",
    active: i % 2 === 0 ? "sim" : "não",
    note: "cliente antigo"
  }
  return validationColumns.map((c) => all[c])
}

/** Row `i` of a customers file, as the cells a user would type (pt-BR decimals, sim/não, `|` lists). */
export const customerCells = (i, columns) => {
  const all = {
    externalId: `CLI-${digits(i + 1, 7)}`,
    name: `Padaria ${i + 1}`,
    legalName: `Padaria ${i + 1} Ltda`,
    cpfCnpj: taxNumber(i),
    phoneNumber: `+55 11 3333-${digits(i % 10_000, 4)}|+55 11 99999-0000`,
    email: `contato${i + 1}@paoquente.com.br`,
    address: `Av. Paulista, ${(i % 2000) + 1}, São Paulo - SP`,
    latitude: `-23,${5000 + (i % 999)}`,
    longitude: `-46,${6000 + (i % 999)}`,
    active: i % 2 === 0 ? "sim" : "não",
    maximumVisitTime: String(30 + (i % 90)),
    unitMaximumTime: "minutes",
    groupsDescription: "Redes de varejo|Zona Sul",
    segmentDescription: "Supermercados",
    note: i % 3 === 0 ? "cliente antigo" : ""
  }
  return columns.map((c) => all[c])
}

/** The body a plain client would PUT for row `i` of an import file (what the naive baseline sends). */
export const customerBody = (i) => {
  const [externalId, name, legalName, cpfCnpj, phones, email, address, latitude, longitude, active] = customerCells(
    i,
    importColumns
  )
  return {
    externalId,
    name,
    legalName,
    cpfCnpj: cpfCnpj.replace(/\D/g, ""),
    phoneNumber: phones.split("|"),
    email: [email],
    address,
    latitude: Number(latitude.replace(",", ".")),
    longitude: Number(longitude.replace(",", ".")),
    active: active === "sim"
  }
}

const csvCell = (text) => (/[",\n\r]/.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text)

const finished = async (path, write) => {
  if (existsSync(path)) return { path, generated: false }
  mkdirSync(dataDir, { recursive: true })
  await write(`${path}.tmp`)
  renameSync(`${path}.tmp`, path)
  return { path, generated: true }
}

/** A CSV (comma-separated, UTF-8) of `columns` and `rows` rows of `cellsOf(i)` at `path`, in chunks with back-pressure. */
const writeCsv = async (path, columns, rows, cellsOf) => {
  const out = createWriteStream(path)
  let chunk = `${columns.join(",")}\n`
  for (let i = 0; i < rows; i++) {
    chunk += `${cellsOf(i).map(csvCell).join(",")}\n`
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, "drain")
      chunk = ""
    }
  }
  out.end(chunk)
  await once(out, "close")
}

/** `customers-<rows>.csv` (comma-separated, UTF-8). */
export const customersCsv = (rows, columns, name) =>
  finished(
    join(dataDir, name ?? `customers-${rows}.csv`),
    (tmp) => writeCsv(tmp, columns, rows, (i) => customerCells(i, columns))
  )

/** The validation benchmark's CSV of `rows` rows at `path` (written afresh each run). */
export const validationCsv = (rows, path) => writeCsv(path, validationColumns, rows, validationCells)

/**
 * Seeds the account of `sandbox` (test/bench/sandbox.mjs, a budget that never waits) with customers 0 … records - 1
 * (`customerBody`), by parallel PUTs.
 */
export const seedCustomers = async (sandbox, records) => {
  const login = await fetch(`${sandbox.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey: sandbox.account.apiKey, apiToken: sandbox.account.apiToken })
  })
  const token = (await login.json()).result.accessToken
  let next = 0
  const worker = async () => {
    while (next < records) {
      const i = next++
      const response = await fetch(`${sandbox.url}/customers`, {
        method: "PUT",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(customerBody(i))
      })
      await response.arrayBuffer()
      if (response.status !== 201) throw new Error(`seeding customer ${i}: HTTP ${response.status}`)
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))
}

/** `customers-<rows>.xlsx`: one sheet named `customers`, shared strings off (as most producers write them). */
export const customersXlsx = (rows, columns) =>
  finished(join(dataDir, `customers-${rows}.xlsx`), async (tmp) => {
    const out = createWriteStream(tmp)
    const closed = once(out, "close")
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: false, useStyles: false })
    const sheet = workbook.addWorksheet("customers")
    sheet.addRow(columns).commit()
    for (let i = 0; i < rows; i++) {
      sheet.addRow(customerCells(i, columns)).commit()
      // Let the file stream drain now and then: the writer does not wait for it by itself.
      if (i % 5000 === 4999) await new Promise((resolve) => setImmediate(resolve))
    }
    sheet.commit()
    await workbook.commit()
    // The workbook is committed before its file is: wait for the file itself, or a reader may find it cut short.
    await closed
  })
