/**
 * The user's files in generated histories: Brazilian-style customer rows, the files they are saved as (CSV with
 * `;` or `,`, Windows-1252 or UTF-8; an .xlsx written with exceljs; the template's headers, or a customer's own
 * sheet with Portuguese headers, a title row, `Sim`/`Não` and a "Total" footer, imported through a mapping
 * profile), internal columns that must never reach the server, and each file's column plan: which report column
 * sets which field, read back how. The plan is the checker's own, independent of the tool's code, so invariant
 * (iv) compares what a row says with what the server holds without trusting the code it checks.
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { loadExcelJs } from "../../src/files/ExcelJs.js"

export type Rng = {
  readonly next: () => number
  readonly int: (n: number) => number
  readonly pick: <A>(xs: ReadonlyArray<A>) => A
  readonly chance: (p: number) => boolean
}

export interface Row {
  /** Undefined: a row without a key (a footer such as "Total de clientes: 5"). */
  readonly key: string | undefined
  /** Empty: the row is invalid (a customer needs a name). */
  readonly name: string
  readonly note: string
  readonly phone: string
  /** The cells below are absent from histories printed before they existed (and from `known.ts`). */
  readonly address?: string | undefined
  readonly active?: boolean | undefined
  /** maximumVisitTime, minutes. */
  readonly visit?: number | undefined
  /** latitude, as its digits with 4 decimals ("-23.5505"); written with the file's decimal mark. */
  readonly lat?: string | undefined
  /** The internal columns' values (a salesperson, a credit limit): never to be sent. */
  readonly seller?: string | undefined
  readonly credit?: string | undefined
  /** An e-mail and a CPF (with its punctuation), filled in a sheet of Portuguese aliases (`aliasRow`). */
  readonly email?: string | undefined
  readonly cpf?: string | undefined
}

export interface FileShape {
  readonly delimiter: ";" | ","
  readonly encoding: "windows-1252" | "utf-8"
  readonly rows: ReadonlyArray<Row>
  /** Default "csv". An .xlsx ignores delimiter and encoding; numbers are number cells. */
  readonly format?: "csv" | "xlsx" | undefined
  /**
   * Default "template": the template's column names. "portuguese": a customer's own sheet (a title row above
   * Portuguese headers, `Sim`/`Não`, a "Total" footer), imported with `--map` and a profile the history writes.
   */
  readonly style?: "template" | "portuguese" | "aliases" | undefined
  /** Internal columns (Vendedor, Limite de crédito) beside the customer's. */
  readonly internal?: boolean | undefined
  /**
   * "aliases": the Portuguese headers the tool knows without a profile (`Código`, `Nome`, `E-mail`, `CPF/CNPJ`…,
   * src/Aliases.ts) and a "Total" footer; `title`: a title row above them too (which only a profile reads past).
   */
  readonly title?: boolean | undefined
}

/** How a report cell becomes the value the server keeps, as the checker reads it. */
export type CellKind = "text" | "list" | "boolean" | "integer" | "decimal" | "digits"

interface Column {
  readonly template: string
  readonly portuguese: string
  /** The header of a sheet of aliases: the alias the tool knows (src/Aliases.ts), or an English name. */
  readonly alias: string
  /** The field; undefined: an internal column, never sent. */
  readonly field?: string
  /** The property the server reads the field back as. */
  readonly property?: string
  readonly kind?: CellKind
  readonly cell: (r: Row, decimal: "." | ",", portuguese: boolean) => string | number | undefined
}

const columns: ReadonlyArray<Column> = [
  {
    template: "externalId",
    portuguese: "Código",
    alias: "Código",
    field: "externalId",
    kind: "text",
    cell: (r) => r.key ?? ""
  },
  {
    template: "name",
    portuguese: "Nome",
    alias: "Nome",
    field: "name",
    property: "description",
    kind: "text",
    cell: (r) => r.name
  },
  {
    template: "phoneNumber",
    portuguese: "Telefone",
    alias: "Telefone",
    field: "phoneNumber",
    kind: "list",
    cell: (r) => r.phone
  },
  {
    template: "note",
    portuguese: "Observações",
    alias: "Observação",
    field: "note",
    kind: "text",
    cell: (r) => r.note
  },
  {
    template: "address",
    portuguese: "Endereço",
    alias: "Endereço",
    field: "address",
    kind: "text",
    cell: (r) => r.address
  },
  {
    template: "active",
    portuguese: "Ativo",
    alias: "Ativo",
    field: "active",
    kind: "boolean",
    cell: (r, _, pt) => (r.active === undefined ? undefined : pt ? (r.active ? "Sim" : "Não") : String(r.active))
  },
  {
    template: "maximumVisitTime",
    portuguese: "Tempo de visita (min)",
    alias: "maximumVisitTime",
    field: "maximumVisitTime",
    kind: "integer",
    cell: (r) => r.visit
  },
  {
    template: "latitude",
    portuguese: "Latitude",
    alias: "Latitude",
    field: "latitude",
    kind: "decimal",
    cell: (r, d) => (r.lat === undefined ? undefined : d === "," ? r.lat.replace(".", ",") : r.lat)
  },
  { template: "email", portuguese: "E-mail", alias: "E-mail", field: "email", kind: "list", cell: (r) => r.email },
  {
    template: "cpfCnpj",
    portuguese: "CPF/CNPJ",
    alias: "CPF/CNPJ",
    field: "cpfCnpj",
    kind: "digits",
    cell: (r) => r.cpf
  },
  { template: "Vendedor", portuguese: "Vendedor", alias: "Vendedor", cell: (r) => r.seller },
  { template: "Limite de crédito", portuguese: "Limite de crédito", alias: "Limite de crédito", cell: (r) => r.credit }
]

