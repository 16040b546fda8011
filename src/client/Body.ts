/**
 * Reading the API's answers: the `{"result": …}` envelope, list pages, rate-limit answers and the error message
 * (from `error`, then `message`, then the first entry of an ASP.NET model-state map). Pure functions.
 */

export const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The JSON of a body, the raw text when it is not JSON (gateway pages), undefined when empty. */
export const parseBody = (text: string): unknown => {
  if (text.trim() === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** `body.result` for an envelope, otherwise the body itself. */
export const resultOf = (body: unknown): unknown => (isObject(body) && "result" in body ? body.result : body)

/** api-notes: over the limit the live service answers 403 `{"error":"Rate limit temporarily exceeded"}`; 429 is reserved for the same. */
export const isRateLimit = (status: number, text: string): boolean => status === 429 || (status === 403 && /rate.?limit/i.test(text))

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
  if (isObject(u) && typeof u.message === "string") return u.message
  return undefined
}

/** The first `field: message` of a model-state map (`{"field": ["The value 'x' is not valid."]}`), also under `errors`. */
const modelState = (body: Record<string, unknown>): string | undefined => {
  if (isObject(body.errors)) {
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

/** Human-readable message of a failed answer. */
export const errorMessage = (status: number, body: unknown): string => {
  if (isObject(body)) {
    const fromError = firstText(body.error)
    if (fromError !== undefined) return clip(fromError)
    if (typeof body.message === "string" && body.message.trim() !== "") return clip(body.message)
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
  return `the API answered a redirect (HTTP ${status})${target !== undefined ? ` to ${clip(target, 200)}` : ""}: ${baseUrl} is not where the API answers; check --base-url / FSM_BASE_URL, the API's address ending in /v2${hint}`
}

export interface ListPage {
  readonly records: ReadonlyArray<Record<string, unknown>>
  /** `true`/`false` when the answer carries `links` (a `nextPage` link or not), undefined when it has none. */
  readonly nextLink: boolean | undefined
  /** False for an unpaginated answer (a bare array), which must not be asked for a second page. */
  readonly paged: boolean
}

/** The records of a list answer: `result.entityList` (paged) or a bare array (legacy, unpaginated). */
export const listPage = (body: unknown): ListPage | undefined => {
  const result = resultOf(body)
  if (Array.isArray(result)) return { records: result.filter(isObject), nextLink: undefined, paged: false }
  if (!isObject(result)) return undefined
  const list = result.entityList ?? result.entitylist ?? result.items
  if (!Array.isArray(list)) return undefined
  const links = result.links
  const nextLink = Array.isArray(links)
    ? links.some((l) => isObject(l) && typeof l.rel === "string" && l.rel.toLowerCase() === "nextpage")
    : undefined
  return { records: list.filter(isObject), nextLink, paged: true }
}
