/**
 * The bytes of one opened .xlsx, read as few times as the reading needs them: every pass over the workbook (its
 * directory, the header's read, each read of the rows) opens the archive through one `XlsxBytes`, which
 *
 * - keeps what is small and read again each pass: the end of the file (yauzl searches it for the directory), the
 *   directory, the local headers, and the compressed bytes of the workbook-wide parts (workbook, relationships,
 *   styles, shared strings: at most `keptLimit` in all). Later passes take them from memory;
 * - reads the table's sheets (`stream`) from the file each pass, except that the bytes the header's read took
 *   from the start of a sheet (at most `headLimit`) are handed to the next read of that sheet, which goes on from
 *   there: the header costs no read of its own;
 * - hashes the file (the journal's sha256) on these reads: bytes read in file order feed the hash; before a sheet
 *   is read, the bytes before it that no read took are read for the hash (the parts nobody needs: content types,
 *   theme, other sheets), and once a read of the rows ends, the rest of the file (from what was kept, else read).
 *   The parts the sheet needs often come after it in the file (Excel writes sheets first), yet exceljs must have
 *   them before the sheet: they are kept, so the hash takes them from memory when it gets there.
 *
 * A file whose size, modification time or inode changed since the first opening is refused (`ChangedFile`): what
 * is kept would no longer be its bytes.
 */
import { createHash, type Hash } from "node:crypto"
import { type FileHandle, open } from "node:fs/promises"
import { Readable } from "node:stream"
import yauzl from "yauzl"

/** The most the workbook-wide parts and the directory may keep in memory; past it they are read again each pass. */
const keptLimit = 32 * 1024 * 1024
/** The most of a sheet's start that the header's read hands to the next read of the sheet. */
const headLimit = 1024 * 1024
/** A workbook-wide part up to this size is read in one call. */
const oneRead = 1024 * 1024
const chunkBytes = 64 * 1024

/** The file changed between two openings. */
export class ChangedFile extends Error {}

interface Segment {
  readonly start: number
  readonly bytes: Buffer
}

const readAt = async (handle: FileHandle, position: number, length: number): Promise<Buffer> => {
  const buffer = Buffer.allocUnsafe(length)
  let filled = 0
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled)
    if (bytesRead === 0) throw new ChangedFile("the file ended early (was it changed while it was read?)")
    filled += bytesRead
  }
  return buffer
}

export class XlsxBytes {
  readonly #file: string
  #identity: { readonly size: number; readonly mtimeMs: number; readonly ino: number } | undefined
  readonly #kept: Array<Segment> = []
  #keptBytes = 0
  /** The compressed data of the table's sheets, by where their local header starts. */
  readonly #streamed = new Map<number, number>()
  readonly #heads = new Map<number, Buffer>()
  readonly #headTaken = new Set<number>()
  readonly #hash: Hash = createHash("sha256")
  #hashed = 0
  #digest: string | undefined

  constructor(file: string) {
    this.#file = file
  }

  /** The sha256 of the file, once a read of the rows has reached its end; undefined before. */
  get sha256(): string | undefined {
    return this.#digest
  }

  /** Marks an entry's data as a sheet of the table, read from the file each pass rather than kept. */
  stream(entry: { readonly entry: yauzl.Entry }): void {
    this.#streamed.set(entry.entry.relativeOffsetOfLocalHeader, entry.entry.compressedSize)
  }

  /** A yauzl archive over the file, its reads going through this object; close it with the archive. */
  async open(options: yauzl.Options): Promise<yauzl.ZipFile> {
    const { handle, size } = await this.#open()
    try {
      return await yauzl.fromRandomAccessReaderPromise(new PassReader(this, handle), size, options)
    } catch (error) {
      await handle.close()
      throw error
    }
  }

