/**
 * What text a CSV file holds: UTF-8 (with or without BOM) or Windows-1252, which is what Excel in Brazil writes
 * for "CSV". The reader decides it on the pass that parses the file (TextStream.js, in the parser thread);
 * `inspectText` makes the same decision by itself, reading the whole file through the same `TextStream`.
 */
import { createReadStream } from "node:fs"
import { TextStream } from "./TextStream.js"

export { NotText } from "./TextStream.js"

export type TextEncoding = "utf-8" | "windows-1252"

interface TextFacts {
  readonly encoding: TextEncoding
  /** The file starts with a UTF-8 byte-order mark. */
  readonly bom: boolean
  /** Bytes in the file. */
  readonly size: number
}

/**
 * Reads the whole file once (`onChunk` hears of each chunk read) and decides its encoding as the reader does.
 * `wanted` is the user's `--encoding`. Throws NotText.
 */
export const inspectText = async (
  path: string,
  wanted: "auto" | TextEncoding,
  signal?: AbortSignal,
  onChunk?: () => void
): Promise<TextFacts> => {
  const text = new TextStream(wanted)
  const stream = createReadStream(path, signal ? { highWaterMark: 256 * 1024, signal } : { highWaterMark: 256 * 1024 })
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    onChunk?.()
    text.push(chunk)
  }
  text.end()
  // After `end` the encoding is decided (a file of ASCII alone reads as UTF-8).
  return { encoding: text.encoding ?? "utf-8", bom: text.bom, size: text.size }
}
