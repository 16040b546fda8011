/**
 * The duplicate checks' table of first rows: a key seen again gives the row where it was first seen, distinct
 * keys never collide (in practice), and it keeps working as it grows past its first sizes.
 */
import { describe, expect, it } from "@effect/vitest"
import { FirstRows } from "../../src/validate/FirstRows.js"

describe("FirstRows", () => {
  it("records a key's first row and gives it back on every repeat", () => {
    const rows = new FirstRows()
    expect(rows.firstOr("cli-1", 2)).toBeUndefined()
    expect(rows.firstOr("cli-2", 3)).toBeUndefined()
    expect(rows.firstOr("cli-1", 4)).toBe(2)
    expect(rows.firstOr("cli-1", 9)).toBe(2)
    expect(rows.firstOr("", 5)).toBeUndefined()
    expect(rows.firstOr("", 6)).toBe(5)
  })

  it("tells 300,000 close keys apart while it grows, and still finds every one", () => {
    const rows = new FirstRows()
    const key = (i: number) => `cli-${String(i).padStart(7, "0")}`
    let repeats = 0
    for (let i = 0; i < 300_000; i++) if (rows.firstOr(key(i), i + 2) !== undefined) repeats++
    expect(repeats).toBe(0)
    // Keys that differ only by order or by one character, as real keys do.
    expect(rows.firstOr("ilc-0000001", 1)).toBeUndefined()
    expect(rows.firstOr("cli-0000010", 1)).toBe(12)
    for (let i = 0; i < 300_000; i += 997) expect(rows.firstOr(key(i), 999_999)).toBe(i + 2)
  })

  it("holds a million keys in at most 19 MB (12 bytes a slot, at most 1.5 slots a key)", () => {
    const rows = new FirstRows()
    for (let i = 0; i < 1_000_000; i++) rows.firstOr(`CLI-${i}`, i + 2)
    expect(rows.bytes).toBeLessThanOrEqual(19_000_000)
    expect(rows.firstOr("CLI-0", 1)).toBe(2)
    expect(rows.firstOr("CLI-999999", 1)).toBe(1_000_001)
  })

  it("grows straight to the size a file's projected keys need, so it never grows late in the file", () => {
    const rows = new FirstRows(() => 1_000_000)
    for (let i = 0; i < 300_000; i++) rows.firstOr(`CLI-${i}`, i + 2)
    const early = rows.bytes
    expect(early).toBeGreaterThanOrEqual(Math.ceil(1_000_000 / 0.8) * 12)
    for (let i = 300_000; i < 1_000_000; i++) rows.firstOr(`CLI-${i}`, i + 2)
    expect(rows.bytes).toBe(early)
    expect(rows.bytes).toBeLessThanOrEqual(16_000_000)
    expect(rows.firstOr("CLI-999999", 1)).toBe(1_000_001)
  })

  it("trusts a projection at most 16-fold per growth (a file whose first rows are short)", () => {
    const rows = new FirstRows(() => 1e9)
    for (let i = 0; i < 20_000; i++) rows.firstOr(`CLI-${i}`, i + 2)
    expect(rows.bytes).toBeLessThanOrEqual(4_000_000)
  })
})
