// @ts-check
/**
 * csv-parse on a thread of its own, so that a large file's parsing (as long as all the validation that follows)
 * runs beside the validation and the reports instead of before them. Plain JavaScript: a worker is started from
 * a file, and this one must run as it is from src/ (tests) as well as from dist/.
 *
 * The file is read once per pass, here, through one `csvPass` (CsvPass.js: the encoding decided and checked on
 * the way, and a sha256 of the file), so neither needs a pass of its own.
 *
 * Protocol: `workerData` is {file, encoding (auto, utf-8 or windows-1252), delimiter, maxRecordSize, ring}. The
 * records go into the shared ring (Ring.js), this thread blocking while it is full: memory stays flat however
 * slow the parent. A record too large for the ring's slot is posted as `{rows: [record]}`. At the end the thread
 * posts `{done: true, encoding, sha256}` (what the pass found) — or `{error: {message, code, records, syscall,
 * quoting, cells, line}}` (see CsvPass.js), the records before it that filled a slot being in the ring.
 */
import { createReadStream } from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { csvPass } from "./CsvPass.js"
import { ringWriter } from "./Ring.js"

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort)
const { delimiter, encoding, file, maxRecordSize, ring } = workerData

/** @param {unknown} message */
const send = (message) => port.postMessage(message)

let finished = false
/** The reader stopped: read no further. */
let stopped = false
const writer = ringWriter(ring, (record) => send({ rows: [record] }))

const pass = csvPass({ delimiter, encoding, maxRecordSize }, (record) => {
  if (!stopped && !writer.push(record)) stopped = true
})

/** @param {import("./CsvPass.js").PassError} error */
const fail = (error) => {
  if (finished) return
  finished = true
  input.destroy()
  send({ error })
}

const input = createReadStream(file, { highWaterMark: 64 * 1024 })
input.on("data", (data) => {
  const error = pass.push(/** @type {Buffer} */ (data))
  if (stopped) {
    finished = true
    return input.destroy()
  }
  if (error !== undefined) fail(error)
})
input.on("end", () => {
  if (finished) return
  const error = pass.end()
  if (error !== undefined) return fail(error)
  writer.flush()
  finished = true
  send({ done: true, ...pass.facts() })
})
input.on("error", (error) => fail(pass.failure(error)))
