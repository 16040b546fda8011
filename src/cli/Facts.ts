/**
 * The two facts of a flag that help shows and @effect/cli's public help does not give: the default it falls back to
 * (its HelpDoc says "This setting is optional." without a plain value) and the environment variable it reads (its
 * HelpDoc says "can be set from environment variables" without the name). Each is declared once, where the flag is
 * defined, with the combinators below: they set the default or the fallback and add one paragraph in a fixed form
 * to the flag's description, which the help model (Model.ts) reads back from the flag's public HelpDoc.
 */
import * as Options from "@effect/cli/Options"
import type * as Config from "effect/Config"

const defaultMark = "Default: "
const environmentMark = "Environment: "

/** `Options.withDefault(fallback)`, the default shown in help as `(default …)`. */
export const withShownDefault = <const B>(fallback: B) => <A>(self: Options.Options<A>): Options.Options<A | B> =>
  Options.withDefault(Options.withDescription(self, `${defaultMark}${String(fallback)}`), fallback)

/** `Options.withFallbackConfig(read(name))`, the variable named in help (ENVIRONMENT: "Used when --flag is not given"). */
export const withEnvironment =
  <B>(name: string, read: (name: string) => Config.Config<B>) =>
  <A>(self: Options.Options<A>): Options.Options<A | B> =>
    Options.withFallbackConfig(Options.withDescription(self, `${environmentMark}${name}`), read(name))

interface FlagFacts {
  /** The description without the facts' paragraphs, paragraphs joined by a space. */
  readonly description: string
  readonly default?: string | undefined
  readonly env?: string | undefined
}

/** The facts among the paragraphs of a flag's description, and the description itself. */
export const factsOf = (paragraphs: ReadonlyArray<string>): FlagFacts => {
  const marked = (mark: string) => paragraphs.find((p) => p.startsWith(mark))?.slice(mark.length)
  return {
    description: paragraphs.filter((p) => !p.startsWith(defaultMark) && !p.startsWith(environmentMark)).join(" "),
    default: marked(defaultMark),
    env: marked(environmentMark)
  }
}
