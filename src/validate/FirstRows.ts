/**
 * Each key's first row, for the duplicate checks of a whole file, in flat memory: a million keys take 15–18 MB
 * here against ~60 MB in a Map of strings, which is most of what a validation of a large file keeps.
 *
 * Keys are not stored, only a 64-bit hash of each (two independent 32-bit hashes), in one open-addressing
 * table. Two different keys of one file share a hash with a probability of about n²/2⁶⁵ (3 in 100 million
 * for a million keys); such a pair would be reported as a repeat naming both rows, never passed silently.
 */
const emptyRow = 0

/** Two 32-bit hashes of the UTF-16 code units: FNV-1a, and a multiply-rotate one, each finished by murmur3's fmix. */
const hashes = (key: string, out: Uint32Array) => {
  let a = 0x811c9dc5
  let b = 0x9747b28c ^ key.length
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
    b = (b << 13) | (b >>> 19)
  }
  out[0] = fmix(a)
  out[1] = fmix(b ^ 0x5bd1e995)
}

const fmix = (h: number) => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * The table is at most this full (linear probing: about 13 probes for a new key at the limit, 3 on average while
 * it fills; a million keys take 0.27 s) and then grows by half again. Doubling at half full, as it did, held a
 * million keys in 2,097,152 slots (25 MB), and 37.5 MB while it moved them; now 1,513,376 slots (18 MB) when it
 * grows step by step, and 1,275,000 (15.3 MB) when it is sized from a CSV file's projected rows.
 */
const maxLoad = 0.8
const growth = 1.5
/**
 * With a projection of the file's keys, a table that has seen this many grows straight to the size the whole
 * file needs (plus `margin`), at most `maxJump` times at once: a table grown late in a large file held its old
 * and new arrays together (12 + 18 MB for a million keys) at about the peak of the run's memory.
 */
const minSample = 10_000
const maxJump = 16
const margin = 1.02

export class FirstRows {
  /** `projectedKeys`: how many keys the whole file is likely to have (0: unknown); consulted when the table grows. */
  constructor(private readonly projectedKeys: () => number = () => 0) {}

  private capacity = 1024
  private size = 0
  private high = new Uint32Array(this.capacity)
  private low = new Uint32Array(this.capacity)
  private rows = new Int32Array(this.capacity)
  private readonly hash = new Uint32Array(2)

  /** The row where `key` was first seen; when this is the first time, records `row` and returns undefined. */
  firstOr(key: string, row: number): number | undefined {
    hashes(key, this.hash)
    const h = this.hash[0]!
    const l = this.hash[1]!
    const capacity = this.capacity
    for (let i = l % capacity;; i = i + 1 === capacity ? 0 : i + 1) {
      const r = this.rows[i]!
      if (r === emptyRow) break
      if (this.high[i] === h && this.low[i] === l) return r
    }
    this.insert(h, l, row)
    if (++this.size > this.capacity * maxLoad) this.grow()
    return undefined
  }

  private insert(h: number, l: number, row: number) {
    const capacity = this.capacity
    let i = l % capacity
    while (this.rows[i] !== emptyRow) i = i + 1 === capacity ? 0 : i + 1
    this.high[i] = h
    this.low[i] = l
    this.rows[i] = row
  }

  /** The memory the table holds, in bytes. */
  get bytes(): number {
    return this.high.byteLength + this.low.byteLength + this.rows.byteLength
  }

  private grow() {
    const { high, low, rows } = this
    const projected = this.size >= minSample ? Math.ceil(this.projectedKeys() * margin / maxLoad) : 0
    this.capacity = Math.max(Math.ceil(this.capacity * growth), Math.min(projected, this.capacity * maxJump))
    this.high = new Uint32Array(this.capacity)
    this.low = new Uint32Array(this.capacity)
    this.rows = new Int32Array(this.capacity)
    for (let i = 0; i < rows.length; i++) if (rows[i] !== emptyRow) this.insert(high[i]!, low[i]!, rows[i]!)
  }
}
