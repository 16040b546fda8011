/**
 * A streaming XLSX writer of our own: one table, written row by row as a sheet's XML straight into a ZIP stream,
 * with nothing kept per row (exceljs's writer costs about as much per cell in style matching and XML machinery as
 * the rest of a run, and its memory grows with the rows). Two parts: a ZIP archive written front to back onto a
 * Node stream, and the workbook's parts (a table that outgrows a sheet goes on in a new sheet).
 */
import type { TransformOptions, Writable } from "node:stream"
import { crc32, createDeflateRaw, type DeflateRaw, deflateRawSync, type ZlibOptions } from "node:zlib"
import type { Cell } from "./Cell.js"
import { TextPieces } from "./Pieces.js"
import { signature } from "./Zip.js"

// --- ZIP ---------------------------------------------------------------------------------------------------------

/** Bit 3: sizes and CRC follow the data; bit 11: UTF-8 names. */
const flags = 0x0808
const deflated = 8
const version = 20
/** Without ZIP64, offsets, sizes and the directory's own position must fit in 32 bits. */
const maxOffset = 0xffffffff

/** Thrown (and kept) when the archive cannot be written; `tooLarge` when it would need ZIP64. */
export class ZipError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false
  ) {
    super(message)
  }
}

const dosDateTime = (d: Date) => ({
  time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
  date: (Math.max(0, d.getFullYear() - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate()
})

/**
 * The archive with every entry's modification time set to `date`: an archive built by exceljs stamps its entries
 * with the time of writing, so the same workbook built twice differs only there. Returns a copy.
 */
export const withEntryTimes = (archive: Uint8Array, date: Date): Buffer => {
  const bytes = Buffer.from(archive)
  const { date: day, time } = dosDateTime(date)
  const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new ZipError("not a ZIP archive: no end of central directory")
  const count = bytes.readUInt16LE(eocd + 10)
  let at = bytes.readUInt32LE(eocd + 16)
  for (let i = 0; i < count; i++) {
    if (bytes.readUInt32LE(at) !== signature.central) throw new ZipError("damaged ZIP central directory")
    bytes.writeUInt16LE(time, at + 12)
    bytes.writeUInt16LE(day, at + 14)
    const local = bytes.readUInt32LE(at + 42)
    if (bytes.readUInt32LE(local) !== signature.local) throw new ZipError("damaged ZIP local header")
    bytes.writeUInt16LE(time, local + 10)
    bytes.writeUInt16LE(day, local + 12)
    at += 46 + bytes.readUInt16LE(at + 28) + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32)
  }
  return bytes
}

interface Entry {
  readonly name: Buffer
  readonly offset: number
  crc: number
  compressed: number
  size: number
}

/** The entry being streamed: text is gathered into chunks of about this many characters before deflate sees it. */
const chunkChars = 64 * 1024

/**
 * A ZIP archive written front to back onto `out`: entries deflated one at a time, each with a data descriptor
 * (sizes known only at its end), then the central directory. Only one entry is open at a time.
 */
class ZipStream {
  readonly #out: Writable
  readonly #level: number
  readonly #stamp = dosDateTime(new Date())
  readonly #entries: Array<Entry> = []
  #offset = 0
  #failure: Error | undefined
  #deflate: DeflateRaw | undefined
  #entry: Entry | undefined
  #pending = ""

  constructor(out: Writable, level: number) {
    this.#out = out
    this.#level = level
    out.on("error", (error) => this.#fail(error))
  }

  #fail(error: Error) {
    this.#failure ??= error
    this.#deflate?.destroy()
  }

  /** Why the archive cannot go on. A file stream that fails is `errored` at once but says so by event only later. */
  get #problem(): Error | undefined {
    return this.#failure ?? this.#out.errored ?? this.#deflate?.errored ?? undefined
  }

  #push(data: Buffer): boolean {
    this.#offset += data.length
    if (this.#offset >= maxOffset) {
      this.#fail(new ZipError("the workbook would pass 4 GiB, the most an .xlsx without ZIP64 can hold", true))
    }
    return this.#out.write(data)
  }

  #localHeader(entry: Entry): Buffer {
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

  #descriptor(entry: Entry): Buffer {
    const descriptor = Buffer.alloc(16)
    descriptor.writeUInt32LE(signature.descriptor, 0)
    descriptor.writeUInt32LE(entry.crc, 4)
    descriptor.writeUInt32LE(entry.compressed, 8)
    descriptor.writeUInt32LE(entry.size, 12)
    return descriptor
  }

  #start(name: string): Entry {
    if (this.#problem !== undefined) throw this.#problem
    if (this.#entry !== undefined) {
      throw new ZipError(`cannot start ${name}: ${this.#entry.name.toString("utf8")} is still open`)
    }
    const entry: Entry = { name: Buffer.from(name, "utf8"), offset: this.#offset, crc: 0, compressed: 0, size: 0 }
    this.#entries.push(entry)
    this.#push(this.#localHeader(entry))
    return entry
  }

  /** A small entry, deflated at once. */
  add(name: string, text: string): void {
    const entry = this.#start(name)
    const data = Buffer.from(text, "utf8")
    const compressed = deflateRawSync(data, { level: this.#level })
    entry.crc = crc32(data)
    entry.size = data.length
    entry.compressed = compressed.length
    this.#push(compressed)
    this.#push(this.#descriptor(entry))
  }

  /** Starts an entry streamed with `write`; `end` finishes it. */
  begin(name: string): void {
    const entry = this.#start(name)
    // Room for a few chunks, so that the next one is ready when deflate finishes one (zlib streams take a
    // Transform's options too; @types/node does not say so).
    const options: ZlibOptions & TransformOptions = {
      level: this.#level,
      chunkSize: 64 * 1024,
      writableHighWaterMark: 4 * chunkChars
    }
    const deflate = createDeflateRaw(options)
    deflate.on("data", (chunk: Buffer) => {
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
  get entrySize(): number {
    return (this.#entry?.size ?? 0) + this.#pending.length
  }

  /** Appends to the open entry; false when the caller should wait for `ready` before writing more. */
  write(text: string): boolean {
    if (this.#problem !== undefined) return false
    this.#pending += text
    if (this.#pending.length < chunkChars) return true
    this.#flush()
    return false
  }

  #flush(): void {
    const entry = this.#entry!
    const data = Buffer.from(this.#pending, "utf8")
    this.#pending = ""
    entry.crc = crc32(data, entry.crc)
    entry.size += data.length
    if (entry.size >= maxOffset) {
      this.#fail(new ZipError(`${entry.name.toString("utf8")} would pass 4 GiB uncompressed`, true))
    }
    this.#deflate!.write(data)
  }

  /**
   * Resolves once the open entry takes data again; rejects when the archive has failed. Even when deflate's
   * buffer has room, it waits for a turn of the event loop: deflate hands each finished chunk back on the main
   * thread and only then starts the next one, so a writer that never yields leaves it idle.
   */
  ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      const deflate = this.#deflate
      let turn: NodeJS.Immediate | undefined
      const settle = () => {
        if (turn !== undefined) clearImmediate(turn)
        deflate?.off("drain", settle).off("close", settle)
        this.#out.off("close", settle).off("error", settle)
        if (this.#problem !== undefined) reject(this.#problem)
        else if (deflate === undefined || deflate.destroyed || this.#out.destroyed) {
          reject(new ZipError("the archive was closed while it was written"))
        } else resolve()
      }
      if (this.#problem !== undefined || deflate === undefined) return settle()
      if (!deflate.writableNeedDrain) turn = setImmediate(settle)
      else deflate.on("drain", settle)
      deflate.on("close", settle)
      this.#out.on("close", settle).on("error", settle)
    })
  }

  /** Finishes the open entry: the rest of its data, then its descriptor. */
  async end(): Promise<void> {
    const deflate = this.#deflate
    const entry = this.#entry
    if (deflate === undefined || entry === undefined) return
    // A failed archive's deflate is already destroyed: its events are past.
    if (this.#problem !== undefined) throw this.#problem
    if (this.#pending.length > 0) this.#flush()
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        deflate.off("end", done).off("close", done)
        this.#out.off("close", done)
        if (this.#problem !== undefined) reject(this.#problem)
        else if (!deflate.readableEnded) reject(new ZipError("the archive was closed while it was written"))
        else resolve()
      }
      deflate.on("end", done).on("close", done)
      this.#out.on("close", done)
      deflate.end()
    })
    this.#deflate = undefined
    this.#entry = undefined
    this.#push(this.#descriptor(entry))
    if (this.#problem !== undefined) throw this.#problem
  }

  /** The central directory and its end record; the caller ends `out`. */
  finish(): void {
    if (this.#problem !== undefined) throw this.#problem
    if (this.#entry !== undefined) throw new ZipError(`${this.#entry.name.toString("utf8")} is still open`)
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
    if (this.#problem !== undefined) throw this.#problem
  }

  /** Stops at once (the caller discards the file). */
  destroy(): void {
    this.#deflate?.destroy()
    this.#deflate = undefined
    this.#entry = undefined
  }
}

// --- XLSX --------------------------------------------------------------------------------------------------------

interface Colours {
  /** ARGB, as `FFC6EFCE`. */
  readonly fill: string
  readonly font: string
}

interface TableOptions {
  /** Already valid for Excel (at most 31 characters, none of `[]:*?/\`). */
  readonly sheetName: string
  readonly creator: string
  readonly freezeHeader: boolean
  readonly autoFilter: boolean
  /** 0-based column whose text picks the cell's colours in `statusColours`. */
  readonly statusColumn?: number | undefined
  readonly statusColours?: Readonly<Record<string, Colours>>
  /** Applied to every text cell (the formula guard). */
  readonly text?: (text: string) => string
  /** 0-based columns of long text (an error message): wider, and wrapped. */
  readonly wrapColumns?: ReadonlyArray<number>
  /** Rows of a sheet, header included (Excel's limit by default). */
  readonly maxSheetRows?: number | undefined
  /** Uncompressed bytes of a sheet's XML after which the next row starts a new sheet. */
  readonly maxSheetBytes?: number | undefined
  /**
   * The name of a small sheet that `close` is given (a run's Summary): written last, once it is known, but listed
   * first in the workbook and shown when the file opens.
   */
  readonly frontSheet?: string | undefined
}

/** The front sheet of a run's report.xlsx; readers of the tool's workbooks pass over it to the table. */
export const summarySheetName = "Summary"

/** A line of the front sheet: a heading (bold, filled), or cells whose first one may be a coloured status. */
export interface FrontRow {
  readonly cells: ReadonlyArray<Cell>
  readonly heading?: boolean
  /** The first cell is a row status, coloured as in the table. */
  readonly status?: boolean
}

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

const escapeAttribute = (text: string) =>
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
const entities: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\r": "&#13;",
  _: "_x005F_"
}
const excelEscape = (c: string) => entities[c] ?? `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}_`

/** Text as the content of an element. */
const escapeText = (text: string): string => (special.test(text) ? text.replace(replaced, excelEscape) : text)

/**
 * Text whose spaces or line breaks a reader might otherwise trim. Marking only these (rather than every cell) keeps
 * a typical sheet 15% smaller once deflated, at no measurable cost.
 */
const keepsSpace = (text: string) =>
  text.charCodeAt(0) <= 32 || text.charCodeAt(text.length - 1) <= 32 || text.includes("\n") || text.includes("\r") ||
  text.includes("\t")

/** `A`, …, `Z`, `AA`, … for a 0-based column index. */
const columnLetters = (index: number): string => {
  let letters = ""
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters
  }
  return letters
}

/** A sheet name of at most 31 characters for the n-th sheet of a table: `name`, `name (2)`, … */
export const nthSheetName = (name: string, n: number): string => {
  if (n === 1) return name
  const suffix = ` (${n})`
  return `${name.slice(0, 31 - suffix.length)}${suffix}`
}

/** A defined name's reference to a sheet: quoted, with `'` doubled. */
const sheetReference = (name: string) => `'${name.replace(/'/g, "''")}'`

/** Fixed cell formats, by index: default, header, then one per distinct status colour pair. */
const styleSheet = (colours: ReadonlyArray<Colours>): string => {
  const font = (inner: string) => `<font>${inner}<sz val="11"/><name val="Calibri"/><family val="2"/></font>`
  const fill = (argb: string) =>
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
  return (
    `${declaration}<styleSheet xmlns="${ns.main}">` +
    `<fonts count="${fonts.length}">${fonts.join("")}</fonts>` +
    `<fills count="${fills.length}">${fills.join("")}</fills>` +
    "<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>" +
    "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>" +
    `<cellXfs count="${xfs.length}">${xfs.join("")}</cellXfs>` +
    "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>" +
    "</styleSheet>"
  )
}

const headerStyle = 1

/**
 * The kinds of cell, as indices (a cell finds its cached text by arithmetic), and what each writes between its
 * style and its value.
 */
const cellKind = { number: 0, boolean: 1, text: 2, spacedText: 3 } as const
type CellKind = (typeof cellKind)[keyof typeof cellKind]
const cellTypeText: ReadonlyArray<string> = [
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
const sampleRows = 100

const displayLength = (value: Cell): number => {
  if (value === null || value === undefined) return 0
  const text = String(value)
  let longest = 0
  for (const line of text.split("\n")) longest = Math.max(longest, line.length)
  return longest
}

const contentTypes = (sheets: number) =>
  `${declaration}<Types xmlns="${ns.types}">` +
  "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>" +
  "<Default Extension=\"xml\" ContentType=\"application/xml\"/>" +
  "<Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>" +
  Array.from(
    { length: sheets },
    (_, i) =>
      `<Override PartName="/xl/worksheets/sheet${
        i + 1
      }.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`
  ).join("") +
  "<Override PartName=\"/xl/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>" +
  "<Override PartName=\"/docProps/core.xml\" ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/>" +
  "<Override PartName=\"/docProps/app.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.extended-properties+xml\"/>" +
  "</Types>"

const rootRels = `${declaration}<Relationships xmlns="${ns.rels}">` +
  `<Relationship Id="rId1" Type="${ns.r}/officeDocument" Target="xl/workbook.xml"/>` +
  "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties\" Target=\"docProps/core.xml\"/>" +
  `<Relationship Id="rId3" Type="${ns.r}/extended-properties" Target="docProps/app.xml"/>` +
  "</Relationships>"

const appXml = (application: string) =>
  `${declaration}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">` +
  `<Application>${escapeText(application)}</Application></Properties>`

const w3cdtf = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z")

/** `creator` is how the tool recognises its own files. */
const coreXml = (creator: string, created: Date, modified: Date) =>
  `${declaration}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
  "xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/terms/\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">" +
  `<dc:creator>${escapeText(creator)}</dc:creator><cp:lastModifiedBy>${escapeText(creator)}</cp:lastModifiedBy>` +
  `<dcterms:created xsi:type="dcterms:W3CDTF">${w3cdtf(created)}</dcterms:created>` +
  `<dcterms:modified xsi:type="dcterms:W3CDTF">${w3cdtf(modified)}</dcterms:modified>` +
  "</cp:coreProperties>"

/**
 * The workbook's sheets, the n-th part being `sheetN.xml`; a front sheet (its part the last one) is listed first.
 * Only the table's sheets have a filter.
 */
const workbookXml = (
  names: ReadonlyArray<string>,
  filter: string | undefined,
  front: string | undefined,
  titles: boolean
) => {
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
 */
const printSetup = (
  widths: ReadonlyArray<number>,
  orientation: "landscape" | "portrait",
  tall: boolean
) => {
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

const workbookRels = (sheets: number) =>
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
  readonly #zip: ZipStream
  readonly #header: ReadonlyArray<Cell>
  readonly #options: TableOptions
  readonly #letters: Array<string>
  readonly #cellStarts: Array<string> = []
  readonly #cellTypes: Array<string> = []
  /** Rows of the open sheet not yet handed to the archive. */
  readonly #rows = new TextPieces()
  readonly #statusStyles: ReadonlyMap<string, number>
  readonly #maxRows: number
  readonly #maxBytes: number
  readonly #created = new Date()
  readonly #sheetNames: Array<string> = []
  /** Rows of the open sheet, header included; 0 before the first sheet. */
  #row = 0
  /** Rows held back until the first sheet opens (its column widths are fitted to them). */
  #sample: Array<ReadonlyArray<Cell>> | undefined = []
  #widths: ReadonlyArray<number> | undefined
  readonly #wrap: ReadonlySet<number>
  readonly #wrapStyle: number

  constructor(out: Writable, header: ReadonlyArray<Cell>, options: TableOptions) {
    this.#zip = new ZipStream(out, deflateLevel)
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

  #letter(index: number): string {
    return (this.#letters[index] ??= columnLetters(index))
  }

  /** `<c r="B`: a cell of `column`, up to its row number. */
  #cellStart(column: number): string {
    return (this.#cellStarts[column] ??= `<c r="${this.#letter(column)}`)
  }

  /** What follows a cell's row number up to its value: the end of the reference, the style, the type. */
  #cellType(style: number, kind: CellKind): string {
    const key = style * cellTypeText.length + kind
    return (this.#cellTypes[key] ??= `"${style === 0 ? "" : ` s="${style}"`}${cellTypeText[kind]}`)
  }

  /**
   * A cell that has a value (an empty one is no cell at all), from five strings: its column's start and its
   * style and type are cached, so a cell costs its text (escaped when it must be) and the joins.
   */
  #cell(value: string | number | boolean, column: number, row: string, style: number): string {
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

  #rowXml(out: TextPieces, row: number, cells: ReadonlyArray<Cell>, styleOf: (i: number, value: Cell) => number) {
    const r = String(row)
    let xml = "<row r=\"" + r + "\">"
    for (let i = 0; i < cells.length; i++) {
      const value = cells[i]
      if (value !== null && value !== undefined && value !== "") xml += this.#cell(value, i, r, styleOf(i, value))
    }
    out.add(xml + "</row>")
  }

  /**
   * Adds a row to the open sheet: gathered with the rows before it and handed to the archive about 64 Ki
   * characters at a time; false when the caller should wait for `ready`.
   */
  #writeRow(cells: ReadonlyArray<Cell>, styleOf: (index: number, value: Cell) => number): boolean {
    this.#rowXml(this.#rows, this.#row, cells, styleOf)
    return this.#rows.chars < chunkChars || this.#zip.write(this.#rows.take())
  }

  /** Text of the open sheet after the rows gathered so far. */
  #write(text: string): boolean {
    if (this.#rows.chars > 0) this.#zip.write(this.#rows.take())
    return this.#zip.write(text)
  }

  #filterRef(): string | undefined {
    return this.#options.autoFilter && this.#header.length > 0
      ? `$A$1:$${this.#letter(this.#header.length - 1)}$1`
      : undefined
  }

  #openSheet(): void {
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

  async #closeSheet(): Promise<void> {
    const filter = this.#filterRef()
    this.#write(
      `</sheetData>${filter === undefined ? "" : `<autoFilter ref="${filter.replace(/\$/g, "")}"/>`}${
        printSetup(this.#columnWidths(), "landscape", true)
      }</worksheet>`
    )
    await this.#zip.end()
  }

  readonly #statusStyle = (index: number, value: Cell): number =>
    index === this.#options.statusColumn
      ? (this.#statusStyles.get(String(value)) ?? 0)
      : this.#wrap.has(index)
      ? this.#wrapStyle
      : 0

  /** Widths fitted to the header and the rows sampled before the first sheet opened (every sheet uses them). */
  #columnWidths(): ReadonlyArray<number> {
    if (this.#widths !== undefined) return this.#widths
    const rows = [this.#header, ...(this.#sample ?? [])]
    this.#widths = this.#header.map((_, i) => {
      let longest = 0
      for (const row of rows) longest = Math.max(longest, displayLength(row[i]))
      // The header's filter button takes about two characters.
      const fitted = Math.max(longest, displayLength(this.#header[i]) + 3) + 1
      return this.#wrap.has(i)
        ? Math.min(wrapWidth.max, Math.max(wrapWidth.min, fitted))
        : Math.min(maxWidth, Math.max(minWidth, fitted))
    })
    return this.#widths
  }

  /** Opens the first sheet and writes the sampled rows; a promise when the caller must wait. */
  #flushSample(): Promise<void> | undefined {
    const sample = this.#sample ?? []
    this.#columnWidths()
    this.#sample = undefined
    this.#openSheet()
    for (let i = 0; i < sample.length; i++) {
      const wait = this.#append(sample[i]!)
      if (wait !== undefined) {
        return (async () => {
          await wait
          for (let j = i + 1; j < sample.length; j++) await this.#append(sample[j]!)
        })()
      }
    }
    return undefined
  }

  #append(cells: ReadonlyArray<Cell>): Promise<void> | undefined {
    // A sheet always takes its first row, whatever its size.
    if (this.#row > 1 && (this.#row >= this.#maxRows || this.#zip.entrySize + this.#rows.chars >= this.#maxBytes)) {
      return this.#nextSheet(cells)
    }
    this.#row++
    return this.#writeRow(cells, this.#statusStyle) ? undefined : this.#zip.ready()
  }

  /** Appends one row; a promise when the caller must wait for it (the file is behind, or a new sheet begins). */
  write(cells: ReadonlyArray<Cell>): Promise<void> | undefined {
    if (this.#sample === undefined) return this.#append(cells)
    this.#sample.push(cells)
    return this.#sample.length < sampleRows ? undefined : this.#flushSample()
  }

  async #nextSheet(cells: ReadonlyArray<Cell>): Promise<void> {
    await this.#closeSheet()
    this.#openSheet()
    this.#row++
    if (!this.#writeRow(cells, this.#statusStyle)) await this.#zip.ready()
  }

  /** The front sheet: two wide columns and a narrow third, each line as given, the first shown when opened. */
  #frontSheetXml(rows: ReadonlyArray<FrontRow>): string {
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

  /** Finishes the table; `front` is the front sheet's lines when the options name one. */
  async close(front: ReadonlyArray<FrontRow> = []): Promise<void> {
    if (this.#sample !== undefined) await this.#flushSample()
    await this.#closeSheet()
    const names = this.#sheetNames
    const frontName = this.#options.frontSheet
    const parts = names.length + (frontName === undefined ? 0 : 1)
    if (frontName !== undefined) this.#zip.add(`xl/worksheets/sheet${parts}.xml`, this.#frontSheetXml(front))
    this.#zip.add("docProps/core.xml", coreXml(this.#options.creator, this.#created, new Date()))
    this.#zip.add("xl/workbook.xml", workbookXml(names, this.#filterRef(), frontName, this.#header.length > 0))
    this.#zip.add("xl/_rels/workbook.xml.rels", workbookRels(parts))
    this.#zip.add("[Content_Types].xml", contentTypes(parts))
    this.#zip.finish()
  }

  destroy(): void {
    this.#zip.destroy()
  }
}
