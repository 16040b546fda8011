// @ts-check
/**
 * csv-parse on a thread of its own, so that a large file's parsing (as long as all the validation that follows)
 * runs beside the validation and the reports instead of before them. Plain JavaScript: a worker is started from
 * a file, and this one must run as it is from src/ (tests) as well as from dist/.
 *
 * The file is read once per pass, here: the bytes go through a TextStream (TextStream.js: the encoding decided
 * and checked on the way) to the parser, and into a sha256 of the file, so neither needs a pass of its own.
 *
 * Protocol: `workerData` is {file, encoding (auto, utf-8 or windows-1252), delimiter, maxRecordSize, batchRows};
 * the parent sends `{credit: n}` to ask for n more batches; the worker answers `{rows}` (at most batchRows
 * records, each an array of cells) once per credit, then `{done: true, encoding, sha256}` (what the pass found)
 * — or `{error: {message, code, records, syscall, quoting, cells, line}}` (`quoting`: the failing row ended
 * inside a quoted cell; `cells`: the cells it had before; code `NOT_TEXT`: the bytes are not text, `line` says
 * where). Without credit it stops reading the file: memory stays flat however slow the parent.
 */
import { parse } from "csv-parse"
import { createHash } from "node:crypto"
import { createReadStream } from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { csvParseOptions } from "./CsvOptions.js"
import { NotText, TextStream } from "./TextStream.js"

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort)
const { batchRows, delimiter, encoding, file, maxRecordSize } = workerData

/** @param {unknown} message */
const send = (message) => port.postMessage(message)

/**
 * csv-parse's own parser, driven chunk by chunk as its stream and its sync API drive it (`api.parse(buffer,
 * end, push, close)`): the same state machine and errors, without a trip through a Readable's buffer for each
 * record, which cost as much as the parsing.
 */
/**
 * @typedef {Error & {code?: string | undefined, records?: number | undefined, index?: number | undefined}} ParseError
 * @typedef {{
 *   parse: (buffer: Buffer | undefined, end: boolean, push: (record: Array<string>) => void, close: () => void) => ParseError | undefined,
 *   state: { quoting: boolean }
 * }} ParserApi
 */
const { api } =
  /** @type {{ api: ParserApi }} */ (/** @type {unknown} */ (parse(csvParseOptions(delimiter, maxRecordSize))))

/** The file's bytes → UTF-8, which the parser reads. */
const text = new TextStream(encoding)
const hash = createHash("sha256")

let credit = 0
let ended = false
let finished = false
/** @type {Array<Array<string>>} */
let batch = []
/** @type {Array<Array<Array<string>>>} */
const ready = []

/** @param {Array<string>} record */
const push = (record) => {
  batch.push(record)
  if (batch.length === batchRows) {
    ready.push(batch)
    batch = []
  }
}
const close = () => {}

/** @param {ParseError & {syscall?: string | undefined}} error */
const fail = (error) => {
  if (finished) return
  finished = true
  input.destroy()
  send({
    error: error instanceof NotText
      ? { message: error.message, code: "NOT_TEXT", line: error.line }
      : {
        message: error.message,
        code: error.code,
        records: error.records,
        syscall: error.syscall,
        quoting: api.state.quoting,
        cells: error.index
      }
  })
}

/** Sends what the credit allows; reads on only while fewer than two batches wait. */
const pump = () => {
  while (credit > 0 && ready.length > 0 && !finished) {
    send({ rows: ready.shift() })
    credit--
  }
  if (finished) return
  if (ended && ready.length === 0) {
    finished = true
    send({ done: true, encoding: text.encoding, sha256: hash.digest("hex") })
  } else if (!ended) {
    if (ready.length >= 2) input.pause()
    else input.resume()
  }
}

const input = createReadStream(file, { highWaterMark: 64 * 1024 })
input.on("data", (data) => {
  const chunk = /** @type {Buffer} */ (data)
  hash.update(chunk)
  let bytes
  try {
    bytes = text.push(chunk)
  } catch (e) {
    return fail(/** @type {NotText} */ (e))
  }
  const error = api.parse(bytes, false, push, close)
  if (error !== undefined) return fail(error)
  pump()
})
input.on("end", () => {
  let rest
  try {
    rest = text.end()
  } catch (e) {
    return fail(/** @type {NotText} */ (e))
  }
  const error = api.parse(rest, true, push, close)
  if (error !== undefined) return fail(error)
  if (batch.length > 0) ready.push(batch)
  batch = []
  ended = true
  pump()
})
input.on("error", fail)
port.on("message", (message) => {
  credit += message.credit
  pump()
})
