/**
 * Helpers of the file-layer tests: a temporary directory per test, files written byte for byte (ZIP archives
 * too, hostile ones included), and a source opened and read whole (or its InputError).
 */
import { Chunk, Effect, Either, Stream } from "effect"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { crc32, deflateRawSync } from "node:zlib"
import type { InputError } from "../../src/Errors.js"
import { openSource, type ReadOptions, type Source, type SourceRow } from "../../src/files/Read.js"
import { signature } from "../../src/files/Zip.js"
import { temporaryDir } from "../support.js"

export const root = fileURLToPath(new URL("../..", import.meta.url))
export const bin = Path.join(root, "dist/bin.js")

/** A temporary directory removed with the test's scope. */
export const tempDir = temporaryDir("fsm-files-")

export const auto: ReadOptions = { encoding: "auto", delimiter: "auto" }

/** Writes `content` (a string is written as UTF-8, without BOM) at `dir/name`; returns the path. */
export const put = (dir: string, name: string, content: string | Uint8Array): string => {
  const path = Path.join(dir, name)
  writeFileSync(path, content)
  return path
}

/** Windows-1252 bytes of a string (every character used in the tests exists in Windows-1252 and Latin-1 alike). */
export const cp1252 = (text: string): Uint8Array => Buffer.from(text, "latin1")

export interface Read {
  readonly source: Source
  readonly rows: ReadonlyArray<SourceRow>
}

export const readAll = (file: string, options: Partial<ReadOptions> = {}): Effect.Effect<Read, InputError> =>
  Effect.gen(function*() {
    const source = yield* openSource(file, { ...auto, ...options })
    const rows = Chunk.toReadonlyArray(yield* Stream.runCollect(source.rows))
    return { source, rows }
  })

/** The InputError a read ends with; fails the test when the file reads fine. */
export const readError = (file: string, options: Partial<ReadOptions> = {}): Effect.Effect<InputError> =>
  Effect.either(readAll(file, options)).pipe(
    Effect.flatMap((result) =>
      Either.isLeft(result)
        ? Effect.succeed(result.left)
        : Effect.dieMessage(`expected ${file} to be refused, but it read ${result.right.rows.length} rows`)
    )
  )

/** One entry of a hand-made ZIP archive (`zipArchive`). */
export interface HandEntry {
  readonly name: string
  readonly data: string | Uint8Array
  /** Deflated (the default) or stored. */
  readonly stored?: boolean
  /** The bytes the archive holds for the entry, instead of `data` packed (damage); sizes and CRC stay those of `data`. */
  readonly body?: Buffer
  /** Declared sizes, when they are to lie. */
  readonly declaredSize?: number
  /** false: a local entry that the central directory does not list (a "ghost"). */
  readonly listed?: boolean
}

/**
 * A ZIP archive built byte by byte, as a hostile or broken writer could make it: local entries, then the
 * central directory of the listed ones, then its end record.
 */
export const zipArchive = (entries: ReadonlyArray<HandEntry>): Buffer => {
  const locals: Array<Buffer> = []
  const centrals: Array<Buffer> = []
  let offset = 0
  for (const e of entries) {
    const data = typeof e.data === "string" ? Buffer.from(e.data, "utf8") : Buffer.from(e.data)
    const body = e.body ?? (e.stored === true ? data : deflateRawSync(data))
    const name = Buffer.from(e.name, "utf8")
    const size = e.declaredSize ?? data.length
    const fields = (b: Buffer, at: number) => {
      b.writeUInt16LE(20, at) // version needed
      b.writeUInt16LE(0x0800, at + 2) // UTF-8 names
      b.writeUInt16LE(e.stored === true ? 0 : 8, at + 4)
      b.writeUInt16LE(0, at + 6)
      b.writeUInt16LE(0x21, at + 8)
      b.writeUInt32LE(crc32(data), at + 10)
      b.writeUInt32LE(body.length, at + 14)
      b.writeUInt32LE(size, at + 18)
      b.writeUInt16LE(name.length, at + 22)
    }
    const local = Buffer.alloc(30)
    local.writeUInt32LE(signature.local, 0)
    fields(local, 4)
    if (e.listed !== false) {
      const central = Buffer.alloc(46)
      central.writeUInt32LE(signature.central, 0)
      central.writeUInt16LE(20, 4) // made by
      fields(central, 6)
      central.writeUInt32LE(offset, 42)
      centrals.push(central, name)
    }
    locals.push(local, name, body)
    offset += local.length + name.length + body.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(signature.end, 0)
  const count = entries.filter((e) => e.listed !== false).length
  end.writeUInt16LE(count, 8)
  end.writeUInt16LE(count, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}

const spreadsheetNs = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
const relationshipNs = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

/** A sheet's XML from its rows: each row its number and its cells' inline text, from column A. */
export const sheetXml = (rows: ReadonlyArray<readonly [number, ReadonlyArray<string>]>): string =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="${spreadsheetNs}"><sheetData>` +
  rows
    .map(
      ([r, cells]) =>
        `<row r="${r}">${
          cells.map((text, i) => `<c r="${String.fromCharCode(65 + i)}${r}" t="inlineStr"><is><t>${text}</t></is></c>`)
            .join("")
        }</row>`
    )
    .join("") +
  "</sheetData></worksheet>"

/**
 * The entries of a minimal one-sheet workbook (sheet "customers"): as Excel lays them out, the sheet before the
 * workbook parts. `sheet` replaces the sheet's entry, `extra` comes after the sheet.
 */
export const workbookEntries = (
  sheet: Partial<HandEntry> & { readonly data: string | Uint8Array },
  extra: ReadonlyArray<HandEntry> = []
): Array<HandEntry> => [
  {
    name: "[Content_Types].xml",
    data:
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>"
  },
  { ...sheet, name: sheet.name ?? "xl/worksheets/sheet1.xml" },
  ...extra,
  {
    name: "xl/workbook.xml",
    data:
      `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${spreadsheetNs}" xmlns:r="${relationshipNs}"><sheets><sheet name="customers" sheetId="1" r:id="rId1"/></sheets></workbook>`
  },
  {
    name: "xl/_rels/workbook.xml.rels",
    data:
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${relationshipNs}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`
  }
]
