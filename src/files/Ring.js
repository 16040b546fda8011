// @ts-check
/**
 * The parser thread's records, handed to the reading thread through shared memory instead of one message per
 * batch (CsvParseWorker.js writes, Csv.ts reads). Plain JavaScript, for the parser thread.
 *
 * A message each way per batch cost the reading thread more than the records' copy: each `{credit: 1}` it posted
 * woke the parser thread, and on a machine with more runnable threads than cores the woken thread ran first (782
 * posts for 200,000 rows held the main thread 932 ms: docs/benchmarks.md). Here the two threads share a ring of
 * `slots` slots. The writer fills a slot with whole records (their text as UTF-8, and for each record its byte
 * length, its number of cells and each cell's length in UTF-16 units) and publishes it; the reader copies the
 * records out as strings (one decode a record, its cells sliced from it) and frees the slot. Neither thread
 * sends the other anything while the other is busy:
 *
 * - the writer blocks (`Atomics.wait`: the parser thread has nothing else to do) when every slot is full, and the
 *   reader wakes it only once half the ring is free, so the parser is woken once per `slots / 2` slots;
 * - the reader waits (`Atomics.waitAsync`, its event loop free) only when no slot is full, and the writer wakes
 *   it as it publishes the next.
 *
 * Records wait here as bytes outside either heap (a fixed 1.25 MiB), not as objects in the reader's inbox that a
 * young-generation collection would promote. A record too large for a slot goes by message, its place in the
 * order kept by a slot that says so (`bigRecord`).
 */

/** Slots in the ring: the writer sleeps until half of them are free. */
export const slots = 8
/** A slot's text (UTF-8 bytes): about 500 rows of 250 bytes. */
const slotTextBytes = 128 * 1024
/** A slot's lengths (32-bit): the record count, then per record its byte length, its cell count and its cells' lengths. */
const slotMetaInts = 8 * 1024

// The control words.
/** Slots published by the writer (only grows). */
const WRITTEN = 0
/** Slots freed by the reader (only grows). */
const READ = 1
/** The writer sleeps on READ until the reader frees half the ring. */
const WRITER_WAITING = 2
/** The reader waits on WRITTEN for the next slot. */
const READER_WAITING = 3
/** The reader stopped early: the writer stops writing. */
const CANCELLED = 4
const controlInts = 8

/**
 * `Atomics.waitAsync` (Node 16 and later; not in the TypeScript library this project targets).
 * @type {(array: Int32Array, index: number, value: number) => { async: false } | { async: true, value: Promise<unknown> }}
 */
const waitAsync = /** @type {any} */ (Atomics).waitAsync

/** A slot whose only content is a record sent by message (too large for a slot). */
export const bigRecord = -1

/** The shared memory of one ring, made by the reader and handed to the writer in `workerData`. */
export const makeRing = () => new SharedArrayBuffer(controlInts * 4 + slots * (slotMetaInts * 4 + slotTextBytes))

/** @param {SharedArrayBuffer} shared */
const views = (shared) => {
  const control = new Int32Array(shared, 0, controlInts)
  /** @type {Array<{ meta: Int32Array, text: Buffer }>} */
  const slot = []
  let offset = controlInts * 4
  for (let i = 0; i < slots; i++) {
    const meta = new Int32Array(shared, offset, slotMetaInts)
    offset += slotMetaInts * 4
    slot.push({ meta, text: Buffer.from(shared, offset, slotTextBytes) })
    offset += slotTextBytes
  }
  return { control, slot }
}

/**
 * The writer's side (the parser thread).
 * @param {SharedArrayBuffer} shared
 * @param {(record: Array<string>) => void} sendBig posts a record too large for a slot
 */
