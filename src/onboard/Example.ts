/**
 * The example onboarding: a small São Paulo HVAC company kept as one CSV per resource in `templates/example/`
 * (the source of truth, easy to review), and `templates/example-onboarding.xlsx` built from it: a README sheet,
 * then one sheet per resource in dependency order, every cell the CSV's text as typed (so decimal commas and
 * dd/mm/yyyy dates stay what the customer wrote). Attachment paths are rewritten to stay relative to the workbook.
 * The workbook is a user's file, so its creator is not the tool (its cells carry no formula guard).
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { loadExcelJs } from "../files/ExcelJs.js"
import { openSource } from "../files/Read.js"
import { printable, wrappedHeight } from "../files/SheetLayout.js"
import { WriteError, writeFileIfChanged } from "../files/Write.js"
import { withEntryTimes } from "../files/XlsxWriter.js"
import { dependencies, listSeparator, resource, type ResourceName, templateColumns } from "../Resources.js"
import { readOnboardInput } from "./Inputs.js"
import { orderSteps } from "./Order.js"

/** The package's root: two levels above this module (`src/onboard` or `dist/onboard`). */
const packageRoot = fileURLToPath(new URL("../..", import.meta.url))

export const exampleDir = Path.join(packageRoot, "templates", "example")
export const exampleWorkbookFile = Path.join(packageRoot, "templates", "example-onboarding.xlsx")

/** Who "wrote" the example: the company's operations manager (see users.csv), never `fsm-bulk`. */
export const exampleCreator = "Mariana Costa (Climatiza Refrigeração)"
/** Fixed workbook dates and ZIP entry times: regenerating the example changes nothing. */
const exampleDate = new Date("2026-11-20T12:00:00Z")

