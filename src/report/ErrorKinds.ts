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

/** Groups messages that differ only in their values: quoted text, numbers and ids become `…` or `N`. */
export const errorKind = (message: string): string =>
  message
    .replace(/"[^"]*"|'[^']*'|«[^»]*»/g, "…")
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "…")
    .replace(/\d+([.,]\d+)*/g, "N")
    .replace(/\s+/g, " ")
    .trim()

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
