/**
 * How the parsing flags become a file's read settings, the one place `import`, `validate`, `onboard` and the
 * fleet's `submit` take them from.
 */
import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { readSettings } from "../../src/cli/Parsing.js"

describe("readSettings", () => {
  it("reads --delimiter tab as the tab character and keeps the others as given", () => {
    assert.deepStrictEqual(readSettings({ encoding: "auto", delimiter: "tab" }), { encoding: "auto", delimiter: "\t" })
    assert.deepStrictEqual(readSettings({ encoding: "windows-1252", delimiter: ";" }), {
      encoding: "windows-1252",
      delimiter: ";"
    })
  })

  it("names the sheet only where --sheet was given", () => {
    assert.deepStrictEqual(readSettings({ encoding: "utf-8", delimiter: "auto", sheet: Option.some("Clientes") }), {
      encoding: "utf-8",
      delimiter: "auto",
      sheet: "Clientes"
    })
    assert.notProperty(readSettings({ encoding: "utf-8", delimiter: "auto", sheet: Option.none() }), "sheet")
  })
})
