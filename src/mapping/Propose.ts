/**
 * `fsm-bulk map`: a proposed mapping profile for a customer's file, with the reasons a person checks in one screen.
 * Each source column is matched by its header (the resource's column names, the table's labels, Portuguese and
 * English synonyms; accents, case and punctuation ignored), else by the shape of its values (CPF/CNPJ, e-mail,
 * phone, dates, coordinates, yes/no). `--values` lists the distinct values of the mapped columns that the field
 * does not read as they are, with counts: the value maps to fill.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { InputError } from "../Errors.js"
import type { Source } from "../files/Source.js"
import { t } from "../Messages.js"
import type { Field, Resource } from "../Resources.js"
import { templateColumns } from "../Resources.js"
import { cellDecoder } from "../validate/Cells.js"
import { Invalid } from "../validate/Invalid.js"
import { findHeader } from "./Apply.js"
import { normal, type Profile } from "./Profile.js"

/** Header words that name a field, Portuguese and English, by field or reference column name. */
const synonyms: Readonly<Record<string, ReadonlyArray<string>>> = {
  externalId: [
    "codigo",
    "cod",
    "codigo do cliente",
    "codigo cliente",
    "id externo",
    "code",
    "external id",
    "referencia"
  ],
  externalCode: ["codigo", "cod", "code"],
  name: ["nome", "nome fantasia", "fantasia", "cliente", "nome do cliente", "trade name"],
  legalName: ["razao social", "razao", "legal name", "company name", "empresa"],
  cpfCnpj: ["cpf", "cnpj", "cpf cnpj", "cnpj cpf", "documento", "doc", "tax id"],
  phoneNumber: ["telefone", "telefones", "fone", "tel", "celular", "whatsapp", "phone", "phones"],
  phone: ["telefone", "fone", "tel", "celular", "phone"],
  email: ["e mail", "email", "emails", "correio eletronico", "mail"],
  manager: ["responsavel", "gerente", "contato", "manager"],
  note: ["observacao", "observacoes", "obs", "notas", "nota", "notes"],
  address: ["endereco", "endereco completo", "logradouro", "address"],
  adressComplement: ["complemento", "address complement", "complement"],
  latitude: ["latitude", "lat"],
  longitude: ["longitude", "lng", "lon", "long"],
  active: ["ativo", "ativa", "situacao", "status", "active"],
  login: ["login", "usuario", "user"],
  password: ["senha", "password"],
  description: ["descricao", "nome", "description"],
  segmentDescription: ["segmento", "segment"],
  groupsDescription: ["grupo", "grupos", "group", "groups"],
  // Not "vendedor": a salesperson's name is an internal column until someone maps it (with a value map to logins).
  managersLogin: ["logins dos responsaveis", "managers login"],
  price: ["preco", "valor", "price"],
  quantity: ["quantidade", "qtd", "qtde", "quantity"]
}

interface Proposal {
  readonly source: string
  /** Undefined: ignored. */
  readonly field: string | undefined
  readonly why: string
  readonly confidence: "high" | "medium" | "low" | "-"
  readonly samples: ReadonlyArray<string>
}

const shapes: ReadonlyArray<{
  readonly name: "CPF/CNPJ" | "e-mail" | "phone" | "date" | "latitude" | "longitude" | "yes/no"
  readonly test: (v: string) => boolean
  readonly fits: (f: Field) => boolean
}> = [
  {
    name: "CPF/CNPJ",
    test: (v) => /^(\d{3}\.?\d{3}\.?\d{3}-?\d{2}|\d{2}\.?\d{3}\.?\d{3}\/?\d{4}-?\d{2})$/.test(v),
    fits: (f) => f.type._tag === "cpfCnpj"
  },
  { name: "e-mail", test: (v) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v), fits: (f) => f.type._tag === "email" },
  {
    name: "phone",
    test: (v) => /^\+?[\d\s().-]{8,20}$/.test(v) && v.replace(/\D/g, "").length >= 8,
    fits: (f) => /phone|telefone/i.test(f.name)
  },
  {
    name: "date",
    test: (v) => /^\d{1,2}\/\d{1,2}\/\d{4}$|^\d{4}-\d{2}-\d{2}/.test(v),
    fits: (f) => f.type._tag === "date"
  },
  {
    name: "latitude",
    test: (v) => /^-?\d{1,2}[.,]\d{3,}$/.test(v) && Math.abs(Number(v.replace(",", "."))) <= 35,
    fits: (f) => f.name === "latitude"
  },
  {
    name: "longitude",
    test: (v) => /^-\d{2}[.,]\d{3,}$/.test(v) && Number(v.replace(",", ".")) < -34,
    fits: (f) => f.name === "longitude"
  },
  {
    name: "yes/no",
    test: (v) => /^(sim|nao|não|s|n|yes|no|true|false|verdadeiro|falso)$/i.test(v),
    fits: (f) => f.type._tag === "boolean"
  }
]

