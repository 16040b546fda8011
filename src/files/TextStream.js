// @ts-check
/**
 * The encoding of a CSV file, decided and checked on the pass that parses it: the bytes go through a
 * `TextStream` on their way to the parser (the parser thread's own read, CsvParseWorker.js), which turns them
 * into UTF-8 for it and refuses, where they are met, a NUL byte or bytes that are not text in the encoding in
 * use. Plain JavaScript: the parser thread runs it as it is from src/ (tests) as well as from dist/.
 *
 * `auto` decides on the file's first non-ASCII character (everything before it reads the same either way): a
 * valid UTF-8 sequence (or a UTF-8 byte-order mark) means UTF-8, anything else Windows-1252, which is what Excel
 * in Brazil writes for "CSV". A file that then goes on with bytes that are not UTF-8 mixes two encodings, and is
 * refused rather than read half wrong. `checkStart` judges what only the first bytes tell (UTF-16, binary).
 */
import { isAscii, isUtf8 } from "node:buffer"

/** Why a file cannot be read as text in the wanted encoding; `line` is where, when known. */
export class NotText extends Error {
  /**
   * @param {string} message
   * @param {number} [line]
   */
  constructor(message, line) {
    super(message)
    this.line = line
  }
}

/** How many first bytes the binary-content check looks at. */
export const startBytes = 64 * 1024

/**
 * Control bytes that never occur in a text file (TAB, LF, VT, FF, CR, SUB and ESC are left out).
 * @param {number} b
 */
const isBinaryControl = (b) =>
  b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0b && b !== 0x0c && b !== 0x0d && b !== 0x1a && b !== 0x1b

/**
 * What the first bytes of a file (`startBytes` of them, or the whole file) say against reading it as text in
 * `wanted`: UTF-16, binary content, a UTF-8 byte-order mark with `windows-1252`. Throws NotText.
 * @param {Uint8Array} head
 * @param {"auto" | "utf-8" | "windows-1252"} wanted
 */
export const checkStart = (head, wanted) => {
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    throw new NotText(`UTF-16 text (Excel's "Unicode Text"): save it as "CSV UTF-8" or as an .xlsx workbook`)
  }
  const nul = head.indexOf(0)
  if (nul >= 0) throw new NotText(`binary content (a NUL byte at byte ${nul}): not a CSV or XLSX file`)
  const length = Math.min(head.length, startBytes)
  let controls = 0
  for (let i = 0; i < length; i++) if (isBinaryControl(/** @type {number} */ (head[i]))) controls++
  if (controls > 0 && controls * 100 >= length) {
    throw new NotText(
      `binary content (${controls} control characters in the first ${length} bytes): not a CSV or XLSX file`
    )
  }
  if (wanted === "windows-1252" && hasBom(head)) {
    throw new NotText(
      "the file starts with a UTF-8 byte-order mark but --encoding windows-1252 was given: use --encoding utf-8 or auto"
    )
  }
}

/** @param {Uint8Array} head */
const hasBom = (head) => head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf

/**
 * The UTF-8 sequence that starts at `bytes[i]` (a byte ≥ 0x80): valid, invalid, or cut by the end of `bytes`.
 * @param {Uint8Array} bytes
 * @param {number} i
 * @returns {"valid" | "invalid" | "incomplete"}
 */
const sequenceAt = (bytes, i) => {
  const b = /** @type {number} */ (bytes[i])
  const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0
  if (need === 0) return "invalid"
  // The lowest and highest second byte: rejects overlong forms, surrogates and code points past U+10FFFF.
  const min = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80
  const max = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf
  for (let k = 1; k <= need; k++) {
    if (i + k >= bytes.length) return "incomplete"
    const c = /** @type {number} */ (bytes[i + k])
    if (k === 1 ? c < min || c > max : c < 0x80 || c > 0xbf) return "invalid"
  }
  return "valid"
}

/**
 * The index of the first byte of `stretch` that breaks UTF-8 (the lead itself, or the first continuation that
 * does not continue it), or `stretch.length` when it ends inside a character.
 * @param {Uint8Array} stretch
 */
const firstBreak = (stretch) => {
  let need = 0 // continuation bytes still expected
  let min = 0 // the lowest valid next byte (rejects overlong forms and surrogates)
  let max = 0
  for (let i = 0; i < stretch.length; i++) {
    const b = /** @type {number} */ (stretch[i])
    if (need > 0) {
      if (b < min || b > max) return i
      min = 0x80
      max = 0xbf
      need--
      continue
    }
    if (b < 0x80) continue
    min = 0x80
    max = 0xbf
    if (b >= 0xc2 && b <= 0xdf) need = 1
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2
      if (b === 0xe0) min = 0xa0
      if (b === 0xed) max = 0x9f
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3
      if (b === 0xf0) min = 0x90
      if (b === 0xf4) max = 0x8f
    } else return i
  }
  return stretch.length
}

/**
 * Where the last character of `chunk` starts, if it may continue in the next chunk (else the chunk's length).
 * @param {Uint8Array} chunk
 */
const lastCharacterStart = (chunk) => {
  for (let i = chunk.length - 1; i >= Math.max(0, chunk.length - 4); i--) {
    const b = /** @type {number} */ (chunk[i])
    if (b < 0x80) return chunk.length
    if (b >= 0xc0) return i
  }
  return chunk.length
}

