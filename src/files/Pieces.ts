/**
 * Text gathered as pieces and joined once, for the writers of large files (report.csv's lines, a sheet's XML).
 *
 * A line built with `+=` leaves an object per piece for the collector, and an array emptied between joins is
 * grown again each time (its backing store copied at every step). Here the array keeps its length and its slots
 * are emptied ("") after each join, so after the first rounds a piece costs one slot and nothing else.
 */
export class TextPieces {
  readonly #parts: Array<string> = []
  #count = 0
  #chars = 0

  /** Characters (UTF-16 units) gathered since the last `take`. */
  get chars(): number {
    return this.#chars
  }

  add(text: string): void {
    this.#parts[this.#count++] = text
    this.#chars += text.length
  }

  /** The pieces gathered since the last `take`, joined; the gatherer starts again empty. */
  take(): string {
    const parts = this.#parts
    // Slots past this round's pieces hold "" (cleared below after every join): joining the whole array is
    // joining this round's pieces.
    const text = parts.join("")
    for (let i = 0; i < this.#count; i++) parts[i] = ""
    this.#count = 0
    this.#chars = 0
    return text
  }
}
