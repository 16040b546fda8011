/**
 * The cli tier's files share their worker process (`--no-isolate`, vitest.config.ts), so what one file leaves in
 * it would reach the next. Around every cli-tier file: the environment, working directory and `process.exitCode`
 * are put back as they were before it; a child process, server, ref'd timer or signal/error listener still there
 * after the file's own clean-up fails the file (and is ended, so the next file does not inherit it). The run's
 * shared PostgreSQL cluster (test/fleet/postgres-run.ts) is the one child allowed to outlive the file that
 * started it.
 */
import { existsSync, readFileSync } from "node:fs"
import { afterAll, beforeAll, inject } from "vitest"
import { clusterFile } from "../fleet/postgres-run.js"
import { childProcesses, leftBehind, type ProcessState, processState, putBack, removeAddedListeners } from "./leaks.js"

/** The run's shared PostgreSQL cluster, once a file started it. */
const sharedCluster = (): Set<number> => {
  const file = clusterFile(inject("fsmPostgresRun"))
  if (!existsSync(file)) return new Set()
  return new Set([(JSON.parse(readFileSync(file, "utf8")) as { readonly pid: number }).pid])
}

/** A child being stopped or a server being closed may take a moment past the file's last hook: wait for it. */
const settled = async (before: ProcessState): Promise<Array<string>> => {
  const until = Date.now() + 5_000
  for (;;) {
    const left = leftBehind(before, sharedCluster())
    if (left.length === 0 || Date.now() > until) return left
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

let before: ProcessState | undefined

beforeAll(() => {
  before = processState()
})

afterAll(async () => {
  if (before === undefined) return
  const state = before
  before = undefined
  putBack(state)
  const left = await settled(state)
  if (left.length === 0) return
  removeAddedListeners(state)
  const shared = sharedCluster()
  for (const pid of childProcesses()) {
    if (state.children.has(pid) || shared.has(pid)) continue
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`this file left behind in its process (the next file would inherit it): ${left.join("; ")}`)
})
