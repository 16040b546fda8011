/**
 * The message catalogue is complete: every English message has a Portuguese one (the type makes a missing key a
 * compile error; this checks the text), not empty, not left in English, with exactly the same placeholders; and the
 * language is chosen as documented (`--lang`, `FSM_LANG`, `LC_ALL`, `LC_MESSAGES`, `LANG`).
 */
import { assert, describe, it } from "@effect/vitest"
import { takeLanguage } from "../../src/cli/Language.js"
import { catalogues, languageFromEnvironment, languageOf, type MessageKey, setLanguage, t } from "../../src/Messages.js"

const placeholders = (text: string) => [...text.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1]).sort()

/** Messages that are the same word in both languages. */
const sameInBoth: ReadonlyArray<MessageKey> = [
  "template.json",
  "mapping.shape.CPF/CNPJ",
  "mapping.shape.e-mail",
  "mapping.shape.latitude",
  "mapping.shape.longitude",
  "mapping.sure.-"
]

describe("the message catalogue", () => {
  const keys = Object.keys(catalogues.en) as Array<MessageKey>

  it("has a Portuguese message for every English one, with the same placeholders, not empty and translated", () => {
    assert.isAbove(keys.length, 100)
    assert.deepStrictEqual(Object.keys(catalogues["pt-BR"]).sort(), [...keys].sort())
    const problems: Array<string> = []
    for (const key of keys) {
      const en = catalogues.en[key]
      const pt = catalogues["pt-BR"][key]
      if (pt.trim() === "") problems.push(`${key}: empty`)
      if (pt === en && !sameInBoth.includes(key)) problems.push(`${key}: not translated`)
      if (placeholders(pt).join() !== placeholders(en).join()) {
        problems.push(`${key}: placeholders ${placeholders(pt).join()} ≠ ${placeholders(en).join()}`)
      }
    }
    assert.deepStrictEqual(problems, [])
  })

  it("fills placeholders in the language chosen, and English is the default", () => {
    try {
      assert.strictEqual(t("cpfCnpj.checkDigits", { value: "\"123\"" }), "\"123\" has wrong check digits")
      setLanguage("pt-BR")
      assert.strictEqual(t("cpfCnpj.checkDigits", { value: "\"123\"" }), "\"123\" tem dígitos verificadores errados")
      // A value that looks like a placeholder is not filled again.
      assert.strictEqual(t("row.required"), "obrigatório")
      assert.strictEqual(t("cell.notEmail", { value: "{value}" }), "{value} não é um endereço de e-mail")
    } finally {
      setLanguage("en")
    }
  })

  it("reads the language from --lang and the environment, in POSIX order", () => {
    assert.strictEqual(languageOf("pt_BR.UTF-8"), "pt-BR")
    assert.strictEqual(languageOf("pt-br"), "pt-BR")
    assert.strictEqual(languageOf("en_US.UTF-8"), "en")
    assert.strictEqual(languageOf("fr_FR"), undefined)
    assert.strictEqual(languageFromEnvironment({}), "en")
    assert.strictEqual(languageFromEnvironment({ LANG: "pt_BR.UTF-8" }), "pt-BR")
    assert.strictEqual(languageFromEnvironment({ LANG: "pt_BR.UTF-8", LC_ALL: "C" }), "en")
    assert.strictEqual(languageFromEnvironment({ LANG: "en_US.UTF-8", LC_MESSAGES: "pt_BR" }), "pt-BR")
    assert.strictEqual(languageFromEnvironment({ LANG: "pt_BR.UTF-8", FSM_LANG: "en" }), "en")
    assert.strictEqual(languageFromEnvironment({ LANG: "de_DE.UTF-8" }), "en")

    const argv = ["node", "bin.js", "validate", "--lang", "pt-BR", "clientes", "a.csv"]
    assert.deepStrictEqual(takeLanguage(argv, { LANG: "en_US" }), { _tag: "Chosen", language: "pt-BR" })
    assert.deepStrictEqual(argv, ["node", "bin.js", "validate", "clientes", "a.csv"])
    const equals = ["node", "bin.js", "--lang=en", "template"]
    assert.deepStrictEqual(takeLanguage(equals, { LANG: "pt_BR" }), { _tag: "Chosen", language: "en" })
    assert.deepStrictEqual(equals, ["node", "bin.js", "template"])
    assert.deepStrictEqual(takeLanguage(["node", "bin.js", "template"], { LANG: "pt_BR" }), {
      _tag: "Chosen",
      language: "pt-BR"
    })
    const wrong = takeLanguage(["node", "bin.js", "--lang", "fr", "template"], {})
    assert.strictEqual(wrong._tag, "Mistake")
    assert.include(wrong._tag === "Mistake" ? wrong.message : "", "use en or pt-BR")
    assert.strictEqual(takeLanguage(["node", "bin.js", "template", "--lang"], {})._tag, "Mistake")
  })
})
