// @ts-check
/**
 * A batch of report lines whose text cells are redacted, guarded and encoded to UTF-8 once for both reports:
 * report.csv's bytes are copied from them on the main thread (Write.ts), and the same bytes go to the workbook's
 * thread (XlsxThread.ts, XlsxWorker.js), which copies them into the sheet's XML (XlsxWriter.js) instead of
 * building each row as a string and encoding it again.
 *
 * Before, every text cell of a report was redacted and guarded twice on the main thread (once per report),
 * encoded to UTF-8 for report.csv there, joined into a string that `postMessage` copied to the workbook's thread,
 * cut into cells again there, and encoded a second time into the sheet's XML (docs/benchmarks.md, validate20).
 *
 * `bytes` holds the UTF-8 of every text cell of report.csv's lines, in order (all cells of a row, then the next
 * row's). `shape` describes the workbook's rows: the row count, then per row its cell count and per cell two
 * codes. A code ≥ 0 is a text cell written from `bytes` (that many bytes, and the next code its length in UTF-16
 * units); a negative code is one of the kinds below, and the next code is how many bytes of `bytes` the CSV's
 * cell took there (the workbook's cell is not the CSV's: a number, or its own text in `texts`, the inline guard
 * or Excel's cut having made it another, or a lone surrogate that UTF-8 cannot carry). A number's value is the
 * next one in `numbers`, exactly as given.
 */

const isNull = -1
const isUndefined = -2
const isTrue = -3
const isFalse = -4
const isNumber = -5
const isText = -6

/**
 * @typedef {string | number | boolean | null | undefined} EncodedCell
 * @typedef {{ readonly bytes: Uint8Array, readonly shape: Int32Array, readonly numbers: Float64Array, readonly texts: ReadonlyArray<string> }} EncodedRows
 * @typedef {{ at: number, from: number, number: number, text: number }} EncodedCursor
 */

/**
 * The length of `text` in UTF-8 as `Buffer.write` encodes it (a lone surrogate as U+FFFD, 3 bytes).
 * @param {string} text
 * @returns {number}
 */
export const utf8Length = (text) => {
  let n = text.length
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) continue
    if (c < 0x800) {
      n += 1
      continue
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        // A pair: 4 bytes for its 2 units.
        n += 2
        i++
        continue
      }
    }
    n += 2
  }
  return n
}

/** @param {string} text */
const wellFormed = (text) => /** @type {{ isWellFormed(): boolean }} */ (/** @type {unknown} */ (text)).isWellFormed()

/**
 * The report's lines of a batch, encoded once.
 * - `csvRows`: report.csv's cells; `sheetRows`: the workbook's, the same rows but where a cell became a number
 *   (the same array where nothing did).
 * - `csvText(cell)`: a text cell as report.csv writes it (redacted, guarded). `sheetText(cell)`: as the workbook
 *   writes it; asked only when `csvText` changed the cell or it is longer than `sheetLimit` (a cell that neither
 *   the redaction nor the CSV's guard changes is one the inline guard leaves alone too: Guard.ts).
 * Returns the encoded rows, and each CSV text cell's text and length in bytes, in order, for report.csv's lines.
 * @param {ReadonlyArray<ReadonlyArray<EncodedCell>>} csvRows
 * @param {ReadonlyArray<ReadonlyArray<EncodedCell>>} sheetRows
 * @param {(cell: string) => string} csvText
 * @param {(cell: string) => string} sheetText
 * @param {number} sheetLimit
 * @returns {{ readonly encoded: EncodedRows, readonly csvTexts: ReadonlyArray<string>, readonly csvBytes: Int32Array }}
 */
