/**
 * The XLSX template of a resource: a data sheet named after the resource (frozen header, a note on each header
 * cell, required columns marked, drop-downs for enumerations and booleans, text-formatted columns so Excel keeps
 * leading zeros, one example row) and a README sheet with every column explained; and the onboarding workbook,
 * the same data sheets (without example rows) for every resource in dependency order after one README sheet.
 * Templates are small, so an ordinary exceljs Workbook builds them; fixed workbook dates and ZIP entry times make
 * a regenerated file byte for byte the same.
 */
import type ExcelJS from "exceljs"
import { tableText } from "../FieldDocs.js"
import { loadExcelJs } from "../files/ExcelJs.js"
import { columnLetter } from "../files/Header.js"
import { toolName } from "../files/Provenance.js"
import { firstPageColumns, type Orientation, printable, wrappedHeight } from "../files/SheetLayout.js"
import { withEntryTimes } from "../files/XlsxWriter.js"
import { t } from "../Messages.js"
import { dependencies, dependencyOrder, listSeparator, type Resource, resource } from "../Resources.js"
import { allowedText, booleanSpellings, type ColumnDoc, describeResource, requiredText } from "../validate/Describe.js"
import { exampleValue } from "../validate/ExampleRow.js"
import { workbookFileName } from "./Names.js"

/** Not `fsm-bulk` itself: template cells carry no formula guard, so a filled template is read as the user's file. */
const templateCreator = `${toolName} template`
/** Workbook dates of every template, so regenerating one changes nothing but the ZIP timestamps. */
const templateDate = new Date("2026-01-01T00:00:00Z")

/**
 * Rows under the header that drop-downs and input messages cover. Not the whole sheet: exceljs expands a
 * validation's range cell by cell when it opens a workbook, and a million rows took it minutes.
 */
export const validatedRows = 10_000

const fills = {
  required: "FFF8CBAD",
  either: "FFFCE4D6",
  optional: "FFD9E1F2"
} as const

const fill = (argb: string): ExcelJS.Fill => ({ type: "pattern", pattern: "solid", fgColor: { argb } })

/** Columns whose cells are text even when they look like numbers or dates (codes, CPF, phone numbers, lists). */
const isTextColumn = (doc: ColumnDoc): boolean => {
  if (doc.role === "ref" || doc.field.list) return true
  switch (doc.field.type._tag) {
    case "string":
    case "email":
    case "cpfCnpj":
    case "guid":
    case "object":
    case "file":
      return true
    default:
      return false
  }
}

/** What a drop-down offers: an enumeration's names (the importer reads them, and the numbers too), or the values. */
export const choices = (doc: ColumnDoc): ReadonlyArray<string> =>
  doc.allowed.length === 0
    ? []
    : doc.field.type._tag === "enum"
    ? doc.field.type.values.map((v) => v.label)
    : doc.allowed.map((a) => a.value)

/** A header note: short enough for Excel's note box; the README sheet has the rest. */
const note = (doc: ColumnDoc): ExcelJS.Comment => ({
  texts: [
    { font: { bold: true, size: 9 }, text: `${doc.name}\n` },
    {
      font: { size: 9 },
      text: [
        doc.description,
        requiredText(doc),
        t("template.noteType", { type: doc.type }),
        ...(doc.allowed.length > 0 ? [t("template.noteValues", { values: allowedText(doc) })] : []),
        ...(doc.syntax !== "" ? [t("template.noteCell", { syntax: doc.syntax })] : []),
        ...(doc.example !== "" ? [t("template.noteExample", { example: doc.example })] : [])
      ].join("\n")
    }
  ],
  margins: { insetmode: "auto" }
})

interface Validation {
  readonly type: "list" | "any"
  readonly allowBlank?: boolean
  readonly formulae?: ReadonlyArray<string>
  readonly showInputMessage?: boolean
  readonly promptTitle?: string
  readonly prompt?: string
  readonly showErrorMessage?: boolean
  readonly errorStyle?: "stop" | "warning" | "information"
  readonly errorTitle?: string
  readonly error?: string
}

/** Excel caps an input message at 255 characters. */
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/**
 * A drop-down for enumerations and booleans; an input message for cells with a syntax of their own. The drop-down
 * shows names, but any spelling the importer reads is let through (`sim`, `não`, `3`, `alta` …): Excel only
 * informs, it does not refuse.
 */
