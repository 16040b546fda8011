/**
 * Reading the API's answers: the `{"result": …}` envelope, list pages, rate-limit answers and the error message
 * (from `error`, then `message`, then the first entry of an ASP.NET model-state map), and the properties of a
 * read-back record in every form the live service or its Blueprint sends them. Pure functions.
 */
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { Field } from "../Resources.js"
import { redactServerText } from "../Secrets.js"

/**
 * The JSON text with every integer beyond 2^53 turned into a string of its digits, so that `JSON.parse` keeps it
 * exactly (it would round 9007199254740993 to …992, and two records would share one id). Only number tokens
 * outside strings are touched.
 */
export const losslessJson = (text: string): string => {
  if (!/\d{16}/.test(text)) return text
  let out = ""
  let from = 0
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      // A string: skip to its closing quote.
      i++
      while (i < text.length && text.charCodeAt(i) !== 34) i += text.charCodeAt(i) === 92 ? 2 : 1
      i++
      continue
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      const start = i
      i++
      while (i < text.length && /[\d.eE+-]/.test(text[i]!)) i++
      const token = text.slice(start, i)
      if (/^-?\d{16,}$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += `${text.slice(from, start)}"${token}"`
        from = i
      }
      continue
    }
    i++
  }
  return from === 0 ? text : out + text.slice(from)
}

/** The JSON of a body, the raw text when it is not JSON (gateway pages), undefined when empty. */
export const parseBody = (text: string): unknown => {
  if (text.trim() === "") return undefined
  try {
    return JSON.parse(losslessJson(text))
  } catch {
    return text
  }
}

/** The envelope of every success body (api-notes B, firm): `{"result": …}`, whatever else the object holds. */
const Envelope = Schema.Struct({ result: Schema.Unknown })
type Envelope = typeof Envelope.Type

/** The envelope of a body; none when the body is not one (`exact`: a body without `result` is none). */
export const envelopeOf: (body: unknown) => Option.Option<Envelope> = Schema.decodeUnknownOption(Envelope, {
  exact: true
})

/** `body.result` for an envelope, otherwise the body itself. */
export const resultOf = (body: unknown): unknown =>
  Option.match(envelopeOf(body), { onNone: () => body, onSome: (envelope) => envelope.result })

/** The two parts of a login answer read (api-notes B): a refusal says `authenticated: false`; a success holds the token. */
export const LoginRefused = Schema.Struct({ authenticated: Schema.Literal(false) })
export const LoginToken = Schema.Struct({ accessToken: Schema.NonEmptyString })

/** api-notes: over the limit the live service answers 403 `{"error":"Rate limit temporarily exceeded"}`; 429 is reserved for the same. */
export const isRateLimit = (status: number, text: string): boolean =>
  status === 429 || (status === 403 && /rate.?limit/i.test(text))

const clip = (s: string, max = 300): string => {
  const one = s.replace(/\s+/g, " ").trim()
  return one.length > max ? `${one.slice(0, max)}…` : one
}

const firstText = (u: unknown): string | undefined => {
  if (typeof u === "string" && u.trim() !== "") return u
  if (Array.isArray(u)) {
    for (const x of u) {
      const t = firstText(x)
      if (t !== undefined) return t
    }
  }
  if (Predicate.isRecord(u) && typeof u.message === "string") return u.message
  return undefined
}

/** The first `field: message` of a model-state map (`{"field": ["The value 'x' is not valid."]}`), also under `errors`. */
const modelState = (body: Record<string, unknown>): string | undefined => {
  if (Predicate.isRecord(body.errors)) {
    const nested = modelState(body.errors)
    if (nested !== undefined) return nested
  }
  for (const [key, value] of Object.entries(body)) {
    if (!Array.isArray(value)) continue
    const text = firstText(value)
    if (text !== undefined) return key === "" ? text : `${key}: ${text}`
  }
  return undefined
}

/**
 * Human-readable message of a failed answer: the server's own words, without any secret it echoed (a header, the
 * login's body) and without control characters (`Secrets.redactServerText`). Every error text from a server
 * enters the program here.
 */
export const errorMessage = (status: number, body: unknown): string => redactServerText(messageOf(status, body))

const messageOf = (status: number, body: unknown): string => {
  if (Predicate.isRecord(body)) {
    const fromError = firstText(body.error)
    if (fromError !== undefined) return clip(fromError)
    if (typeof body.message === "string" && body.message.trim() !== "") {
      // The Blueprint's bodies carry the service's own code (1026: a second webhook for one entity); 0 says nothing.
      const code = typeof body.errorCode === "number" && body.errorCode !== 0 ? ` (error code ${body.errorCode})` : ""
      return clip(body.message) + code
    }
    const fromModel = modelState(body)
    if (fromModel !== undefined) return clip(fromModel)
    if (typeof body.title === "string" && body.title.trim() !== "") return clip(body.title)
  }
  if (typeof body === "string" && body.trim() !== "") return `HTTP ${status}: ${clip(body, 200)}`
  return `HTTP ${status}`
}

export const isRedirect = (status: number): boolean => status >= 300 && status < 400

/**
 * What a redirect means here: the base URL is not where the API answers (an http:// address moved to https://,
 * a missing or extra path segment). The client never follows one: a 301/302 turns a POST into a GET.
 */