const isPortuguese = (shape: FileShape) => shape.style === "portuguese"
const isAliases = (shape: FileShape) => shape.style === "aliases"
/** Sheets in Portuguese: `Sim`/`Não`, decimal commas. */
const inPortuguese = (shape: FileShape) => isPortuguese(shape) || isAliases(shape)
const isXlsx = (shape: FileShape) => shape.format === "xlsx"

/** The columns a file has: the template's four, the others when any row fills them, internal ones when asked. */
const columnsOf = (shape: FileShape): ReadonlyArray<Column> =>
  columns.filter((c, i) =>
    i < 4 ||
    (c.field === undefined ? shape.internal === true : shape.rows.some((r) => c.cell(r, ".", false) !== undefined))
  )

/** The decimal mark of a CSV: `,` in a `;` file (and in every customer's own sheet), `.` in a `,` file. */
const decimalOf = (shape: FileShape): "." | "," =>
  isXlsx(shape) ? "." : inPortuguese(shape) || shape.delimiter === ";" ? "," : "."

const headerOf = (shape: FileShape, c: Column) =>
  isPortuguese(shape) ? c.portuguese : isAliases(shape) ? c.alias : c.template

/** The spreadsheet row of the header: below the title row of a customer's own sheet (or of a sheet of aliases). */
const headerRowOf = (shape: FileShape) => (isPortuguese(shape) || (isAliases(shape) && shape.title === true) ? 2 : 1)

/** The sheet's lines as cells: a title row and a footer for a customer's own sheet. */
const table = (shape: FileShape): Array<Array<string | number>> => {
  const cols = columnsOf(shape)
  const decimal = decimalOf(shape)
  const body = shape.rows.map((r) =>
    cols.map((c) => {
      const v = c.cell(r, decimal, inPortuguese(shape))
      // A number cell of an .xlsx for what is a number; text otherwise.
      return v === undefined ? "" : isXlsx(shape) && (c.kind === "integer" || c.kind === "decimal") ? Number(v) : v
    })
  )
  if (!inPortuguese(shape)) return [cols.map((c) => headerOf(shape, c)), ...body]
  return [
    ...(headerRowOf(shape) === 2
      ? [["Relação de clientes ativos - Novembro/2026", ...cols.slice(1).map(() => "")]]
      : []),
    cols.map((c) => headerOf(shape, c)),
    ...body,
    [`Total de clientes: ${shape.rows.length}`, ...cols.slice(1).map(() => "")]
  ]
}

const quote = (cell: string, delimiter: string) =>
  cell.includes(delimiter) || cell.includes("\"") || cell.includes("\n") ? `"${cell.replaceAll("\"", "\"\"")}"` : cell

/** The CSV as a Brazilian implementer's spreadsheet saves it: `;` or `,`, Windows-1252 or UTF-8, CRLF. */
export const fileBytes = (shape: FileShape): Buffer => {
  const d = shape.delimiter
  const text = table(shape).map((cells) => cells.map((c) => quote(String(c), d)).join(d)).join("\r\n") + "\r\n"
  return shape.encoding === "windows-1252" ? Buffer.from(text, "latin1") : Buffer.from(text, "utf8")
}

/** The mapping profile a customer's own sheet is imported with (what `fsm-bulk map` proposes, reviewed). */
export const profileOf = (shape: FileShape) => ({
  resource: "customers",
  headerRow: headerRowOf(shape),
  columns: Object.fromEntries(columnsOf(shape).map((c) => [headerOf(shape, c), c.field ?? "ignore"])),
  fields: { active: { values: { Sim: "true", "Não": "false" } } }
})

