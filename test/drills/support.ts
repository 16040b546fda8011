/**
 * What the fault drills share: the real sandbox on a free loopback port with the scaled budget, the built CLI
 * (`node dist/bin.js`, built by `npm test` first) spawned against it with the credentials in the environment,
 * input files written into a temporary directory, and the run directory's report and journal read back.
 */
import { assert } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import type { ChildProcess } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { RequestLogEntry, RunningSandbox, SandboxOptionsInput } from "../../src/sandbox/Sandbox.js"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { spawnCli as spawnImportCli } from "../import/support.js"

export { lastJson } from "../support.js"
import { temporaryDir } from "../support.js"

/** The built CLI; FSM_DRILL_BIN points the drills at another build (a mutant, to prove a drill can fail). */
export const bin = process.env.FSM_DRILL_BIN ?? fileURLToPath(new URL("../../dist/bin.js", import.meta.url))

/** The budget on both sides: the sandbox refuses past it, the client is told it with `--rate`. */
export const drillRate = { limit: 200, windowMs: 2_000 }

/**
 * The client's flags in every drill: the scaled budget, a short pause after a rate-limit answer, and enough
 * attempts that a 10 % fault rate never exhausts them (0.1^20).
 */
export const clientFlags = ["--rate", "200/2s", "--rate-limit-pause", "1s", "--max-attempts", "20"]

export const startDrillSandbox = (options: SandboxOptionsInput = {}) =>
  startSandbox({ port: 0, rate: drillRate, ...options })

/** A temporary directory removed with the test's scope. */
export const tempDir = temporaryDir("fsm-drill-")

// --- input files ---------------------------------------------------------------------------------------------

/** A valid CPF from nine digits (the two check digits computed). */
const cpf = (nine: string): string => {
  const d = [...nine].map(Number)
  for (const length of [9, 10]) {
    let sum = 0
    for (let i = 0; i < length; i++) sum += d[i]! * (length + 1 - i)
    d.push(((sum * 10) % 11) % 10)
  }
  return d.join("")
}

export interface CustomersFile {
  readonly file: string
  readonly rows: number
  /** externalIds of the valid rows. */
  readonly valid: ReadonlyArray<string>
  /** externalIds of the rows validation refuses (a CPF with wrong check digits): never sent. */
  readonly invalid: ReadonlyArray<string>
}

/** `rows` customers with distinct valid CPFs; the rows at `invalidAt` (0-based) carry a CPF with wrong check digits. */
export const customersFile = (
  dir: string,
  name: string,
  rows: number,
  invalidAt: ReadonlyArray<number> = []
): CustomersFile => {
  const valid: Array<string> = []
  const invalid: Array<string> = []
  const lines = ["externalId,name,cpfCnpj"]
  for (let i = 0; i < rows; i++) {
    const key = `DRILL-${String(i + 1).padStart(4, "0")}`
    const good = cpf(String(200_000_000 + i))
    const cell = invalidAt.includes(i) ? `${good.slice(0, 10)}${(Number(good[10]) + 1) % 10}` : good
    ;(invalidAt.includes(i) ? invalid : valid).push(key)
    lines.push(`${key},Cliente ${i + 1},${cell}`)
  }
  const file = Path.join(dir, name)
  writeFileSync(file, `${lines.join("\n")}\n`)
  return { file, rows, valid, invalid }
}

/** `rows` tickets: a resource without a correlation key (a lost create cannot be looked up). */
export const ticketsFile = (dir: string, name: string, rows: number): string => {
  const file = Path.join(dir, name)
  writeFileSync(
    file,
    `${
      ["title,description", ...Array.from({ length: rows }, (_, i) => `Chamado ${i + 1},Ar-condicionado pingando`)]
        .join("\n")
    }\n`
  )
  return file
}

// --- the CLI as a child process --------------------------------------------------------------------------------

export interface Cli {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** Spawns `node dist/bin.js …args` against `sandbox`, the credentials in the environment as users give them. */
export const spawnCli = (args: ReadonlyArray<string>, sandbox: RunningSandbox, cwd: string): Cli =>
  spawnImportCli(args, sandbox, cwd)

/** Runs the CLI to its end; the child is killed if the test is interrupted first. */
export const runCli = (args: ReadonlyArray<string>, sandbox: RunningSandbox, cwd: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() => spawnCli(args, sandbox, cwd)),
    (cli) => Effect.promise(() => cli.exit.then(({ code }) => ({ code, stdout: cli.stdout(), stderr: cli.stderr() }))),
    (cli) =>
      Effect.sync(() => cli.child.exitCode === null && cli.child.signalCode === null && cli.child.kill("SIGKILL"))
  )

