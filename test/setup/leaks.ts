/**
 * What a test file can leave in the process that runs it, for the cli tier's files that share a process
 * (`--no-isolate`, vitest.config.ts): the state taken before a file (`processState`) and, after it, what the file
 * left behind (`leftBehind`) and what it changed that is simply put back (`putBack`). test/setup/file-leaks.ts runs
 * them around every cli-tier file; test/structure/leaks.test.ts shows each kind is caught.
 */
import { readdirSync, readFileSync } from "node:fs"
import { createRequire, syncBuiltinESMExports } from "node:module"

/** Process events whose listeners would act in a later file: a signal handled, an error swallowed. */
export const watchedEvents = [
  "SIGINT",
  "SIGTERM",
  "SIGHUP",
  "SIGQUIT",
  "beforeExit",
  "uncaughtException",
  "unhandledRejection"
] as const

/**
 * Kinds of libuv handles that keep running past a file, counted: servers, child processes, sockets bound for
 * datagrams. Timers are followed one by one instead (`timers` below): vitest's own come and go while a file ends, so
 * a count of them could hide one the file left (it did: a 10 s grace timer of the tests' `stopRedis`).
 */
export const watchedHandles = ["TCPServerWrap", "PipeServerWrap", "ProcessWrap", "UDPWrap"] as const

/** A timer this process started, with where (the stack at its `setTimeout`/`setInterval`). */
interface TrackedTimer {
  /** `_destroyed`: set by Node at once when it fired (once) or was cleared. */
  readonly timer: { hasRef(): boolean; readonly _destroyed?: boolean }
  /**
   * The stack as V8 took it, its text made only for a timer left behind: text for every timer (vite-node maps each
   * frame through the source maps) was about 2.6 % of a history file's CPU (`init` in a profile of
   * test/history/history.test.ts, 466 ms of 17.8 s).
   */
  readonly made: Error
}

type TimerFunction = (...args: Array<any>) => TrackedTimer["timer"]

/**
 * Every timer of the process from the first `processState` on, until it fired (once) or was cleared: the process's
 * `setTimeout` and `setInterval` (the globals and `node:timers`') wrapped once for the process (kept on
 * `globalThis`, as the set-up file's modules may be loaded again per file), each timer they return kept with the
 * stack of its making. Not an async hook: one with an `init` and a `destroy` made Node track every promise of the
 * process for its destruction (`promiseInitHookWithDestroyTracking`, `registerDestroyHook`), which was a fifth to
 * two fifths of the CPU of Effect-heavy files (test/onboard/example.test.ts, test/report/rundata.test.ts).
 */
const timers = (): Map<number, TrackedTimer> => {
  const key = Symbol.for("fsm-bulk.test.timers")
  const holder = globalThis as unknown as Record<symbol, Map<number, TrackedTimer> | undefined>
  const existing = holder[key]
  if (existing !== undefined) return existing
  const live = new Map<number, TrackedTimer>()
  let next = 0
  /** Drops the timers that fired or were cleared, once the map has doubled since the last time. */
  let sweepAt = 1_024
  const track = (timer: TrackedTimer["timer"]) => {
    live.set(next++, { timer, made: new Error() })
    if (live.size < sweepAt) return
    for (const [id, t] of live) if (t.timer._destroyed === true) live.delete(id)
    sweepAt = Math.max(1_024, live.size * 2)
  }
  const wrap = (original: TimerFunction): TimerFunction => {
    const wrapped = function(this: unknown, ...args: Array<any>) {
      const timer = original.apply(this, args)
      track(timer)
      return timer
    }
    // `util.promisify(setTimeout)` and the like read these.
    Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(original))
    return wrapped
  }
  const g = globalThis as unknown as Record<"setTimeout" | "setInterval", TimerFunction>
  // The CommonJS exports of node:timers: the ES module's namespace is read-only, and follows them once synced.
  const module = createRequire(import.meta.url)("node:timers") as Record<"setTimeout" | "setInterval", TimerFunction>
  for (const name of ["setTimeout", "setInterval"] as const) {
    const made = wrap(g[name])
    g[name] = made
    // `import { setTimeout } from "node:timers"` too (the globals are its functions).
    module[name] = made
  }
  syncBuiltinESMExports()
  holder[key] = live
  return live
}

/** Where a timer was made, as the line to fix: the first frame that is neither Node's, vitest's nor this guard's. */
const madeAt = (stack: string): string | undefined =>
  stack.split("\n").slice(1).map((l) => l.trim()).find((l) =>
    !/node:|node_modules[\\/](vitest|@vitest|tinypool|tinyspy)[\\/]|test[\\/]setup[\\/]|\(<anonymous>\)$/.test(l)
  )

type Listener = (...args: Array<unknown>) => void

/** The process as the plain emitter it is: the watched events' listeners without an overload per event. */
const emitter: NodeJS.EventEmitter = process
const listenersOf = (event: string): Array<Listener> => emitter.listeners(event) as Array<Listener>