export const encodeRows = (csvRows, sheetRows, csvText, sheetText, sheetLimit) => {
  let cells = 0
  let numberCount = 0
  for (let r = 0; r < csvRows.length; r++) {
    const row = sheetRows[r]
    cells += row.length
    for (let c = 0; c < row.length; c++) {
      if (typeof row[c] === "number") numberCount++
    }
  }
  const shape = new Int32Array(1 + csvRows.length + 2 * cells)
  const numbers = new Float64Array(numberCount)
  /** @type {Array<string>} */
  const csvTexts = []
  /** @type {Array<string>} */
  const texts = []
  const csvBytes = new Int32Array(cells)
  let at = 0
  let n = 0
  let total = 0
  shape[at++] = csvRows.length
  for (let r = 0; r < csvRows.length; r++) {
    const row = csvRows[r]
    const sheetRow = sheetRows[r]
    shape[at++] = row.length
    for (let c = 0; c < row.length; c++) {
      const cell = row[c]
      const sheetCell = sheetRow[c]
      let bytes = 0
      let text = ""
      if (typeof cell === "string") {
        text = csvText(cell)
        bytes = utf8Length(text)
        csvBytes[csvTexts.length] = bytes
        csvTexts.push(text)
        total += bytes
      }
      if (typeof sheetCell === "string") {
        const sheet = sheetCell === cell && text === cell && cell.length <= sheetLimit ? text : sheetText(sheetCell)
        if (sheet === text && typeof cell === "string" && wellFormed(text)) {
          shape[at++] = bytes
          shape[at++] = text.length
          continue
        }
        texts.push(sheet)
        shape[at++] = isText
      } else if (typeof sheetCell === "number") {
        numbers[n++] = sheetCell
        shape[at++] = isNumber
      } else if (sheetCell === null) shape[at++] = isNull
      else if (sheetCell === undefined) shape[at++] = isUndefined
      else shape[at++] = sheetCell ? isTrue : isFalse
      shape[at++] = bytes
    }
  }
  // Its own memory, whole (not a slice of Buffer's pool), so that a copy for another thread copies only its bytes.
  const bytes = Buffer.from(new ArrayBuffer(total))
  const written = bytes.write(csvTexts.join(""), 0, "utf8")
  if (written !== total) throw new Error(`encodeRows: ${written} bytes written where ${total} were counted`)
  return { encoded: { bytes, shape, numbers, texts }, csvTexts, csvBytes }
}

/** @returns {EncodedCursor} */
export const startCursor = () => ({ at: 1, from: 0, number: 0, text: 0 })

/**
 * The next row of `encoded` at `cursor` as the workbook's cells (text decoded), the cursor moved past it.
 * @param {EncodedRows} encoded
 * @param {EncodedCursor} cursor
 * @returns {Array<EncodedCell>}
 */
export const decodeRow = ({ bytes, numbers, shape, texts }, cursor) => {
  const length = shape[cursor.at++]
  /** @type {Array<EncodedCell>} */
  const row = new Array(length)
  for (let c = 0; c < length; c++) {
    const code = shape[cursor.at++]
    const extra = shape[cursor.at++]
    if (code >= 0) {
      row[c] = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
        "utf8",
        cursor.from,
        cursor.from + code
      )
      cursor.from += code
      continue
    }
    cursor.from += extra
    if (code === isText) row[c] = texts[cursor.text++]
    else if (code === isNumber) row[c] = numbers[cursor.number++]
    else if (code === isNull) row[c] = null
    else if (code === isUndefined) row[c] = undefined
    else row[c] = code === isTrue
  }
  return row
}

/**
 * The workbook's cell at `cursor` when it is not one written from `bytes` (its code negative): its value, the
 * cursor moved past it.
 * @param {EncodedRows} encoded
 * @param {EncodedCursor} cursor
 * @param {number} code
 * @returns {EncodedCell}
 */
export const otherCell = ({ numbers, texts }, cursor, code) =>
  code === isText
    ? texts[cursor.text++]
    : code === isNumber
    ? numbers[cursor.number++]
    : code === isNull
    ? null
    : code === isUndefined
    ? undefined
    : code === isTrue

/**
 * The buffers of an encoded batch that a `postMessage` hands over instead of copying: not `bytes`, which
 * report.csv's writer may not have read yet (it is copied, one block).
 * @param {EncodedRows} encoded
 * @returns {Array<ArrayBuffer>}
 */
export const encodedTransfer = (encoded) => [
  /** @type {ArrayBuffer} */ (encoded.shape.buffer),
  /** @type {ArrayBuffer} */ (encoded.numbers.buffer)
]