  /** Hashes the rest of the file (after a read of the rows ended), from what is kept, else read. */
  async finish(): Promise<void> {
    if (this.#digest !== undefined) return
    const { handle, size } = await this.#open()
    try {
      await this.catchUp(handle, size)
      this.#digest = this.#hash.digest("hex")
    } finally {
      await handle.close()
    }
  }

  /** The file, opened; refused when it is no longer the file first opened. */
  async #open(): Promise<{ readonly handle: FileHandle; readonly size: number }> {
    const handle = await open(this.#file, "r")
    try {
      const { size, mtimeMs, ino } = await handle.stat()
      const known = this.#identity
      if (known === undefined) this.#identity = { size, mtimeMs, ino }
      else if (known.size !== size || known.mtimeMs !== mtimeMs || known.ino !== ino) {
        throw new ChangedFile("the file changed since it was opened (was it changed while it was read?)")
      }
      return { handle, size }
    } catch (error) {
      await handle.close()
      throw error
    }
  }

  /** Bytes at `position`, read in file order: the hash takes what follows the bytes it has. */
  observe(position: number, bytes: Buffer): void {
    const end = position + bytes.length
    if (this.#digest !== undefined || position > this.#hashed || end <= this.#hashed) return
    this.#hash.update(bytes.subarray(this.#hashed - position))
    this.#hashed = end
  }

  /** Hashes up to `position`. */
  async catchUp(handle: FileHandle, position: number): Promise<void> {
    while (this.#digest === undefined && this.#hashed < position) await this.chunk(handle, this.#hashed, position)
  }

  /**
   * The next bytes from `at` (before `end`), observed: from a kept segment that holds `at`, else read from the
   * file up to the next kept segment (at most a chunk).
   */
  async chunk(handle: FileHandle, at: number, end: number): Promise<Buffer> {
    const kept = this.#kept.find((s) => s.start <= at && at < s.start + s.bytes.length)
    if (kept !== undefined) {
      const bytes = kept.bytes.subarray(at - kept.start, Math.min(end, kept.start + kept.bytes.length) - kept.start)
      this.observe(at, bytes)
      return bytes
    }
    const next = this.#kept.reduce((n, s) => (s.start > at && s.start < n ? s.start : n), end)
    const bytes = await readAt(handle, at, Math.min(next - at, chunkBytes))
    this.observe(at, bytes)
    return bytes
  }

  /** The bytes of `[start, end)` when a kept segment holds them all. */
  keptRange(start: number, end: number): Buffer | undefined {
    const s = this.#kept.find((s) => s.start <= start && end <= s.start + s.bytes.length)
    return s?.bytes.subarray(start - s.start, end - s.start)
  }

  keep(start: number, bytes: Buffer): void {
    if (this.#keptBytes + bytes.length > keptLimit) return
    this.#kept.push({ start, bytes })
    this.#keptBytes += bytes.length
  }

  /**
   * Whether another sheet of the table lies between what the hash has and `start`: its own read, to come, takes
   * it into the hash (a continuation's header is read before the sheets before it are).
   */
  sheetBefore(start: number): boolean {
    const headers = [...this.#streamed.keys()]
    // The sheet's own local header is the last one before its data.
    const own = Math.max(...headers.filter((h) => h < start))
    return headers.some((h) => h >= this.#hashed && h < own)
  }

  /** Whether `[start, end)` is the data of a sheet of the table (after its local header, of its compressed size). */
  isStreamed(start: number, end: number): boolean {
    for (const [header, size] of this.#streamed) {
      if (end - start === size && start > header && start <= header + 30 + 2 * 0xffff) return true
    }
    return false
  }

  /** The head the header's read left for `start`'s next read, taken; or, at the first read, a place to leave one. */
  takeHead(start: number): { readonly head: Buffer | undefined; readonly leave: ((head: Buffer) => void) | undefined } {
    const head = this.#heads.get(start)
    this.#heads.delete(start)
    if (this.#headTaken.has(start)) return { head, leave: undefined }
    this.#headTaken.add(start)
    return { head, leave: (h) => void this.#heads.set(start, h) }
  }
}

/** One pass's reads of the file, through the `XlsxBytes` it belongs to. */
class PassReader extends yauzl.RandomAccessReader {
  readonly #bytes: XlsxBytes
  readonly #handle: FileHandle

  constructor(bytes: XlsxBytes, handle: FileHandle) {
    super()
    this.#bytes = bytes
    this.#handle = handle
  }

  /** yauzl's small reads (the end of the file, the directory, local headers): kept. */
  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null) => void
  ): void {
    this.#small(position, position + length).then(
      (bytes) => {
        bytes.copy(buffer, offset) // yauzl checks the count read, as fs.read gives it.
        ;(callback as (err: Error | null, bytesRead: number) => void)(null, length)
      },
      (error: Error) => callback(error)
    )
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return Readable.from(
      this.#bytes.isStreamed(start, end) ? this.#sheet(start, end) : this.#part(start, end),
      { objectMode: false }
    )
  }

  override close(callback: (err: Error | null) => void): void {
    this.#handle.close().then(() => callback(null), (error: Error) => callback(error))
  }

  async #small(start: number, end: number): Promise<Buffer> {
    const kept = this.#bytes.keptRange(start, end)
    if (kept !== undefined) return kept
    const pieces: Array<Buffer> = []
    for (let at = start; at < end;) {
      const piece = await this.#bytes.chunk(this.#handle, at, end)
      pieces.push(piece)
      at += piece.length
    }
    const bytes = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
    this.#bytes.keep(start, bytes)
    return bytes
  }

  /** A workbook-wide part's data: kept when it fits, else read in chunks (and again next pass). */
  async *#part(start: number, end: number): AsyncGenerator<Buffer> {
    if (end - start <= oneRead || this.#bytes.keptRange(start, end) !== undefined) {
      yield await this.#small(start, end)
      return
    }
    const bytes: Array<Buffer> = []
    for (let at = start; at < end;) {
      const chunk = await this.#bytes.chunk(this.#handle, at, end)
      bytes.push(chunk)
      at += chunk.length
      yield chunk
    }
    this.#bytes.keep(start, Buffer.concat(bytes))
  }

  /** A sheet's data, read from the file (after the head the header's read left, if any). */
  async *#sheet(start: number, end: number): AsyncGenerator<Buffer> {
    if (!this.#bytes.sheetBefore(start)) await this.#bytes.catchUp(this.#handle, start)
    const { head, leave } = this.#bytes.takeHead(start)
    let at = start
    if (head !== undefined) {
      this.#bytes.observe(start, head)
      at += head.length
      yield head
    }
    const taken: Array<Buffer> = []
    let takenBytes = 0
    try {
      while (at < end) {
        const chunk = await this.#bytes.chunk(this.#handle, at, end)
        if (leave !== undefined && takenBytes < headLimit) {
          taken.push(chunk)
          takenBytes += chunk.length
        }
        at += chunk.length
        yield chunk
      }
    } finally {
      if (leave !== undefined && takenBytes > 0) leave(Buffer.concat(taken))
    }
  }
}
