/**
 * The journal's hash chain: each line after the header carries `prev`, the sha256 of the line before it as written
 * (its bytes, without the newline), and the header says `"chain":"sha256"`. A removed, edited or moved line breaks
 * the chain at the line after it; a signed summary (Seal.ts) holds the last line's hash, so a cut tail shows too.
 *
 * A torn line (the process killed mid-write) is a line like any other here: the session that continues the run
 * appends after it, and the chain goes on from the fragment's bytes.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"

export const chainAlgorithm = "sha256"

export const lineHash = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/** The physical lines of a file, as bytes without their newline (a last line without one included), streamed. */
export async function* fileLines(path: string): AsyncGenerator<Buffer> {
  let rest: Buffer = Buffer.alloc(0)
  for await (const chunk of fs.createReadStream(path) as AsyncIterable<Buffer>) {
    let data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk
    let at = data.indexOf(0x0a)
    while (at >= 0) {
      yield data.subarray(0, at)
      data = data.subarray(at + 1)
      at = data.indexOf(0x0a)
    }
    rest = Buffer.from(data)
  }
  if (rest.length > 0) yield rest
}

/** What a writer continuing a journal needs: is it chained (its header says so), and the hash of its last line. */
export interface ChainTail {
  readonly chained: boolean
  readonly lastHash: string | undefined
}

const readAt = async (handle: fs.promises.FileHandle, position: number, length: number): Promise<Buffer> => {
  const buffer = Buffer.alloc(length)
  const { bytesRead } = await handle.read(buffer, 0, length, position)
  return buffer.subarray(0, bytesRead)
}

/**
 * Reads a journal's first line (its header) and its last line, without reading what lies between: a file of
 * `size` bytes whose last byte is a newline (the writer has added one after a torn fragment).
 */
export const readChainTail = async (handle: fs.promises.FileHandle, size: number): Promise<ChainTail> => {
  if (size === 0) return { chained: false, lastHash: undefined }
  let head = Buffer.alloc(0)
  for (let at = 0; at < size && head.indexOf(0x0a) < 0; at += 64 * 1024) {
    head = Buffer.concat([head, await readAt(handle, at, Math.min(64 * 1024, size - at))])
  }
  const firstEnd = head.indexOf(0x0a)
  const first = (firstEnd < 0 ? head : head.subarray(0, firstEnd)).toString("utf8")
  let chained = false
  try {
    chained = (JSON.parse(first) as { chain?: unknown }).chain === chainAlgorithm
  } catch {
    chained = false
  }
  if (!chained) return { chained, lastHash: undefined }
  // The last line ends at size - 1 (its newline) and starts after the newline before it.
  let start = size - 1
  let tail = Buffer.alloc(0)
  for (;;) {
    const nl = tail.lastIndexOf(0x0a)
    if (nl >= 0) return { chained, lastHash: lineHash(tail.subarray(nl + 1)) }
    if (start === 0) return { chained, lastHash: lineHash(tail) }
    const from = Math.max(0, start - 64 * 1024)
    tail = Buffer.concat([await readAt(handle, from, start - from), tail])
    start = from
  }
}

export interface ChainCheck {
  /** The header asks for a chain; false for journals written before it (never called tampered). */
  readonly chained: boolean
  /** Physical lines, a torn fragment included. */
  readonly lines: number
  /** The hash of the last physical line (what the next line, or a seal, refers to). */
  readonly lastHash: string | undefined
  /** Torn fragments a crash left (line numbers, 1-based): read past, not tampering. */
  readonly torn: ReadonlyArray<number>
  /** Every break of the chain, one sentence each. */
  readonly problems: ReadonlyArray<string>
}

const parse = (bytes: Buffer): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(bytes.toString("utf8"))
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Walks the chain of the journal at `path`. A line that is not JSON is a torn fragment when it is the last line or
 * the line after it is a `resumed` line that carries its hash (as a continuing session writes); anywhere else it
 * is a problem.
 */
export const checkChain = async (path: string, name = path): Promise<ChainCheck> => {
  let lines = 0
  let chained = false
  let previous: string | undefined
  let pendingFragment: number | undefined
  const torn: Array<number> = []
  const problems: Array<string> = []
  for await (const bytes of fileLines(path)) {
    lines += 1
    const hash = lineHash(bytes)
    const line = parse(bytes)
    if (lines === 1) {
      if (line?.state !== "header") {
        problems.push(`${name}: line 1 is not a journal header`)
      }
      chained = line?.chain === chainAlgorithm
      previous = hash
      if (!chained) break
      continue
    }
    if (pendingFragment !== undefined) {
      if (line?.state === "resumed") torn.push(pendingFragment)
      else problems.push(`${name}: line ${pendingFragment} is not a journal line`)
      pendingFragment = undefined
    }
    if (line === undefined) {
      pendingFragment = lines
    } else if (typeof line.prev !== "string") {
      problems.push(`${name}: line ${lines} carries no chain hash (prev): it was not written by this run's journal`)
    } else if (line.prev !== previous) {
      problems.push(
        `${name}: line ${lines} does not follow line ${lines - 1} (it carries the hash of another line): line ${
          lines - 1
        } was changed, or lines before this one were removed, inserted or moved`
      )
    }
    previous = hash
  }
  if (pendingFragment !== undefined) torn.push(pendingFragment)
  return { chained, lines: chained ? lines : 0, lastHash: chained ? previous : undefined, torn, problems }
}
