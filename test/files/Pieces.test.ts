/**
 * The writers' text gatherer: a round's pieces come back joined in order, and a shorter round after a longer one
 * gives only its own pieces (the array keeps its length between rounds).
 */
import { describe, expect, it } from "@effect/vitest"
import { TextPieces } from "../../src/files/Pieces.js"

describe("TextPieces", () => {
  it("joins a round's pieces in order and counts their characters", () => {
    const pieces = new TextPieces()
    for (const p of ["<row r=\"", "2", "\">", "", "São", "</row>"]) pieces.add(p)
    expect(pieces.chars).toBe(20)
    expect(pieces.take()).toBe("<row r=\"2\">São</row>")
    expect(pieces.chars).toBe(0)
    expect(pieces.take()).toBe("")
  })

  it("gives a shorter round only its own pieces", () => {
    const pieces = new TextPieces()
    for (let i = 0; i < 1000; i++) pieces.add(`a${i};`)
    expect(pieces.take().split(";")).toHaveLength(1001)
    pieces.add("b")
    pieces.add("c")
    expect(pieces.take()).toBe("bc")
    for (let i = 0; i < 3; i++) pieces.add(String(i))
    expect(pieces.take()).toBe("012")
  })
})
