/**
 * Just enough of the ZIP format to look inside an .xlsx without reading it whole: the central directory
 * (validity, entry names) and small entries (workbook.xml, its relationships, docProps/core.xml). exceljs's
 * streaming reader reads the sheets; it skips docProps and cannot list sheets before it reaches them.
 */
import { open, type FileHandle } from "node:fs/promises"
import { crc32, inflateRawSync } from "node:zlib"

export interface ZipEntry {
  readonly name: string
  readonly method: number
  readonly crc: number
  readonly compressedSize: number
  readonly size: number
  readonly localHeaderOffset: number
}

/** An entry's place in the file, with what the central directory says of it. */
export interface EntrySpan {
  readonly start: number
  readonly end: number
  readonly entry: ZipEntry
}

export interface ZipDirectory {
  readonly entries: ReadonlyMap<string, ZipEntry>
  /** Where each entry's bytes lie in the file: its local header, data and data descriptor (end exclusive). */
  readonly spans: ReadonlyMap<string, EntrySpan>
  /** The bytes of a small entry; undefined when absent. Throws on corruption or when it exceeds `maxBytes`. */
  readonly read: (name: string, maxBytes?: number) => Promise<Buffer | undefined>
  readonly close: () => Promise<void>
}

/** Why a file is not a readable ZIP archive. */
export class NotAZip extends Error {}

/** The ZIP records' signatures, for this reader and for the writer (XlsxWriter). */
export const signature = {
  local: 0x04034b50,
  descriptor: 0x08074b50,
  central: 0x02014b50,
  end: 0x06054b50,
  zip64Locator: 0x07064b50,
  zip64End: 0x06064b50
} as const
const maxComment = 0xffff

const readAt = async (handle: FileHandle, position: number, length: number): Promise<Buffer> => {
  const buffer = Buffer.alloc(length)
  const { bytesRead } = await handle.read(buffer, 0, length, position)
  if (bytesRead !== length) throw new NotAZip("the archive ends too early")
  return buffer
}

const findEndOfDirectory = (tail: Buffer): number => {
  for (let i = tail.length - 22; i >= 0; i--) if (tail.readUInt32LE(i) === signature.end) return i
  return -1
}

interface DirectoryLocation {
  readonly offset: number
  readonly size: number
  readonly count: number
}

const locateDirectory = async (handle: FileHandle, fileSize: number): Promise<DirectoryLocation> => {
  if (fileSize < 22) throw new NotAZip("too short to be a ZIP archive")
  const tailStart = Math.max(0, fileSize - (22 + maxComment))
  const tail = await readAt(handle, tailStart, fileSize - tailStart)
  const at = findEndOfDirectory(tail)
  if (at < 0) throw new NotAZip("no ZIP end-of-directory record (not a ZIP archive, or truncated)")
  let count = tail.readUInt16LE(at + 10)
  let size = tail.readUInt32LE(at + 12)
  let offset = tail.readUInt32LE(at + 16)
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) {
    const locatorAt = at - 20
    if (locatorAt < 0 || tail.readUInt32LE(locatorAt) !== signature.zip64Locator) throw new NotAZip("a ZIP64 archive without its locator")
    const zip64At = Number(tail.readBigUInt64LE(locatorAt + 8))
    const record = await readAt(handle, zip64At, 56)
    if (record.readUInt32LE(0) !== signature.zip64End) throw new NotAZip("a broken ZIP64 end-of-directory record")
    count = Number(record.readBigUInt64LE(32))
    size = Number(record.readBigUInt64LE(40))
    offset = Number(record.readBigUInt64LE(48))
  }
  if (offset + size > fileSize) throw new NotAZip("the ZIP directory points past the end of the file (truncated?)")
  return { offset, size, count }
}

/** Sizes and offset that overflow 32 bits live in the ZIP64 extra field, in this order. */
const applyZip64 = (extra: Buffer, entry: { size: number; compressedSize: number; localHeaderOffset: number }) => {
  for (let i = 0; i + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(i)
    const length = extra.readUInt16LE(i + 2)
    if (id === 0x0001) {
      let p = i + 4
      const next = () => {
        const v = Number(extra.readBigUInt64LE(p))
        p += 8
        return v
      }
      if (entry.size === 0xffffffff) entry.size = next()
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next()
      if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = next()
      return
    }
    i += 4 + length
  }
}

