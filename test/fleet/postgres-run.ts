/**
 * One throwaway PostgreSQL cluster for a whole test run, instead of one per test file: vitest's global set-up
 * (vitest.config.ts) gives each project a directory of the run; the first test that needs PostgreSQL starts the
 * cluster (test/fleet/support.ts, `startPostgres`) and writes its port and process there, every other file of the
 * run uses it, and this module's teardown stops it after the last file. Each test still gets an empty database of
 * its own. A cluster costs an `initdb` and a start, seconds of CPU on a loaded machine; the run had 21 of them.
 * Nothing is started when no test of the run needs PostgreSQL.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The directory of this run's shared PostgreSQL cluster. */
    readonly fsmPostgresRun: string
  }
}

/** The run's cluster, once started: its port, the process group to stop, the directory to remove. */
export interface SharedCluster {
  readonly port: number
  readonly pid: number
  readonly dir: string
}

/** Where the run's cluster is described, once it is up. */
export const clusterFile = (runDir: string): string => Path.join(runDir, "cluster.json")

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const signalGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // already gone
  }
}

/** Stops the run's cluster, if one was started (SIGINT: PostgreSQL's fast shutdown), and removes its files. */
export const stopSharedCluster = async (runDir: string): Promise<void> => {
  const file = clusterFile(runDir)
  if (!existsSync(file)) return
  const cluster = JSON.parse(readFileSync(file, "utf8")) as SharedCluster
  signalGroup(cluster.pid, "SIGINT")
  const until = Date.now() + 10_000
  while (alive(cluster.pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
  if (alive(cluster.pid)) signalGroup(cluster.pid, "SIGKILL")
  rmSync(cluster.dir, { recursive: true, force: true })
}

export default function setup(project: TestProject) {
  const runDir = mkdtempSync(Path.join(tmpdir(), "fsm-pg-run-"))
  project.provide("fsmPostgresRun", runDir)
  return async () => {
    await stopSharedCluster(runDir)
    rmSync(runDir, { recursive: true, force: true })
  }
}
