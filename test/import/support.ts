/**
 * Helpers of the import tests: a sandbox on a free loopback port, the real client for it (scaled settings), a
 * temporary directory per test, files written byte for byte, reports read back, and the built CLI spawned as a
 * child process (for exit codes, signals and SIGKILL).
 */
import { parse } from "csv-parse/sync"
import { Effect, type Layer } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { Api } from "../../src/client/Api.js"
import type { ClientSettingsInput } from "../../src/client/Config.js"
import { type ImportJob, runImport } from "../../src/import/Pipeline.js"
import type { ImportServices } from "../../src/import/Services.js"
import { runValidate } from "../../src/import/ValidateRun.js"
import type { RequestLogEntry, RunningSandbox, SandboxOptionsInput } from "../../src/sandbox/Sandbox.js"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { spawned } from "../spawned.js"
import { temporaryDir, testClientLayer } from "../support.js"

export const root = fileURLToPath(new URL("../..", import.meta.url))
/** The built CLI; FSM_DRILL_BIN points the CLI tests and the drills (which spawn through here) at another build. */
export const bin = process.env.FSM_DRILL_BIN ?? Path.join(root, "dist/bin.js")

export const startTestSandbox = (options: SandboxOptionsInput = {}) =>
  startSandbox({ port: 0, rate: { limit: 10_000, windowMs: 1_000 }, ...options })

/** The real client of `sandbox`, for its account `apiKey` (default the first), with fast backoff. */
export const apiOf = (
  sandbox: RunningSandbox,
  apiKey?: string,
  overrides: Partial<ClientSettingsInput> = {}
): Layer.Layer<Api | ImportServices> =>
  testClientLayer(sandbox, {
    credentials: sandbox.accounts.find((a) => a.apiKey === apiKey) ?? sandbox.accounts[0]!,
    ...overrides
  })

/** A temporary directory removed with the test's scope. */
export const tempDir = temporaryDir("fsm-import-")

/** Writes `content` (strings as UTF-8 without BOM) at `dir/name`; returns the path. */
export const put = (dir: string, name: string, content: string | Uint8Array): string => {
  const path = Path.join(dir, name)
  writeFileSync(path, content)
  return path
}

/** A customers CSV of `n` rows `K-i,Cliente i`; the rows at `invalidAt` (0-based) have no name, so are invalid. */
export const customersCsv = (n: number, invalidAt: ReadonlyArray<number> = []): string =>
  [
    "externalId,name",
    ...Array.from({ length: n }, (_, i) => (invalidAt.includes(i) ? `K-${i},` : `K-${i},Cliente ${i}`))
  ].join("\n") + "\n"

/** Windows-1252 bytes of a string (the characters used exist in Latin-1 alike). */
export const cp1252 = (text: string): Uint8Array => Buffer.from(text, "latin1")

export type ReportRow = Record<string, string>

/** A report's rows as `row:status` (`"2:created"`), the form tests compare whole reports in. */
export const rowStatuses = (rows: ReadonlyArray<Record<string, string>>): ReadonlyArray<string> =>
  rows.map((r) => `${r._row}:${r._status}`)

/** The rows of a run's report.csv (BOM stripped), keyed by column. */
export const readReport = (runDir: string, name = "report.csv"): ReadonlyArray<ReportRow> =>
  parse(readFileSync(Path.join(runDir, name)), {
    columns: true,
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true
  }) as Array<ReportRow>

export const readSummary = (runDir: string): Record<string, any> =>
  JSON.parse(readFileSync(Path.join(runDir, "summary.json"), "utf8"))