const validation = (doc: ColumnDoc): Validation | undefined => {
  if (doc.allowed.length > 0) {
    const values = allowedText(doc)
    const also = doc.field.type._tag === "boolean"
      ? t("template.alsoBoolean", { spellings: booleanSpellings() })
      : t("template.alsoEnum")
    return {
      type: "list",
      allowBlank: true,
      formulae: [`"${choices(doc).join(",")}"`],
      showInputMessage: true,
      promptTitle: clip(doc.name, 32),
      prompt: clip(values, 255),
      showErrorMessage: true,
      errorStyle: "information",
      errorTitle: clip(doc.name, 32),
      error: clip(t("template.usualValues", { values, also }), 255)
    }
  }
  if (doc.syntax === "") return undefined
  return { type: "any", showInputMessage: true, promptTitle: clip(doc.name, 32), prompt: clip(doc.syntax, 255) }
}

interface ValidationTarget {
  readonly dataValidations: { readonly add: (address: string, validation: Validation) => void }
}

/**
 * A README's lines above its table (the title first, in bold 14 points), each merged across the columns that print
 * on the first page and wrapped there, its row as tall as its wrapped text: a line left to overflow into the empty
 * cells beside it was cut at the page's right edge.
 */
const introLines = (
  sheet: ExcelJS.Worksheet,
  lines: ReadonlyArray<string>,
  orientation: Orientation,
  widths: ReadonlyArray<number>
) => {
  const span = firstPageColumns(orientation, widths)
  const room = widths.slice(0, span).reduce((a, b) => a + b, 0)
  lines.forEach((text, i) => {
    const row = sheet.getRow(i + 1)
    if (span > 1) sheet.mergeCells(i + 1, 1, i + 1, span)
    const cell = row.getCell(1)
    cell.value = text
    cell.alignment = { wrapText: true, vertical: "top" }
    if (i === 0) cell.font = { bold: true, size: 14 }
    if (text !== "") row.height = wrappedHeight([text], [room], i === 0 ? 14 : 11)
  })
}

const dataSheet = (
  workbook: ExcelJS.Workbook,
  r: Resource,
  docs: ReadonlyArray<ColumnDoc>,
  withExample: boolean
) => {
  const sheet = workbook.addWorksheet(r.name, { views: [{ state: "frozen", ySplit: 1 }] })
  sheet.columns = docs.map((doc) => ({
    width: Math.min(40, Math.max(14, doc.name.length + 4, doc.example.length + 2))
  }))
  printable(sheet, "landscape", sheet.columns.map((c) => c.width ?? 14))
  const header = sheet.getRow(1)
  docs.forEach((doc, i) => {
    const cell = header.getCell(i + 1)
    cell.value = doc.name
    cell.font = { bold: true, ...(doc.required === "no" ? {} : { color: { argb: "FF833C0B" } }) }
    cell.fill = fill(
      doc.required === "yes" ? fills.required : doc.required === "either" ? fills.either : fills.optional
    )
    cell.note = note(doc)
    if (isTextColumn(doc)) sheet.getColumn(i + 1).numFmt = "@"
    const rule = validation(doc)
    const letter = columnLetter(i)
    if (rule !== undefined) {
      ;(sheet as unknown as ValidationTarget).dataValidations.add(`${letter}2:${letter}${validatedRows + 1}`, rule)
    }
  })
  if (!withExample) return
  const example = sheet.getRow(2)
  docs.forEach((doc, i) => {
    example.getCell(i + 1).value = exampleValue(doc)
  })
}

