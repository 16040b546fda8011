/**
 * Lock files: who holds a run directory (`DIR/.lock`, RunDir.ts) and who writes a resource of an account
 * (`writerLock`): one process at a time sends writes to a (server, account, resource) on this machine, so two
 * imports of one file cannot both create its rows.
 *
 * A lock file names its holder beyond its pid: the host, the process's start time (Linux: `/proc/PID/stat`, in
 * clock ticks since boot, with the boot's id) and a random nonce. A holder is live when its pid runs on this host
 * and, where the start time is known, that pid's process started when the holder did: a pid reused by another
 * program after a crash is not the holder. A stale lock is taken over by moving it aside (rename is atomic) and
 * checking that what was moved is the stale holder's, so two processes taking over one stale lock cannot both win.
 * A lock is removed when its scope closes and, whatever ends the process short of SIGKILL, on its exit
 * (src/Leftovers.ts).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { RunError } from "../Errors.js"
import { cannotWrite } from "../files/Write.js"
import { removeOnExit } from "../Leftovers.js"

const Holder = Schema.Struct({
  pid: Schema.Number,
  host: Schema.String,
  command: Schema.String,
  started: Schema.String,
  /** The run directory the holder writes (writer locks). */
  runDir: Schema.optional(Schema.String),
  /** `/proc/PID/stat`'s start time and the boot's id (Linux); absent elsewhere and in older locks. */
  startTicks: Schema.optional(Schema.String),
  boot: Schema.optional(Schema.String),
  nonce: Schema.optional(Schema.String)
})
type Holder = typeof Holder.Type
const decodeHolder = Schema.decodeUnknownOption(Schema.parseJson(Holder))

const readHolder = (path: string): Holder | undefined => {
  try {
    const held = decodeHolder(fs.readFileSync(path, "utf8"))
    return held._tag === "Some" ? held.value : undefined
  } catch {
    return undefined
  }
}

const readOr = (path: string): string | undefined => {
  try {
    return fs.readFileSync(path, "utf8").trim()
  } catch {
    return undefined
  }
}

/** Field 22 of `/proc/PID/stat` (the process's start, in clock ticks after boot); undefined off Linux. */
const startTicksOf = (pid: number | "self"): string | undefined => {
  const stat = readOr(`/proc/${pid}/stat`)
  if (stat === undefined) return undefined
  // The command name (field 2) is in parentheses and may hold spaces: count from the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return fields[19]
}

const bootId = (): string | undefined => readOr("/proc/sys/kernel/random/boot_id")

const runs = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === "EPERM" // it exists, owned by someone else
  }
}

/** Whether `holder` is a process that still runs: its pid, on this host, started when the holder did. */
const isLive = (holder: Holder): boolean => {
  if (holder.host !== os.hostname()) return true // another machine's (a shared folder): never taken over
  if (holder.pid === process.pid && holder.nonce !== undefined) return holder.nonce === ownNonce
  if (!runs(holder.pid)) return false
  if (holder.startTicks === undefined) {
    // A lock of an older version: no identity beyond the pid, but its command line says whether it is us.
    const cmdline = readOr(`/proc/${holder.pid}/cmdline`)
    return cmdline === undefined || cmdline.includes("fsm-bulk") || cmdline.includes(process.argv[1] ?? "bin.js")
  }
  if (holder.boot !== undefined && bootId() !== undefined && holder.boot !== bootId()) return false
  const now = startTicksOf(holder.pid)
  return now === undefined || now === holder.startTicks
}

/** This process's nonce: one per process, so a lock written by it is recognised as its own. */
const ownNonce = randomBytes(12).toString("hex")
const ownTicks = startTicksOf("self")
const ownBoot = bootId()

export const holderOf = (command: string, started: string, runDir?: string): Holder => ({
  pid: process.pid,
  host: os.hostname(),
  command,
  started,
  ...(runDir !== undefined ? { runDir } : {}),
  ...(ownTicks !== undefined ? { startTicks: ownTicks } : {}),
  ...(ownBoot !== undefined ? { boot: ownBoot } : {}),
  nonce: ownNonce
})

const isOurs = (path: string): boolean => readHolder(path)?.nonce === ownNonce

/**
 * Creates `path` holding `holder`, or answers the live holder that has it. The file appears whole or not at all
 * (written aside, then hard-linked into place, which fails when it exists).
 */
