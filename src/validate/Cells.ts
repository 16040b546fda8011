/**
 * One effect/Schema per column, generated from the resource table's field types: the trimmed cell text is
 * decoded into the value the API takes (numbers, booleans, enum numbers, `yyyy-MM-ddTHH:mm:ss`, digits of a CPF,
 * lists, JSON objects), and a failure carries a message written for a spreadsheet user.
 *
 * Each schema is a `transformOrFail` from `Schema.String` to the field's target type (`encode` gives the cell
 * text back) whose decode is a hand-written parser returning `A | Invalid`. The validator calls that same
 * parser directly (`cellDecoder`): identical values and messages, without a `ParseResult` and an `Either` per
 * cell, which measured a quarter of the validation time (200,000 customer rows). Refinements composed per
 * check are slower still, and their messages cannot quote the cell as the user wrote it.
 */
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { t } from "../Messages.js"
import type { Field, FieldType } from "../Resources.js"
import { listSeparator } from "../Resources.js"
import { parseCpfCnpj } from "./CpfCnpj.js"
import { parseDate, parseTime } from "./Dates.js"
import { Invalid, quote } from "./Invalid.js"
import type { Formats } from "./Model.js"
import { outOfRange, parseNumber } from "./Numbers.js"

/** How the text of one cell becomes the value sent, and back. */
interface Parser<A> {
  readonly target: Schema.Schema<A>
  readonly parse: (text: string) => A | Invalid
  readonly format: (value: A) => string
}

const parser = <A>(
  target: Schema.Schema<A>,
  parse: (text: string) => A | Invalid,
  format: (value: A) => string = String
): Parser<A> => ({
  target,
  parse,
  format
})

// --- the field types -----------------------------------------------------------------------------------------

const wholeNumber = /^[+-]?\d+$/

/** The largest id a server's 64-bit integer can hold. */
const maxId = 9223372036854775807n

const integer = (min: number | undefined, max: number | undefined, id: boolean) =>
  parser(Schema.Union(Schema.Int, Schema.String), (text): number | string | Invalid => {
    if (!wholeNumber.test(text)) {
      const hint = /[.,\s]/.test(text) ? t("cell.digitsOnly") : ""
      return new Invalid(t("cell.notWholeNumber", { value: quote(text), hint }))
    }
    const n = Number(text)
    // An id beyond 2^53 (the server's, exported as its digits) is kept as its digits: a number would round it
    // into another record's id.
    if (!Number.isSafeInteger(n) && id && /^\+?\d+$/.test(text) && BigInt(text) <= maxId) {
      return text.replace(/^\+/, "").replace(/^0+(?=\d)/, "")
    }
    if (!Number.isSafeInteger(n)) return new Invalid(t("cell.tooLarge", { value: quote(text) }))
    if (id && n < 1) return new Invalid(t("cell.badId", { value: quote(text) }))
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) return outOfRange(text, min, max)
    return n
  })

const decimalNumber = (min: number | undefined, max: number | undefined, formats: Formats) =>
  parser(Schema.Number, (text): number | Invalid => {
    const n = parseNumber(text, formats.decimal)
    if (n instanceof Invalid) return n
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) return outOfRange(text, min, max)
    return n
  })

const trueWords = ["true", "sim", "yes", "s", "y", "1", "x", "verdadeiro"]
const falseWords = ["false", "não", "nao", "no", "n", "0", "falso"]
const booleanWords: ReadonlyMap<string, boolean> = new Map([
  ...trueWords.map((w) => [w, true] as const),
  ...falseWords.map((w) => [w, false] as const)
])
const booleanHelp = "true/false, sim/não, yes/no, s/n, y/n, 1/0, x, verdadeiro/falso"

const boolean = parser(Schema.Boolean, (text): boolean | Invalid => {
  const lower = text.toLowerCase()
  // `não` typed on a Mac may arrive decomposed (a + combining tilde).
  const b = booleanWords.get(lower) ?? booleanWords.get(lower.normalize("NFC"))
  return b ?? new Invalid(t("cell.notYesNo", { value: quote(text), words: booleanHelp }))
})

const stringOf = (maxLength: number | undefined) =>
  parser(Schema.String, (text): string | Invalid => {
    if (maxLength === undefined || text.length <= maxLength) return text
    const length = [...text].length
    return length <= maxLength ? text : new Invalid(t("cell.tooLong", { length, max: maxLength }))
  })

