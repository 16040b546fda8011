// @ts-check
/**
 * csv-parse on a thread of its own, so that a large file's parsing (as long as all the validation that follows)
 * runs beside the validation and the reports instead of before them. Plain JavaScript: a worker is started from
 * a file, and this one must run as it is from src/ (tests) as well as from dist/.
 *
 * The file is read once per pass, here, through one `csvPass` (CsvPass.js: the encoding decided and checked on
 * the way, and a sha256 of the file), so neither needs a pass of its own.
 *
 * Protocol: `workerData` is {file, encoding (auto, utf-8 or windows-1252), delimiter, maxRecordSize, batchRows};
 * the parent sends `{credit: n}` to ask for n more batches; the worker answers `{rows}` (at most batchRows
 * records, each an array of cells) once per credit, then `{done: true, encoding, sha256}` (what the pass found)
 * — or `{error: {message, code, records, syscall, quoting, cells, line}}` (see CsvPass.js). Without credit it
 * stops reading the file: memory stays flat however slow the parent.
 */
import { createReadStream } from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { csvPass } from "./CsvPass.js"

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort)
const { batchRows, delimiter, encoding, file, maxRecordSize } = workerData

/** @param {unknown} message */
const send = (message) => port.postMessage(message)

let credit = 0
let ended = false
let finished = false
/** @type {Array<Array<string>>} */
let batch = []
/** @type {Array<Array<Array<string>>>} */
const ready = []

const pass = csvPass({ delimiter, encoding, maxRecordSize }, (record) => {
  batch.push(record)
  if (batch.length === batchRows) {
    ready.push(batch)
    batch = []
  }
})

/** @param {import("./CsvPass.js").PassError} error */
const fail = (error) => {
  if (finished) return
  finished = true
  input.destroy()
  send({ error })
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
    send({ done: true, ...pass.facts() })
  } else if (!ended) {
    if (ready.length >= 2) input.pause()
    else input.resume()
  }
}

const input = createReadStream(file, { highWaterMark: 64 * 1024 })
input.on("data", (data) => {
  const error = pass.push(/** @type {Buffer} */ (data))
  if (error !== undefined) return fail(error)
  pump()
})
input.on("end", () => {
  const error = pass.end()
  if (error !== undefined) return fail(error)
  if (batch.length > 0) ready.push(batch)
  batch = []
  ended = true
  pump()
})
input.on("error", (error) => fail(pass.failure(error)))
port.on("message", (message) => {
  credit += message.credit
  pump()
})
