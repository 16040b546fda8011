/**
 * Commands the tool prints for the user to run (`next:` hints, resume commands): every argument quoted for a
 * POSIX shell when it needs it, so a path with spaces, quotes or `$` pastes as the same path.
 */

/** Characters a shell leaves alone in a word. */
const safe = /^[A-Za-z0-9_@%+=:,./-]+$/

/** `arg` as one shell word: as it is when nothing in it is special, else in single quotes (`'` as `'\''`). */
export const shellQuote = (arg: string): string => (safe.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`)

/** A command line of words, each quoted when needed. */
export const shellCommand = (words: ReadonlyArray<string>): string => words.map(shellQuote).join(" ")