export interface ProcessState {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  readonly exitCode: typeof process.exitCode
  readonly listeners: ReadonlyMap<string, ReadonlyArray<Listener>>
  readonly handles: ReadonlyMap<string, number>
  /** The timers pending before the file (by the order of their making). */
  readonly timers: ReadonlySet<number>
  readonly children: ReadonlySet<number>
}

/** Live (not zombie) processes whose parent is this one, from /proc (empty where there is no /proc). */
export const childProcesses = (parent = process.pid): Set<number> => {
  const found = new Set<number>()
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return found
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue // exited meanwhile
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after its last ")"
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(ppid) === parent && state !== "Z") found.add(Number(entry))
  }
  return found
}

const handleCounts = (): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1)
  return counts
}

export const processState = (): ProcessState => ({
  env: { ...process.env },
  cwd: process.cwd(),
  exitCode: process.exitCode,
  listeners: new Map(watchedEvents.map((event) => [event, listenersOf(event)])),
  handles: handleCounts(),
  timers: new Set(timers().keys()),
  children: childProcesses()
})

/**
 * The ref'd timers started since `before` and still pending, but vitest's own (made from its runner: no frame of the
 * file's or of src/), each as where it was made.
 */
const timersLeft = (before: ProcessState): Array<string> => {
  const left: Array<string> = []
  for (const [id, { made, timer }] of timers()) {
    if (before.timers.has(id) || timer._destroyed === true || !timer.hasRef()) continue
    const at = madeAt(made.stack ?? "")
    if (at !== undefined) left.push(at)
  }
  return left
}

/**
 * What is running or listening now that was not before: child processes (but those in `shared`, the run's own
 * PostgreSQL cluster), servers and other handles, process listeners. Each entry says what and how many.
 */
export const leftBehind = (before: ProcessState, shared: ReadonlySet<number> = new Set()): Array<string> => {
  const found: Array<string> = []
  const children = [...childProcesses()].filter((pid) => !before.children.has(pid) && !shared.has(pid))
  if (children.length > 0) found.push(`child processes still running: ${children.join(", ")}`)
  const now = handleCounts()
  for (const kind of watchedHandles) {
    const more = (now.get(kind) ?? 0) - (before.handles.get(kind) ?? 0)
    if (more > 0) found.push(`${more} more active ${kind} than before the file`)
  }
  const left = timersLeft(before)
  if (left.length > 0) found.push(`${left.length} timer(s) still pending, made ${left.join("; ")}`)
  for (const event of watchedEvents) {
    const added = listenersOf(event).filter((l) => !before.listeners.get(event)?.includes(l))
    if (added.length > 0) found.push(`${added.length} process listener(s) for ${event} added`)
  }
  return found
}

/** Listeners the file added to the watched events, taken off so that they do not act in a later file. */
export const removeAddedListeners = (before: ProcessState): void => {
  for (const event of watchedEvents) {
    for (const l of listenersOf(event)) {
      if (!before.listeners.get(event)?.includes(l)) emitter.removeListener(event, l)
    }
  }
}

/** Puts back the environment, working directory and exit code as they were; says what differed. */
export const putBack = (before: ProcessState): Array<string> => {
  const changed: Array<string> = []
  for (const name of Object.keys(process.env)) {
    if (!(name in before.env)) {
      changed.push(`env ${name} set`)
      delete process.env[name]
    }
  }
  for (const [name, value] of Object.entries(before.env)) {
    if (process.env[name] !== value) {
      changed.push(`env ${name} changed`)
      process.env[name] = value
    }
  }
  if (process.cwd() !== before.cwd) {
    changed.push(`cwd changed to ${process.cwd()}`)
    process.chdir(before.cwd)
  }
  if (process.exitCode !== before.exitCode) {
    changed.push(`exitCode set to ${String(process.exitCode)}`)
    process.exitCode = before.exitCode
  }
  return changed
}

/** Whether the file now running is under the guard (test/setup/file-leaks.ts, both tiers): checked by test/structure/leaks.test.ts. */
export const guarding = { file: false }

/**
 * After a file (test/setup/file-leaks.ts): puts back what is simply put back, waits up to `settleMs` for what is
 * being stopped or closed past the file's last hook, and if something is still left, takes the file's listeners
 * off and kills its children (so that the next file does not inherit them) and fails with what was left.
 */
export const guardFile = async (
  before: ProcessState,
  shared: () => ReadonlySet<number>,
  settleMs = 5_000
): Promise<void> => {
  putBack(before)
  const until = Date.now() + settleMs
  let left = leftBehind(before, shared())
  while (left.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    left = leftBehind(before, shared())
  }
  if (left.length === 0) return
  removeAddedListeners(before)
  const allowed = shared()
  for (const pid of childProcesses()) {
    if (before.children.has(pid) || allowed.has(pid)) continue
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`this file left behind in its process (the next file would inherit it): ${left.join("; ")}`)
}