export const readJournalLines = (runDir: string): ReadonlyArray<Record<string, any>> =>
  readFileSync(Path.join(runDir, "journal.ndjson"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .flatMap((l) => {
      try {
        return [JSON.parse(l)]
      } catch {
        return []
      }
    })

/** A job with the defaults a test does not care about. */
export const job = (fields: Pick<ImportJob, "resource" | "file" | "runDir"> & Partial<ImportJob>): ImportJob => ({
  command: "import",
  read: { encoding: "auto", delimiter: "auto" },
  dateFormat: "auto",
  decimal: "auto",
  mode: "upsert",
  dryRun: false,
  verify: false,
  ...fields
})

/** `fsm-bulk validate` in process, with the same defaults as `job` (auto encoding, delimiter and formats, upsert). */
export const validateFile = (fields: Pick<ImportJob, "resource" | "file" | "runDir"> & Partial<ImportJob>) => {
  return runValidate(job(fields))
}

export const importInto = (sandbox: RunningSandbox, fields: Parameters<typeof job>[0], apiKey?: string) =>
  runImport(job(fields)).pipe(Effect.provide(apiOf(sandbox, apiKey)))

/** `importInto` with some of the run's services the test's own (a `RunStop`, a `Journals`, `Notices`). */
export const importWith = <S extends ImportServices>(
  sandbox: RunningSandbox,
  fields: Parameters<typeof job>[0],
  services: Layer.Layer<S>
) => runImport(job(fields)).pipe(Effect.provide(services), Effect.provide(apiOf(sandbox)))

/** Writes (POST, PUT, PATCH, DELETE) the sandbox received, logins left out. */
export const writes = (log: ReadonlyArray<RequestLogEntry>) =>
  log.filter((e) => e.method !== "GET" && !/\/login$/i.test(e.path))

// --- attachments

/** What a hostile attachment path would leak. */
export const secret = "FSM_API_TOKEN=do-not-send-me\n"

/** A workbook folder `dir/book` holding `docs/contrato.pdf`, beside `dir/outside/secret.txt`, with hostile links. */
export const layout = (dir: string) => {
  const book = Path.join(dir, "book")
  const outside = Path.join(dir, "outside")
  mkdirSync(Path.join(book, "docs"), { recursive: true })
  mkdirSync(outside)
  writeFileSync(Path.join(outside, "secret.txt"), secret)
  writeFileSync(Path.join(book, "docs", "contrato.pdf"), "%PDF-1.4 contrato\n")
  symlinkSync(Path.join(outside, "secret.txt"), Path.join(book, "link.txt"))
  symlinkSync(outside, Path.join(book, "linked-folder"))
  symlinkSync(Path.join(book, "docs", "contrato.pdf"), Path.join(book, "atalho.pdf"))
  execFileSync("mkfifo", [Path.join(book, "pipe")])
  return { book, outside }
}

// --- the CLI as a child process --------------------------------------------------------------------------------

export interface Cli {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** The environment of a spawned CLI against `sandbox` (credentials in the environment, as users give them). */
const cliEnv = (sandbox: RunningSandbox | undefined, env: Record<string, string>): Record<string, string> => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build first (npx tsc -p tsconfig.json)`)
  const account = sandbox?.accounts[0]
  return {
    PATH: process.env.PATH ?? "",
    ...(sandbox !== undefined
      ? { FSM_BASE_URL: sandbox.url, FSM_API_KEY: account!.apiKey, FSM_API_TOKEN: account!.apiToken }
      : {}),
    ...env
  }
}

/** Spawns `node dist/bin.js …args` against `sandbox`, for a test that watches or signals it while it runs. */
export const spawnCli = (
  args: ReadonlyArray<string>,
  sandbox: RunningSandbox | undefined,
  cwd: string,
  env: Record<string, string> = {}
): Cli => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: cliEnv(sandbox, env),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  child.stdout!.on("data", (d) => (out += String(d)))
  child.stderr!.on("data", (d) => (err += String(d)))
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal }))
  )
  return { child, stdout: () => out, stderr: () => err, exit }
}

/** Runs the CLI to its end (`spawned`: the test's process keeps turning, and an interrupted test ends the child). */
export const runCli = (
  args: ReadonlyArray<string>,
  sandbox: RunningSandbox | undefined,
  cwd: string,
  env: Record<string, string> = {}
) =>
  Effect.suspend(() => spawned(process.execPath, [bin, ...args], { cwd, env: cliEnv(sandbox, env) })).pipe(
    Effect.map(({ status, stderr, stdout }) => ({ code: status, stdout, stderr }))
  )

/** Waits until `check` holds, polling (fails the test after `timeoutMs`). */
export const until = (check: () => boolean, timeoutMs = 20_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* Effect.sleep(10)
    }
  })

/** How many journal lines of `state` the run directory holds (0 while the journal does not exist). */
export const journalCount = (runDir: string, state: string): number =>
  existsSync(Path.join(runDir, "journal.ndjson")) ? readJournalLines(runDir).filter((l) => l.state === state).length : 0
