/**
 * A command's handler that loads the command's implementation when the command runs. The command tree (flags,
 * arguments, descriptions, help's examples) is built at start-up by every command, for parsing, help, completion
 * and suggestions; what a command runs (the import pipeline, the export's walks, the fleet, the sandbox's server…)
 * is reached only through `import()` here, so that the bundle puts it in a chunk of its own that no other command
 * loads (docs/development.md, "The build").
 */
import type * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"

/** What a command's handler receives for its flags and arguments `config` (as `Command.make` gives them). */
export type Input<C extends Command.Command.Config> = Command.Command.ParseConfig<C>

/**
 * The handler `pick` chooses from the module `load` imports, loaded when the command runs (a module that fails to
 * load is a defect: the build left a chunk out).
 */
export const later = <M, I, A, E, R>(
  load: () => Promise<M>,
  pick: (m: M) => (input: I) => Effect.Effect<A, E, R>
) =>
(input: I): Effect.Effect<A, E, R> => Effect.flatMap(Effect.promise(load), (m) => pick(m)(input))