const readmeSheet = (workbook: ExcelJS.Workbook, r: Resource, docs: ReadonlyArray<ColumnDoc>) => {
  const sheet = workbook.addWorksheet("README")
  const widths = [28, 16, 44, 50, 34, 60, 30]
  sheet.columns = widths.map((width) => ({ width }))
  printable(sheet, "landscape", widths)
  const lines: ReadonlyArray<string> = [
    `${tableText(r.title)} (${r.name})`,
    tableText(r.doc),
    "",
    t("template.fillSheet", { sheet: `"${r.name}"` }),
    t("template.leaveEmpty"),
    t("template.orange"),
    t("template.lists", { separator: listSeparator }),
    t("template.importWith", {
      command: `fsm-bulk import ${r.name} FILE.xlsx`,
      check: `fsm-bulk validate ${r.name} FILE.xlsx`
    }),
    ""
  ]
  introLines(sheet, lines, "landscape", widths)
  const headings = t("template.headings").split("|")
  const top = sheet.getRow(lines.length + 1)
  headings.forEach((h, i) => {
    const cell = top.getCell(i + 1)
    cell.value = h
    cell.font = { bold: true }
    cell.fill = fill(fills.optional)
  })
  docs.forEach((doc, n) => {
    const row = sheet.getRow(lines.length + 2 + n)
    const values = [doc.name, requiredText(doc), doc.type, doc.description, allowedText(doc), doc.syntax, doc.example]
    values.forEach((v, i) => {
      const cell = row.getCell(i + 1)
      cell.value = v
      cell.alignment = { wrapText: true, vertical: "top" }
    })
    if (doc.required !== "no") row.getCell(1).fill = fill(doc.required === "yes" ? fills.required : fills.either)
    // Spreadsheets do not grow a row for wrapped text they did not lay out themselves (LibreOffice prints it over
    // the next rows): the height is the most lines a cell wraps to in its column's width.
    row.height = wrappedHeight(values, widths)
  })
}

const newWorkbook = async () => {
  const workbook = new (await loadExcelJs()).Workbook()
  workbook.creator = templateCreator
  workbook.lastModifiedBy = templateCreator
  workbook.created = templateDate
  workbook.modified = templateDate
  return workbook
}

const bytesOf = async (workbook: ExcelJS.Workbook): Promise<Uint8Array> =>
  new Uint8Array(withEntryTimes(new Uint8Array(await workbook.xlsx.writeBuffer()), templateDate))

/** The XLSX template of `r`, as the bytes of the file. */
export const xlsxTemplate = async (r: Resource): Promise<Uint8Array> => {
  const workbook = await newWorkbook()
  const docs = describeResource(r)
  dataSheet(workbook, r, docs, true)
  readmeSheet(workbook, r, docs)
  return bytesOf(workbook)
}

const workbookReadme = (workbook: ExcelJS.Workbook, ordered: ReadonlyArray<Resource>, fileName: string) => {
  const sheet = workbook.addWorksheet("README")
  const widths = [8, 28, 36, 60]
  sheet.columns = widths.map((width) => ({ width }))
  printable(sheet, "landscape", widths)
  const lines: ReadonlyArray<string> = [
    t("workbook.title"),
    t("workbook.order"),
    "",
    t("workbook.fill1"),
    t("workbook.fill2"),
    t("workbook.notes"),
    t("workbook.orange"),
    t("workbook.names", { separator: listSeparator }),
    t("workbook.notRead"),
    "",
    t("workbook.dryRun", { command: `fsm-bulk onboard ${fileName} --dry-run` }),
    t("workbook.then", { command: `fsm-bulk onboard ${fileName}` }),
    ""
  ]
  introLines(sheet, lines, "landscape", widths)
  const top = sheet.getRow(lines.length + 1)
  t("workbook.headings").split("|").forEach((text, j) => {
    top.getCell(j + 1).value = text
  })
  top.font = { bold: true }
  for (let j = 1; j <= 4; j++) top.getCell(j).fill = fill(fills.optional)
  ordered.forEach((r, i) => {
    const row = sheet.getRow(lines.length + 2 + i)
    row.values = [i + 1, r.name, tableText(r.title), dependencies(r).join(", ")]
  })
}

/**
 * The onboarding workbook template: a README sheet, then the data sheet of each resource (every importable one
 * by default) in dependency order, with the notes, drop-downs and colours of the single templates and no
 * example rows (an onboarding reads every row it finds).
 */
export const workbookTemplate = async (
  resources: ReadonlyArray<Resource>,
  fileName: string = workbookFileName
): Promise<Uint8Array> => {
  const workbook = await newWorkbook()
  const ordered = dependencyOrder(resources.map((r) => r.name)).map(resource)
  workbookReadme(workbook, ordered, fileName)
  for (const r of ordered) dataSheet(workbook, r, describeResource(r), false)
  return bytesOf(workbook)
}

export { workbookFileName }