/** The header row and up to `sampleRows` rows under it. */
export const sampleOf = Effect.fn("Mapping.sample")(
  function*(source: Source, headerRow: number | undefined, sampleRows = 200) {
    const top = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(source.rows, sampleRows)))
    const candidates = [
      { row: source.headerRow ?? 1, cells: source.header },
      ...top.map((r) => ({ row: r.row, cells: r.cells }))
    ]
    return { candidates, top, headerRow }
  }
)

/** A proposed profile for `resource` and the table that explains it. */
export const propose = (
  resource: Resource,
  candidates: ReadonlyArray<{ readonly row: number; readonly cells: ReadonlyArray<string> }>,
  given: { readonly headerRow?: number | undefined; readonly sheet?: string | undefined }
) => {
  const columns = templateColumns(resource)
  const byWord = new Map<string, string>()
  const labelOf = new Map<string, string>()
  for (const c of columns) {
    byWord.set(normal(c.name), c.name)
    // The table's own label: "Trade name", "Legal (company) name".
    if (c.role === "value") labelOf.set(normal(c.field.doc), c.name)
  }
  const synonymOf = new Map<string, string>()
  for (const c of columns) {
    for (const s of synonyms[c.name] ?? []) if (!synonymOf.has(s)) synonymOf.set(s, c.name)
  }
  const known = new Set([...byWord.keys(), ...labelOf.keys(), ...synonymOf.keys()])
  const header = given.headerRow !== undefined
    ? candidates.find((c) => c.row === given.headerRow) ?? candidates[0]!
    : findHeader(candidates, known)
  const names = header.cells.map((c) => c.trim())
  while (names.length > 0 && names[names.length - 1] === "") names.pop()
  const below = candidates.filter((c) => c.row > header.row)
  const valuesOf = (i: number) => below.map((r) => (r.cells[i] ?? "").trim()).filter((v) => v !== "")

  const taken = new Set<string>()
  const proposals: Array<Proposal> = []
  const fieldOf = (name: string) => columns.find((c) => c.name === name)!.field
  // First every header match (so a shape never takes a field a header names), then shapes.
  const pending: Array<number> = []
  names.forEach((name, i) => {
    const n = normal(name)
    const exact = byWord.get(n)
    const label = labelOf.get(n)
    const synonym = synonymOf.get(n)
    const field = exact ?? label ?? synonym
    const samples = valuesOf(i).slice(0, 3)
    if (name.startsWith("_") || field === undefined || taken.has(field)) {
      proposals.push({ source: name, field: undefined, why: "", confidence: "-", samples })
      if (!name.startsWith("_")) pending.push(i)
      return
    }
    taken.add(field)
    proposals.push({
      source: name,
      field,
      why: exact !== undefined
        ? t("mapping.why.columnName")
        : label !== undefined
        ? t("mapping.why.label")
        : t("mapping.why.header", { name }),
      confidence: "high",
      samples
    })
  })
  for (const i of pending) {
    const values = valuesOf(i)
    if (values.length === 0) continue
    for (const shape of shapes) {
      const fits = values.filter(shape.test).length
      if (fits / values.length < 0.8) continue
      const field = columns.find((c) => c.role === "value" && !taken.has(c.name) && shape.fits(c.field))
      if (field === undefined) continue
      taken.add(field.name)
      proposals[i] = {
        ...proposals[i]!,
        field: field.name,
        why: t("mapping.why.values", { shape: t(`mapping.shape.${shape.name}`) }),
        confidence: "medium"
      }
      break
    }
  }
  for (const p of proposals) {
    if (p.field === undefined && !p.source.startsWith("_")) {
      Object.assign(p, { why: t("mapping.why.none"), confidence: "-" })
    }
  }

  const profile: { -readonly [K in keyof Profile]: Profile[K] } = {
    resource: resource.name,
    ...(given.sheet !== undefined ? { sheet: given.sheet } : {}),
    ...(header.row !== (candidates[0]?.row ?? 1) ? { headerRow: header.row } : {}),
    columns: Object.fromEntries(
      proposals.filter((p) => !p.source.startsWith("_")).map((p) => [p.source, p.field ?? "ignore"])
    ),
    fields: {}
  }
  // No key column but a CPF/CNPJ one: the document identifies the customer (review it).
  const key = resource.key
  const keyRef = key === undefined ? undefined : fieldOf(key)?.ref?.column
  const notes: Array<string> = []
  if (key !== undefined && !taken.has(key) && (keyRef === undefined || !taken.has(keyRef))) {
    const document = proposals.find((p) => p.field !== undefined && fieldOf(p.field).type._tag === "cpfCnpj")
    if (document !== undefined) {
      profile.fields = { [key]: { compose: `{${document.source}}` } }
      notes.push(t("mapping.keyFromDocument", { key, source: document.source }))
      taken.add(key)
    } else {
      notes.push(t("mapping.noKey", { key }))
    }
  }
  // A CPF/CNPJ names one customer whatever the key: two rows sharing one are refused before anything is sent.
  const documents = proposals.flatMap((p) =>
    p.field !== undefined && fieldOf(p.field).type._tag === "cpfCnpj" ? [p.field] : []
  )
  if (documents.length > 0) profile.alternateKeys = Object.fromEntries(documents.map((d) => [d, "invalid" as const]))
  const missing = resource.fields.filter((f) =>
    f.required === true && !f.readOnly && !taken.has(f.name) && !(f.ref !== undefined && taken.has(f.ref.column))
  )
  return { profile, proposals, headerRow: header.row, missing: missing.map((f) => f.name), notes }
}