interface ExampleSheet {
  readonly resource: ResourceName
  readonly header: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

/** Columns that name local files (attachments), whose paths are relative to the file that holds them. */
export const fileColumns = (name: ResourceName): ReadonlySet<string> =>
  new Set(
    templateColumns(resource(name))
      .filter((c) => c.field.type._tag === "file")
      .map((c) => c.name.toLowerCase())
  )

/** `a/b/c` relative to `from`, with forward slashes (what a workbook opened on any system reads). */
const relativePath = (from: string, to: string) => {
  const rel = Path.relative(from, to)
  return Path.isAbsolute(rel) ? to : rel.split(Path.sep).join("/")
}

/** The sheets of the example, in dependency order, as the CSVs in `csvDir` hold them (paths relative to `workbookDir`). */
export const readExampleSheets = Effect.fn("Example.readSheets")(function*(csvDir: string, workbookDir: string) {
  const input = yield* readOnboardInput(csvDir)
  const ordered = yield* orderSteps(input)
  const sheets: Array<ExampleSheet> = []
  for (const step of ordered) {
    const source = yield* openSource(step.file, { encoding: "auto", delimiter: "auto", resource: step.resource })
    const files = fileColumns(step.resource)
    const fileIndexes = source.header.flatMap((h, i) => (files.has(h.trim().toLowerCase()) ? [i] : []))
    const rows = yield* Stream.runCollect(
      Stream.map(source.rows, (row) =>
        source.header.map((_, i) => {
          const text = row.cells[i] ?? ""
          return fileIndexes.includes(i) && text.trim() !== "" && !Path.isAbsolute(text.trim())
            ? relativePath(workbookDir, Path.resolve(input.baseDir, text.trim()))
            : text
        }))
    )
    sheets.push({ resource: step.resource, header: source.header, rows: [...rows] })
  }
  return sheets as ReadonlyArray<ExampleSheet>
})

const readmeLines = (
  sheets: ReadonlyArray<ExampleSheet>,
  workbookName: string
): ReadonlyArray<ReadonlyArray<string>> => [
  ["Climatiza Refrigeração: example onboarding workbook"],
  [
    "A small air-conditioning and refrigeration company in São Paulo, ready to go live in one run: its users and teams, " +
    "customers (CNPJ and CPF) with their equipment, the product and service catalog, the week's tasks with the products, " +
    "services and extra costs they use, checklist answers, technicians' stock and one signed contract attached to a customer."
  ],
  [""],
  ["See the plan without writing anything:", `fsm-bulk onboard ${workbookName} --dry-run`],
  [
    "Onboard it (the embedded sandbox unless --base-url or FSM_BASE_URL is set):",
    `fsm-bulk onboard ${workbookName} --verify`
  ],
  ["Onboard, export and verify in one go:", "npm start"],
  [""],
  ["How this workbook is read"],
  [
    "Sheets",
    "One sheet per resource, named as the tool names resources. This README and sheets whose names start with _ are not read."
  ],
  [
    "Order",
    "Sheets load in dependency order (the table below), whatever their order here: parents first, then the rows that name them."
  ],
  [
    "References",
    "A row names other records by their key: customerExternalId, userToLogin, teamDescription … They are found among the rows of " +
    "earlier sheets, or among the records the account already has."
  ],
  [
    "Failures",
    "A row whose parent row failed is skipped, and its _error names the parent row. Fix the parent and run the onboarding again."
  ],
  [
    "Cells",
    `Lists in one cell are separated by ${listSeparator}. Each sheet's dates and decimals are read on their own: tasks use dd/mm/yyyy, ` +
    "warranties yyyy-mm-dd, prices decimal commas (39,90)."
  ],
  [
    "Checklists",
    "Repeated checklists on one task are kept apart by itemID; an answer about one equipment names it in equipmentExternalId."
  ],
  ["Attachments", "The file column holds a path relative to this workbook."],
  ["Again", "Running the same onboarding again changes nothing: rows come back unchanged or updated, never twice."],
  [""],
  ["Step", "Sheet", "Rows", "Names records of"],
  ...sheets.map((
    s,
    i
  ) => [String(i + 1), s.resource, String(s.rows.length), dependencies(resource(s.resource)).join(", ")])
]

/** The example workbook's bytes for `sheets`. */
const exampleWorkbookBytes = async (
  sheets: ReadonlyArray<ExampleSheet>,
  workbookName: string
): Promise<Uint8Array> => {
  const workbook = new (await loadExcelJs()).Workbook()
  workbook.creator = exampleCreator
  workbook.lastModifiedBy = exampleCreator
  workbook.created = exampleDate
  workbook.modified = exampleDate

  const readme = workbook.addWorksheet("README")
  const widths = [34, 110, 8, 60]
  readme.columns = widths.map((width) => ({ width }))
  printable(readme, "landscape", widths)
  const lines = readmeLines(sheets, workbookName)
  lines.forEach((cells, i) => {
    const row = readme.getRow(i + 1)
    cells.forEach((text, j) => {
      const cell = row.getCell(j + 1)
      cell.value = text
      cell.alignment = { wrapText: true, vertical: "top" }
    })
    const heading = i === 0 || cells[0] === "How this workbook is read" || cells[0] === "Step"
    if (heading) row.font = { bold: true, ...(i === 0 ? { size: 14 } : {}) }
    // A line of its own (the title, the introduction) is merged over the first two columns and wraps there; printed,
    // a wrapped cell without its row's height ran over the rows below it.
    const alone = cells.length === 1 && cells[0] !== ""
    if (alone) readme.mergeCells(i + 1, 1, i + 1, 2)
    row.height = wrappedHeight(cells, alone ? [widths[0]! + widths[1]!] : widths, i === 0 ? 14 : 11)
  })

  for (const s of sheets) {
    const sheet = workbook.addWorksheet(s.resource, { views: [{ state: "frozen", ySplit: 1 }] })
    sheet.columns = s.header.map((h, i) => ({
      width: Math.min(50, Math.max(10, h.length + 2, ...s.rows.map((r) => (r[i] ?? "").length + 2))),
      // Text cells: Excel keeps "39,90", "07:00:00" and "2|3|4" as typed.
      style: { numFmt: "@" }
    }))
    const header = sheet.getRow(1)
    s.header.forEach((h, i) => {
      const cell = header.getCell(i + 1)
      cell.value = h
      cell.font = { bold: true }
    })
    s.rows.forEach((cells, r) => {
      const row = sheet.getRow(r + 2)
      cells.forEach((text, i) => {
        if (text !== "") row.getCell(i + 1).value = text
      })
    })
  }
  return new Uint8Array(withEntryTimes(new Uint8Array(await workbook.xlsx.writeBuffer()), exampleDate))
}

/** Builds the example workbook at `out` from the CSVs in `csvDir`; returns the sheets written. */
export const writeExampleWorkbook = Effect.fn("Example.write")(
  function*(out: string = exampleWorkbookFile, csvDir: string = exampleDir) {
    const sheets = yield* readExampleSheets(csvDir, Path.dirname(Path.resolve(out)))
    const bytes = yield* Effect.tryPromise({
      try: () => exampleWorkbookBytes(sheets, Path.basename(out)),
      catch: (cause) =>
        new WriteError({
          path: out,
          message: `cannot build ${out}: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
    })
    // A file that already holds these bytes is left alone (a committed one stays clean).
    yield* writeFileIfChanged(out, bytes)
    return sheets
  }
)
