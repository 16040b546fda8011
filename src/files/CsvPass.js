// @ts-check
/**
 * One pass of csv-parse over a file's bytes, fed chunk by chunk: the bytes go through a TextStream (the encoding
 * decided and checked on the way) to the parser, and into a sha256 of the file. The parser thread
 * (CsvParseWorker.js) runs it for large files; Csv.ts runs it in the calling thread for small ones, where
 * starting a thread costs more than the parse. Plain JavaScript, for the parser thread.
 *
 * csv-parse's own parser is driven as its stream and its sync API drive it (`api.parse(buffer, end, push,
 * close)`): the same state machine and errors, without a trip through a Readable's buffer for each record,
 * which cost as much as the parsing.
 */
import { parse } from "csv-parse"
import { createHash } from "node:crypto"
import { csvParseOptions } from "./CsvOptions.js"
import { NotText, TextStream } from "./TextStream.js"

/**
 * @typedef {Error & {code?: string | undefined, records?: number | undefined, index?: number | undefined}} ParseError
 * @typedef {{
 *   parse: (buffer: Buffer | undefined, end: boolean, push: (record: Array<string>) => void, close: () => void) => ParseError | undefined,
 *   state: { quoting: boolean }
 * }} ParserApi
 * @typedef {{
 *   message: string, code?: string | undefined, records?: number | undefined, syscall?: string | undefined,
 *   quoting?: boolean | undefined, cells?: number | undefined, line?: number | undefined
 * }} PassError
 */

/**
 * @param {{ delimiter: string, encoding: "auto" | "utf-8" | "windows-1252", maxRecordSize: number }} settings
 * @param {(record: Array<string>) => void} push called with each record, in order
 */
export const csvPass = (settings, push) => {
  const { api } = /** @type {{ api: ParserApi }} */ (
    /** @type {unknown} */ (parse(csvParseOptions(settings.delimiter, settings.maxRecordSize)))
  )
  const text = new TextStream(settings.encoding)
  const hash = createHash("sha256")
  const close = () => {}
  /**
   * What a failure says, as the reader reports it (`quoting`: the failing row ended inside a quoted cell;
   * `cells`: the cells it had before; code `NOT_TEXT`: the bytes are not text, `line` says where).
   * @param {unknown} cause
   * @returns {PassError}
   */
  const failure = (cause) => {
    if (cause instanceof NotText) return { message: cause.message, code: "NOT_TEXT", line: cause.line }
    const error = /** @type {ParseError & {syscall?: string | undefined}} */ (cause)
    return {
      message: error.message,
      code: error.code,
      records: error.records,
      syscall: error.syscall,
      quoting: api.state.quoting,
      cells: error.index
    }
  }
  /**
   * @param {() => Buffer | undefined} decode
   * @param {boolean} end
   * @returns {PassError | undefined}
   */
  const feed = (decode, end) => {
    let bytes
    try {
      bytes = decode()
    } catch (e) {
      return failure(e)
    }
    const error = api.parse(bytes, end, push, close)
    return error === undefined ? undefined : failure(error)
  }
  return {
    /**
     * The next chunk of the file's bytes; a failure when they are not text or do not parse.
     * @param {Buffer} chunk
     */
    push: (chunk) => {
      hash.update(chunk)
      return feed(() => text.push(chunk), false)
    },
    /** The end of the file; a failure as `push`'s. */
    end: () => feed(() => text.end(), true),
    /**
     * What the whole pass found, once it has ended (the encoding is decided by then).
     * @returns {{ encoding: "utf-8" | "windows-1252", sha256: string }}
     */
    facts: () => ({ encoding: text.encoding ?? "utf-8", sha256: hash.digest("hex") }),
    failure
  }
}
