/**
 * Secrets never written, never printed. The process registers every secret it holds the moment it holds it
 * (apiKey and apiToken when a client is made, each access token when a login returns it, FSM_FLEET_KEY, a database
 * URL's password), and two functions take them out of text:
 *
 * - `redactServerText`, at the boundary where a server's text enters the program (an error answer's message, a
 *   login refusal, a redirect's target, a broken connection's detail): every known secret, and whatever has the
 *   shape of one (`Bearer …`, a JWT, `"apiToken": "…"` and its kin, the password of a URL), becomes
 *   `[redacted]`; control characters (C0, C1, DEL, and with them terminal escape sequences) are taken out.
 * - `redactKnown`, the last guard of every writer (journal, reports, summaries, stderr): every known secret
 *   becomes `[redacted]`. Only exact values: a customer's own text that merely looks like a token is data.
 *
 * A secret shorter than `minSecretLength` is not registered (replacing every "abc" would ruin the text, and no
 * real key is that short).
 */

/** The mark a secret leaves. */
const redactedMark = "[redacted]"

const minSecretLength = 6

const known = new Set<string>()
/** The known secrets, longest first (a token containing a shorter secret is replaced whole). */
let ordered: ReadonlyArray<string> = []

/** Registers a secret the process holds; text written or printed afterwards never contains it. */
export const registerSecret = (secret: string | undefined): void => {
  if (secret === undefined) return
  const value = secret.trim()
  if (value.length < minSecretLength || known.has(value)) return
  known.add(value)
  ordered = [...known].sort((a, b) => b.length - a.length)
  // The forms a server may echo it in: URL-encoded, JSON-escaped.
  for (const form of [encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]) {
    if (form !== value && !known.has(form)) {
      known.add(form)
      ordered = [...known].sort((a, b) => b.length - a.length)
    }
  }
}

/** Forgets every registered secret, as a new process starts (for test runners that keep modules between files). */
export const forgetSecrets = (): void => {
  known.clear()
  ordered = []
}

/** Every known secret in `text` replaced by the mark. */
export const redactKnown = (text: string): string => {
  let out = text
  for (const secret of ordered) {
    if (out.includes(secret)) out = out.replaceAll(secret, redactedMark)
  }
  return out
}

/** The shapes of a secret in a server's text. */
const shapes: ReadonlyArray<readonly [RegExp, string]> = [
  // `Authorization: Bearer eyJ…`, `bearer abc`, `Basic dXNlcjpwYXNz`
  [/\b(Bearer|Basic)(\s+|%20|\+)[A-Za-z0-9\-._~+/%]+=*/gi, `$1$2${redactedMark}`],
  // a JWT (header.payload.signature, base64url)
  [/\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, redactedMark],
  // "apiToken":"…", apiKey=…, 'password': '…', access_token=…
  [
    /(["']?)((?:api[_-]?(?:token|key))|(?:access[_-]?token)|(?:refresh[_-]?token)|token|password|passwd|secret|authorization|x-api-key)\1(\s*[:=]\s*)(\\?["']?)(?!\[redacted\]|(?:Bearer|Basic)\s)[^"'&,;\s}\\]+/gi,
    `$1$2$1$3$4${redactedMark}`
  ],
  // the password of a URL: scheme://user:password@host
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi, `$1${redactedMark}@`]
]

// C0 (but tab and line breaks, which callers fold), DEL and C1; ESC with them, so no escape sequence survives.

const controls = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g

/** Characters a terminal would act on, taken out of text from outside (tab and line breaks are kept). */
const withoutControls = (text: string): string => text.replace(controls, "")

/** Text from a server, made safe to keep, write and print: no secret, no secret's shape, no control character. */
export const redactServerText = (text: string): string => {
  let out = redactKnown(withoutControls(text))
  for (const [shape, by] of shapes) out = out.replace(shape, by)
  return out
}

/** Registers the password of a connection URL (`postgres://user:password@host/db`), when it has one. */
export const registerUrlPassword = (url: string): void => {
  try {
    const password = new URL(url).password
    if (password !== "") registerSecret(decodeURIComponent(password))
  } catch {
    // not a URL: nothing to register
  }
}
