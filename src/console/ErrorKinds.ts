/**
 * Rows that failed the same way, grouped: the error message with its values left out is the kind; each kind keeps
 * its count and a few example rows. The report writer tallies kinds as it writes each row, so `summary.json`, the
 * closing lines of a run and `report.html` all show the same groups without reading the rows again.
 */

export interface ErrorKind {
  /** The message with its values left out, so rows that failed the same way group together. */
  readonly kind: string
  readonly count: number
  /** Up to three rows, with their whole message. */
  readonly examples: ReadonlyArray<{ readonly row: number; readonly error: string }>
}

/**
 * Groups messages that differ only in their values: quoted text, numbers and ids become `…` or `N`. Commands in
 * backquotes and paths (a token with a `/` or `\` and a letter) are kept as they are: `fsm-bulk resume
 * runs/20261127T101500Z-customers` must stay a command that can be run.
 */
export const errorKind = (message: string): string => {
  const kept: Array<string> = []
  // A placeholder without digits (the numbers are replaced after): a private-use character per kept text.
  const keep = (text: string) => `\u0000${String.fromCharCode(0xe000 + kept.push(text) - 1)}`
  return message
    .replace(/`[^`]*`/g, keep)
    .replace(/"[^"]*"|'[^']*'|«[^»]*»/g, "…")
    .replace(/[^\s"'`«»(),;]*[/\\][^\s"'`«»(),;]*/g, (token) => (/[A-Za-z]/.test(token) ? keep(token) : token))
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "…")
    .replace(/\d+([.,]\d+)*/g, "N")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/\u0000([\ue000-\uf8ff])/g, (_, c: string) => kept[c.charCodeAt(0) - 0xe000]!)
}

/** Distinct kinds kept; rows of further kinds are counted under the last line of `ErrorTally.top`. */
const maxKinds = 500
const examplesKept = 3

export class ErrorTally {
  readonly #kinds = new Map<string, { count: number; examples: Array<{ row: number; error: string }> }>()
  #otherRows = 0

  add(row: number, error: string): void {
    const kind = errorKind(error)
    let k = this.#kinds.get(kind)
    if (k === undefined) {
      if (this.#kinds.size >= maxKinds) {
        this.#otherRows += 1
        return
      }
      this.#kinds.set(kind, k = { count: 0, examples: [] })
    }
    k.count += 1
    if (k.examples.length < examplesKept) k.examples.push({ row, error })
  }

  /** The `n` most frequent kinds, most rows first (rows beyond the kinds kept as one more line). */
  top(n: number): ReadonlyArray<ErrorKind> {
    const kinds = [...this.#kinds.entries()]
      .map(([kind, k]): ErrorKind => ({ kind, count: k.count, examples: k.examples }))
      .sort((a, b) => b.count - a.count)
      .slice(0, n)
    return this.#otherRows > 0
      ? [...kinds, { kind: "other kinds of error", count: this.#otherRows, examples: [] }]
      : kinds
  }
}