const parseDirectory = (directory: Buffer, count: number): Map<string, ZipEntry> => {
  const entries = new Map<string, ZipEntry>()
  let p = 0
  for (let n = 0; n < count; n++) {
    if (p + 46 > directory.length || directory.readUInt32LE(p) !== signature.central) throw new NotAZip("a broken ZIP directory entry")
    const nameLength = directory.readUInt16LE(p + 28)
    const extraLength = directory.readUInt16LE(p + 30)
    const commentLength = directory.readUInt16LE(p + 32)
    const entry = {
      name: directory.toString("utf8", p + 46, p + 46 + nameLength),
      method: directory.readUInt16LE(p + 10),
      crc: directory.readUInt32LE(p + 16),
      compressedSize: directory.readUInt32LE(p + 20),
      size: directory.readUInt32LE(p + 24),
      localHeaderOffset: directory.readUInt32LE(p + 42)
    }
    applyZip64(directory.subarray(p + 46 + nameLength, p + 46 + nameLength + extraLength), entry)
    entries.set(entry.name.replace(/^\/+/, ""), entry)
    p += 46 + nameLength + extraLength + commentLength
  }
  return entries
}

const readEntry = async (handle: FileHandle, entry: ZipEntry, maxBytes: number): Promise<Buffer> => {
  if (entry.size > maxBytes || entry.compressedSize > maxBytes) throw new NotAZip(`${entry.name} is larger than expected`)
  const header = await readAt(handle, entry.localHeaderOffset, 30)
  if (header.readUInt32LE(0) !== signature.local) throw new NotAZip(`a broken ZIP entry header for ${entry.name}`)
  const dataAt = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28)
  const data = await readAt(handle, dataAt, entry.compressedSize)
  switch (entry.method) {
    case 0:
      return data
    case 8:
      try {
        return inflateRawSync(data, { maxOutputLength: maxBytes })
      } catch (cause) {
        throw new NotAZip(`${entry.name} cannot be decompressed (${(cause as Error).message})`)
      }
    default:
      throw new NotAZip(`${entry.name} uses an unsupported compression method (${entry.method})`)
  }
}


/** A stored (uncompressed) local entry: header and data, as it would appear in an archive. */
export const storedEntry = (name: string, data: Uint8Array): Buffer => {
  const nameBytes = Buffer.from(name, "utf8")
  const header = Buffer.alloc(30)
  header.writeUInt32LE(signature.local, 0)
  header.writeUInt16LE(20, 4) // version needed
  header.writeUInt16LE(0x0800, 6) // UTF-8 names
  header.writeUInt16LE(0, 8) // stored
  header.writeUInt16LE(0, 10) // time
  header.writeUInt16LE(0x21, 12) // 1980-01-01
  header.writeUInt32LE(crc32(data), 14)
  header.writeUInt32LE(data.length, 18)
  header.writeUInt32LE(data.length, 22)
  header.writeUInt16LE(nameBytes.length, 26)
  header.writeUInt16LE(0, 28)
  return Buffer.concat([header, nameBytes, data])
}

/** Opens a ZIP archive's directory; throws `NotAZip` when the file is not one. */
export const openZip = async (path: string): Promise<ZipDirectory> => {
  const handle = await open(path, "r")
  try {
    const { size: fileSize } = await handle.stat()
    const location = await locateDirectory(handle, fileSize)
    const entries = parseDirectory(await readAt(handle, location.offset, location.size), location.count)
    const byOffset = [...entries].sort(([, a], [, b]) => a.localHeaderOffset - b.localHeaderOffset)
    const spans = new Map(
      byOffset.map(([name, entry], i): readonly [string, EntrySpan] => [
        name,
        { start: entry.localHeaderOffset, end: byOffset[i + 1]?.[1].localHeaderOffset ?? location.offset, entry }
      ])
    )
    return {
      entries,
      spans,
      read: async (name, maxBytes = 16 * 1024 * 1024) => {
        const entry = entries.get(name)
        return entry === undefined ? undefined : readEntry(handle, entry, maxBytes)
      },
      close: () => handle.close()
    }
  } catch (error) {
    await handle.close()
    throw error
  }
}
