/**
 * The writers' text gatherer: a round's pieces come back joined in order, and a shorter round after a longer one
 * gives only its own pieces (the array keeps its length between rounds); as bytes, the UTF-8 of the joined text.
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

  it("gives as bytes exactly the UTF-8 of the joined text, characters beyond Latin-1 and lone surrogates included", () => {
    const pieces = new TextPieces()
    const lines = [
      "1;Padaria São João;ok\r\n",
      "2;\u201Caspas\u201D \u2013 R$ 1.234,50 \u20AC;invalid\r\n",
      "3;'=1+1;ctrl\u0001\u0007;\uD83D\uDE00 emoji\r\n",
      "4;meia \uD800 surrogate;\uDFFF\r\n",
      "",
      `5;${"x".repeat(70_000)}\r\n`
    ]
    for (const line of lines) pieces.add(line)
    expect(pieces.chars).toBe(lines.join("").length)
    const bytes = pieces.takeBytes()
    expect(Buffer.compare(bytes, Buffer.from(lines.join(""), "utf8"))).toBe(0)
    expect(pieces.chars).toBe(0)
    pieces.add("só")
    expect(pieces.takeBytes().toString("utf8")).toBe("só")
    expect(pieces.takeBytes()).toHaveLength(0)
  })
})
