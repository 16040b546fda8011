// @ts-check
/**
 * Text gathered in pieces and joined once, for the writers of large files: report.csv's lines, joined per batch,
 * and a sheet's rows, joined about 64 Ki characters at a time.
 *
 * A piece is a whole line or row (built with `+` from a few strings). Gathering every small string of a row here
 * instead cost more in `join` (about 30 ns a piece) than it saved the collector; appending each row to one growing
 * string built a tree of thousands of pieces per chunk; and an array emptied between joins was grown again each
 * time (its backing store copied at every step). Here the array keeps its length and its slots are emptied ("")
 * after each join. A 1M-row `validate`, both reports written this way: 33–34 s → 31 s of CPU. Plain JavaScript: the
 * workbook's writer (XlsxWriter.js) uses it on a thread of its own.
 */
/** The largest encoding buffer a gatherer keeps between takes (a take of more text gets one of its own). */
const maxScratchBytes = 1024 * 1024

export class TextPieces {
  /** @readonly @type {Array<string>} */
  #parts = []
  #count = 0
  #chars = 0
  /** @type {Buffer | undefined} */
  #scratch

  /** Characters (UTF-16 units) gathered since the last `take`. */
  get chars() {
    return this.#chars
  }

  /** @param {string} text */
  add(text) {
    this.#parts[this.#count++] = text
    this.#chars += text.length
  }

  /**
   * The pieces gathered since the last `take`, as UTF-8, each piece encoded straight into one buffer; the gatherer
   * starts again empty. For text that is only written: joining first cost far more once a piece held a character
   * beyond Latin-1 (“aspas”, –, € from a Windows-1252 file): V8 then copies every piece, mostly one-byte ropes,
   * into a two-byte string, 5 times the time of the same join all one-byte (docs/benchmarks.md). The same bytes as
   * the joined text's: a piece is a whole line, so no surrogate pair is split between two pieces.
   * @returns {Buffer}
   */
  takeBytes() {
    const needed = this.#chars * 3
    // At most 3 bytes per UTF-16 unit: encoded into a buffer kept between takes (unless it would be large), then
    // copied out at its exact size, so a buffer the caller holds (a queue, deflate's input) holds only its bytes.
    let scratch = this.#scratch
    if (scratch === undefined || scratch.length < needed) {
      scratch = Buffer.allocUnsafe(needed)
      this.#scratch = needed <= maxScratchBytes ? scratch : undefined
    }
    const parts = this.#parts
    let at = 0
    for (let i = 0; i < this.#count; i++) {
      at += scratch.write(parts[i], at, "utf8")
      parts[i] = ""
    }
    this.#count = 0
    this.#chars = 0
    const bytes = Buffer.allocUnsafe(at)
    scratch.copy(bytes, 0, 0, at)
    return bytes
  }

  /** The pieces gathered since the last `take`, joined; the gatherer starts again empty. */
  /** @returns {string} */
  take() {
    const parts = this.#parts
    // Slots past this round's pieces hold "" (cleared below after every join): joining the whole array is
    // joining this round's pieces.
    const text = parts.join("")
    for (let i = 0; i < this.#count; i++) {
      parts[i] = ""
    }
    this.#count = 0
    this.#chars = 0
    return text
  }
}
