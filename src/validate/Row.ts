/**
 * The row validator: one source row → the payload to send (or every column that is wrong and why), the
 * references still to resolve by key, the local files to attach, and the row's key. Stateful per file: it
 * remembers each key's first row to refuse duplicates.
 *
 * Built once per file from the column plan: every column's decoder and role is prepared up front, so a row
 * costs one pass over its cells with no schema building, regex compilation or closures.
 */
import * as Effect from "effect/Effect"
import { fileChars, type SourceRow } from "../files/Source.js"
import { errorValueOf } from "../files/XlsxCell.js"
import { normalKey } from "../Identity.js"
import { currentLanguage, t as msg } from "../Messages.js"
import type { Field } from "../Resources.js"
import { refKey, writableFields } from "../Resources.js"
import { checkAttachment } from "./Attachment.js"
import type { CellDecoder } from "./Cells.js"
import { cellDecoder, formerCode, splitList } from "./Cells.js"
import { cellText } from "./CellText.js"
import { exampleRowMessage, exampleRowTest } from "./ExampleRow.js"
import { FirstRows } from "./FirstRows.js"
import { Invalid, quote } from "./Invalid.js"
import type {
  ColumnPlan,
  FileCell,
  Formats,
  ParseOptions,
  PendingRef,
  RowError,
  RowResult,
  RowValidator
} from "./Model.js"

interface Slot {
  readonly field: Field
  readonly name: string
  readonly role: "id" | "key" | "parent" | "plain"
  /** -1 when the file has no such column. */
  readonly valueIndex: number
  readonly valueColumn: string
  readonly refIndex: number
  readonly refColumn: string
  readonly decode: CellDecoder
  /** Number fields: the decoder of a cell the reader wrote from a number (always with a decimal point). */
  readonly decodeNumber: CellDecoder | undefined
  readonly required: boolean
  /** Sent exactly as typed (passwords): spaces around the value are part of it. */
  readonly keepSpaces: boolean
  readonly isFile: boolean
  readonly isList: boolean
  /** Known keys of an object field, to warn about others. */
  readonly shape: ReadonlySet<string> | undefined
  /** `required: fill customerId or customerExternalId` */
  readonly requiredMessage: string
  /** For fields the server keeps unique in the account (a user's login): each value's first row. */
  readonly firstRowOf: FirstRows | undefined
  /** An alternate key (a profile's `alternateKeys`: a CPF/CNPJ): the rows seen, and whether a repeat is an error. */
  readonly alternate: { readonly firstRowOf: FirstRows; readonly severity: "invalid" | "warning" } | undefined
}

interface Extra {
  readonly index: number
  readonly name: string
}

interface PendingFile {
  readonly slot: Slot
  readonly text: string
}

const none: ReadonlyArray<never> = []

const push = (errors: Array<RowError> | undefined, column: string, message: string): Array<RowError> => {
  const list = errors ?? []
  list.push({ column, message })
  return list
}

/**
 * Records the first row of a key or unique value, or reports the repeat. Compared as keys (`Identity`: trimmed,
 * case-insensitive, the service's collation: `CLI-1` and `cli-1` are one record).
 */
const once = (
  firstRowOf: FirstRows,
  identity: string,
  row: number,
  column: string,
  note: string,
  errors: Array<RowError> | undefined,
  shown: string = identity
): Array<RowError> | undefined => {
  const first = firstRowOf.firstOr(normalKey(identity), row)
  if (first === undefined) return errors
  return push(errors, column, msg("row.repeats", { value: quote(shown), first, note }))
}

const beyondHeader = (): string => msg("row.beyondHeader")

/**
 * What is wrong with a cell that holds no value: an XLSX cell the reader could not read (an error value, a
 * formula without a saved result), or a cell whose text is a spreadsheet's error value (`#N/A` in a CSV Excel saved).
 */
const cellProblem = (row: SourceRow, index: number): string | undefined => {
  const problem = row.cellProblems?.find((p) => p.index === index)
  if (problem !== undefined) return problem.message
  const text = row.cells[index]
  const code = text === undefined || text === "" ? undefined : errorValueOf(text)
  return code === undefined
    ? undefined
    : msg("cell.errorValueText", { code })
}

/** A row the spreadsheet hides is not sent: what `_error` says of it. */
const hiddenRowMessage = (row: number): string => msg("row.hidden", { row })

