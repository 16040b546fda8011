// @ts-check
/**
 * A workbook's table written on a thread of its own (XlsxTable: the sheet's XML and the ZIP stream), so that
 * building a large report.xlsx runs beside the validation or the import instead of on the main thread. Plain
 * JavaScript: a worker is started from a file, and this one must run as it is from src/ (tests) as well as from
 * dist/; it imports only XlsxWriter.js, Pieces.js and RowBatch.js, plain JavaScript as well.
 *
 * The file itself stays the main thread's (written to its .tmp, then renamed: Write.ts): this thread hands back
 * the archive's bytes, which the main thread writes in order.
 *
 * Protocol (XlsxThread.ts is the other side): `workerData` is {header, options} (the header and every text cell
 * already through the main thread's formula guard and secret redaction, `options.measuredHeader` the header as
 * given). Messages in: `{packed, measured}` (a batch of rows packed by RowBatch.js, its text already through the
 * guard; `measured`: the first rows as given, for the columns' widths), `{close: frontRows}`. Messages out, one per message in and in its order: `{bytes}` (the archive's
 * bytes made since the last message, transferred), then `{bytes, closed: true}` after `close`; or
 * `{error: {message, tooLarge}}`, after which the thread takes nothing more.
 */
import { Writable } from "node:stream"
import { parentPort, workerData } from "node:worker_threads"
import { unpackRows } from "./RowBatch.js"
import { XlsxTable, ZipError } from "./XlsxWriter.js"

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort)

/** @type {Array<Buffer>} */
let made = []
// Never full: what the archive makes goes back to the main thread with the next answer, and the main thread sends
// the next batch only when it has written enough of the earlier ones (its bounded queue is the backpressure).
const out = new Writable({
  highWaterMark: Number.MAX_SAFE_INTEGER,
  write(chunk, _encoding, callback) {
    made.push(chunk)
    callback()
  }
})

/** The bytes made so far, in one buffer whose memory is handed over rather than copied. */
const take = () => {
  const bytes = made.length === 1 ? made[0] : Buffer.concat(made)
  made = []
  // A pooled small buffer shares its memory with others: copy it so that transferring it takes only its own.
  const own = bytes === undefined
    ? new Uint8Array(0)
    : bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? bytes
    : new Uint8Array(bytes)
  return own
}

/** @param {Uint8Array} bytes @param {boolean} [closed] */
const answer = (bytes, closed = false) =>
  port.postMessage({ bytes, closed }, [/** @type {ArrayBuffer} */ (bytes.buffer)])

const table = new XlsxTable(out, workerData.header, workerData.options)
let failed = false

/** @param {unknown} error */
const fail = (error) => {
  failed = true
  table.destroy()
  port.postMessage({
    error: {
      message: error instanceof Error ? error.message : String(error),
      tooLarge: error instanceof ZipError && error.tooLarge
    }
  })
}

/**
 * A fault for the tests of a thread that fails mid-run (test/files/xlsx-thread-cli.test.ts): `throw:N` throws, and
 * `exit:N` ends the thread, once N rows have been written here. Never set in use.
 */
const fault = /^(throw|exit):(\d+)$/.exec(process.env.FSM_XLSX_DEBUG_FAULT ?? "")
let rowsWritten = 0
const faultAt = fault === null ? Infinity : Number(fault[2])
const injectFault = () => {
  if (fault?.[1] === "exit") process.exit(70)
  throw new Error(`injected fault after ${faultAt} rows (FSM_XLSX_DEBUG_FAULT)`)
}

/** Messages are handled one at a time, in order: each waits for the one before it. */
let queue = Promise.resolve()

/**
 * @param {{ packed: import("./RowBatch.js").PackedRows, measured?: ReadonlyArray<ReadonlyArray<import("./XlsxWriter.js").Cell>> }} batch
 */
const writeBatch = async ({ measured = [], packed }) => {
  const rows = unpackRows(packed)
  for (let i = 0; i < rows.length; i++) {
    if (++rowsWritten > faultAt) injectFault()
    const wait = table.write(rows[i], measured[i])
    if (wait !== undefined) await wait
  }
  answer(take())
}

/** @param {ReadonlyArray<import("./XlsxWriter.js").FrontRow>} front */
const close = async (front) => {
  await table.close(front)
  // Let the archive's last writes reach `out`.
  await new Promise((resolve) => out.end(resolve))
  answer(take(), true)
  port.close()
}

port.on("message", (message) => {
  queue = queue.then(async () => {
    if (failed) return
    try {
      if ("close" in message) await close(message.close)
      else await writeBatch(message)
    } catch (error) {
      fail(error)
    }
  })
})
