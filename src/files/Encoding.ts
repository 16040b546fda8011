/**
 * What text a CSV file holds, found in one streaming pass before it is parsed: UTF-8 (with or without BOM) or
 * Windows-1252, which is what Excel in Brazil writes for "CSV". A file that is binary (NUL bytes, control
 * characters), UTF-16, or not valid UTF-8 when UTF-8 was asked for, is refused with the reason and where.
 */
import { isUtf8 } from "node:buffer"
import { createReadStream } from "node:fs"

export type TextEncoding = "utf-8" | "windows-1252"

export interface TextFacts {
  readonly encoding: TextEncoding
  /** The file starts with a UTF-8 byte-order mark. */
  readonly bom: boolean
  /** Bytes in the file. */
  readonly size: number
}

/** Why a file cannot be read as text in the wanted encoding. */
export class NotText extends Error {
  constructor(
    message: string,
    readonly line?: number
  ) {
    super(message)
  }
}

/** Control bytes that never occur in a text file (TAB, LF, VT, FF, CR, SUB and ESC are left out). */
const isBinaryControl = (b: number) =>
  b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0b && b !== 0x0c && b !== 0x0d && b !== 0x1a && b !== 0x1b

/** A streaming UTF-8 validator: `push` returns the index of the first invalid byte in the chunk, or -1. */
const utf8Validator = () => {
  let need = 0 // continuation bytes still expected
  let min = 0 // the lowest valid second byte (rejects overlong forms and surrogates)
  let max = 0
  return {
    push: (chunk: Uint8Array): number => {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!
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
      return -1
    },
    /** The file ended in the middle of a character. */
    incomplete: () => need > 0
  }
}

const sampleBytes = 64 * 1024

/** Where the last character of `chunk` starts, if it may continue in the next chunk (else the chunk's length). */
const lastCharacterStart = (chunk: Buffer): number => {
  for (let i = chunk.length - 1; i >= Math.max(0, chunk.length - 4); i--) {
    const b = chunk[i]!
    if (b < 0x80) return chunk.length
    if (b >= 0xc0) return i
  }
  return chunk.length
}

/**
 * UTF-8 validity chunk by chunk: Node's native check on whole characters (a character cut by the chunk's end
 * waits for the next chunk), and the byte-by-byte validator only on a stretch that fails, to say where.
 */
const utf8Checker = () => {
  let carry: Buffer = Buffer.alloc(0)
  let checked = 0
  /** The first invalid byte's offset in `stretch`, or -1. */
  const firstInvalid = (stretch: Buffer): number => {
    if (isUtf8(stretch)) return -1
    const bad = utf8Validator().push(stretch)
    // Otherwise the stretch ends inside a character that the next byte fails to continue.
    return bad >= 0 ? bad : stretch.length
  }
  return {
    /** The offset in the file of the first invalid byte up to the end of `chunk`, or -1. */
    push: (chunk: Buffer): number => {
      const joined = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk
      const cut = lastCharacterStart(joined)
      const bad = firstInvalid(joined.subarray(0, cut))
      if (bad >= 0) return checked + bad
      checked += cut
      carry = Buffer.from(joined.subarray(cut))
      return -1
    },
    /** At the end of the file: the offset of a last character cut short, or -1. */
    end: (): number => {
      if (carry.length === 0) return -1
      // A character cut short by the end of the file: its last byte is where it fails.
      return checked + Math.min(firstInvalid(carry), carry.length - 1)
    }
  }
}

/**
 * Reads the whole file once (`onChunk` hears of each chunk read). `wanted` is the user's `--encoding`: `auto`
 * picks UTF-8 when every byte sequence is valid UTF-8 (or a BOM says so), else Windows-1252.
 */
export const inspectText = async (
  path: string,
  wanted: "auto" | TextEncoding,
  signal?: AbortSignal,
  onChunk?: () => void
): Promise<TextFacts> => {
  const utf8 = utf8Checker()
  let offset = 0
  let lines = 1
  let firstInvalid: { readonly offset: number; readonly line: number } | undefined
  let controls = 0
  let head: Buffer | undefined
  const stream = createReadStream(path, signal ? { highWaterMark: 256 * 1024, signal } : { highWaterMark: 256 * 1024 })
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    onChunk?.()
    if (head === undefined) {
      head = chunk
      if ((chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff)) {
        throw new NotText(`UTF-16 text (Excel's "Unicode Text"): save it as "CSV UTF-8" or as an .xlsx workbook`)
      }
    }
    const nul = chunk.indexOf(0)
    if (nul >= 0) throw new NotText(`binary content (a NUL byte at byte ${offset + nul}): not a CSV or XLSX file`)
    if (offset < sampleBytes) {
      for (let i = 0; i < Math.min(chunk.length, sampleBytes - offset); i++) {
        if (isBinaryControl(chunk[i]!)) controls++
      }
    }
    if (firstInvalid === undefined && wanted !== "windows-1252") {
      const at = utf8.push(chunk)
      if (at >= 0) {
        // The bad byte may lie in the few bytes carried over from the previous chunk: count lines up to it in this one.
        let line = lines
        for (let i = 0; i < at - offset; i++) if (chunk[i] === 0x0a) line++
        firstInvalid = { offset: at, line }
      }
    }
    if (firstInvalid === undefined) {
      for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) lines++
    }
    offset += chunk.length
  }
  const size = offset
  const bom = head !== undefined && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf
  if (controls > 0 && controls * 100 >= Math.min(size, sampleBytes)) {
    throw new NotText(
      `binary content (${controls} control characters in the first ${
        Math.min(size, sampleBytes)
      } bytes): not a CSV or XLSX file`
    )
  }
  if (firstInvalid === undefined && wanted !== "windows-1252") {
    const at = utf8.end()
    if (at >= 0) firstInvalid = { offset: at, line: lines }
  }
  if (bom && firstInvalid !== undefined) {
    throw new NotText(
      `the file starts with a UTF-8 byte-order mark but is not valid UTF-8 (byte ${firstInvalid.offset}, line ${firstInvalid.line})`,
      firstInvalid.line
    )
  }
  switch (wanted) {
    case "windows-1252":
      if (bom) {
        throw new NotText(
          "the file starts with a UTF-8 byte-order mark but --encoding windows-1252 was given: use --encoding utf-8 or auto"
        )
      }
      return { encoding: "windows-1252", bom: false, size }
    case "utf-8":
      if (firstInvalid !== undefined) {
        throw new NotText(
          `not valid UTF-8 (byte ${firstInvalid.offset}, line ${firstInvalid.line}); it looks like Windows-1252, which Excel writes for "CSV": use --encoding windows-1252 or auto`,
          firstInvalid.line
        )
      }
      return { encoding: "utf-8", bom, size }
    case "auto":
      return { encoding: bom || firstInvalid === undefined ? "utf-8" : "windows-1252", bom, size }
  }
}
