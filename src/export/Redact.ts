/**
 * `export --redact pii|RESOURCE.FIELD,…`: personal data replaced with consistent fakes as records are read, before
 * anything is written (files, fingerprints), so a copy of an account can leave the customer's premises.
 *
 * Which fields hold personal data is the resource table's (`personal`: names of people, e-mails, phones,
 * CPF/CNPJ, addresses; the members of nested contacts). A fake is derived from the value with an HMAC-SHA256
 * under the user's secret redaction key (`--redact-key FILE`, created with mode 0600 when absent): the same value
 * gives the same fake in every file and resource (so references and duplicates still line up) and in every
 * export made with the same key, and nobody without the key can find a value from its fake by trying every CPF
 * (10^9 of them) as an unkeyed hash would allow. Fakes keep their form: a CPF/CNPJ has valid check digits, its
 * punctuation, length and leading zeros; an e-mail is an e-mail; a phone keeps its punctuation, length and
 * country code. Keys (`externalId`, logins …) and ids are never redacted: they are what imports and references
 * find records by.
 */
import * as Effect from "effect/Effect"
import { createHash, createHmac, randomBytes } from "node:crypto"
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { UsageError } from "../Errors.js"
import { recordProperty } from "../Identity.js"
import type { Field, PersonalKind, Resource, ResourceName } from "../Resources.js"
import { isResourceName, readName, resource, resources } from "../Resources.js"
import type { Redaction } from "./Manifest.js"

type Fake = PersonalKind | "text" | { readonly members: Readonly<Record<string, PersonalKind>> }

interface Planned {
  readonly field: Field
  readonly fake: Fake
}

interface RedactionPlan {
  readonly fields: ReadonlyMap<ResourceName, ReadonlyArray<Planned>>
}

/** Fields that find records (keys, ids, what references name a record by): never redacted. */
const findsRecords = (r: Resource, field: Field): boolean => {
  if (r.key === field.name || r.id?.name === field.name || field.ref !== undefined) return true
  return [...resources.values()].some((other) =>
    other.fields.some((f) => f.ref?.resource === r.name && (f.ref.by ?? resource(r.name).key) === field.name)
  )
}

const fakeOf = (field: Field): Fake =>
  field.personal ??
    (field.type._tag === "email" ? "email" : field.type._tag === "cpfCnpj" ? "cpfCnpj" : "text")

/** The fields `--redact` names: `pii` (every personal field of the table) or `RESOURCE.FIELD,…` (write names). */
export const planRedaction: (spec: string) => Effect.Effect<RedactionPlan, UsageError> = Effect.fn(
  "Redact.plan"
)(function*(spec: string) {
  const fields = new Map<ResourceName, Array<Planned>>()
  const add = (name: ResourceName, field: Field) => {
    const list = fields.get(name) ?? []
    if (!list.some((p) => p.field === field)) list.push({ field, fake: fakeOf(field) })
    fields.set(name, list)
  }
  for (const item of spec.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    if (item.toLowerCase() === "pii") {
      for (const r of resources.values()) {
        for (const field of r.fields) if (field.personal !== undefined && !findsRecords(r, field)) add(r.name, field)
      }
      continue
    }
    const at = item.lastIndexOf(".")
    const name = item.slice(0, at)
    const r = at > 0 && isResourceName(name) ? resource(name) : undefined
    const field = r?.fields.find((f) => f.name === item.slice(at + 1))
    if (r === undefined || field === undefined) {
      return yield* new UsageError({
        message:
          `--redact: "${item}" is not pii nor RESOURCE.FIELD (a resource's field as the templates name it, e.g. customers.email)`
      })
    }
    if (findsRecords(r, field) || !["string", "email", "cpfCnpj", "object"].includes(field.type._tag)) {
      return yield* new UsageError({
        message: `--redact: ${item} cannot be redacted: ${
          findsRecords(r, field)
            ? "it is a key, an id or a reference, which imports find records by"
            : "it is not text"
        }`
      })
    }
    add(r.name, field)
  }
  if (fields.size === 0) return yield* new UsageError({ message: "--redact: name pii or RESOURCE.FIELD,…" })
  return { fields } satisfies RedactionPlan as RedactionPlan
})