export const ringWriter = (shared, sendBig) => {
  const { control, slot } = views(shared)
  let written = 0
  /** The slot being filled: its records, next text byte, next length. */
  let records = 0
  let textAt = 0
  let metaAt = 1
  /** Waits for a free slot; false once the reader has stopped. */
  const free = () => {
    for (;;) {
      if (Atomics.load(control, CANCELLED) === 1) return false
      const read = Atomics.load(control, READ)
      if (written - read < slots) return true
      Atomics.store(control, WRITER_WAITING, 1)
      // Checked again after saying so: a slot freed in between is seen here, or the reader sees the flag.
      if (written - Atomics.load(control, READ) < slots || Atomics.load(control, CANCELLED) === 1) continue
      // Not a fixed sleep: the reader's notify ends it; the bound only re-checks the words.
      Atomics.wait(control, READ, read, 1000)
    }
  }
  const publish = () => {
    slot[written % slots].meta[0] = records
    written += 1
    Atomics.store(control, WRITTEN, written)
    if (Atomics.load(control, READER_WAITING) === 1) {
      Atomics.store(control, READER_WAITING, 0)
      Atomics.notify(control, WRITTEN)
    }
    records = 0
    textAt = 0
    metaAt = 1
  }
  return {
    /**
     * Adds a record; false once the reader has stopped (the writer should stop reading).
     * @param {Array<string>} cells
     */
    push: (cells) => {
      if (records === 0 && !free()) return false
      const text = cells.length === 1 ? cells[0] : cells.join("")
      let bytes = text.length * 3 <= slotTextBytes - textAt ? -1 : Buffer.byteLength(text)
      if (bytes > slotTextBytes - textAt || metaAt + 2 + cells.length > slotMetaInts) {
        if (records > 0) {
          publish()
          if (!free()) return false
        }
        if (bytes === -1) bytes = Buffer.byteLength(text)
        if (bytes > slotTextBytes || 3 + cells.length > slotMetaInts) {
          sendBig(cells)
          records = bigRecord
          publish()
          return true
        }
      }
      const { meta, text: bytesOf } = slot[written % slots]
      const length = bytesOf.write(text, textAt, "utf8")
      textAt += length
      meta[metaAt++] = length
      meta[metaAt++] = cells.length
      for (let i = 0; i < cells.length; i++) meta[metaAt++] = cells[i].length
      records += 1
      return true
    },
    /** Publishes the slot being filled, if any record is in it (the end of the file). */
    flush: () => {
      if (records > 0) publish()
    }
  }
}

/**
 * The reader's side. `take(max)` copies out at most `max` records of the oldest full slot: undefined when no slot
 * is full, `bigRecord` when the next record comes by message.
 * @param {SharedArrayBuffer} shared
 */
export const ringReader = (shared) => {
  const { control, slot } = views(shared)
  let read = 0
  /** Where the reading of the oldest full slot stands: records left, next text byte, next length. */
  let left = -1
  let textAt = 0
  let metaAt = 1
  const release = () => {
    read += 1
    left = -1
    Atomics.store(control, READ, read)
    if (Atomics.load(control, WRITER_WAITING) === 1 && Atomics.load(control, WRITTEN) - read <= slots / 2) {
      Atomics.store(control, WRITER_WAITING, 0)
      Atomics.notify(control, READ)
    }
  }
  return {
    /**
     * @param {number} max
     * @returns {Array<Array<string>> | typeof bigRecord | undefined}
     */
    take: (max) => {
      if (left === -1) {
        if (Atomics.load(control, WRITTEN) === read) return undefined
        const records = slot[read % slots].meta[0]
        if (records === bigRecord) {
          release()
          return bigRecord
        }
        left = records
        textAt = 0
        metaAt = 1
      }
      const { meta, text } = slot[read % slots]
      const count = Math.min(max, left)
      /** @type {Array<Array<string>>} */
      const out = new Array(count)
      for (let r = 0; r < count; r++) {
        const length = meta[metaAt++]
        const cellCount = meta[metaAt++]
        const whole = text.toString("utf8", textAt, textAt + length)
        textAt += length
        /** @type {Array<string>} */
        const cells = new Array(cellCount)
        if (cellCount === 1) {
          cells[0] = whole
          metaAt += 1
        } else {
          let at = 0
          for (let c = 0; c < cellCount; c++) {
            const end = at + meta[metaAt++]
            cells[c] = whole.slice(at, end)
            at = end
          }
        }
        out[r] = cells
      }
      left -= count
      if (left === 0) release()
      return out
    },
    /**
     * Calls `then` once a slot is published or `wake` is called (undefined: a slot is full already).
     * @param {() => void} then
     */
    whenWritten: (then) => {
      Atomics.store(control, READER_WAITING, 1)
      const waited = waitAsync(control, WRITTEN, read)
      if (!waited.async) {
        Atomics.store(control, READER_WAITING, 0)
        return false
      }
      waited.value.then(then)
      return true
    },
    /** Tells the writer to stop, and ends any wait on either side. */
    cancel: () => {
      Atomics.store(control, CANCELLED, 1)
      Atomics.notify(control, READ)
      Atomics.notify(control, WRITTEN)
    }
  }
}
