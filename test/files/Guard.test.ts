import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { isFormulaLike, neutralize, restore } from "../../src/files/Guard.js"

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
})