/** The redaction key in `file`, created (32 random bytes, hex, mode 0600) when absent; `warn` says so. */
export const loadRedactKey = Effect.fn("Redact.loadKey")(
  function*(file: string, out: string, warn: (line: string) => Effect.Effect<void>) {
    const absolute = NodePath.resolve(file)
    const relative = NodePath.relative(NodePath.resolve(out), absolute)
    if (!relative.startsWith("..") && !NodePath.isAbsolute(relative)) {
      return yield* new UsageError({
        message:
          `--redact-key ${file}: the key must not be kept in the export's --out directory, which leaves with the copy`
      })
    }
    if (!existsSync(absolute)) {
      yield* Effect.try({
        try: () => writeFileSync(absolute, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" }),
        catch: (e) => new UsageError({ message: `--redact-key ${file}: cannot create the key (${String(e)})` })
      })
      yield* warn(
        `export: created the redaction key ${absolute} (mode 0600). Keep it private and keep it: with it, the same ` +
          "values get the same fakes in later exports; anyone holding it can test guesses of the original values"
      )
    }
    const text = yield* Effect.try({
      try: () => readFileSync(absolute, "utf8").trim(),
      catch: (e) => new UsageError({ message: `--redact-key ${file}: cannot read the key (${String(e)})` })
    })
    if (!/^[0-9a-f]{64,}$/i.test(text)) {
      return yield* new UsageError({
        message: `--redact-key ${file}: not a redaction key (64 or more hex digits); give a new file name to create one`
      })
    }
    if ((statSync(absolute).mode & 0o077) !== 0) {
      yield* warn(`export: ${absolute} can be read by other users of this machine (chmod 600 it)`)
    }
    return Buffer.from(text, "hex")
  }
)

// --- fakes ------------------------------------------------------------------------------------------------------

const firstNames = [
  "Ana",
  "Beatriz",
  "Bruno",
  "Camila",
  "Carla",
  "Daniel",
  "Diego",
  "Eduarda",
  "Felipe",
  "Fernanda",
  "Gabriel",
  "Gustavo",
  "Helena",
  "Igor",
  "Isabela",
  "João",
  "Juliana",
  "Larissa",
  "Leonardo",
  "Lucas",
  "Luiza",
  "Marcelo",
  "Mariana",
  "Mateus",
  "Natália",
  "Otávio",
  "Paula",
  "Pedro",
  "Rafael",
  "Renata",
  "Rodrigo",
  "Sabrina",
  "Thiago",
  "Vanessa",
  "Vinícius",
  "Yasmin"
]
const lastNames = [
  "Alves",
  "Araújo",
  "Barbosa",
  "Batista",
  "Cardoso",
  "Carvalho",
  "Castro",
  "Correia",
  "Costa",
  "Dias",
  "Duarte",
  "Farias",
  "Ferreira",
  "Freitas",
  "Gomes",
  "Lopes",
  "Macedo",
  "Martins",
  "Melo",
  "Mendes",
  "Monteiro",
  "Moraes",
  "Moreira",
  "Nascimento",
  "Nogueira",
  "Oliveira",
  "Pereira",
  "Pinto",
  "Ramos",
  "Ribeiro",
  "Rocha",
  "Santana",
  "Santos",
  "Teixeira",
  "Vieira",
  "Xavier"
]

/** A digest of `value` under the key, for fakes of `kind`. */
const digest = (key: Buffer, kind: string, value: string): Buffer =>
  createHmac("sha256", key).update(`${kind}\u0000${value}`).digest()

/** `count` decimal digits derived from the digest (as one big number, so every digit is as likely). */
const digitsOf = (bytes: Buffer, count: number): string =>
  (BigInt(`0x${bytes.toString("hex")}`) % 10n ** BigInt(count)).toString().padStart(count, "0")

const cpfCheck = (digits: string): string => {
  let out = digits
  for (const length of [9, 10]) {
    const sum = [...out.slice(0, length)].reduce((acc, d, i) => acc + Number(d) * (length + 1 - i), 0)
    const r = (sum * 10) % 11
    out += String(r === 10 ? 0 : r)
  }
  return out
}

const cnpjCheck = (digits: string): string => {
  let out = digits
  for (const weights of [[5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]]) {
    const r = weights.reduce((acc, w, i) => acc + w * Number(out[i]), 0) % 11
    out += String(r < 2 ? 0 : 11 - r)
  }
  return out
}

/** The digits of `text` replaced, in order, by `digits`; everything else kept (punctuation, spaces, `+`). */
const inShape = (text: string, digits: string): string => {
  let i = 0
  return text.replace(/\d/g, () => digits[i++] ?? "0")
}

const fakeText = (key: Buffer, kind: PersonalKind | "text", text: string): string => {
  switch (kind) {
    case "cpfCnpj": {
      const digits = text.replace(/\D/g, "")
      const d = digest(key, kind, digits)
      const base = digits.length === 11 ? cpfCheck(digitsOf(d, 9)) : digits.length === 14
        ? cnpjCheck(digitsOf(d, 12))
        : digitsOf(d, Math.max(digits.length, 1))
      // All-equal digits are no CPF/CNPJ: one more digest (as unlikely as one in 10^8).
      const valid = /^(\d)\1+$/.test(base) ? fakeText(key, kind, `${text}.`) : inShape(text, base)
      return /\D/.test(text) || digits.length === text.length ? valid : base
    }
    case "phone": {
      const digits = text.replace(/\D/g, "")
      // The country code after a leading + is kept (+55): the number stays a Brazilian one.
      const kept = /^\s*\+/.test(text) ? digits.slice(0, 2) : ""
      const fake = kept + digitsOf(digest(key, kind, digits), digits.length - kept.length)
      return inShape(text, fake)
    }
    case "email": {
      const d = digest(key, kind, text.trim().toLowerCase())
      return `pessoa.${d.toString("hex").slice(0, 12)}@example.com`
    }
    case "name": {
      const d = digest(key, kind, text.trim().replace(/\s+/g, " ").toLowerCase())
      // Three different surnames: about 1.7 million names, so distinct people rarely share a fake.
      const n = lastNames.length
      const first = d[1]! % n
      const second = (first + 1 + (d[2]! % (n - 1))) % n
      let third = (first + 1 + (d[3]! % (n - 1))) % n
      if (third === second) third = (second + 1) % n === first ? (second + 2) % n : (second + 1) % n
      return `${firstNames[d[0]! % firstNames.length]} ${lastNames[first]} ${lastNames[second]} ${lastNames[third]}`
    }
    case "address": {
      const d = digest(key, kind, text.trim().replace(/\s+/g, " ").toLowerCase())
      return `Rua ${firstNames[d[0]! % firstNames.length]} ${lastNames[d[1]! % lastNames.length]}, ${
        (d.readUInt16BE(2) % 9999) + 1
      }`
    }
    case "text":
      return `redigido-${digest(key, kind, text.trim()).toString("hex").slice(0, 12)}`
  }
}

const fakeValue = (key: Buffer, fake: Fake, value: unknown): unknown => {
  if (Array.isArray(value)) return value.map((item) => fakeValue(key, fake, item))
  if (typeof fake === "object") {
    if (value === null || typeof value !== "object") return value
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
    for (const [member, kind] of Object.entries(fake.members)) {
      const name = Object.keys(out).find((k) => k.toLowerCase() === member.toLowerCase())
      if (name !== undefined) out[name] = fakeValue(key, kind, out[name])
    }
    return out
  }
  if (typeof value === "number" && fake === "cpfCnpj") return fakeText(key, fake, String(value))
  return typeof value === "string" && value.trim() !== "" ? fakeText(key, fake, value) : value
}

export interface Redactor {
  /** The records of `r` as read, with their personal fields replaced by fakes. */
  readonly records: (
    r: Resource,
    records: ReadonlyArray<Record<string, unknown>>
  ) => ReadonlyArray<Record<string, unknown>>
  readonly manifest: Redaction
}

export const makeRedactor = (plan: RedactionPlan, key: Buffer): Redactor => ({
  records: (r, records) => {
    const planned = plan.fields.get(r.name)
    if (planned === undefined) return records
    return records.map((record) => {
      const out = { ...record }
      for (const { fake, field } of planned) {
        for (const name of [readName(field), field.name]) {
          const property = Object.keys(out).find((k) => k.toLowerCase() === name.toLowerCase())
          if (property !== undefined && recordProperty(out, property) !== undefined) {
            out[property] = fakeValue(key, fake, out[property])
          }
        }
      }
      return out
    })
  },
  manifest: {
    method: "hmac-sha256",
    keyId: createHash("sha256").update(key).digest("hex").slice(0, 16),
    fields: [...plan.fields].flatMap(([name, planned]) =>
      planned.map(({ fake, field }) => ({
        resource: name,
        field: field.name,
        fake: typeof fake === "object" ? `members ${Object.keys(fake.members).join(", ")}` : fake
      }))
    )
  }
})
