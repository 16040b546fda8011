/**
 * Reading an .xlsx's ZIP archive through yauzl: exactly the entries its central directory lists (a local entry
 * that the directory does not list is never read, as `unzip` and every spreadsheet ignore it), each inflated to
 * exactly the size the directory declares (yauzl's `validateEntrySizes`) and checked against its CRC-32.
 *
 * Zip bombs are refused before a byte is inflated: since an entry cannot inflate to more than its declared size,
 * the declared sizes are checked against the limits below, as Apache POI checks what it inflates.
 */
import { Readable } from "node:stream"
import { crc32 } from "node:zlib"
import yauzl from "yauzl"
import { ChangedFile, type XlsxBytes } from "./XlsxBytes.js"
import { signature } from "./XlsxWriter.js"

/** The most one entry may inflate to: a sheet this large takes minutes to read; as CSV it has no such limit. */
const maxEntryBytes = 1024 * 1024 * 1024
/** An entry inflating past `ratioGraceBytes` to more than this many times its compressed size is a zip bomb. */
const maxInflateRatio = 100
const ratioGraceBytes = 1024 * 1024

export interface ZipEntry {
  readonly name: string
  readonly crc: number
  readonly compressedSize: number
  readonly size: number
  /** yauzl's entry, for `stream`. */
  readonly entry: yauzl.Entry
}

export interface ZipArchive {
  /** The central directory's entries by name (a leading `/` dropped, `\` read as `/`). */
  readonly entries: ReadonlyMap<string, ZipEntry>
  /** The bytes of a small entry; undefined when absent. Fails on damage, limits, or when it exceeds `maxBytes`. */
  readonly read: (name: string, maxBytes?: number) => Promise<Buffer | undefined>
  /** An entry's inflated bytes, checked (limits, size, CRC-32): a damaged entry makes the stream fail. */
  readonly stream: (entry: ZipEntry) => Promise<Readable>
  readonly close: () => void
}

/** Why a file is not a readable ZIP archive. */
export class NotAZip extends Error {}
/** An entry whose data cannot be inflated as the directory says (corrupted, truncated, wrong size or CRC-32). */
export class DamagedEntry extends NotAZip {}
/** An entry over the inflated-size or ratio limit. */
export class EntryTooLarge extends NotAZip {}

/** The ZIP records' signatures: defined beside the writer, which runs on a thread of its own as plain JavaScript. */
export { signature }

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

/** Why `entry` may not be inflated, if it may not. */
export const limitProblem = (entry: Pick<ZipEntry, "name" | "size" | "compressedSize">): string | undefined => {
  if (entry.size > maxEntryBytes) {
    return `${entry.name} inflates to ${megabytes(entry.size)}, more than the ${megabytes(maxEntryBytes)} an entry may`
  }
  if (entry.size > ratioGraceBytes && entry.size > entry.compressedSize * maxInflateRatio) {
    return `${entry.name} inflates ${megabytes(entry.compressedSize)} into ${megabytes(entry.size)} (${
      Math.round(entry.size / Math.max(1, entry.compressedSize))
    } times; at most ${maxInflateRatio} times past ${
      megabytes(ratioGraceBytes)
    }): a zip bomb, or a workbook too repetitive to read safely`
  }
  return undefined
}

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/** The stream of an entry's bytes as yauzl inflates them, failing as `DamagedEntry` past the first bad byte. */
const checked = (entry: ZipEntry, inflated: Readable): Readable => {
  async function* bytes(): AsyncGenerator<Buffer> {
    let crc = 0
    try {
      for await (const chunk of inflated as AsyncIterable<Buffer>) {
        crc = crc32(chunk, crc)
        yield chunk
      }
    } catch (cause) {
      throw new DamagedEntry(`${entry.name} cannot be decompressed (${describe(cause)})`, { cause })
    }
    if (crc >>> 0 !== entry.crc >>> 0) {
      throw new DamagedEntry(`${entry.name} cannot be decompressed (its CRC-32 does not match: the data is corrupted)`)
    }
  }
  return Readable.from(bytes(), { objectMode: false })
}

/**
 * Opens a ZIP archive's central directory; fails with `NotAZip` when the file is not one. Through `bytes`, the
 * reads of an .xlsx source go through what its earlier passes kept (XlsxBytes).
 */
export const openZip = async (path: string, bytes?: XlsxBytes): Promise<ZipArchive> => {
  // Names are decoded here (not by yauzl, which refuses an absolute name that some writers give their parts).
  const options = { autoClose: false, decodeStrings: false, validateEntrySizes: true }
  const zip = await (bytes !== undefined ? bytes.open(options) : yauzl.openPromise(path, options)).catch(
    (cause: unknown) => {
      throw (cause as NodeJS.ErrnoException).code !== undefined || cause instanceof ChangedFile
        ? cause
        : new NotAZip(describe(cause), { cause })
    }
  )
  try {
    const entries = new Map<string, ZipEntry>()
    try {
      for await (const entry of zip.eachEntry()) {
        const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, false)
          .replace(/^\/+/, "")
        if (entries.has(name)) throw new NotAZip(`the ZIP directory lists ${name} twice`)
        entries.set(name, {
          name,
          crc: entry.crc32,
          compressedSize: entry.compressedSize,
          size: entry.uncompressedSize,
          entry
        })
      }
    } catch (cause) {
      throw cause instanceof NotAZip ? cause : new NotAZip(describe(cause), { cause })
    }
    const stream = async (entry: ZipEntry): Promise<Readable> => {
      const problem = limitProblem(entry)
      if (problem !== undefined) throw new EntryTooLarge(problem)
      const inflated = await zip.openReadStreamPromise(entry.entry).catch((cause: unknown) => {
        throw new DamagedEntry(`${entry.name} cannot be read (${describe(cause)})`, { cause })
      })
      return checked(entry, inflated)
    }
    return {
      entries,
      stream,
      read: async (name, maxBytes = 16 * 1024 * 1024) => {
        const entry = entries.get(name)
        if (entry === undefined) return undefined
        if (entry.size > maxBytes) throw new NotAZip(`${name} is larger than expected (${megabytes(entry.size)})`)
        const chunks: Array<Buffer> = []
        for await (const chunk of await stream(entry)) chunks.push(chunk as Buffer)
        return Buffer.concat(chunks)
      },
      close: () => zip.close()
    }
  } catch (error) {
    zip.close()
    throw error
  }
}

/** The local header of a stored (uncompressed) entry of `size` bytes, as it appears in an archive before its data. */
export const storedHeader = (name: string, size: number, crc: number): Buffer => {
  const nameBytes = Buffer.from(name, "utf8")
  const header = Buffer.alloc(30)
  header.writeUInt32LE(signature.local, 0)
  header.writeUInt16LE(20, 4) // version needed
  header.writeUInt16LE(0x0800, 6) // UTF-8 names
  header.writeUInt16LE(0, 8) // stored
  header.writeUInt16LE(0, 10) // time
  header.writeUInt16LE(0x21, 12) // 1980-01-01
  header.writeUInt32LE(crc >>> 0, 14)
  header.writeUInt32LE(size, 18)
  header.writeUInt32LE(size, 22)
  header.writeUInt16LE(nameBytes.length, 26)
  header.writeUInt16LE(0, 28)
  return Buffer.concat([header, nameBytes])
}

/** A stored (uncompressed) local entry: header and data, as it would appear in an archive. */
export const storedEntry = (name: string, data: Uint8Array): Buffer =>
  Buffer.concat([storedHeader(name, data.length, crc32(data)), data])
