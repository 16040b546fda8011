/**
 * `--lang pt-BR|en`, the global flag that chooses the language of messages (src/Messages.ts). It is taken out of the
 * command line before anything parses it, so that every command has it, before or after its name; without it the
 * environment decides (`FSM_LANG`, then `LC_ALL`, `LC_MESSAGES`, `LANG`).
 */
import { type Language, languageFromEnvironment, languageOf, languages } from "../Messages.js"

type LanguageChoice =
  | { readonly _tag: "Chosen"; readonly language: Language }
  | { readonly _tag: "Mistake"; readonly message: string }

/** The language asked for; removes `--lang VALUE` / `--lang=VALUE` from `argv` (node and script first). */
export const takeLanguage = (
  argv: Array<string>,
  env: Readonly<Record<string, string | undefined>>
): LanguageChoice => {
  let given: string | undefined
  let missing = false
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") break
    if (arg === "--lang") {
      const value = argv[i + 1]
      missing = value === undefined || value.startsWith("-")
      given = missing ? undefined : value
      argv.splice(i, missing ? 1 : 2)
      i--
    } else if (arg.startsWith("--lang=")) {
      given = arg.slice("--lang=".length)
      argv.splice(i, 1)
      i--
    }
  }
  if (missing) return { _tag: "Mistake", message: `--lang needs a value: ${languages.join(" or ")}` }
  if (given === undefined) return { _tag: "Chosen", language: languageFromEnvironment(env) }
  const language = languageOf(given)
  return language === undefined
    ? { _tag: "Mistake", message: `--lang ${given}: not a language of fsm-bulk; use ${languages.join(" or ")}` }
    : { _tag: "Chosen", language }
}
