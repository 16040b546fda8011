/**
 * Both tiers run their files in workers that keep their modules from one file to the next (vitest's
 * `--no-isolate`, vitest.config.ts; the cli tier's files run src/ in process too, beside the CLIs they spawn): importing the tool's modules once per worker instead of once per file saves
 * most of vitest's `collect` time. What a module keeps at its top level would then carry from one file to the
 * next, so this set-up file (run before each file) puts every such state back as a new process has it.
 * test/structure/module-state.test.ts checks that every top-level `let` and mutable collection of src/ is either
 * reset here or named there as a cache that holds the same whatever ran before.
 */
import { forgetCredentialWarnings } from "../../src/cli/Connection.js"
import { forgetLastRetry } from "../../src/fleet/CommandStore.js"
import { setLanguage } from "../../src/Messages.js"
import { forgetSecrets } from "../../src/Secrets.js"
import { forgetStopRequest } from "../../src/Signals.js"

/** Each reset: the module, the top-level names it puts back, the reset. */
export const resets: ReadonlyArray<readonly [module: string, names: ReadonlyArray<string>, reset: () => void]> = [
  ["src/Secrets.ts", ["known", "ordered"], forgetSecrets],
  ["src/Messages.ts", ["current"], () => setLanguage("en")],
  ["src/Signals.ts", ["stopRequested", "stopListeners"], forgetStopRequest],
  ["src/cli/Connection.ts", ["warnedAbout"], forgetCredentialWarnings],
  ["src/fleet/CommandStore.ts", ["lastRetry"], forgetLastRetry]
]

export const resetModuleState = (): void => {
  for (const [, , reset] of resets) reset()
}

resetModuleState()