const emailShape = /^[^\s@,;<>()[\]"]+@(?:[^\s@,;<>()[\]".]+\.)+[^\s@,;<>()[\]".]{2,}$/

const email = parser(
  Schema.String,
  (text): string | Invalid => emailShape.test(text) ? text : new Invalid(t("cell.notEmail", { value: quote(text) }))
)

const guidShape = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i

const guid = parser(Schema.String, (text): string | Invalid => {
  const m = guidShape.exec(text)
  return m !== null ? m[1]! : new Invalid(t("cell.notGuid", { value: quote(text) }))
})

const fold = (s: string) => s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
const labelled = /^(\d+)\s*(?:[-–:]|\()\s*(.*?)\s*\)?$/

type Codes = ReadonlyArray<{ readonly value: number; readonly label: string }>

/**
 * What a bare number means in a field whose codes changed (`formerly`): `same` (both codes agree), `moved` (only
 * the former codes had it: read as its label, `to` today's code), `changed` (it means something else now:
 * refused, since a file written for the former codes would be turned around silently).
 */
export const formerCode = (
  values: Codes,
  formerly: Codes,
  n: number
): { readonly _tag: "same" } | { readonly _tag: "moved"; readonly label: string; readonly to: number } | {
  readonly _tag: "changed"
  readonly now: string
  readonly before: string
} | undefined => {
  const before = formerly.find((v) => v.value === n)
  const now = values.find((v) => v.value === n)
  if (before === undefined) return undefined
  if (now === undefined) {
    const to = values.find((v) => fold(v.label) === fold(before.label))
    return to === undefined ? undefined : { _tag: "moved", label: before.label, to: to.value }
  }
  return fold(now.label) === fold(before.label)
    ? { _tag: "same" }
    : { _tag: "changed", now: now.label, before: before.label }
}

/**
 * The Portuguese names of the table's enumeration labels (compared without accents or case): a pt-BR user writes
 * `alta` or `média` for a priority as readily as `high`.
 */
const portugueseLabels: Readonly<Record<string, ReadonlyArray<string>>> = {
  low: ["baixa", "baixo"],
  medium: ["media", "medio"],
  high: ["alta", "alto"],
  amount: ["valor"],
  percent: ["percentual", "porcentagem"],
  user: ["usuario"],
  "team manager": ["gestor de equipe", "gerente de equipe"],
  administrator: ["administrador"],
  minutes: ["minutos"],
  hours: ["horas"],
  manual: ["manual"],
  automatic: ["automatico"],
  opened: ["aberta", "aberto"],
  displaced: ["deslocamento", "em deslocamento"],
  "checked in": ["check-in", "checkin"],
  "checked out": ["check-out", "checkout"],
  finished: ["finalizada", "finalizado", "concluida"],
  paused: ["pausada", "pausado"],
  task: ["tarefa"],
  customer: ["cliente"],
  equipment: ["equipamento"],
  ticket: ["chamado"]
}

const enumeration = (values: Codes, formerly?: Codes) => {
  const byText = new Map<string, number>()
  for (const v of values) {
    byText.set(String(v.value), v.value)
    byText.set(fold(v.label), v.value)
  }
  // A Portuguese name never takes the place of a label the field has itself (`user` of user type and check-in).
  for (const v of values) {
    for (const name of portugueseLabels[fold(v.label)] ?? []) if (!byText.has(name)) byText.set(name, v.value)
  }
  const allowed = values.map((v) => `${v.value} (${v.label})`).join(", ")
  return parser(Schema.Literal(...values.map((v) => v.value)), (text): number | Invalid => {
    if (formerly !== undefined && /^\d+$/.test(text)) {
      const former = formerCode(values, formerly, Number(text))
      if (former?._tag === "moved") return former.to
      if (former?._tag === "changed") {
        return new Invalid(
          t("cell.ambiguousCode", {
            value: quote(text),
            allowed,
            code: text,
            before: former.before,
            labels: values.map((v) => v.label).join(", ")
          })
        )
      }
    }
    const direct = byText.get(text.toLowerCase()) ?? byText.get(fold(text))
    if (direct !== undefined) return direct
    // The number with its label, as a drop-down may show it: `3 (high)`, `3 - high`.
    const m = labelled.exec(text)
    if (m !== null) {
      const n = byText.get(m[1]!)
      if (n !== undefined && byText.get(fold(m[2]!)) === n) return n
    }
    return new Invalid(t("cell.notOneOf", { value: quote(text), allowed }))
  })
}

const objectOf = (shape: ReadonlyArray<string>, list: boolean) => {
  const sample = `{${shape.map((k) => `"${k}":"…"`).join(",")}}`
  const expected = list ? t("cell.jsonList", { sample }) : t("cell.jsonObject", { sample })
  return parser(
    Schema.Unknown,
    (text): unknown => {
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        return new Invalid(t("cell.notJson", { value: quote(text), expected }))
      }
      if (!list) {
        return Predicate.isRecord(value)
          ? value
          : new Invalid(t("cell.notShape", { value: quote(text), expected }))
      }
      // One object in a list column is a list of one.
      if (Predicate.isRecord(value)) return [value]
      if (!Array.isArray(value)) return new Invalid(t("cell.notShape", { value: quote(text), expected }))
      const bad = value.findIndex((x) => !Predicate.isRecord(x))
      return bad < 0 ? value : new Invalid(t("cell.itemNotObject", { item: bad + 1, expected }))
    },
    (value) => JSON.stringify(value)
  )
}

