/**
 * The failure value of the cell parsers, and how a cell is quoted in messages. Parsers return `A | Invalid`
 * instead of an `Either` so the valid path (nearly every cell of a million-row file) allocates nothing beyond
 * the value itself.
 */
export class Invalid {
  constructor(readonly message: string) {}
}

const longest = 60

/** A cell as messages show it: quoted, and cut short when long (a 5,000-character note is not repeated). */
export const quote = (text: string): string => `"${text.length > longest ? `${text.slice(0, longest - 1)}…` : text}"`