/** A row longer than the header: its cells no longer line up with the columns, so nothing in it is trusted. */
const raggedMessage = (cells: ReadonlyArray<string>, from: number, width: number): string => {
  const extra = cells.slice(from).filter((c) => c.trim() !== "")
  const shown = extra.slice(0, 3).map(quote).join(", ")
  return msg(extra.length === 1 ? "row.raggedOne" : "row.ragged", {
    count: extra.length,
    width,
    shown: shown + (extra.length > 3 ? ", …" : "")
  })
}

/** Excel's limit: a cell holds at most this many characters, and a longer one cannot come from a spreadsheet intact. */
const maxCellCharacters = 32_767

const tooLong = (length: number): string =>
  msg("cell.tooLongExcel", { length: wholeNumber(length), max: wholeNumber(maxCellCharacters) })

/** 32767 → "32,767" in English, "32.767" in Portuguese. */
const wholeNumber = (n: number): string => n.toLocaleString(currentLanguage() === "pt-BR" ? "pt-BR" : "en-US")

/** A `check` result as an effect. */
export const checked = (result: RowResult | Effect.Effect<RowResult>): Effect.Effect<RowResult> =>
  Effect.isEffect(result) ? result : Effect.succeed(result)

export const makeValidator = (plan: ColumnPlan, formats: Formats, options: ParseOptions): RowValidator => {
  const { resource } = plan
  const mode = options.mode
  const creates = mode === "create" || mode === "upsert"
  const restoreGuard = options.restoreGuard
  const idName = resource.id?.name
  const parentName = resource.parent !== undefined && resource.parent.field !== idName
    ? resource.parent.field
    : undefined

  const roleOf = (field: Field): Slot["role"] =>
    field.name === idName && field.ref === undefined
      ? "id"
      : field.name === resource.key
      ? "key"
      : field.name === parentName
      ? "parent"
      : "plain"

  // How many rows a CSV file holds, projected from the rows validated so far and the characters they took in the
  // file (a character is a byte in ASCII and Windows-1252; more bytes in UTF-8 only make the projection a little
  // high). A row a profile rewrote is counted as the file has it, not as rewritten: a composed field repeating a
  // column made rows look longer, the file shorter, and the duplicate tables grew again late (1M rows: +21 MB).
  const sourceBytes = options.sourceBytes
  let rowsSeen = 0
  let charsSeen = 0
  const projectedRows = () => (sourceBytes === undefined || charsSeen === 0 ? 0 : rowsSeen * sourceBytes / charsSeen)

  const slots: Array<Slot> = []
  for (const field of writableFields(resource)) {
    const value = plan.columns.find((c) => c.kind === "field" && c.column?.field === field)
    const ref = plan.columns.find((c) => c.kind === "ref" && c.column?.field === field)
    if (value === undefined && ref === undefined) continue
    const role = roleOf(field)
    // Delete rows are matched by id or key (within their parent): nothing else is read.
    if (mode === "delete" && role === "plain") continue
    const isId = role !== "plain" || field.ref !== undefined
    const refColumn = ref?.name ?? field.ref?.column ?? ""
    const valueColumn = value?.name ?? field.name
    slots.push({
      field,
      name: field.name,
      role,
      valueIndex: value?.index ?? -1,
      valueColumn,
      refIndex: ref?.index ?? -1,
      refColumn,
      decode: cellDecoder(field, formats, isId),
      decodeNumber: field.type._tag === "number" && formats.decimal !== "."
        ? cellDecoder(field, { ...formats, decimal: "." }, isId)
        : undefined,
      required: creates && field.required === true,
      keepSpaces: field.writeOnly === true && field.type._tag === "string",
      isFile: field.type._tag === "file",
      isList: field.list === true,
      shape: field.type._tag === "object" ? new Set(field.type.shape) : undefined,
      requiredMessage: value !== undefined && ref !== undefined
        ? msg("row.requiredEither", { value: valueColumn, ref: refColumn })
        : msg("row.required"),
      firstRowOf: field.unique === true && role !== "key" && field.list !== true
        ? new FirstRows(projectedRows)
        : undefined,
      alternate: options.alternateKeys?.[field.name] !== undefined && field.list !== true
        ? { firstRowOf: new FirstRows(projectedRows), severity: options.alternateKeys[field.name]! }
        : undefined
    })
  }
  // Errors read left to right, as the user sees the columns.
  const position = (s: Slot) =>
    Math.min(s.valueIndex < 0 ? Infinity : s.valueIndex, s.refIndex < 0 ? Infinity : s.refIndex)
  slots.sort((a, b) => position(a) - position(b))
  const keySlot = slots.find((s) => s.role === "key")
  const parentSlot = slots.find((s) => s.role === "parent")
  const idSlot = slots.find((s) => s.role === "id")
  const extras: ReadonlyArray<Extra> = mode === "delete"
    ? []
    : plan.columns.filter((c) => c.kind === "extra").map((c) => ({ index: c.index, name: c.name }))
  // Every column the row's payload is read from, left to right.
  const readColumns = [
    ...slots.flatMap((s) => [
      ...(s.valueIndex >= 0 ? [{ index: s.valueIndex, name: s.valueColumn }] : []),
      ...(s.refIndex >= 0 ? [{ index: s.refIndex, name: s.refColumn }] : [])
    ]),
    ...extras
  ].sort((a, b) => a.index - b.index)
  const columnsOf = (slot: Slot | undefined): Array<string> =>
    slot === undefined
      ? []
      : [...(slot.valueIndex >= 0 ? [slot.valueColumn] : []), ...(slot.refIndex >= 0 ? [slot.refColumn] : [])]
  const identity = [...columnsOf(idSlot), ...columnsOf(keySlot)]
  const or = msg("row.or")
  const identityMessage = msg("row.needed", { mode, columns: identity.join(or) })
  const parentMessage = msg("row.needed", { mode, columns: columnsOf(parentSlot).join(or) })
  // An upsert of a resource with a key finds each record by it: a row with neither key nor id (a total line, a
  // note under the table) would be created again on every run. A required key says "required" itself.
  const keylessUpsert = mode === "upsert" && resource.key !== undefined && keySlot?.required !== true
  const keyColumns = keySlot !== undefined ? columnsOf(keySlot) : [resource.key ?? "id"]
  const keylessColumn = keyColumns[0] ?? resource.key ?? "id"
  const keylessMessage = msg("row.noKey", {
    identity: (identity.length > 0 ? identity : keyColumns).join(or),
    key: keyColumns.join(or)
  })
  const firstRowOf = new FirstRows(projectedRows)

  const text = (
    cells: ReadonlyArray<string>,
    index: number
  ) => (index < 0 ? "" : cellText(cells, index, restoreGuard).trim())

  const example = exampleRowTest(resource, plan.header)

  /** The row's outcome, or — when it names attachments — what it is before the files are checked on disk. */
  const validateRow = (
    row: SourceRow
  ): RowResult | {
    readonly _tag: "CheckFiles"
    readonly sync: RowResult
    readonly pending: ReadonlyArray<PendingFile>
  } => {
    if (row.hidden === true) return { _tag: "Skipped", row: row.row, reason: hiddenRowMessage(row.row) }
    // A cell of a column the row sends that holds no value (a spreadsheet's error): the row is invalid, naming it,
    // and the cell reads as empty for the other checks, which say nothing more of its column.
    let cells = row.cells
    let cellErrors: Array<RowError> | undefined
    for (const c of readColumns) {
      const message = cellProblem(row, c.index)
      if (message === undefined) continue
      ;(cellErrors ??= []).push({ column: c.name, message })
      if (cells === row.cells) cells = cells.slice()
      ;(cells as Array<string>)[c.index] = ""
    }
    rowsSeen++
    let errors: Array<RowError> | undefined
    // The template's example row left in the file: reported first; its cells are checked all the same.
    if (example?.test((i) => text(cells, i)) === true) errors = push(errors, example.column, exampleRowMessage())
    let refs: Array<PendingRef> | undefined
    let pending: Array<PendingFile> | undefined
    let warnings: Array<string> | undefined
    const payload: Record<string, unknown> = {}
    if (row.ragged === true) {
      // A row a mapping profile rewrote: the width the user knows is the file's header's, not the fields'.
      const beyond = cells.length - plan.header.length
      const width = row.original === undefined ? plan.header.length : row.original.cells.length - beyond
      errors = push(errors, beyondHeader(), raggedMessage(cells, plan.header.length, width))
    }
    charsSeen += fileChars(row)
    for (let i = 0; i < plan.header.length; i++) {
      const length = cells[i]?.length ?? 0
      if (length > maxCellCharacters) errors = push(errors, plan.header[i]!, tooLong(length))
    }

    // The key (from its column, or its reference column) decides whether the id is sent.
    let keyText: string | undefined
    let keyColumn = ""
    if (keySlot !== undefined) {
      const viaRef = text(cells, keySlot.refIndex)
      if (viaRef !== "") {
        keyText = viaRef
        keyColumn = keySlot.refColumn
      } else {
        const own = text(cells, keySlot.valueIndex)
        if (own !== "") {
          keyText = own
          keyColumn = keySlot.valueColumn
        }
      }
    }
    let id: string | number | undefined
    let idGiven = false

    for (const slot of slots) {
      if (slot.role === "id") {
        const t = text(cells, slot.valueIndex)
        if (t === "") continue
        idGiven = true
        const decoded = slot.decode(t)
        // An export of another account carries that account's ids: the key wins, and the id is not sent.
        if (keyText !== undefined) {
          if (!(decoded instanceof Invalid)) id = decoded as string | number
          continue
        }
        if (decoded instanceof Invalid) {
          errors = push(errors, slot.valueColumn, decoded.message)
          continue
        }
        id = decoded as string | number
        payload[slot.name] = id
        continue
      }
      if (slot.refIndex >= 0) {
        const r = text(cells, slot.refIndex)
        if (r !== "") {
          const values = slot.isList ? splitList(r) : [r]
          if (values.length > 0) {
            const reference = slot.field.ref!
            ;(refs ??= []).push({
              field: slot.name,
              column: slot.refColumn,
              resource: reference.resource,
              by: refKey(reference),
              values,
              list: slot.isList
            })
            continue
          }
        }
      }
      const raw = slot.valueIndex < 0 ? "" : cellText(cells, slot.valueIndex, restoreGuard)
      const t = raw.trim()
      if (t === "") {
        if (slot.required) {
          errors = push(errors, slot.valueIndex >= 0 ? slot.valueColumn : slot.refColumn, slot.requiredMessage)
        }
        continue
      }
      if (slot.isFile) {
        ;(pending ??= []).push({ slot, text: t })
        continue
      }
      const decode = slot.decodeNumber !== undefined && row.numbers?.has(slot.valueIndex) === true
        ? slot.decodeNumber
        : slot.decode
      const value = decode(slot.keepSpaces ? raw : t)
      if (value instanceof Invalid) {
        errors = push(errors, slot.valueColumn, value.message)
        continue
      }
      if (slot.isList && (value as ReadonlyArray<unknown>).length === 0) {
        if (slot.required) errors = push(errors, slot.valueColumn, slot.requiredMessage)
        continue
      }
      payload[slot.name] = value
      if (slot.field.type._tag === "enum" && slot.field.type.formerly !== undefined) {
        warnings = formerNumber(slot, t, warnings)
      }
      if (slot.shape !== undefined) warnings = unknownKeys(slot, value, warnings)
      if (slot.firstRowOf !== undefined) {
        errors = once(
          slot.firstRowOf,
          t,
          row.row,
          slot.valueColumn,
          msg("row.mustBeUnique", { field: slot.name }),
          errors
        )
      }
      if (slot.alternate !== undefined) {
        const first = slot.alternate.firstRowOf.firstOr(String(value), row.row)
        if (first !== undefined) {
          const message = msg("row.alternateKey", { value: quote(t), first, field: slot.name })
          if (slot.alternate.severity === "invalid") errors = push(errors, slot.valueColumn, message)
          else (warnings ??= []).push(`${slot.valueColumn}: ${message}`)
        }
      }
    }

    for (const extra of extras) {
      const t = text(cells, extra.index)
      if (t !== "") payload[extra.name] = t
    }

    if (keylessUpsert && !idGiven && keyText === undefined) errors = push(errors, keylessColumn, keylessMessage)
    if (mode === "update" || mode === "delete") {
      if (!idGiven && keyText === undefined) errors = push(errors, identity[0] ?? "id", identityMessage)
      if (
        parentSlot !== undefined && text(cells, parentSlot.refIndex) === "" && text(cells, parentSlot.valueIndex) === ""
      ) {
        errors = push(errors, parentSlot.valueIndex >= 0 ? parentSlot.valueColumn : parentSlot.refColumn, parentMessage)
      }
    }

    if (keyText !== undefined) {
      let identityKey = keyText
      let parentNote = ""
      if (parentSlot !== undefined) {
        const viaRef = text(cells, parentSlot.refIndex)
        const parentText = viaRef !== "" ? viaRef : text(cells, parentSlot.valueIndex)
        const parentColumn = viaRef !== "" ? parentSlot.refColumn : parentSlot.valueColumn
        identityKey = `${parentColumn}\u0001${normalKey(parentText)}\u0000${keyColumn}\u0001${normalKey(keyText)}`
        parentNote = msg("row.sameParent", { column: parentColumn, value: quote(parentText) })
      } else if (keySlot!.refIndex >= 0) {
        identityKey = `${keyColumn}\u0001${normalKey(keyText)}`
      }
      errors = once(firstRowOf, identityKey, row.row, keyColumn, parentNote, errors, keyText)
    }
    if (cellErrors !== undefined) {
      const shown = new Set(cellErrors.map((e) => e.column))
      errors = [...cellErrors, ...(errors ?? []).filter((e) => !shown.has(e.column))]
    }

    const result: RowResult = errors !== undefined
      ? { _tag: "Invalid", row: row.row, errors }
      : {
        _tag: "Valid",
        row: row.row,
        payload,
        key: keyText,
        id,
        refs: refs ?? none,
        files: none,
        warnings: warnings ?? none
      }
    return pending === undefined ? result : { _tag: "CheckFiles", sync: result, pending }
  }

  const rules = { baseDir: options.baseDir, root: options.attachmentsRoot, maxBytes: options.maxAttachmentBytes }
  const attach = Effect.fn("Validate.attachFiles")(function*(sync: RowResult, pending: ReadonlyArray<PendingFile>) {
    const files: Array<FileCell> = []
    const errors: Array<RowError> = sync._tag === "Invalid" ? [...sync.errors] : []
    for (const { slot, text: t } of pending) {
      const found = yield* Effect.promise(() => checkAttachment(t, rules))
      if (typeof found === "string") errors.push({ column: slot.valueColumn, message: found })
      else {files.push({
          field: slot.name,
          path: found.path,
          name: found.name,
          bytes: found.bytes,
          maxBytes: rules.maxBytes
        })}
    }
    const result: RowResult = errors.length > 0
      ? { _tag: "Invalid", row: sync.row, errors }
      : { ...(sync as Extract<RowResult, { _tag: "Valid" }>), files }
    return result
  })

  const check = (row: SourceRow) => {
    const outcome = validateRow(row)
    return outcome._tag === "CheckFiles" ? attach(outcome.sync, outcome.pending) : outcome
  }
  const tables = [firstRowOf, ...slots.flatMap((s) => [s.firstRowOf, s.alternate?.firstRowOf])]
  return {
    // Not an Effect.fn: a span per row would cost more than the validation of a million rows.
    validate: (row) => checked(check(row)),
    check,
    heldBytes: () => tables.reduce((sum, t) => sum + (t?.bytes ?? 0), 0)
  }
}

/** A number only the field's former codes had (discount type 2): read as its label, and said so. */
const formerNumber = (slot: Slot, text: string, warnings: Array<string> | undefined): Array<string> | undefined => {
  const type = slot.field.type
  if (type._tag !== "enum" || type.formerly === undefined || !/^\d+$/.test(text)) return warnings
  const former = formerCode(type.values, type.formerly, Number(text))
  if (former?._tag !== "moved") return warnings
  const out = warnings ?? []
  out.push(
    msg("row.formerCode", { column: slot.valueColumn, value: text, label: `"${former.label}"`, code: former.to })
  )
  return out
}

const unknownKeys = (slot: Slot, value: unknown, warnings: Array<string> | undefined): Array<string> | undefined => {
  const items = Array.isArray(value) ? value : [value]
  let out = warnings
  const reported = new Set<string>()
  for (const item of items) {
    for (const k of Object.keys(item as object)) {
      if (slot.shape!.has(k) || reported.has(k)) continue
      reported.add(k)
      ;(out ??= []).push(
        msg("row.unknownProperty", { column: slot.valueColumn, name: `"${k}"`, known: [...slot.shape!].join(", ") })
      )
    }
  }
  return out
}