const fileName = parser(Schema.String, (text): string => text)

/** Text of a cell's list: split on `|`, items trimmed, empty items dropped (`a||b|` → a, b). */
export const splitList = (text: string): Array<string> => {
  const items: Array<string> = []
  for (const part of text.split(listSeparator)) {
    const item = part.trim()
    if (item !== "") items.push(item)
  }
  return items
}

const listOf = <A>(item: Parser<A>): Parser<ReadonlyArray<A>> =>
  parser(
    Schema.Array(item.target),
    (text): ReadonlyArray<A> | Invalid => {
      const parts = splitList(text)
      const values: Array<A> = []
      for (const part of parts) {
        const v = item.parse(part)
        if (v instanceof Invalid) {
          return /[,;]/.test(part)
            ? new Invalid(t("cell.listSeparator", { message: v.message, separator: listSeparator }))
            : v
        }
        values.push(v)
      }
      return values
    },
    (values) => values.map(item.format).join(listSeparator)
  )

/** A column's value type is only known at run time (from the table); `format` only ever gets what `parse` made. */
type AnyParser = Parser<any>

const parserOf = (type: FieldType, formats: Formats, id: boolean, list: boolean): AnyParser => {
  switch (type._tag) {
    case "string":
      return stringOf(type.maxLength)
    case "integer":
      return integer(type.min, type.max, id)
    case "number":
      return decimalNumber(type.min, type.max, formats)
    case "boolean":
      return boolean
    case "date":
      return parser(Schema.String, (text) => parseDate(text, formats.dateFormat))
    case "time":
      return parser(Schema.String, parseTime)
    case "email":
      return email
    case "cpfCnpj":
      return parser(Schema.String, parseCpfCnpj)
    case "guid":
      return guid
    case "enum":
      return enumeration(type.values, type.formerly)
    case "object":
      return objectOf(type.shape, list)
    case "file":
      return fileName
  }
}

// --- schemas -------------------------------------------------------------------------------------------------

const schemaOf = <A>(p: Parser<A>): Schema.Schema<A, string> =>
  Schema.transformOrFail(Schema.String, Schema.typeSchema(p.target), {
    strict: true,
    decode: (text, _, ast) => {
      const value = p.parse(text)
      return value instanceof Invalid
        ? ParseResult.fail(new ParseResult.Type(ast, text, value.message))
        : ParseResult.succeed(value)
    },
    encode: (value) => ParseResult.succeed(p.format(value))
  })

const columnParser = (field: Field, formats: Formats, id: boolean): AnyParser => {
  const item = parserOf(field.type, formats, id, field.list === true)
  return field.list === true && field.type._tag !== "object" ? listOf(item) : item
}

/**
 * The schema of a column of `field`: trimmed cell text → the value sent. `id` marks server ids (the record's
 * id, references, parents), which must be positive. List fields split on `|` (object lists take a JSON array).
 */
export const cellSchema = (field: Field, formats: Formats, id: boolean): Schema.Schema<unknown, string> =>
  schemaOf(columnParser(field, formats, id))

/** Decodes one cell of a column: the value, or `Invalid` with the message the column's schema fails with. */
export type CellDecoder = (text: string) => unknown

/**
 * The hot path: the parser inside `cellSchema`, called directly. Going through `ParseResult` for every cell of
 * a million-row file cost a quarter of the validation time for the same values and messages.
 */
export const cellDecoder = (field: Field, formats: Formats, id: boolean): CellDecoder =>
  columnParser(field, formats, id).parse