/** Writes the file (and, for a customer's own sheet, its profile) at `base` + extension; returns their paths. */
export const writeInput = (base: string, shape: FileShape) =>
  Effect.promise(async () => {
    const file = `${base}.${isXlsx(shape) ? "xlsx" : "csv"}`
    if (isXlsx(shape)) {
      const ExcelJS = await loadExcelJs()
      const book = new ExcelJS.Workbook()
      book.addWorksheet(inPortuguese(shape) ? "Clientes" : "customers").addRows(table(shape))
      await book.xlsx.writeFile(file)
    } else {
      writeFileSync(file, fileBytes(shape))
    }
    const profile = inPortuguese(shape) ? `${base}.map.json` : undefined
    if (profile !== undefined) writeFileSync(profile, JSON.stringify(profileOf(shape), null, 2) + "\n")
    return { file, profile }
  })

/** What a run's report columns mean: the key's column, each mapped column's field, and the columns never sent. */
export interface ColumnPlan {
  readonly keyColumn: string
  readonly mapped: ReadonlyArray<
    {
      readonly column: string
      readonly property: string
      readonly kind: CellKind
      readonly values?: Readonly<Record<string, string>> | undefined
    }
  >
  /** The decimal mark of the file's numbers typed as text. */
  readonly decimal: "." | ","
  /** Columns that are no field: their values must never reach the server. */
  readonly unsent: ReadonlyArray<string>
  /** The values the file holds in those columns, each with its column. */
  readonly unsentValues: ReadonlyArray<readonly [value: string, column: string]>
}

export const planOf = (shape: FileShape): ColumnPlan => {
  const cols = columnsOf(shape)
  return {
    keyColumn: headerOf(shape, columns[0]!),
    mapped: cols.flatMap((c) =>
      c.field === undefined ? [] : [{
        column: headerOf(shape, c),
        property: c.property ?? c.field,
        kind: c.kind!,
        values: inPortuguese(shape) && c.field === "active" ? profileOf(shape).fields.active.values : undefined
      }]
    ),
    decimal: decimalOf(shape),
    unsent: cols.filter((c) => c.field === undefined).map((c) => headerOf(shape, c)),
    unsentValues: cols.filter((c) => c.field === undefined).flatMap((c) =>
      shape.rows.flatMap((r) => {
        const value = String(c.cell(r, decimalOf(shape), inPortuguese(shape)) ?? "").trim()
        return value === "" ? [] : [[value, headerOf(shape, c)] as const]
      })
    )
  }
}

/** The plan of a file with the template's column names (an export's), for the columns the checker knows. */
export const planOfHeader = (header: ReadonlyArray<string>, decimal: "." | ","): ColumnPlan => ({
  keyColumn: "externalId",
  mapped: columns.flatMap((c) =>
    c.field !== undefined && header.includes(c.template)
      ? [{ column: c.template, property: c.property ?? c.field, kind: c.kind! }]
      : []
  ),
  decimal,
  unsent: [],
  unsentValues: []
})

/** How the checker compares header cells and value-map keys: case, accents and outer spaces do not count. */
const plain = (s: string) => s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim()

/** The formula guard's apostrophe in a report cell is not the user's data. */
const unguard = (cell: string) => (/^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell)

/**
 * The value the server should hold for a report cell: trimmed text, a one-item list, a boolean (through the
 * profile's value map: Sim/Não), an integer, a decimal read with the file's mark. Undefined: an empty cell, which
 * sets nothing the checker can tell.
 */
export const expectedValue = (
  kind: CellKind,
  cell: string | undefined,
  decimal: "." | ",",
  values?: Readonly<Record<string, string>>
): unknown => {
  const text = unguard(cell ?? "").trim()
  if (text === "") return undefined
  switch (kind) {
    case "text":
      return text
    case "list":
      return [text]
    case "boolean": {
      const mapped = Object.entries(values ?? {}).find(([k]) => plain(k) === plain(text))?.[1] ?? text
      return /^(true|1|sim|s|yes)$/i.test(mapped) ? true : /^(false|0|nao|n|no)$/i.test(plain(mapped)) ? false : mapped
    }
    case "integer":
      return Number(text)
    case "decimal":
      return Number(decimal === "," ? text.replaceAll(".", "").replace(",", ".") : text.replaceAll(",", ""))
    case "digits":
      return text.replace(/\D/g, "")
  }
}

export const sameValue = (expected: unknown, actual: unknown): boolean =>
  typeof expected === "number" && typeof actual === "number"
    ? Math.abs(expected - actual) < 1e-9
    : JSON.stringify(expected) === JSON.stringify(actual)

// --- generation and shrinking ----------------------------------------------------------------------------------

