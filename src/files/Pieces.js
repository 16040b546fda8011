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

/** What a byte gatherer starts with and keeps between takes: a chunk of rows (64 Ki units) is mostly one byte each. */
const startBytes = 128 * 1024

/**
 * Text gathered as UTF-8 bytes straight away, for a sheet's rows built from cells already encoded (CellBytes.js):
 * their bytes are copied in, the markup around them written byte by byte, other text encoded as it comes. Counts
 * UTF-16 units as `TextPieces` does (the sheet's chunks and limits are counted so).
 */
export class BytePieces {
  /** @type {Buffer} */
  #buffer = Buffer.allocUnsafe(startBytes)
  #at = 0
  #chars = 0

  /** Characters (UTF-16 units) gathered since the last `take`. */
  get chars() {
    return this.#chars
  }

  /** @param {number} more */
  #room(more) {
    const needed = this.#at + more
    if (needed <= this.#buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(needed, this.#buffer.length * 2))
    this.#buffer.copy(grown, 0, 0, this.#at)
    this.#buffer = grown
  }

  /** @param {string} text */
  add(text) {
    this.#room(text.length * 3)
    this.#at += this.#buffer.write(text, this.#at, "utf8")
    this.#chars += text.length
  }

  /**
   * Text of ASCII characters only (markup, numbers), written without a call into the encoder.
   * @param {string} text
   */
  addAscii(text) {
    this.#room(text.length)
    const buffer = this.#buffer
    let at = this.#at
    for (let i = 0; i < text.length; i++) buffer[at++] = text.charCodeAt(i)
    this.#at = at
    this.#chars += text.length
  }

  /**
   * `count` bytes of `source` from `from`, which are `chars` UTF-16 units of whole characters.
   * @param {Uint8Array} source
   * @param {number} from
   * @param {number} count
   * @param {number} chars
   */
  addBytes(source, from, count, chars) {
    this.#room(count)
    const buffer = this.#buffer
    let at = this.#at
    // Most cells are a few bytes: a loop costs less than a view and a copy.
    if (count <= 64) {
      for (let i = from; i < from + count; i++) buffer[at++] = source[i]
    } else {
      buffer.set(source.subarray(from, from + count), at)
      at += count
    }
    this.#at = at
    this.#chars += chars
  }

  /**
   * The bytes gathered since the last `take`, in a buffer of their own; the gatherer starts again empty.
   * @returns {Buffer}
   */
  takeBytes() {
    const bytes = Buffer.allocUnsafe(this.#at)
    this.#buffer.copy(bytes, 0, 0, this.#at)
    if (this.#buffer.length > maxScratchBytes) this.#buffer = Buffer.allocUnsafe(startBytes)
    this.#at = 0
    this.#chars = 0
    return bytes
  }
}