const take = (path: string, holder: Holder): Holder | undefined => {
  const aside = `${path}.${process.pid}.${ownNonce}.tmp`
  const forgetAside = removeOnExit(aside)
  fs.writeFileSync(aside, `${JSON.stringify(holder)}\n`)
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        fs.linkSync(aside, path)
        return undefined
      } catch (error) {
        if ((error as { code?: string }).code !== "EEXIST") throw error
      }
      const other = readHolder(path)
      if (other !== undefined && isLive(other)) return other
      // Its holder is gone (or it was never written whole): move it aside, and take over only if what was moved
      // is what was judged stale; a lock another process made meanwhile is put back.
      const moved = `${path}.${ownNonce}.stale`
      try {
        fs.renameSync(path, moved)
      } catch (error) {
        if ((error as { code?: string }).code === "ENOENT") continue
        throw error
      }
      const was = readHolder(moved)
      if (was !== undefined && isLive(was)) {
        try {
          fs.linkSync(moved, path)
        } catch {
          // a third process came in: it holds the file now
        }
        fs.rmSync(moved, { force: true })
        return readHolder(path) ?? was
      }
      fs.rmSync(moved, { force: true })
    }
    return readHolder(path) ?? holder
  } finally {
    fs.rmSync(aside, { force: true })
    forgetAside()
  }
}

/**
 * Holds the lock file `path` for the scope. A live holder is refused at once with exit 2 (`RunError`, reason
 * `Locked`), its message made by `refusal`. The lock is removed when the scope closes, or on exit.
 */
export const holdLock = (
  path: string,
  holder: Holder,
  refusal: (other: Holder) => string
) =>
  Effect.acquireRelease(
    Effect.flatMap(
      Effect.try({
        try: () => take(path, holder),
        catch: (cause) => cannotWrite(Path.dirname(path), cause, `cannot write to ${Path.dirname(path)}`)
      }),
      (other) =>
        other === undefined
          ? Effect.sync(() => removeOnExit(path, () => isOurs(path)))
          : Effect.fail(new RunError({ reason: "Locked", message: refusal(other) }))
    ),
    (forget) =>
      Effect.sync(() => {
        forget()
        if (isOurs(path)) fs.rmSync(path, { force: true })
      })
  )

/** Who a holder is, for a refusal: `pid 123 on host (import, since …)`. */
export const holderText = (h: Holder): string =>
  `pid ${h.pid} on ${h.host} (${h.command}${h.runDir !== undefined ? ` into ${h.runDir}` : ""}, since ${h.started})`

// --- writer locks ------------------------------------------------------------------------------------------------

/**
 * Where writer locks live: `$FSM_BULK_STATE_DIR`, else `$XDG_STATE_HOME/fsm-bulk/locks`, else
 * `~/.local/state/fsm-bulk/locks` (`%LOCALAPPDATA%\fsm-bulk\locks` on Windows). Per user: two users of one
 * machine with one account are not kept apart.
 */
const locksDir = (): string => {
  const env = process.env
  if (env.FSM_BULK_STATE_DIR) return Path.join(env.FSM_BULK_STATE_DIR, "locks")
  if (env.XDG_STATE_HOME) return Path.join(env.XDG_STATE_HOME, "fsm-bulk", "locks")
  if (process.platform === "win32" && env.LOCALAPPDATA) return Path.join(env.LOCALAPPDATA, "fsm-bulk", "locks")
  return Path.join(os.homedir(), ".local", "state", "fsm-bulk", "locks")
}

/** The server as one spelling: lower-case scheme and host, no trailing slash. */
const serverOf = (baseUrl: string): string => {
  try {
    const url = new URL(baseUrl)
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`
  } catch {
    return baseUrl.replace(/\/+$/, "")
  }
}

/** `customers-<hash>.lock`: the hash of the server and account (the apiKey is never written in clear). */
export const writerLockPath = (baseUrl: string, account: string, resource: string): string => {
  const hash = createHash("sha256").update(`${serverOf(baseUrl)}\n${account}`).digest("hex").slice(0, 24)
  return Path.join(locksDir(), `${resource}-${hash}.lock`)
}

/**
 * Holds the writer lock of each of `resources` of the account at `baseUrl` for the scope, in name order; a live
 * holder of any is refused at once (exit 2), naming it.
 */
export const lockWriters = Effect.fn("Locks.writers")(function*(
  target: { readonly baseUrl: string; readonly account: string },
  resources: ReadonlyArray<string>,
  command: string,
  runDir: string,
  started: string
) {
  const dir = locksDir()
  yield* Effect.try({
    try: () => fs.mkdirSync(dir, { recursive: true, mode: 0o700 }),
    catch: (cause) => cannotWrite(dir, cause, `cannot create the lock folder ${dir}`)
  })
  for (const resource of [...new Set(resources)].sort()) {
    const path = writerLockPath(target.baseUrl, target.account, resource)
    yield* holdLock(
      path,
      holderOf(command, started, runDir),
      (other) =>
        `another fsm-bulk process is writing ${resource} of this account at ${serverOf(target.baseUrl)}: ` +
        `${holderText(other)}; two at once would send the same rows twice. Wait for it to end ` +
        `(if that process is gone, ${path} is taken over on the next run)`
    )
  }
})