/**
 * UTF-8 validity chunk by chunk: Node's native check on whole characters (a character cut by the chunk's end
 * waits for the next chunk), and the byte-by-byte one only on a stretch that fails, to say where.
 */
const utf8Checker = () => {
  /** @type {Buffer} */
  let carry = Buffer.alloc(0)
  let checked = 0
  /** @param {Buffer} stretch */
  const firstInvalid = (stretch) => (isUtf8(stretch) ? -1 : firstBreak(stretch))
  return {
    /**
     * The offset in the file of the first invalid byte up to the end of `chunk`, or -1.
     * @param {Buffer} chunk
     */
    push: (chunk) => {
      const joined = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk
      const cut = lastCharacterStart(joined)
      const bad = firstInvalid(joined.subarray(0, cut))
      if (bad >= 0) return checked + bad
      checked += cut
      carry = Buffer.from(joined.subarray(cut))
      return -1
    },
    /** At the end of the file: the offset of a last character cut short, or -1. */
    end: () => {
      if (carry.length === 0) return -1
      // A character cut short by the end of the file: its last byte is where it fails.
      return checked + Math.min(firstInvalid(carry), carry.length - 1)
    }
  }
}

/** @param {Uint8Array} bytes @param {number} end */
const newlines = (bytes, end) => {
  let n = 0
  for (let i = bytes.indexOf(0x0a); i >= 0 && i < end; i = bytes.indexOf(0x0a, i + 1)) n++
  return n
}

/**
 * A file's bytes, in order, as UTF-8 for the parser, with the encoding decided and checked on the way.
 * `push` and `end` throw NotText where the file stops being text.
 */
export class TextStream {
  /** @param {"auto" | "utf-8" | "windows-1252"} wanted */
  constructor(wanted) {
    this.wanted = wanted
    /** @type {"utf-8" | "windows-1252" | undefined} The decision, once made (`auto`: undecided while all is ASCII). */
    this.encoding = wanted === "auto" ? undefined : wanted
    this.bom = false
    /** Bytes read so far. */
    this.size = 0
    this.lines = 1
    this.checker = utf8Checker()
    /** Undecided: the start of a first non-ASCII character cut by a chunk's end, kept for the next chunk. */
    this.pending = Buffer.alloc(0)
    this.decoder = new TextDecoder("windows-1252")
  }

  /**
   * The next bytes of the file; returns them as UTF-8.
   * @param {Buffer} chunk
   * @returns {Buffer}
   */
  push(chunk) {
    const offset = this.size
    if (offset === 0 && chunk.length > 0) {
      checkStart(chunk, this.wanted)
      if (hasBom(chunk)) {
        this.bom = true
        this.encoding = "utf-8"
      }
    }
    this.size += chunk.length
    const nul = chunk.indexOf(0)
    if (nul >= 0) throw new NotText(`binary content (a NUL byte at byte ${offset + nul}): not a CSV or XLSX file`)
    let bytes = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk
    this.pending = Buffer.alloc(0)
    if (this.encoding === undefined && !isAscii(bytes)) {
      let i = 0
      while (/** @type {number} */ (bytes[i]) < 0x80) i++
      const verdict = sequenceAt(bytes, i)
      if (verdict === "incomplete") {
        this.pending = Buffer.from(bytes.subarray(i))
        bytes = bytes.subarray(0, i)
      } else this.encoding = verdict === "valid" ? "utf-8" : "windows-1252"
    }
    if (this.encoding !== "windows-1252") {
      const at = this.checker.push(chunk)
      if (at >= 0) this.refuse(at, this.lines + newlines(chunk, at - offset))
      this.lines += newlines(chunk, chunk.length)
      return bytes
    }
    return Buffer.from(this.decoder.decode(bytes, { stream: true }))
  }

  /**
   * The end of the file; returns the last bytes to parse, if any.
   * @returns {Buffer | undefined}
   */
  end() {
    if (this.pending.length > 0) {
      // The file's first non-ASCII character is cut short by its end: not UTF-8.
      this.encoding = "windows-1252"
      const rest = Buffer.from(this.decoder.decode(this.pending))
      this.pending = Buffer.alloc(0)
      return rest
    }
    if (this.encoding === "windows-1252") {
      const rest = this.decoder.decode()
      return rest.length > 0 ? Buffer.from(rest) : undefined
    }
    const at = this.checker.end()
    if (at >= 0) this.refuse(at, this.lines)
    this.encoding ??= "utf-8"
    return undefined
  }

  /**
   * @param {number} at
   * @param {number} line
   * @returns {never}
   */
  refuse(at, line) {
    const where = `byte ${at}, line ${line}`
    if (this.bom) {
      throw new NotText(`the file starts with a UTF-8 byte-order mark but is not valid UTF-8 (${where})`, line)
    }
    if (this.wanted === "utf-8") {
      throw new NotText(
        `not valid UTF-8 (${where}); it looks like Windows-1252, which Excel writes for "CSV": use --encoding windows-1252 or auto`,
        line
      )
    }
    throw new NotText(
      `not valid UTF-8 (${where}), though the text before it is UTF-8: the file mixes two encodings; ` +
        `save it again as "CSV UTF-8", or give --encoding windows-1252 (its UTF-8 characters then read as two or three each)`,
      line
    )
  }
}