/** The proposal as a table for one screen. */
export const proposalTable = (proposals: ReadonlyArray<Proposal>): ReadonlyArray<string> => {
  const rows = [
    t("mapping.tableHeadings").split("|"),
    ...proposals.map((p) => [
      p.source,
      p.field ?? "ignore",
      p.why,
      t(`mapping.sure.${p.confidence}`),
      p.samples.map((s) => (s.length > 24 ? `${s.slice(0, 24)}…` : s)).join(" | ")
    ])
  ]
  const widths = [0, 1, 2, 3].map((k) => Math.min(32, Math.max(...rows.map((r) => r[k]!.length))))
  return rows.map((r) => r.map((cell, k) => (k < 4 ? cell.padEnd(widths[k]!) : cell)).join("  ").trimEnd())
}

/**
 * The distinct values of each mapped column whose field reads only some values as they are (yes/no, choices,
 * numbers, dates, references by name), with counts and whether the field reads them; at most `limit` per column.
 */
export const distinctValues = Effect.fn("Mapping.distinctValues")(function*(
  resource: Resource,
  rows: Stream.Stream<{ readonly row: number; readonly cells: ReadonlyArray<string> }, InputError>,
  headerRow: number,
  mapped: ReadonlyArray<{ readonly index: number; readonly source: string; readonly field: string }>,
  limit = 30
) {
  const columns = templateColumns(resource)
  const wanted = mapped.flatMap((m) => {
    const column = columns.find((c) => c.name === m.field)
    if (column === undefined) return []
    const tag = column.field.type._tag
    const needs = column.role === "ref" || tag === "boolean" || tag === "enum"
    if (!needs) return []
    const decode = column.role === "ref"
      ? undefined
      : cellDecoder(column.field, { dateFormat: "dd/mm/yyyy", decimal: "," }, false)
    return [{ ...m, decode, counts: new Map<string, number>() }]
  })
  yield* Stream.runForEach(rows, (r) =>
    Effect.sync(() => {
      if (r.row <= headerRow) return
      for (const w of wanted) {
        const v = (r.cells[w.index] ?? "").trim()
        if (v === "") continue
        w.counts.set(v, (w.counts.get(v) ?? 0) + 1)
      }
    }))
  return wanted.map((w) => ({
    source: w.source,
    field: w.field,
    values: [...w.counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([value, count]) => ({
      value,
      count,
      readAsIs: w.decode === undefined ? undefined : !(w.decode(value) instanceof Invalid)
    })),
    distinct: w.counts.size
  }))
})
