import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { isFormulaLike, neutralize, neutralizeInline, restore } from "../../src/files/Guard.js"

/** The pieces a spreadsheet makes of a cell when it splits it on `separator` (and trims them, as it may). */
const piecesOn = (cell: string, separator: string) => cell.split(separator).map((p) => p.replace(/^ +/, ""))

describe("formula guard", () => {
  it("neutralises what a spreadsheet would run as a formula", () => {
    expect(neutralize("=HYPERLINK(\"http://x\",\"y\")")).toBe(`'=HYPERLINK("http://x","y")`)
    expect(neutralize("@SUM(A1)")).toBe("'@SUM(A1)")
    expect(neutralize("+55 11 3333-4444")).toBe("'+55 11 3333-4444")
    expect(neutralize("-2+3+cmd|' /C calc'!A0")).toBe("'-2+3+cmd|' /C calc'!A0")
    expect(neutralize("\tx")).toBe("'\tx")
    expect(neutralize("\rx")).toBe("'\rx")
    expect(neutralize("-")).toBe("'-")
  })

  it("leaves plain numbers and ordinary text alone", () => {
    for (
      const x of [
        "-12,5",
        "+55",
        "-12.5",
        "-1.234,56",
        "-0.5",
        "-.5",
        "-1e5",
        "12",
        "Padaria",
        "",
        "a=b",
        " =1",
        "'quoted"
      ]
    ) expect(neutralize(x)).toBe(x)
    expect(isFormulaLike("-12,5")).toBe(false)
    expect(isFormulaLike("+55 11")).toBe(true)
  })

  it("restores exactly what it neutralised, and nothing else", () => {
    expect(restore(`'=HYPERLINK("http://x","y")`)).toBe(`=HYPERLINK("http://x","y")`)
    expect(restore("'+55 11 3333-4444")).toBe("+55 11 3333-4444")
    expect(restore("'-12,5")).toBe("'-12,5")
    expect(restore("'abc")).toBe("'abc")
    // A value that already looked like a guarded cell gets a second apostrophe, so it survives the round trip.
    expect(neutralize("'=x")).toBe("''=x")
    expect(restore("''=x")).toBe("'=x")
  })

  it("round-trips every string", () => {
    const formulaish = FastCheck.tuple(
      FastCheck.constantFrom("", "'", "''", "'''"),
      FastCheck.constantFrom("=", "+", "-", "@", "\t", "\r", "1", "a", "'"),
      FastCheck.string()
    )
      .map(([a, b, c]) => a + b + c)
    FastCheck.assert(
      FastCheck.property(
        FastCheck.oneof(FastCheck.string(), FastCheck.fullUnicodeString(), formulaish),
        (x) => restore(neutralize(x)) === x
      ),
      { numRuns: 2000 }
    )
  })

  it("a neutralised cell never starts a formula", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.string(), (x) => !isFormulaLike(neutralize(x))),
      { numRuns: 2000 }
    )
  })

  it("guards what would start a formula once a spreadsheet splits the cell on ; , tab or |", () => {
    expect(neutralize("Loja;=1+1")).toBe("Loja;'=1+1")
    expect(neutralize("Loja, =HYPERLINK(\"http://x\")")).toBe("Loja, '=HYPERLINK(\"http://x\")")
    expect(neutralize("a\t@SUM(A1)|-2+3")).toBe("a\t'@SUM(A1)|'-2+3")
    expect(neutralize("=1;=2")).toBe("'=1;'=2")
    // a plain number after a splitter, whichever the splitter, is left alone; cut elsewhere it would not be
    expect(neutralize("Total;-12,5")).toBe("Total;-12,5")
    expect(neutralize("Total;-1,5x")).toBe("Total;'-1,5x")
    expect(restore("Loja;'=1+1")).toBe("Loja;=1+1")
    expect(restore("Loja;'abc")).toBe("Loja;'abc")
    // an apostrophe already there before a formula piece gets one more, in workbooks too
    expect(neutralize("a;'=x")).toBe("a;''=x")
    expect(neutralizeInline("a;'=x")).toBe("a;''=x")
    expect(neutralizeInline("a;=x")).toBe("a;=x")
    expect(restore("a;''=x")).toBe("a;'=x")
    // a piece that starts with a tab after another splitter (fast-check's seed -1442975434 found it missed)
    expect(neutralize("=|\t1")).toBe("'=|'\t1")
    expect(restore("'=|'\t1")).toBe("=|\t1")
  })

  it("round-trips every string with splitters, and no piece of a neutralised cell starts a formula", () => {
    const piece = FastCheck.tuple(
      FastCheck.constantFrom("", ",", ";", "\t", "|", ", ", ";  "),
      FastCheck.constantFrom("", "'", "''"),
      FastCheck.constantFrom("=", "+", "-", "@", "\r", "1", "a", "'", "-1,5", "+55 "),
      FastCheck.string({ maxLength: 4 })
    ).map((parts) => parts.join(""))
    const cell = FastCheck.array(piece, { maxLength: 5 }).map((ps) => ps.join(""))
    FastCheck.assert(
      FastCheck.property(cell, (x) => {
        const guarded = neutralize(x)
        if (restore(guarded) !== x || restore(neutralizeInline(x)) !== x) return false
        return [",", ";", "\t", "|"].every((d) => piecesOn(guarded, d).every((p) => !isFormulaLike(p)))
      }),
      { numRuns: 5000 }
    )
  })
})
