/**
 * A batch of rows packed for the workbook's thread (RowBatch.js) comes back as the same cells: every kind of cell,
 * the numbers bit for bit, text beyond Latin-1, empty rows and cells; its text cells through the packer's guard.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Cell } from "../../src/files/Cell.js"
import { packRows, transferOf, unpackRows } from "../../src/files/RowBatch.js"

const rows: ReadonlyArray<ReadonlyArray<Cell>> = [
  [2, "valid", null, "Padaria São João", undefined, true, false, ""],
  [
    3,
    "invalid",
    "Linha 3: \u201Caspas\u201D \u2013 inválido",
    "=1+1",
    "ctrl\u0001\u0007",
    "\uD83D\uDE00",
    "meia \uD800"
  ],
  [],
  [-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.1 + 0.2, Number.MAX_VALUE, 5e-324],
  ["x".repeat(70_000), "", "fim"]
]

describe("RowBatch", () => {
  it("unpacks the rows it packed, cell for cell", () => {
    const unpacked = unpackRows(packRows(rows, (text) => text))
    expect(unpacked).toHaveLength(rows.length)
    unpacked.forEach((row, r) => {
      expect(row).toHaveLength(rows[r]!.length)
      // Object.is: -0 stays -0, NaN stays NaN, null and undefined stay apart.
      row.forEach((cell, c) => expect(Object.is(cell, rows[r]![c])).toBe(true))
    })
  })

  it("passes every text cell, and only text cells, through the guard", () => {
    const seen: Array<string> = []
    const unpacked = unpackRows(packRows(rows.slice(0, 2), (text) => (seen.push(text), `'${text}`)))
    expect(seen).toEqual(rows.slice(0, 2).flat().filter((cell) => typeof cell === "string"))
    expect(unpacked[0]).toEqual([2, "'valid", null, "'Padaria São João", undefined, true, false, "'"])
  })

  it("survives a postMessage with its typed arrays transferred", async () => {
    const packed = packRows(rows, (text) => text)
    const { port1, port2 } = new MessageChannel()
    const received = new Promise<unknown>((resolve) => port2.once("message", resolve))
    port1.postMessage(packed, transferOf(packed))
    const unpacked = unpackRows((await received) as ReturnType<typeof packRows>)
    port1.close()
    expect(packed.shape.byteLength).toBe(0)
    expect(unpacked[1]).toEqual(rows[1])
    expect(Object.is(unpacked[3]![0], -0)).toBe(true)
  })
})
