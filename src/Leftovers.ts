/**
 * Files a process must not leave behind however it ends (its `.tmp` files, its locks): each is registered while
 * it exists and removed synchronously on the process's `exit` event, which runs on a normal end, on
 * `process.exit` (a second SIGINT/SIGTERM/SIGHUP, src/Signals.ts) and after the edge handles any other signal
 * that ends us. Only SIGKILL escapes it: a lock is then recognised as stale by its holder's identity
 * (import/Locks.ts), and a `.tmp` is never read.
 */
import * as fs from "node:fs"

/** Path → the check that it is still ours to remove (a lock taken over by another process is not). */
const leftovers = new Map<string, () => boolean>()
let listening = false

const removeAll = () => {
  for (const [path, ours] of leftovers) {
    try {
      if (ours()) fs.rmSync(path, { force: true })
    } catch {
      // best effort: the process is ending
    }
  }
  leftovers.clear()
}

/** Removes `path` when the process ends (if `ours()` then holds) unless the returned function is called first. */
export const removeOnExit = (path: string, ours: () => boolean = () => true): () => void => {
  if (!listening) {
    listening = true
    process.on("exit", removeAll)
  }
  leftovers.set(path, ours)
  return () => void leftovers.delete(path)
}
