/**
 * The XLSX template of a resource: a data sheet named after the resource (frozen header, a note on each header
 * cell, required columns marked, drop-downs for enumerations and booleans, text-formatted columns so Excel keeps
 * leading zeros, one example row) and a README sheet with every column explained. Templates are small, so an
 * ordinary exceljs Workbook builds them; fixed workbook dates keep regenerated files identical inside.
 */
import type ExcelJS from "exceljs"
import { loadExcelJs } from "../files/ExcelJs.js"
import { columnLetter } from "../files/Header.js"
import { toolName } from "../files/Provenance.js"
import { listSeparator, type Resource } from "../Resources.js"
import { allowedText, type ColumnDoc, describeResource, requiredText } from "./Describe.js"

/** Not `fsm-bulk` itself: template cells carry no formula guard, so a filled template is read as the user's file. */
export const templateCreator = `${toolName} template`
/** Workbook dates of every template, so regenerating one changes nothing but the ZIP timestamps. */
export const templateDate = new Date("2026-01-01T00:00:00Z")

const lastRow = 1_048_576

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

/** The example as a typed cell: numbers as numbers (drop-downs compare them), the rest as text. */
const exampleValue = (doc: ColumnDoc): string | number | null => {
  if (doc.example === "") return null
  const numeric = doc.role === "value" && !doc.field.list && ["integer", "number", "enum"].includes(doc.field.type._tag)
  return numeric && Number.isFinite(Number(doc.example)) ? Number(doc.example) : doc.example
}

/** A header note: short enough for Excel's note box; the README sheet has the rest. */
const note = (doc: ColumnDoc): ExcelJS.Comment => ({
  texts: [
    { font: { bold: true, size: 9 }, text: `${doc.name}\n` },
    {
      font: { size: 9 },
      text: [
        doc.description,
        requiredText(doc),
        `Type: ${doc.type}`,
        ...(doc.allowed.length > 0 ? [`Values: ${allowedText(doc)}`] : []),
        ...(doc.syntax !== "" ? [`Cell: ${doc.syntax}`] : []),
        ...(doc.example !== "" ? [`Example: ${doc.example}`] : [])
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

/** A drop-down for enumerations and booleans; an input message for cells with a syntax of their own. */
const validation = (doc: ColumnDoc): Validation | undefined => {
  if (doc.allowed.length > 0) {
    const values = allowedText(doc)
    return {
      type: "list",
      allowBlank: true,
      formulae: [`"${doc.allowed.map((a) => a.value).join(",")}"`],
      showInputMessage: true,
      promptTitle: clip(doc.name, 32),
      prompt: clip(values, 255),
      showErrorMessage: true,
      errorStyle: "stop",
      errorTitle: clip(doc.name, 32),
      error: clip(`Choose one of: ${values}`, 255)
    }
  }
  if (doc.syntax === "") return undefined
  return { type: "any", showInputMessage: true, promptTitle: clip(doc.name, 32), prompt: clip(doc.syntax, 255) }
}

interface ValidationTarget {
  readonly dataValidations: { readonly add: (address: string, validation: Validation) => void }
}

const dataSheet = (workbook: ExcelJS.Workbook, r: Resource, docs: ReadonlyArray<ColumnDoc>) => {
  const sheet = workbook.addWorksheet(r.name, { views: [{ state: "frozen", ySplit: 1 }] })
  sheet.columns = docs.map((doc) => ({
    width: Math.min(40, Math.max(14, doc.name.length + 4, doc.example.length + 2))
  }))
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
      ;(sheet as unknown as ValidationTarget).dataValidations.add(`${letter}2:${letter}${lastRow}`, rule)
    }
  })
  const example = sheet.getRow(2)
  docs.forEach((doc, i) => {
    example.getCell(i + 1).value = exampleValue(doc)
  })
}

const readmeSheet = (workbook: ExcelJS.Workbook, r: Resource, docs: ReadonlyArray<ColumnDoc>) => {
  const sheet = workbook.addWorksheet("README")
  sheet.columns = [{ width: 28 }, { width: 16 }, { width: 44 }, { width: 50 }, { width: 34 }, { width: 60 }, {
    width: 30
  }]
  const lines: ReadonlyArray<string> = [
    `${r.title} (${r.name})`,
    r.doc,
    "",
    `Fill the "${r.name}" sheet: one row per record, below the header. Row 2 is an example: replace it or delete it.`,
    "Leave a cell empty when you have no value. Column names must stay as they are; columns you do not need can be deleted.",
    "Orange headers are required when a record is created (light orange: fill the id column or the column that names the record).",
    `Lists go in one cell, separated by ${listSeparator}. A reference to another record is given by its id, or by its key in the column beside it.`,
    `Import with: fsm-bulk import ${r.name} FILE.xlsx   (check first with: fsm-bulk validate ${r.name} FILE.xlsx)`,
    ""
  ]
  lines.forEach((text, i) => {
    const cell = sheet.getCell(i + 1, 1)
    cell.value = text
    if (i === 0) cell.font = { bold: true, size: 14 }
  })
  const headings = ["Column", "Required", "Type", "Description", "Values", "Cell syntax", "Example"]
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
  })
}

/** The XLSX template of `r`, as the bytes of the file. */
export const xlsxTemplate = async (r: Resource): Promise<Uint8Array> => {
  const workbook = new (await loadExcelJs()).Workbook()
  workbook.creator = templateCreator
  workbook.lastModifiedBy = templateCreator
  workbook.created = templateDate
  workbook.modified = templateDate
  const docs = describeResource(r)
  dataSheet(workbook, r, docs)
  readmeSheet(workbook, r, docs)
  return new Uint8Array(await workbook.xlsx.writeBuffer())
}