const names = [
  "Padaria Pão Quente",
  "Açougue São João",
  "Farmácia Coração de Jesus",
  "Mercearia Irmãos Araújo",
  "Oficina do Zé",
  "Lanchonete Calçadão",
  "Ótica Visão & Cia",
  "Papelaria Conceição"
]
export const notes = [
  "",
  "Cliente desde 2019",
  "Pagamento à vista",
  "Entregar após às 14h",
  "Inadimplente; não atender"
]
const addresses = ["Rua Augusta, 100 - Consolação", " Av. Paulista, 900 ", "Rua das Flores, 12, Centro", ""]
const sellers = ["Ana Vendedora", "Bruno Representante", "Carla Comercial"]

export const pickName = (g: Rng) => g.pick(names)

/**
 * A row; `full`: every cell filled (without the fix of issue 28.2, a run that leaves a field out cannot be
 * undone). `more`: the cells beyond the template's four (address, active, visit time, latitude).
 */
export const genRow = (g: Rng, key: string | undefined, invalid: boolean, full: boolean, more: boolean): Row => ({
  key,
  name: invalid ? "" : g.pick(names),
  note: full ? g.pick(notes.filter((n) => n !== "")) : g.pick(notes),
  phone: full || g.chance(0.5) ? `+55 11 9${String(1000 + g.int(9000))}-${String(1000 + g.int(9000))}` : "",
  ...(more
    ? {
      address: full ? g.pick(addresses.filter((a) => a !== "")) : g.pick(addresses),
      active: g.chance(0.5),
      visit: 15 * (1 + g.int(16)),
      lat: `-2${g.int(5)}.${String(1001 + g.int(8998))}`,
      // Distinctive, so a leak is found wherever it lands on a record.
      seller: `${g.pick(sellers)} ${String(10 + g.int(90))}`,
      credit: `R$ ${String(1 + g.int(9))}.${String(100 + g.int(900))},00`
    }
    : {})
})

/** A file's form: template or customer's own sheet, CSV or XLSX, internal columns or not. */
export const genForm = (g: Rng): Pick<FileShape, "format" | "style" | "internal"> => ({
  format: g.chance(0.3) ? "xlsx" : "csv",
  style: g.chance(0.35) ? "portuguese" : "template",
  internal: g.chance(0.4)
})

/**
 * Smaller files: each row dropped, (`emptyCells`) each row's optional cells emptied, then plainer forms: CSV, the
 * template's headers, no internal columns, no cells beyond the template's, UTF-8 with commas.
 */
export const simplerFiles = (shape: FileShape, emptyCells = false): Array<FileShape> => {
  const out: Array<FileShape> = []
  if (shape.rows.length > 1) {
    shape.rows.forEach((_, i) => out.push({ ...shape, rows: shape.rows.filter((_, j) => j !== i) }))
  }
  shape.rows.forEach((r, i) => {
    if (emptyCells && (r.note !== "" || r.phone !== "")) {
      out.push({ ...shape, rows: shape.rows.map((x, j) => (j === i ? { ...x, note: "", phone: "" } : x)) })
    }
  })
  if (isXlsx(shape)) out.push({ ...shape, format: "csv" })
  if (inPortuguese(shape)) out.push({ ...shape, style: "template" })
  if (shape.title === true) out.push({ ...shape, title: false })
  if (shape.internal === true) out.push({ ...shape, internal: false })
  if (shape.rows.some((r) => r.address !== undefined)) {
    out.push({ ...shape, rows: shape.rows.map(({ key, name, note, phone }) => ({ key, name, note, phone })) })
  }
  if (shape.rows.some((r) => r.email !== undefined || r.cpf !== undefined)) {
    out.push({ ...shape, rows: shape.rows.map(({ cpf: _c, email: _e, ...r }) => r) })
  }
  if (shape.delimiter === ";" || shape.encoding === "windows-1252") {
    out.push({ ...shape, delimiter: ",", encoding: "utf-8" })
  }
  return out
}

/** A valid CPF for a key (its check digits computed), punctuated as people type it: one CPF per customer. */
export const cpfOf = (key: string): string => {
  const n = [...key].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 900_000_000, 7)
  const digits = [...String(100_000_000 + n)].map(Number)
  const check = (ds: ReadonlyArray<number>) => {
    const r = (ds.reduce((s, d, i) => s + d * (ds.length + 1 - i), 0) * 10) % 11
    return r === 10 ? 0 : r
  }
  digits.push(check(digits))
  digits.push(check(digits))
  const t = digits.join("")
  return `${t.slice(0, 3)}.${t.slice(3, 6)}.${t.slice(6, 9)}-${t.slice(9)}`
}

/** A row of a sheet of aliases: its e-mail and CPF beside the cells it had (a footer keeps none). */
export const aliasRow = (r: Row): Row =>
  r.key === undefined
    ? r
    : { ...r, email: `contato.${r.key.toLowerCase().replace(/[^a-z0-9]/g, "")}@cliente.com.br`, cpf: cpfOf(r.key) }
