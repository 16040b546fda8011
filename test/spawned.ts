/**
 * A command run to its end without holding the test's process: the cli tier's files share their worker process
 * (`--no-isolate`), and vitest's worker answers its runner over IPC with a 60 s timeout (birpc); a `spawnSync` or
 * `execFileSync` that blocks the event loop past that deadline makes the pending "onTaskUpdate" calls time out
 * ("[vitest-worker]: Timeout calling onTaskUpdate") in whatever file the worker runs then. Use this for anything that
 * may take longer than an instant (the built CLI, strace, npm, unzip): the event loop keeps turning while it runs.
 */
import { Effect } from "effect"
import { spawn, type SpawnOptions } from "node:child_process"

export interface Spawned {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface SpawnedOptions extends Pick<SpawnOptions, "cwd" | "env"> {
  /** Killed with SIGKILL after this many ms (a hang): `signal` says so. */
  readonly timeout?: number
  /** How stdout is decoded (utf8 unless told). */
  readonly encoding?: BufferEncoding
  /** Given on stdin, then stdin is closed (stdin is closed at once without it). */
  readonly input?: string
}

/** Runs `command args` to its end (or its timeout); its exit status, signal and both outputs. */
export const spawned = (
  command: string,
  args: ReadonlyArray<string>,
  options: SpawnedOptions = {}
): Effect.Effect<Spawned> =>
  Effect.async<Spawned>((resume) => {
    const child = spawn(command, args, {
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout!.on("data", (d: Buffer) => out.push(d))
    child.stderr!.on("data", (d: Buffer) => err.push(d))
    if (options.input !== undefined) child.stdin!.end(options.input)
    const timer = options.timeout === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), options.timeout)
    child.on("error", (error) => {
      clearTimeout(timer)
      resume(Effect.die(error))
    })
    child.on("close", (status, signal) => {
      clearTimeout(timer)
      resume(Effect.succeed({
        status,
        signal,
        stdout: Buffer.concat(out).toString(options.encoding ?? "utf8"),
        stderr: Buffer.concat(err).toString("utf8")
      }))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })
