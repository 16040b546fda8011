/**
 * Both tiers' files share their worker processes (`--no-isolate`, vitest.config.ts), so what one file leaves in
 * one would reach the next. Around every file of either tier: the environment, working directory and `process.exitCode`
 * are put back as they were before it; a child process, server, ref'd timer or signal/error listener still there
 * after the file's own clean-up fails the file (and is ended, so the next file does not inherit it). The run's
 * shared PostgreSQL cluster (test/fleet/postgres-run.ts) is the one child allowed to outlive the file that
 * started it.
 */
import { existsSync, readFileSync } from "node:fs"
import { afterAll, beforeAll, inject } from "vitest"
import { clusterFile } from "../fleet/postgres-run.js"
import { guardFile, guarding, type ProcessState, processState } from "./leaks.js"

/** The run's shared PostgreSQL cluster, once a file started it. */
const sharedCluster = (): Set<number> => {
  const file = clusterFile(inject("fsmPostgresRun"))
  if (!existsSync(file)) return new Set()
  return new Set([(JSON.parse(readFileSync(file, "utf8")) as { readonly pid: number }).pid])
}

let before: ProcessState | undefined

beforeAll(() => {
  before = processState()
  guarding.file = true
})

afterAll(async () => {
  if (before === undefined) return
  const state = before
  before = undefined
  guarding.file = false
  await guardFile(state, sharedCluster)
})