/** Waits until `check` holds, polling; fails the test after `timeoutMs`. */
export const until = (what: string, check: () => boolean, timeoutMs = 30_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`${what}: not reached within ${timeoutMs} ms`))
      yield* Effect.sleep(5)
    }
  })

// --- what a run left behind ----------------------------------------------------------------------------------

export type ReportRow = Record<string, string>

export const readReport = (runDir: string, file = "report.csv"): ReadonlyArray<ReportRow> =>
  parse(readFileSync(Path.join(runDir, file)), { columns: true, bom: true, skip_empty_lines: true }) as Array<
    ReportRow
  >

export const readSummary = (runDir: string): Record<string, any> =>
  JSON.parse(readFileSync(Path.join(runDir, "summary.json"), "utf8"))

/** The journal's lines (a line a kill cut in half is left out, as the reader does). */
export const readJournal = (runDir: string): ReadonlyArray<Record<string, any>> => {
  const path = Path.join(runDir, "journal.ndjson")
  if (!existsSync(path)) return []
  return readFileSync(path, "utf8")
    .split("\n")
    .flatMap((line) => {
      if (line.trim() === "") return []
      try {
        return [JSON.parse(line)]
      } catch {
        return []
      }
    })
}

/** A run's rows so far by its journal: those done, and those sent and not yet answered (in flight). */
export const journalRows = (runDir: string) => {
  const journal = readJournal(runDir)
  const done = new Set(journal.filter((l) => l.state === "done").map((l) => l.row as number))
  const inFlight = new Set(
    journal.filter((l) => l.state === "sending" && !done.has(l.row)).map((l) => l.row as number)
  )
  return { journal, done, inFlight }
}

/**
 * Until the run in `runDir` has `doneAtLeast` rows done and some in flight: the moment for a kill that must catch rows
 * between their send and their answer. Waiting for rows done alone left that to chance: under load a kill once landed
 * when no row was in flight.
 */
export const untilInFlight = (runDir: string, doneAtLeast: number, timeoutMs = 60_000) =>
  until(`${doneAtLeast} rows done and some in flight`, () => {
    const { done, inFlight } = journalRows(runDir)
    return done.size >= doneAtLeast && inFlight.size > 0
  }, timeoutMs)

export const isLogin = (e: RequestLogEntry) => /\/login$/i.test(e.path)

/** Requests that write `path` (the collection itself: POST/PUT/PATCH/DELETE), logins left out. */
export const writesTo = (log: ReadonlyArray<RequestLogEntry>, path: string) =>
  log.filter((e) => e.method !== "GET" && !isLogin(e) && e.path.toLowerCase() === `/v2${path}`.toLowerCase())

/** The connection was destroyed: no response was sent (a reset, or a write whose answer was dropped). */
export const destroyed = (e: RequestLogEntry) => e.status === undefined

/** How many rows have each `_status`. */
export const statusCounts = (report: ReadonlyArray<ReportRow>): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const r of report) counts[r._status!] = (counts[r._status!] ?? 0) + 1
  return counts
}

/** The writes the report says were attempted: the sum of `_attempts`. */
export const sumAttempts = (report: ReadonlyArray<ReportRow>) =>
  report.reduce((n, r) => n + (r._attempts === "" || r._attempts === undefined ? 0 : Number(r._attempts)), 0)

/** Attempts that got no answer (`timeout`, `reset` in `_retry_outcomes`): those may never have reached the server. */
export const unanswered = (report: ReadonlyArray<ReportRow>) =>
  report.reduce(
    (n, r) => n + (r._retry_outcomes ?? "").split(";").filter((w) => w === "timeout" || w === "reset").length,
    0
  )

/**
 * The report's `_attempts` account for every write the server received, and count more only for attempts that got
 * no answer: a request given up on a loaded machine (its timeout) may have been lost before the server read it.
 */
export const assertAttemptsMatchWrites = (report: ReadonlyArray<ReportRow>, writes: number) => {
  const attempts = sumAttempts(report)
  assert.isAtLeast(attempts, writes, "every write the server received is counted in the report's _attempts")
  assert.isAtMost(
    attempts,
    writes + unanswered(report),
    "the report's _attempts beyond the writes received are attempts that got no answer"
  )
}