export const redirectMessage = (status: number, location: string | undefined, baseUrl: string): string => {
  const target = location?.trim() ? location.trim() : undefined
  let hint = ""
  if (target !== undefined) {
    try {
      const url = new URL(target, `${baseUrl}/`)
      const base = `${url.origin}${url.pathname.replace(/\/login\/?$/i, "").replace(/\/+$/, "")}`
      if (/\/v2$/i.test(base) && base !== baseUrl) hint = ` (perhaps --base-url ${base})`
    } catch {
      // an unparseable Location: say what it was, suggest nothing
    }
  }
  return `the API answered a redirect (HTTP ${status})${
    target !== undefined ? ` to ${redactServerText(clip(target, 200))}` : ""
  }: ${baseUrl} is not where the API answers; check --base-url / FSM_BASE_URL, the API's address ending in /v2${hint}`
}

/** A record of a list: a JSON object; anything else a list holds is skipped. */
const ApiRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const isApiRecord = Schema.is(ApiRecord)

const Entries = Schema.Array(Schema.Unknown)

/**
 * The `result` of a list answer (api-reference 1.8): the page's records under `entityList` (the live service and
 * older samples also write `entitylist` or `items`), or a bare array (legacy, unpaginated lists).
 */
const ListResult = Schema.Union(
  Schema.Struct({ entityList: Entries }),
  Schema.Struct({ entitylist: Entries }).pipe(Schema.rename({ entitylist: "entityList" })),
  Schema.Struct({ items: Entries }).pipe(Schema.rename({ items: "entityList" })),
  Entries
)

/** `links`: `self`, then `nextPage` when more pages exist; links of another shape are ignored. */
const Links = Schema.Struct({ links: Entries })
const Link = Schema.Struct({ rel: Schema.String })

/** The page size the server used, when it says so in `pagedSearchReturnData` (a server may cap it). */
const Paging = Schema.Struct({ pagedSearchReturnData: Schema.Struct({ pageSize: Schema.Positive }) })

const decodeList = Schema.decodeUnknownOption(ListResult)
const decodeLinks = Schema.decodeUnknownOption(Links)
const decodeLink = Schema.decodeUnknownOption(Link)
const decodePaging = Schema.decodeUnknownOption(Paging)
/** How many records the whole list holds, when the server says so (only an estimate's input: never trusted). */
const Total = Schema.Struct({ pagedSearchReturnData: Schema.Struct({ totalItems: Schema.NonNegative }) })
const decodeTotal = Schema.decodeUnknownOption(Total)

interface ListPage {
  readonly records: ReadonlyArray<Record<string, unknown>>
  /** `true`/`false` when the answer carries `links` (a `nextPage` link or not), undefined when it has none. */
  readonly nextLink: boolean | undefined
  /** False for an unpaginated answer (a bare array), which must not be asked for a second page. */
  readonly paged: boolean
  /** The page size the server says it used, when it says so. */
  readonly pageSize: number | undefined
  /** `pagedSearchReturnData.totalItems`, when given. */
  readonly total: number | undefined
}

/** The records of a list answer: `result.entityList` (paged) or a bare array (legacy, unpaginated); none otherwise. */
export const listPage = (body: unknown): ListPage | undefined => {
  const result = resultOf(body)
  const list = decodeList(result)
  if (Option.isNone(list)) return undefined
  if (!("entityList" in list.value)) {
    return {
      records: list.value.filter(isApiRecord),
      nextLink: undefined,
      paged: false,
      pageSize: undefined,
      total: undefined
    }
  }
  const nextLink = Option.match(decodeLinks(result), {
    onNone: () => undefined,
    onSome: ({ links }) =>
      links.some((l) => Option.exists(decodeLink(l), (link) => link.rel.toLowerCase() === "nextpage"))
  })
  return {
    records: list.value.entityList.filter(isApiRecord),
    nextLink,
    paged: true,
    pageSize: Option.getOrUndefined(Option.map(decodePaging(result), (p) => p.pagedSearchReturnData.pageSize)),
    total: Option.getOrUndefined(Option.map(decodeTotal(result), (p) => p.pagedSearchReturnData.totalItems))
  }
}

// --- read-back records ----------------------------------------------------------------------------------------

/**
 * Whether `0` means "none" for this field: a reference (the live service reads an unset reference id as `0`,
 * api-reference §1.13) or a task type id, which the table keeps as a plain number.
 */
const zeroIsUnset = (field: Field): boolean => field.ref !== undefined || /^taskType(Id)?$/.test(field.name)

const numeric = (x: unknown): boolean =>
  typeof x === "number" || (typeof x === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(x))

/** The number inside an enumeration read back as an object (`userType: {userTypeId: 1, description: "user"}`). */
const numberInside = (v: Readonly<Record<string, unknown>>): unknown => {
  const entry = Object.entries(v).find(([k, x]) => /id$/i.test(k) && numeric(x))
  return entry !== undefined ? entry[1] : v["value"]
}

const writeScalar = (field: Field, v: unknown): unknown => {
  if (v === undefined || v === null) return undefined
  if (zeroIsUnset(field) && (v === 0 || v === "0" || v === "")) return undefined
  const type = field.type
  if (type._tag !== "integer" && type._tag !== "number" && type._tag !== "enum") return v
  if (Predicate.isRecord(v)) return writeScalar(field, numberInside(v))
  if (type._tag === "enum" && typeof v === "string" && !numeric(v)) {
    // An enumeration read back by its label (webhooks' `"Task"`, `"Inclusao"`).
    return type.values.find((x) => x.label.toLowerCase() === v.trim().toLowerCase())?.value ?? v
  }
  return v
}

/**
 * A read-back value in the form writes use: an enumeration sent as an object or a label becomes its number, and
 * `0`/`""`/`null` for an unset reference becomes undefined (no value). Other values are returned as they are.
 */
export const writeForm = (field: Field | undefined, v: unknown): unknown => {
  if (field === undefined) return v
  if (field.list && Array.isArray(v)) return v.map((x) => writeScalar(field, x)).filter((x) => x !== undefined)
  return writeScalar(field, v)
}
