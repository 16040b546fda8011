/**
 * Scratch folders in the temp dir (a worker's jobs, a `submit`'s validation and parts: customer data). Each holds
 * its process's pid (`.owner`) and is removed when the process ends; one left by a process killed with -9 is removed
 * by the next process that makes a folder of the same prefix: when its owner is dead (or, without an owner file,
 * when it is over a minute old). A folder of a live process is never removed.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"

/** Whether process `pid` is alive on this machine. */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as { code?: string }).code === "EPERM"
  }
}

/** Removes the folders of `prefix` whose owner is dead, then makes this process's own (returned). */
export const ownedScratch = (prefix: string) =>
  Effect.sync(() => {
    for (const name of fs.readdirSync(tmpdir())) {
      // mkdtemp's six letters and digits exactly: not the folder of another prefix that starts with this one.
      if (!name.startsWith(prefix) || !/^[A-Za-z0-9]{6}$/.test(name.slice(prefix.length))) continue
      const dir = Path.join(tmpdir(), name)
      try {
        const owner = Number(fs.readFileSync(Path.join(dir, ".owner"), "utf8"))
        if (Number.isInteger(owner) && owner > 0 && alive(owner)) continue
      } catch {
        const stat = fs.statSync(dir, { throwIfNoEntry: false })
        if (stat === undefined || Date.now() - stat.mtimeMs < 60_000) continue
      }
      fs.rmSync(dir, { recursive: true, force: true })
    }
    const root = fs.mkdtempSync(Path.join(tmpdir(), prefix))
    fs.writeFileSync(Path.join(root, ".owner"), String(process.pid))
    return root
  })
