// @ts-check
/**
 * A batch of table rows packed for another thread (XlsxThread.ts packs, XlsxWorker.js unpacks): the text of
 * every string cell joined into one string, and the shape in two typed arrays whose memory is transferred.
 *
 * Posting the rows as arrays of cells made the structured clone walk and serialize every cell and the receiving
 * thread rebuild it: for a 200,000-row `validate` (15 columns in report.xlsx), `postMessage` and the
 * serialization it starts took about 1.9 s of the main thread's 15 s (node --cpu-prof, docs/benchmarks.md), and
 * the arrays built first (one per row) fed its collector. One long string is copied as one block, and the
 * typed arrays not at all.
 *
 * `shape` holds the row count, then per row its cell count and per cell a code: a string's length (≥ 0), or one of
 * the kinds below; a number's value is the next one in `numbers` (64-bit, exactly as given: -0, NaN, ±Infinity).
 * Unpacking gives back the same cells (a string as a slice of the joined text).
 */

const isNull = -1
const isUndefined = -2
const isTrue = -3
const isFalse = -4
const isNumber = -5

/**
 * @typedef {{ readonly text: string, readonly shape: Int32Array, readonly numbers: Float64Array }} PackedRows
 * @typedef {string | number | boolean | null | undefined} PackedCell
 */

/**
 * Packs `rows`, each string cell first through `textOf` (the caller's guard).
 * @param {ReadonlyArray<ReadonlyArray<PackedCell>>} rows
 * @param {(text: string) => string} textOf
 * @returns {PackedRows}
 */
export const packRows = (rows, textOf) => {
  let codes = 1 + rows.length
  let numberCount = 0
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]
    codes += row.length
    for (let c = 0; c < row.length; c++) {
      if (typeof row[c] === "number") numberCount++
    }
  }
  const shape = new Int32Array(codes)
  const numbers = new Float64Array(numberCount)
  /** @type {Array<string>} */
  const texts = []
  let at = 0
  let n = 0
  shape[at++] = rows.length
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]
    shape[at++] = row.length
    for (let c = 0; c < row.length; c++) {
      const cell = row[c]
      if (typeof cell === "string") {
        const text = textOf(cell)
        texts.push(text)
        shape[at++] = text.length
      } else if (typeof cell === "number") {
        numbers[n++] = cell
        shape[at++] = isNumber
      } else if (cell === null) shape[at++] = isNull
      else if (cell === undefined) shape[at++] = isUndefined
      else shape[at++] = cell ? isTrue : isFalse
    }
  }
  return { text: texts.join(""), shape, numbers }
}

/** The buffers of a packed batch that a `postMessage` hands over instead of copying. */
/** @param {PackedRows} packed @returns {Array<ArrayBuffer>} */
export const transferOf = (packed) => [
  /** @type {ArrayBuffer} */ (packed.shape.buffer),
  /** @type {ArrayBuffer} */ (packed.numbers.buffer)
]

/**
 * The rows of a packed batch, as they were given to `packRows` (string cells as its `textOf` returned them).
 * @param {PackedRows} packed
 * @returns {Array<Array<PackedCell>>}
 */
export const unpackRows = ({ text, shape, numbers }) => {
  const count = shape[0]
  /** @type {Array<Array<PackedCell>>} */
  const rows = new Array(count)
  let at = 1
  let from = 0
  let n = 0
  for (let r = 0; r < count; r++) {
    const length = shape[at++]
    /** @type {Array<PackedCell>} */
    const row = new Array(length)
    for (let c = 0; c < length; c++) {
      const code = shape[at++]
      if (code >= 0) {
        row[c] = text.slice(from, from + code)
        from += code
      } else if (code === isNumber) row[c] = numbers[n++]
      else if (code === isNull) row[c] = null
      else if (code === isUndefined) row[c] = undefined
      else row[c] = code === isTrue
    }
    rows[r] = row
  }
  return rows
}
