// @ts-check
/**
 * A streaming XLSX writer of our own: one table, written row by row as a sheet's XML straight into a ZIP stream,
 * with nothing kept per row (exceljs's writer costs about as much per cell in style matching and XML machinery as
 * the rest of a run, and its memory grows with the rows). Two parts: a ZIP archive written front to back onto a
 * Node stream, and the workbook's parts (a table that outgrows a sheet goes on in a new sheet).
 *
 * Plain JavaScript (checked by tsc through the JSDoc types): a large table is written on a thread of its own
 * (XlsxWorker.js, started from a file), which must run as it is from src/ (tests) as well as from dist/.
 */
import { crc32, createDeflateRaw, deflateRawSync } from "node:zlib"
import { TextPieces } from "./Pieces.js"

/**
 * One cell: the same union as `Cell` in Cell.ts, spelled here because a checked JS file's type imports from a .ts
 * module do not resolve when a test type-checks the dist/ copy (dist has no declarations).
 * @typedef {string | number | boolean | null | undefined} Cell
 */

/** The ZIP records' signatures, for this writer, the reader (Zip.ts) and the archives composed for exceljs (Xlsx.ts). */
export const signature = /** @type {const} */ ({
  local: 0x04034b50,
  descriptor: 0x08074b50,
  central: 0x02014b50,
  end: 0x06054b50
})

// --- ZIP ---------------------------------------------------------------------------------------------------------

/** Bit 3: sizes and CRC follow the data; bit 11: UTF-8 names. */
const flags = 0x0808
const deflated = 8
const version = 20
/** Without ZIP64, offsets, sizes and the directory's own position must fit in 32 bits. */
const maxOffset = 0xffffffff

/** Thrown (and kept) when the archive cannot be written; `tooLarge` when it would need ZIP64. */
export class ZipError extends Error {
  /** @readonly @type {boolean} */
  tooLarge
  /**
   * @param {string} message
   * @param {boolean} [tooLarge]
   */
  constructor(message, tooLarge = false) {
    super(message)
    this.tooLarge = tooLarge
  }
}

/** @param {Date} d */
const dosDateTime = (d) => ({
  time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
  date: (Math.max(0, d.getFullYear() - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate()
})

/**
 * The archive with every entry's modification time set to `date`: an archive built by exceljs stamps its entries
 * with the time of writing, so the same workbook built twice differs only there. Returns a copy.
 * @param {Uint8Array} archive
 * @param {Date} date
 * @returns {Buffer}
 */
export const withEntryTimes = (archive, date) => {
  const bytes = Buffer.from(archive)
  const { date: day, time } = dosDateTime(date)
  const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) {
    throw new ZipError("not a ZIP archive: no end of central directory")
  }
  const count = bytes.readUInt16LE(eocd + 10)
  let at = bytes.readUInt32LE(eocd + 16)
  for (let i = 0; i < count; i++) {
    if (bytes.readUInt32LE(at) !== signature.central) {
      throw new ZipError("damaged ZIP central directory")
    }
    bytes.writeUInt16LE(time, at + 12)
    bytes.writeUInt16LE(day, at + 14)
    const local = bytes.readUInt32LE(at + 42)
    if (bytes.readUInt32LE(local) !== signature.local) {
      throw new ZipError("damaged ZIP local header")
    }
    bytes.writeUInt16LE(time, local + 10)
    bytes.writeUInt16LE(day, local + 12)
    at += 46 + bytes.readUInt16LE(at + 28) + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32)
  }
  return bytes
}

/**
 * @typedef {object} Entry
 * @property {Buffer} name
 * @property {number} offset
 * @property {number} crc
 * @property {number} compressed
 * @property {number} size
 */

/** The entry being streamed: text is gathered into chunks of about this many characters before deflate sees it. */
const chunkChars = 64 * 1024

/**
 * A ZIP archive written front to back onto `out`: entries deflated one at a time, each with a data descriptor
 * (sizes known only at its end), then the central directory. Only one entry is open at a time.
 */
class ZipStream {
  /** @readonly @type {import("node:stream").Writable} */
  #out
  /** @readonly @type {number} */
  #level
  /** @readonly @type {{ time: number, date: number }} */
  #stamp
  /** @readonly @type {Array<Entry>} */
  #entries = []
  #offset = 0
  /** @type {Error | undefined} */
  #failure
  /** @type {import("node:zlib").DeflateRaw | undefined} */
  #deflate
  /** @type {Entry | undefined} */
  #entry
  /**
   * The open entry's data not yet handed to deflate, as UTF-8, and its length in UTF-16 units: it goes to deflate
   * in chunks of `chunkChars` units, and the sheet's size limit counts them so.
   * @type {Array<Buffer>}
   */
  #pending = []
  #pendingChars = 0

  /**
   * @param {import("node:stream").Writable} out
   * @param {number} level
   * @param {Date} made the entries' modification time
   */
  constructor(out, level, made) {
    this.#stamp = dosDateTime(made)
    this.#out = out
    this.#level = level
    out.on("error", (error) => this.#fail(error))
  }

  /** @param {Error} error */
  #fail(error) {
    this.#failure ??= error
    this.#deflate?.destroy()
  }

