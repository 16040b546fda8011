/**
 * The fast tier keeps modules from one file to the next (`isolate: false`, vitest.config.ts), so every state a
 * module of src/ keeps at its top level is either put back before each file (test/setup/fresh-module-state.ts) or
 * a cache that holds the same whatever ran before. A new top-level `let` or empty Map/Set fails here until it is
 * one or the other.
 */
import * as fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { currentLanguage, setLanguage } from "../../src/Messages.js"
import { redactKnown, registerSecret } from "../../src/Secrets.js"
import { resetModuleState, resets } from "../setup/fresh-module-state.js"

const repo = Path.resolve(import.meta.dirname, "../..")

/** Top-level state that needs no reset, and why. */
const kept: Record<string, string> = {
  "src/Cli.ts:built": "the command tree's model, the same in every file",
  "src/files/ExcelJs.ts:loading": "the loaded exceljs module",
  "src/fleet/Worker.ts:gatesPassed": "counts only under FSM_FLEET_DEBUG_STOP_AFTER_GATE, read at a spawned CLI's start",
  "src/fleet/Fence.ts:fences": "keyed weakly by socket: a file's sockets are its own",
  "src/import/Bodies.ts:sentIds": "keyed weakly by client: a file's clients are its own",
  "src/Leftovers.ts:leftovers": "files removed at the process's exit unless their owner removed them first",
  "src/Leftovers.ts:listening": "whether the one `exit` listener of the process is on",
  "src/files/CsvParseWorker.js:finished": "a parser thread's own, new in each thread",
  "src/files/CsvParseWorker.js:stopped": "a parser thread's own, new in each thread",
  "src/files/XlsxWorker.js:made": "a workbook thread's own, new in each thread",
  "src/files/XlsxWorker.js:failed": "a workbook thread's own, new in each thread",
  "src/files/XlsxWorker.js:queue": "a workbook thread's own, new in each thread",
  "src/files/XlsxWorker.js:rowsWritten": "a workbook thread's own, new in each thread"
}

const sources = (dir: string): Array<string> =>
  fs.readdirSync(Path.join(repo, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(Path.join(dir, e.name))
      : /\.(ts|js)$/.test(e.name)
      ? [Path.join(dir, e.name)]
      : []
  )

const topLevelState =
  /^(?:export )?(?:let (\w+)|const (\w+)(?:: [^=]+)? = new (?:Map|Set|WeakMap|WeakSet)(?:<.*>)?\(\)\s*$)/

describe("state kept by modules between test files", () => {
  it("every top-level `let` and empty Map or Set of src/ is reset before each file, or a cache named here", () => {
    const found = sources("src").flatMap((file) =>
      fs.readFileSync(Path.join(repo, file), "utf8").split("\n").flatMap((line) => {
        const m = topLevelState.exec(line)
        return m === null ? [] : [`${file.split(Path.sep).join("/")}:${m[1] ?? m[2]}`]
      })
    )
    const reset = new Set(resets.flatMap(([module, names]) => names.map((n) => `${module}:${n}`)))
    expect(found.filter((s) => !reset.has(s) && !(s in kept))).toEqual([])
    // and nothing listed that is gone
    expect([...reset, ...Object.keys(kept)].filter((s) => !found.includes(s))).toEqual([])
  })

  it("the resets put back what a new process has", () => {
    registerSecret("hunter2-secret")
    setLanguage("pt-BR")
    expect(redactKnown("key hunter2-secret")).toBe("key [redacted]")

    resetModuleState()

    expect(redactKnown("key hunter2-secret")).toBe("key hunter2-secret")
    expect(currentLanguage()).toBe("en")
  })
})