  /**
   * Why the archive cannot go on. A file stream that fails is `errored` at once but says so by event only later.
   * @returns {Error | undefined}
   */
  get #problem() {
    return this.#failure ?? this.#out.errored ?? this.#deflate?.errored ?? undefined
  }

  /** @param {Buffer} data */
  #push(data) {
    this.#offset += data.length
    if (this.#offset >= maxOffset) {
      this.#fail(new ZipError("the workbook would pass 4 GiB, the most an .xlsx without ZIP64 can hold", true))
    }
    return this.#out.write(data)
  }

  /** @param {Entry} entry */
  #localHeader(entry) {
    const header = Buffer.alloc(30)
    header.writeUInt32LE(signature.local, 0)
    header.writeUInt16LE(version, 4)
    header.writeUInt16LE(flags, 6)
    header.writeUInt16LE(deflated, 8)
    header.writeUInt16LE(this.#stamp.time, 10)
    header.writeUInt16LE(this.#stamp.date, 12)
    header.writeUInt16LE(entry.name.length, 26)
    return Buffer.concat([header, entry.name])
  }

  /** @param {Entry} entry */
  #descriptor(entry) {
    const descriptor = Buffer.alloc(16)
    descriptor.writeUInt32LE(signature.descriptor, 0)
    descriptor.writeUInt32LE(entry.crc, 4)
    descriptor.writeUInt32LE(entry.compressed, 8)
    descriptor.writeUInt32LE(entry.size, 12)
    return descriptor
  }

  /**
   * @param {string} name
   * @returns {Entry}
   */
  #start(name) {
    if (this.#problem !== undefined) {
      throw this.#problem
    }
    if (this.#entry !== undefined) {
      throw new ZipError(`cannot start ${name}: ${this.#entry.name.toString("utf8")} is still open`)
    }
    const entry = { name: Buffer.from(name, "utf8"), offset: this.#offset, crc: 0, compressed: 0, size: 0 }
    this.#entries.push(entry)
    this.#push(this.#localHeader(entry))
    return entry
  }

  /**
   * A small entry, deflated at once.
   * @param {string} name
   * @param {string} text
   */
  add(name, text) {
    const entry = this.#start(name)
    const data = Buffer.from(text, "utf8")
    const compressed = deflateRawSync(data, { level: this.#level })
    entry.crc = crc32(data)
    entry.size = data.length
    entry.compressed = compressed.length
    this.#push(compressed)
    this.#push(this.#descriptor(entry))
  }

  /**
   * Starts an entry streamed with `write`; `end` finishes it.
   * @param {string} name
   */
  begin(name) {
    const entry = this.#start(name)
    // Room for a few chunks, so that the next one is ready when deflate finishes one (zlib streams take a
    // Transform's options too; @types/node does not say so).
    const options = {
      level: this.#level,
      chunkSize: 64 * 1024,
      writableHighWaterMark: 4 * chunkChars
    }
    const deflate = createDeflateRaw(options)
    deflate.on("data", (chunk) => {
      entry.compressed += chunk.length
      // The file is behind: hold deflate's output (and so, through its buffer, our writes) until it drains.
      if (!this.#push(chunk)) {
        deflate.pause()
        this.#out.once("drain", () => deflate.resume())
      }
    })
    deflate.on("error", (error) => this.#fail(error))
    this.#deflate = deflate
    this.#entry = entry
  }

  /** Bytes of the open entry so far, uncompressed (text not yet handed to deflate included, as UTF-16 units). */
  get entrySize() {
    return (this.#entry?.size ?? 0) + this.#pendingChars
  }

  /**
   * Appends to the open entry; false when the caller should wait for `ready` before writing more.
   * @param {string} text
   */
  write(text) {
    return this.writeBytes(Buffer.from(text, "utf8"), text.length)
  }

  /**
   * Appends text already encoded as UTF-8 (`chars`: its length in UTF-16 units, whole characters only); false when
   * the caller should wait for `ready`. The table's rows come this way: joining them into one string first cost the
   * workbook thread most of its time once a row held a character beyond Latin-1 (V8 copies the pieces into a
   * two-byte string), and the string was then encoded anyway. The same chunks reach deflate either way.
   * @param {Buffer} bytes
   * @param {number} chars
   */
  writeBytes(bytes, chars) {
    if (this.#problem !== undefined) {
      return false
    }
    if (chars > 0) {
      this.#pending.push(bytes)
      this.#pendingChars += chars
    }
    if (this.#pendingChars < chunkChars) {
      return true
    }
    this.#flush()
    return false
  }

  #flush() {
    const entry = /** @type {Entry} */ (this.#entry)
    const pending = this.#pending
    const data = pending.length === 1 ? pending[0] : Buffer.concat(pending)
    this.#pending = []
    this.#pendingChars = 0
    entry.crc = crc32(data, entry.crc)
    entry.size += data.length
    if (entry.size >= maxOffset) {
      this.#fail(new ZipError(`${entry.name.toString("utf8")} would pass 4 GiB uncompressed`, true))
    }
    const deflate = /** @type {import("node:zlib").DeflateRaw} */ (this.#deflate)
    deflate.write(data)
  }

  /**
   * Resolves once the open entry takes data again; rejects when the archive has failed. Even when deflate's
   * buffer has room, it waits for a turn of the event loop: deflate hands each finished chunk back on the main
   * thread and only then starts the next one, so a writer that never yields leaves it idle.
   */
  ready() {
    return new Promise((resolve, reject) => {
      const deflate = this.#deflate
      /** @type {NodeJS.Immediate | undefined} */
      let turn
      const settle = () => {
        if (turn !== undefined) {
          clearImmediate(turn)
        }
        deflate?.off("drain", settle).off("close", settle)
        this.#out.off("close", settle).off("error", settle)
        if (this.#problem !== undefined) {
          reject(this.#problem)
        } else if (deflate === undefined || deflate.destroyed || this.#out.destroyed) {
          reject(new ZipError("the archive was closed while it was written"))
        } else {
          resolve(undefined)
        }
      }
      if (this.#problem !== undefined || deflate === undefined) {
        return settle()
      }
      if (!deflate.writableNeedDrain) {
        turn = setImmediate(settle)
      } else {
        deflate.on("drain", settle)
      }
      deflate.on("close", settle)
      this.#out.on("close", settle).on("error", settle)
    })
  }

  /** Finishes the open entry: the rest of its data, then its descriptor. */
  async end() {
    const deflate = this.#deflate
    const entry = this.#entry
    if (deflate === undefined || entry === undefined) {
      return
    }
    // A failed archive's deflate is already destroyed: its events are past.
    if (this.#problem !== undefined) {
      throw this.#problem
    }
    if (this.#pendingChars > 0) {
      this.#flush()
    }
    await new Promise((resolve, reject) => {
      const done = () => {
        deflate.off("end", done).off("close", done)
        this.#out.off("close", done)
        if (this.#problem !== undefined) {
          reject(this.#problem)
        } else if (!deflate.readableEnded) {
          reject(new ZipError("the archive was closed while it was written"))
        } else {
          resolve(undefined)
        }
      }
      deflate.on("end", done).on("close", done)
      this.#out.on("close", done)
      deflate.end()
    })
    this.#deflate = undefined
    this.#entry = undefined
    this.#push(this.#descriptor(entry))
    if (this.#problem !== undefined) {
      throw this.#problem
    }
  }

  /** The central directory and its end record; the caller ends `out`. */
  finish() {
    if (this.#problem !== undefined) {
      throw this.#problem
    }
    if (this.#entry !== undefined) {
      throw new ZipError(`${this.#entry.name.toString("utf8")} is still open`)
    }
    const start = this.#offset
    for (const entry of this.#entries) {
      const record = Buffer.alloc(46)
      record.writeUInt32LE(signature.central, 0)
      record.writeUInt16LE(version, 4) // made by: MS-DOS attributes, spec 2.0
      record.writeUInt16LE(version, 6)
      record.writeUInt16LE(flags, 8)
      record.writeUInt16LE(deflated, 10)
      record.writeUInt16LE(this.#stamp.time, 12)
      record.writeUInt16LE(this.#stamp.date, 14)
      record.writeUInt32LE(entry.crc, 16)
      record.writeUInt32LE(entry.compressed, 20)
      record.writeUInt32LE(entry.size, 24)
      record.writeUInt16LE(entry.name.length, 28)
      record.writeUInt32LE(entry.offset, 42)
      this.#push(Buffer.concat([record, entry.name]))
    }
    const end = Buffer.alloc(22)
    end.writeUInt32LE(signature.end, 0)
    end.writeUInt16LE(this.#entries.length, 8)
    end.writeUInt16LE(this.#entries.length, 10)
    end.writeUInt32LE(this.#offset - start, 12)
    end.writeUInt32LE(start, 16)
    this.#push(end)
    if (this.#problem !== undefined) {
      throw this.#problem
    }
  }

  /** Stops at once (the caller discards the file). */
  destroy() {
    this.#deflate?.destroy()
    this.#deflate = undefined
    this.#entry = undefined
  }
}

// --- XLSX --------------------------------------------------------------------------------------------------------

/**
 * @typedef {object} Colours
 * @property {string} fill ARGB, as `FFC6EFCE`.
 * @property {string} font
 */

/**
 * @typedef {object} TableOptions
 * @property {string} sheetName Already valid for Excel (at most 31 characters, none of `[]:*?/\`).
 * @property {string} creator
 * @property {boolean} freezeHeader
 * @property {boolean} autoFilter
 * @property {number | undefined} [statusColumn] 0-based column whose text picks the cell's colours in `statusColours`.
 * @property {Readonly<Record<string, Colours>>} [statusColours]
 * @property {(text: string) => string} [text] Applied to every text cell (the formula guard).
 * @property {ReadonlyArray<number>} [wrapColumns] 0-based columns of long text (an error message): wider, and wrapped.
 * @property {number | undefined} [maxSheetRows] Rows of a sheet, header included (Excel's limit by default).
 * @property {number | undefined} [maxSheetBytes] Uncompressed bytes of a sheet's XML after which the next row starts
 *   a new sheet.
 * @property {number} [now] When the workbook says it was made and last changed, in ms since 1970 (the time of
 *   writing by default; a test sets it to compare two writes byte for byte).
 * @property {ReadonlyArray<Cell>} [measuredHeader] The header as given, when `header` is already through `text` (a
 *   table written on its own thread): the columns' widths are fitted to the text as given.
 * @property {string | undefined} [frontSheet] The name of a small sheet that `close` is given (a run's Summary):
 *   written last, once it is known, but listed first in the workbook and shown when the file opens.
 */

/**
 * A line of the front sheet: a heading (bold, filled), or cells whose first one may be a coloured status.
 * @typedef {object} FrontRow
 * @property {ReadonlyArray<Cell>} cells
 * @property {boolean} [heading]
 * @property {boolean} [status] The first cell is a row status, coloured as in the table.
 */

/** @typedef {(index: number, value: Cell) => number} StyleOf */

/** The front sheet of a run's report.xlsx; readers of the tool's workbooks pass over it to the table. */
export const summarySheetName = "Summary"

const excelMaxRows = 1_048_576
/** An entry's uncompressed size must stay under 4 GiB without ZIP64; a row or two past this still fits. */
const defaultMaxSheetBytes = 3.5 * 1024 ** 3
/**
 * Measured on a 200,000-row report: written alone, levels 1 to 3 take the same time (deflate runs beside the XML
 * building) and 3 is 8% smaller; in a whole `validate`, where the CSV parser and deflate share two cores with the
 * rest, level 1 is 4% faster (4.78 s against 4.97 s) for a file 9% larger. 5 and 6 are 10–20% smaller again but
 * deflate becomes the bottleneck (+30–50% time).
 */
const deflateLevel = 1

const ns = {
  main: "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
  r: "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
  rels: "http://schemas.openxmlformats.org/package/2006/relationships",
  types: "http://schemas.openxmlformats.org/package/2006/content-types"
}
const declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"

/** @param {string} text */
const escapeAttribute = (text) =>
  text.replace(/[&<>"]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&quot;"))

/**
 * XML 1.0 cannot carry control characters (but tab, CR, LF), lone surrogates or U+FFFE/U+FFFF: they are written as
 * Excel writes them, `_xHHHH_`, which Excel and LibreOffice turn back into the character. exceljs does not (neither
 * its streaming reader, nor `readFile`): our reader decodes them (XlsxCell.ts). As Excel does, a literal
 * `_xHHHH_` in the text is escaped (`_x005F_xHHHH_`), so that it reads back as itself in Excel and in our reader.
 * A CR is written as a character reference: XML parsers turn a literal CR LF into LF.
 */
const special = /[&<>\0-\x08\x0B-\x1F\uD800-\uDFFF\uFFFE\uFFFF]|_x[0-9A-Fa-f]{4}_/
const replaced =
  /[&<>\r]|[\0-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|_(?=x[0-9A-Fa-f]{4}_)/g
/** @type {Readonly<Record<string, string>>} */
const entities = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\r": "&#13;",
  _: "_x005F_"
}
/** @param {string} c */
const excelEscape = (c) => entities[c] ?? `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}_`

/**
 * Text as the content of an element.
 * @param {string} text
 * @returns {string}
 */
const escapeText = (text) => (special.test(text) ? text.replace(replaced, excelEscape) : text)

/**
 * Text whose spaces or line breaks a reader might otherwise trim. Marking only these (rather than every cell) keeps
 * a typical sheet 15% smaller once deflated, at no measurable cost.
 * @param {string} text
 */
const keepsSpace = (text) =>
  text.charCodeAt(0) <= 32 || text.charCodeAt(text.length - 1) <= 32 || text.includes("\n") || text.includes("\r") ||
  text.includes("\t")

/**
 * `A`, …, `Z`, `AA`, … for a 0-based column index.
 * @param {number} index
 * @returns {string}
 */
const columnLetters = (index) => {
  let letters = ""
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters
  }
  return letters
}

/**
 * A sheet name of at most 31 characters for the n-th sheet of a table: `name`, `name (2)`, …
 * @param {string} name
 * @param {number} n
 * @returns {string}
 */
export const nthSheetName = (name, n) => {
  if (n === 1) {
    return name
  }
  const suffix = ` (${n})`
  return `${name.slice(0, 31 - suffix.length)}${suffix}`
}

/**
 * A defined name's reference to a sheet: quoted, with `'` doubled.
 * @param {string} name
 */
const sheetReference = (name) => `'${name.replace(/'/g, "''")}'`

/**
 * Fixed cell formats, by index: default, header, then one per distinct status colour pair.
 * @param {ReadonlyArray<Colours>} colours
 * @returns {string}
 */
const styleSheet = (colours) => {
  /** @param {string} inner */
  const font = (inner) => `<font>${inner}<sz val="11"/><name val="Calibri"/><family val="2"/></font>`
  /** @param {string} argb */
  const fill = (argb) =>
    `<fill><patternFill patternType="solid"><fgColor rgb="${argb}"/><bgColor indexed="64"/></patternFill></fill>`
  const fonts = [font(""), font("<b/>"), ...colours.map((c) => font(`<color rgb="${c.font}"/>`))]
  const fills = [
    "<fill><patternFill patternType=\"none\"/></fill>",
    "<fill><patternFill patternType=\"gray125\"/></fill>",
    fill("FFD9E1F2"),
    ...colours.map((c) => fill(c.fill))
  ]
  const xfs = [
    "<xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>",
    "<xf numFmtId=\"0\" fontId=\"1\" fillId=\"2\" borderId=\"0\" xfId=\"0\" applyFont=\"1\" applyFill=\"1\"/>",
    ...colours.map((_, i) =>
      `<xf numFmtId="0" fontId="${i + 2}" fillId="${i + 3}" borderId="0" xfId="0" applyFont="1" applyFill="1"/>`
    ),
    // Last: wrapped text, for `wrapColumns`.
    "<xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyAlignment=\"1\"><alignment vertical=\"top\" wrapText=\"1\"/></xf>"
  ]
  return (`${declaration}<styleSheet xmlns="${ns.main}">` +
    `<fonts count="${fonts.length}">${fonts.join("")}</fonts>` +
    `<fills count="${fills.length}">${fills.join("")}</fills>` +
    "<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>" +
    "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>" +
    `<cellXfs count="${xfs.length}">${xfs.join("")}</cellXfs>` +
    "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>" +
    "</styleSheet>")
}

const headerStyle = 1

/**
 * The kinds of cell, as indices (a cell finds its cached text by arithmetic), and what each writes between its
 * style and its value.
 */
const cellKind = /** @type {const} */ ({ number: 0, boolean: 1, text: 2, spacedText: 3 })
/** @typedef {(typeof cellKind)[keyof typeof cellKind]} CellKind */
const cellTypeText = [
  "><v>",
  " t=\"b\"><v>",
  " t=\"inlineStr\"><is><t>",
  " t=\"inlineStr\"><is><t xml:space=\"preserve\">"
]

/** Column widths, in characters: fitted to the header and the first rows, within these bounds. */
const minWidth = 8
const maxWidth = 50
const wrapWidth = { min: 30, max: 80 }
/** Rows read before the first sheet opens, to fit its column widths. */
export const sampleRows = 100

/**
 * @param {Cell} value
 * @returns {number}
 */
const displayLength = (value) => {
  if (value === null || value === undefined) {
    return 0
  }
  const text = String(value)
  let longest = 0
  for (const line of text.split("\n")) {
    longest = Math.max(longest, line.length)
  }
  return longest
}

/** @param {number} sheets */
const contentTypes = (sheets) =>
  `${declaration}<Types xmlns="${ns.types}">` +
  "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>" +
  "<Default Extension=\"xml\" ContentType=\"application/xml\"/>" +
  "<Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>" +
  Array.from({ length: sheets }, (_, i) =>
    `<Override PartName="/xl/worksheets/sheet${
      i + 1
    }.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`).join("") +
  "<Override PartName=\"/xl/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>" +
  "<Override PartName=\"/docProps/core.xml\" ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/>" +
  "<Override PartName=\"/docProps/app.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.extended-properties+xml\"/>" +
  "</Types>"

const rootRels = `${declaration}<Relationships xmlns="${ns.rels}">` +
  `<Relationship Id="rId1" Type="${ns.r}/officeDocument" Target="xl/workbook.xml"/>` +
  "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties\" Target=\"docProps/core.xml\"/>" +
  `<Relationship Id="rId3" Type="${ns.r}/extended-properties" Target="docProps/app.xml"/>` +
  "</Relationships>"

/** @param {string} application */
const appXml = (application) =>
  `${declaration}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">` +
  `<Application>${escapeText(application)}</Application></Properties>`

/** @param {Date} d */
const w3cdtf = (d) => d.toISOString().replace(/\.\d{3}Z$/, "Z")

/**
 * `creator` is how the tool recognises its own files.
 * @param {string} creator
 * @param {Date} created
 * @param {Date} modified
 */
const coreXml = (creator, created, modified) =>
  `${declaration}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
  "xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/terms/\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">" +
  `<dc:creator>${escapeText(creator)}</dc:creator><cp:lastModifiedBy>${escapeText(creator)}</cp:lastModifiedBy>` +
  `<dcterms:created xsi:type="dcterms:W3CDTF">${w3cdtf(created)}</dcterms:created>` +
  `<dcterms:modified xsi:type="dcterms:W3CDTF">${w3cdtf(modified)}</dcterms:modified>` +
  "</cp:coreProperties>"

/**
 * The workbook's sheets, the n-th part being `sheetN.xml`; a front sheet (its part the last one) is listed first.
 * Only the table's sheets have a filter.
 * @param {ReadonlyArray<string>} names
 * @param {string | undefined} filter
 * @param {string | undefined} front
 * @param {boolean} titles
 */
const workbookXml = (names, filter, front, titles) => {
  const listed = front === undefined
    ? names.map((name, i) => ({ name, part: i + 1 }))
    : [{ name: front, part: names.length + 1 }, ...names.map((name, i) => ({ name, part: i + 1 }))]
  const offset = front === undefined ? 0 : 1
  const defined = names.flatMap((name, i) => [
    ...(filter === undefined ? [] : [
      `<definedName name="_xlnm._FilterDatabase" localSheetId="${i + offset}" hidden="1">${
        escapeText(`${sheetReference(name)}!${filter}`)
      }</definedName>`
    ]),
    // Printed, every page of a table repeats its header row.
    ...(titles
      ? [
        `<definedName name="_xlnm.Print_Titles" localSheetId="${i + offset}">${
          escapeText(`${sheetReference(name)}!$1:$1`)
        }</definedName>`
      ]
      : [])
  ])
  return `${declaration}<workbook xmlns="${ns.main}" xmlns:r="${ns.r}">` +
    "<bookViews><workbookView activeTab=\"0\"/></bookViews><sheets>" +
    listed.map(({ name, part }) => `<sheet name="${escapeAttribute(name)}" sheetId="${part}" r:id="rId${part}"/>`).join(
      ""
    ) +
    "</sheets>" +
    (defined.length === 0 ? "" : `<definedNames>${defined.join("")}</definedNames>`) +
    "</workbook>"
}

/**
 * How a sheet prints: fitted to the page's width (a table as wide as a few pages is spread over that many pages
 * rather than shrunk past reading), as many pages long as it needs (`tall`) or on one page, with the sheet's name
 * and the page number in the footer; a table prints its grid lines, as it shows them.
 * @param {ReadonlyArray<number>} widths
 * @param {"landscape" | "portrait"} orientation
 * @param {boolean} tall
 */
const printSetup = (widths, orientation, tall) => {
  // About 150 character widths fit across a landscape A4 or Letter page at 100%; shrinking below about two
  // thirds makes text hard to read, so a wider table is fitted to more pages across.
  const across = orientation === "landscape" ? 150 : 100
  const total = widths.reduce((a, b) => a + b, 0)
  const pagesWide = Math.max(1, Math.ceil(total / (across * 1.5)))
  return (tall ? "<printOptions gridLines=\"1\"/>" : "") +
    "<pageMargins left=\"0.4\" right=\"0.4\" top=\"0.5\" bottom=\"0.6\" header=\"0.3\" footer=\"0.3\"/>" +
    `<pageSetup orientation="${orientation}" fitToWidth="${pagesWide}" fitToHeight="${tall ? 0 : 1}"/>` +
    "<headerFooter><oddFooter>&amp;L&amp;A&amp;R&amp;P / &amp;N</oddFooter></headerFooter>"
}

/** Before a sheet's views: its print setup is a fit to pages (`printSetup`). */
const fitToPage = "<sheetPr><pageSetUpPr fitToPage=\"1\"/></sheetPr>"

/** @param {number} sheets */
const workbookRels = (sheets) =>
  `${declaration}<Relationships xmlns="${ns.rels}">` +
  Array.from({ length: sheets }, (_, i) =>
    `<Relationship Id="rId${i + 1}" Type="${ns.r}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join("") +
  `<Relationship Id="rId${sheets + 1}" Type="${ns.r}/styles" Target="styles.xml"/>` +
  "</Relationships>"

/**
 * One table as a workbook on `out`: `write` builds each row's XML as one string and hands it to the archive, and
 * answers a promise when the caller must wait before the next row. The styles are fixed at the start and cells
 * refer to them by index. `close` writes the workbook's parts and the ZIP directory; the caller then ends `out`.
 */
export class XlsxTable {
  /** @readonly @type {ZipStream} */
  #zip
  /** @readonly @type {ReadonlyArray<Cell>} */
  #header
  /** @readonly @type {TableOptions} */
  #options
  /** @readonly @type {Array<string>} */
  #letters
  /** @readonly @type {Array<string>} */
  #cellStarts = []
  /** @readonly @type {Array<string>} */
  #cellTypes = []
  /** Rows of the open sheet not yet handed to the archive. */
  #rows = new TextPieces()
  /** @readonly @type {ReadonlyMap<string, number>} */
  #statusStyles
  /** @readonly @type {number} */
  #maxRows
  /** @readonly @type {number} */
  #maxBytes
  /** @readonly @type {Date} */
  #created
  /** @readonly @type {Array<string>} */
  #sheetNames = []
  /** Rows of the open sheet, header included; 0 before the first sheet. */
  #row = 0
  /**
   * Rows held back until the first sheet opens (its column widths are fitted to them).
   * @type {Array<ReadonlyArray<Cell>> | undefined}
   */
  #sample = []
  /**
   * The sampled rows as given, for their widths.
   * @type {Array<ReadonlyArray<Cell>> | undefined}
   */
  #measured = []
  /** @type {ReadonlyArray<number> | undefined} */
  #widths
  /** @readonly @type {ReadonlySet<number>} */
  #wrap
  /** @readonly @type {number} */
  #wrapStyle

  /**
   * @param {import("node:stream").Writable} out
   * @param {ReadonlyArray<Cell>} header
   * @param {TableOptions} options
   */
  constructor(out, header, options) {
    this.#created = options.now === undefined ? new Date() : new Date(options.now)
    this.#zip = new ZipStream(out, deflateLevel, this.#created)
    this.#header = header
    this.#options = options
    this.#letters = header.map((_, i) => columnLetters(i))
    this.#maxRows = Math.max(2, Math.min(excelMaxRows, options.maxSheetRows ?? excelMaxRows))
    this.#maxBytes = options.maxSheetBytes ?? defaultMaxSheetBytes
    const distinct = [...new Set(Object.values(options.statusColours ?? {}))]
    this.#statusStyles = new Map(
      Object.entries(options.statusColours ?? {}).map(([status, c]) => [status, headerStyle + 1 + distinct.indexOf(c)])
    )
    this.#wrap = new Set(options.wrapColumns ?? [])
    this.#wrapStyle = headerStyle + 1 + distinct.length
    // The parts known from the start go first: a streaming reader meets the styles before the sheets.
    this.#zip.add("_rels/.rels", rootRels)
    this.#zip.add("docProps/app.xml", appXml(options.creator))
    this.#zip.add("xl/styles.xml", styleSheet(distinct))
  }

  /**
   * @param {number} index
   * @returns {string}
   */
  #letter(index) {
    return (this.#letters[index] ??= columnLetters(index))
  }

  /**
   * `<c r="B`: a cell of `column`, up to its row number.
   * @param {number} column
   * @returns {string}
   */
  #cellStart(column) {
    return (this.#cellStarts[column] ??= `<c r="${this.#letter(column)}`)
  }

  /**
   * What follows a cell's row number up to its value: the end of the reference, the style, the type.
   * @param {number} style
   * @param {CellKind} kind
   * @returns {string}
   */
  #cellType(style, kind) {
    const key = style * cellTypeText.length + kind
    return (this.#cellTypes[key] ??= `"${style === 0 ? "" : ` s="${style}"`}${cellTypeText[kind]}`)
  }

  /**
   * A cell that has a value (an empty one is no cell at all), from five strings: its column's start and its
   * style and type are cached, so a cell costs its text (escaped when it must be) and the joins.
   * @param {string | number | boolean} value
   * @param {number} column
   * @param {string} row
   * @param {number} style
   * @returns {string}
   */
  #cell(value, column, row, style) {
    const start = this.#cellStart(column) + row
    if (typeof value === "number" && Number.isFinite(value)) {
      return start + this.#cellType(style, cellKind.number) + String(value) + "</v></c>"
    }
    if (typeof value === "boolean") {
      return start + this.#cellType(style, cellKind.boolean) + (value ? "1" : "0") + "</v></c>"
    }
    // NaN and ±Infinity have no number form in a cell: they go as their text.
    const text = typeof value === "string" ? (this.#options.text?.(value) ?? value) : String(value)
    return start + this.#cellType(style, keepsSpace(text) ? cellKind.spacedText : cellKind.text) + escapeText(text) +
      "</t></is></c>"
  }

  /**
   * @param {TextPieces} out
   * @param {number} row
   * @param {ReadonlyArray<Cell>} cells
   * @param {StyleOf} styleOf
   */
  #rowXml(out, row, cells, styleOf) {
    const r = String(row)
    let xml = "<row r=\"" + r + "\">"
    for (let i = 0; i < cells.length; i++) {
      const value = cells[i]
      if (value !== null && value !== undefined && value !== "") {
        xml += this.#cell(value, i, r, styleOf(i, value))
      }
    }
    out.add(xml + "</row>")
  }

  /**
   * Adds a row to the open sheet: gathered with the rows before it and handed to the archive about 64 Ki
   * characters at a time; false when the caller should wait for `ready`.
   * @param {ReadonlyArray<Cell>} cells
   * @param {StyleOf} styleOf
   * @returns {boolean}
   */
  #writeRow(cells, styleOf) {
    this.#rowXml(this.#rows, this.#row, cells, styleOf)
    return this.#rows.chars < chunkChars || this.#handRows()
  }

  /** Hands the rows gathered so far to the archive, encoded piece by piece (no join); false when it must wait. */
  #handRows() {
    const chars = this.#rows.chars
    return this.#zip.writeBytes(this.#rows.takeBytes(), chars)
  }

  /**
   * Text of the open sheet after the rows gathered so far.
   * @param {string} text
   */
  #write(text) {
    if (this.#rows.chars > 0) {
      this.#handRows()
    }
    return this.#zip.write(text)
  }

  #filterRef() {
    return this.#options.autoFilter && this.#header.length > 0
      ? `$A$1:$${this.#letter(this.#header.length - 1)}$1`
      : undefined
  }

  #openSheet() {
    const number = this.#sheetNames.length + 1
    this.#sheetNames.push(nthSheetName(this.#options.sheetName, number))
    this.#zip.begin(`xl/worksheets/sheet${number}.xml`)
    const view = this.#options.freezeHeader
      ? "<pane ySplit=\"1\" topLeftCell=\"A2\" activePane=\"bottomLeft\" state=\"frozen\"/><selection pane=\"bottomLeft\" activeCell=\"A2\" sqref=\"A2\"/>"
      : ""
    const widths = this.#columnWidths().map((width, i) =>
      `<col min="${i + 1}" max="${i + 1}" width="${width}" customWidth="1"/>`
    )
    this.#row = 1
    this.#write(
      `${declaration}<worksheet xmlns="${ns.main}" xmlns:r="${ns.r}">${fitToPage}` +
        `<sheetViews><sheetView${
          number === 1 && this.#options.frontSheet === undefined ? " tabSelected=\"1\"" : ""
        } workbookViewId="0">${view}</sheetView></sheetViews>` +
        "<sheetFormatPr defaultRowHeight=\"15\"/>" +
        (widths.length > 0 ? `<cols>${widths.join("")}</cols>` : "") +
        "<sheetData>"
    )
    this.#writeRow(this.#header, () => headerStyle)
  }

  async #closeSheet() {
    const filter = this.#filterRef()
    this.#write(
      `</sheetData>${filter === undefined ? "" : `<autoFilter ref="${filter.replace(/\$/g, "")}"/>`}${
        printSetup(this.#columnWidths(), "landscape", true)
      }</worksheet>`
    )
    await this.#zip.end()
  }

  /** @type {StyleOf} */
  #statusStyle = (index, value) =>
    index === this.#options.statusColumn
      ? (this.#statusStyles.get(String(value)) ?? 0)
      : this.#wrap.has(index)
      ? this.#wrapStyle
      : 0

  /** Widths fitted to the header and the rows sampled before the first sheet opened (every sheet uses them). */
  #columnWidths() {
    if (this.#widths !== undefined) {
      return this.#widths
    }
    const header = this.#options.measuredHeader ?? this.#header
    const rows = [header, ...(this.#measured ?? [])]
    this.#widths = this.#header.map((_, i) => {
      let longest = 0
      for (const row of rows) {
        longest = Math.max(longest, displayLength(row[i]))
      }
      // The header's filter button takes about two characters.
      const fitted = Math.max(longest, displayLength(header[i]) + 3) + 1
      return this.#wrap.has(i)
        ? Math.min(wrapWidth.max, Math.max(wrapWidth.min, fitted))
        : Math.min(maxWidth, Math.max(minWidth, fitted))
    })
    return this.#widths
  }

  /**
   * Opens the first sheet and writes the sampled rows; a promise when the caller must wait.
   * @returns {Promise<void> | undefined}
   */
  #flushSample() {
    const sample = this.#sample ?? []
    this.#columnWidths()
    this.#sample = undefined
    this.#measured = undefined
    this.#openSheet()
    for (let i = 0; i < sample.length; i++) {
      const wait = this.#append(sample[i])
      if (wait !== undefined) {
        return (async () => {
          await wait
          for (let j = i + 1; j < sample.length; j++) {
            await this.#append(sample[j])
          }
        })()
      }
    }
    return undefined
  }

  /**
   * @param {ReadonlyArray<Cell>} cells
   * @returns {Promise<void> | undefined}
   */
  #append(cells) {
    // A sheet always takes its first row, whatever its size.
    if (this.#row > 1 && (this.#row >= this.#maxRows || this.#zip.entrySize + this.#rows.chars >= this.#maxBytes)) {
      return this.#nextSheet(cells)
    }
    this.#row++
    return this.#writeRow(cells, this.#statusStyle) ? undefined : this.#zip.ready()
  }

  /**
   * Appends one row; a promise when the caller must wait for it (the file is behind, or a new sheet begins).
   * `measured` is the row as given when `cells` are already through `text` (the columns' widths are fitted to it).
   * @param {ReadonlyArray<Cell>} cells
   * @param {ReadonlyArray<Cell>} [measured]
   * @returns {Promise<void> | undefined}
   */
  write(cells, measured = cells) {
    if (this.#sample === undefined) {
      return this.#append(cells)
    }
    this.#sample.push(cells)
    this.#measured?.push(measured)
    return this.#sample.length < sampleRows ? undefined : this.#flushSample()
  }

  /**
   * @param {ReadonlyArray<Cell>} cells
   * @returns {Promise<void>}
   */
  async #nextSheet(cells) {
    await this.#closeSheet()
    this.#openSheet()
    this.#row++
    if (!this.#writeRow(cells, this.#statusStyle)) {
      await this.#zip.ready()
    }
  }

  /**
   * The front sheet: two wide columns and a narrow third, each line as given, the first shown when opened.
   * @param {ReadonlyArray<FrontRow>} rows
   * @returns {string}
   */
  #frontSheetXml(rows) {
    const columns = [34, 60, 14]
    const widths = columns.map((width, i) => `<col min="${i + 1}" max="${i + 1}" width="${width}" customWidth="1"/>`)
    const xml = new TextPieces()
    xml.add(
      `${declaration}<worksheet xmlns="${ns.main}" xmlns:r="${ns.r}">${fitToPage}` +
        "<sheetViews><sheetView tabSelected=\"1\" workbookViewId=\"0\"/></sheetViews>" +
        `<sheetFormatPr defaultRowHeight="15"/><cols>${widths.join("")}</cols><sheetData>`
    )
    rows.forEach((line, i) =>
      this.#rowXml(xml, i + 1, line.cells, (c, value) =>
        line.heading === true
          ? headerStyle
          : line.status === true && c === 0
          ? (this.#statusStyles.get(String(value)) ?? 0)
          : 0)
    )
    // Printed, the summary is one page: its labels beside their values.
    xml.add(`</sheetData>${printSetup(columns, "portrait", false)}</worksheet>`)
    return xml.take()
  }

  /**
   * Finishes the table; `front` is the front sheet's lines when the options name one.
   * @param {ReadonlyArray<FrontRow>} [front]
   * @returns {Promise<void>}
   */
  async close(front = []) {
    if (this.#sample !== undefined) {
      await this.#flushSample()
    }
    await this.#closeSheet()
    const names = this.#sheetNames
    const frontName = this.#options.frontSheet
    const parts = names.length + (frontName === undefined ? 0 : 1)
    if (frontName !== undefined) {
      this.#zip.add(`xl/worksheets/sheet${parts}.xml`, this.#frontSheetXml(front))
    }
    this.#zip.add(
      "docProps/core.xml",
      coreXml(
        this.#options.creator,
        this.#created,
        this.#options.now === undefined ? new Date() : new Date(this.#options.now)
      )
    )
    this.#zip.add("xl/workbook.xml", workbookXml(names, this.#filterRef(), frontName, this.#header.length > 0))
    this.#zip.add("xl/_rels/workbook.xml.rels", workbookRels(parts))
    this.#zip.add("[Content_Types].xml", contentTypes(parts))
    this.#zip.finish()
  }

  destroy() {
    this.#zip.destroy()
  }
}
