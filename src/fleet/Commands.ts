/**
 * The fleet's commands (cli-contract.md, "Fleet"): `fleet init`, `accounts add|list|remove`, `worker`,
 * `submit import`, `status`, `wait`, `fetch`, `cancel`. Every one takes `--fleet URL` (env FSM_FLEET_URL).
 */
import { Args, Command, Options } from "@effect/cli"
import { Config, Console, Effect, Either, Option } from "effect"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { readCredentials, validateBaseUrl } from "../cli/Connection.js"
import { type ExitCode, jsonOption, say, summary as printSummary } from "../cli/Output.js"
import { UsageError } from "../Errors.js"
import {
  dryRunOption,
  fileArg,
  modeOption,
  parsingOptions,
  readSettings,
  resourceArg,
  resourceName,
  verifyOption,
  verifyWaitOption
} from "../import/Commands.js"
import { journalFile } from "../import/Journal.js"
import type { Summary } from "../import/Report.js"
import { summaryFile } from "../import/RunDir.js"
import { modeProblem } from "../import/WritePlan.js"
import { resource as resourceOf } from "../Resources.js"
import { shielded, stopOnSignals } from "../Signals.js"
import { formatRate, parseDuration, parseRate } from "../Units.js"
import { mergeChunks } from "./Chunks.js"
import { FleetError } from "./Errors.js"
import { dequeue, fleetUrl, leaseMs, migrateEngine, openQueue } from "./Queue.js"
import { fleetKey, seal } from "./Secrets.js"
import {
  files,
  finalStates,
  initStore,
  type JobRow,
  jobRow,
  journalLines,
  openStore,
  requireInit,
  schema,
  type Store,
  takeLease
} from "./Store.js"
import { type ImportSpec, submitImport } from "./Submit.js"
import { runWorker } from "./Worker.js"

const fleetOption = Options.text("fleet").pipe(
  Options.withFallbackConfig(Config.string("FSM_FLEET_URL")),
  Options.withDescription("The fleet's store: postgres://USER@HOST:PORT/DB (env FSM_FLEET_URL)")
)

const usage = (message: string) => new UsageError({ message })

/** The store of an initialised fleet, for the command's scope. */
const fleetStore = (text: string) =>
  Effect.gen(function*() {
    const url = yield* fleetUrl(text)
    const store = yield* openStore(url)
    yield* requireInit(store)
    return { url, store }
  })

const jobArg = Args.text({ name: "JOB" }).pipe(Args.withDescription("A job id, as `submit` printed it"))

// --- fleet init ------------------------------------------------------------------------------------------------

const initCommand = Command.make("init", { fleet: fleetOption, json: jsonOption }, (a) =>
  Effect.gen(function*() {
    const url = yield* fleetUrl(a.fleet)
    const store = yield* openStore(url)
    yield* migrateEngine(store.pool)
    yield* initStore(store)
    yield* printSummary(a.json, { command: "fleet init", ready: true }, ["fleet ready: queue and tables in place"])
    return 0 as ExitCode
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Create the queue's and the tool's tables in the fleet's PostgreSQL (idempotent)")
  )

export const fleetCommand = Command.make("fleet").pipe(
  Command.withDescription("Set up the store that workers and submitters share"),
  Command.withSubcommands([initCommand])
)

// --- accounts ----------------------------------------------------------------------------------------------------

const accountName = (name: string) =>
  /^[A-Za-z0-9][\w.-]{0,62}$/.test(name)
    ? Effect.succeed(name)
    : Effect.fail(usage(`account name "${name}": letters, digits, ".", "_" and "-" only (at most 63)`))

const accountsAdd = Command.make("add", {
  name: Args.text({ name: "NAME" }),
  baseUrl: Options.text("base-url").pipe(Options.withDescription("The account's API address, ending in /v2")),
  credentials: Options.file("credentials").pipe(
    Options.withDescription("JSON file {\"apiKey\": …, \"apiToken\": …} (otherwise env FSM_API_KEY and FSM_API_TOKEN)"),
    Options.optional
  ),
  rate: Options.text("rate").pipe(
    Options.withDescription("The account's own request budget N/WINDOW, within the worker's"),
    Options.optional
  ),
  fleet: fleetOption,
  json: jsonOption
}, (a) =>
  Effect.gen(function*() {
    const name = yield* accountName(a.name)
    const baseUrl = yield* validateBaseUrl(a.baseUrl)
    if (Option.isSome(a.rate)) {
      yield* Either.mapLeft(parseRate(a.rate.value), (why) => usage(`--rate: ${why}`))
    }
    const credentials = yield* readCredentials(a.credentials)
    if (Option.isNone(credentials)) {
      return yield* usage(
        `no credentials for account "${name}": set FSM_API_KEY and FSM_API_TOKEN, or pass --credentials FILE`
      )
    }
    const key = yield* fleetKey
    const { store } = yield* fleetStore(a.fleet)
    yield* store.query(
      `INSERT INTO ${schema}.accounts (name, base_url, rate, secret) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO UPDATE SET base_url = EXCLUDED.base_url, rate = EXCLUDED.rate, secret = EXCLUDED.secret`,
      [name, baseUrl, Option.getOrNull(a.rate), seal(key, credentials.value)]
    )
    yield* printSummary(a.json, { command: "accounts add", account: name, baseUrl }, [
      `account ${name}: ${baseUrl} (credentials stored encrypted)`
    ])
    return 0 as ExitCode
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Add (or replace) an account: its API address and credentials, encrypted at rest")
  )

const accountsList = Command.make("list", { fleet: fleetOption, json: jsonOption }, (a) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    const rows = yield* store.query<{ name: string; base_url: string; rate: string | null }>(
      `SELECT name, base_url, rate FROM ${schema}.accounts ORDER BY name`
    )
    const accounts = rows.map((r) => ({ name: r.name, baseUrl: r.base_url, rate: r.rate }))
    if (a.json) yield* Console.log(JSON.stringify({ accounts }))
    else {
      for (const r of accounts) yield* Console.log(`${r.name}\t${r.baseUrl}${r.rate !== null ? `\t${r.rate}` : ""}`)
    }
    return 0 as ExitCode
  }).pipe(Effect.scoped)).pipe(Command.withDescription("List the accounts (never their credentials)"))

const accountsRemove = Command.make(
  "remove",
  { name: Args.text({ name: "NAME" }), fleet: fleetOption },
  (a) =>
    Effect.gen(function*() {
      const { store } = yield* fleetStore(a.fleet)
      const n = yield* store.count(`DELETE FROM ${schema}.accounts WHERE name = $1`, [a.name])
      if (n === 0) return yield* new FleetError({ reason: "NotFound", message: `no account "${a.name}" in this fleet` })
      yield* say(`account ${a.name} removed`)
      return 0 as ExitCode
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Remove an account and its credentials"))

export const accountsCommand = Command.make("accounts").pipe(
  Command.withDescription("The accounts the fleet works for"),
  Command.withSubcommands([accountsAdd, accountsList, accountsRemove])
)

// --- worker ------------------------------------------------------------------------------------------------------

export const workerCommand = Command.make("worker", {
  egressId: Options.text("egress-id").pipe(
    Options.withDescription("The egress address this worker's requests are counted under; one worker per id")
  ),
  sourceAddress: Options.text("source-address").pipe(
    Options.withDescription("Local address the requests leave from (binds outgoing connections)"),
    Options.optional
  ),
  rate: Options.text("rate").pipe(
    Options.withDefault("400/60s"),
    Options.withFallbackConfig(Config.string("FSM_RATE")),
    Options.withDescription(
      "The budget of this egress address N/WINDOW, shared by every job and account (env FSM_RATE)"
    )
  ),
  jobs: Options.integer("jobs").pipe(Options.withDefault(4), Options.withDescription("Jobs run at once")),
  fleet: fleetOption
}, (a) =>
  Effect.gen(function*() {
    const rate = yield* Either.mapLeft(parseRate(a.rate), (why) => usage(`--rate / FSM_RATE: ${why}`))
    if (a.jobs < 1) return yield* usage(`--jobs: ${a.jobs} is not a positive number`)
    const key = yield* fleetKey
    const { store, url } = yield* fleetStore(a.fleet)
    const lease = yield* leaseMs
    return yield* shielded(Effect.scoped(Effect.gen(function*() {
      const stop = yield* stopOnSignals({ stopping: "stopping: jobs in progress stop sending and are handed back" })
      yield* say(`worker ${a.egressId}: budget ${formatRate(rate)}, ${a.jobs} jobs at once`)
      yield* runWorker(store, url, key, {
        egressId: a.egressId,
        sourceAddress: Option.getOrUndefined(a.sourceAddress),
        rate,
        jobs: a.jobs,
        leaseMs: lease,
        say
      }, stop.stopped)
      return 0 as ExitCode
    })))
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Run jobs from the fleet's queue until SIGINT/SIGTERM (then hand back what it holds)")
  )

// --- submit --------------------------------------------------------------------------------------------------------

const accountOption = Options.text("account").pipe(Options.withDescription("The account the job works for"))

const submitImportCommand = Command.make("import", {
  resource: resourceArg,
  file: fileArg,
  account: accountOption,
  mode: modeOption,
  dryRun: dryRunOption,
  verify: verifyOption,
  verifyWait: verifyWaitOption,
  parsing: parsingOptions,
  chunkRows: Options.integer("chunk-rows").pipe(
    Options.withFallbackConfig(Config.integer("FSM_FLEET_CHUNK_ROWS")),
    Options.withDefault(10_000),
    Options.withDescription(
      "A CSV file of more rows is split into parts of this many rows that different workers take (env FSM_FLEET_CHUNK_ROWS)"
    )
  ),
  fleet: fleetOption,
  json: jsonOption
}, (a) =>
  Effect.gen(function*() {
    if (a.chunkRows < 1) return yield* usage(`--chunk-rows: ${a.chunkRows} is not a positive number`)
    const resource = yield* resourceName(a.resource)
    const problem = modeProblem(resourceOf(resource), a.mode)
    if (problem !== undefined) return yield* usage(problem)
    const verifyWaitMs = yield* Either.mapLeft(parseDuration(a.verifyWait), (why) => usage(`--verify-wait: ${why}`))
    const { store, url } = yield* fleetStore(a.fleet)
    const queue = yield* openQueue(url)
    const submitted = yield* submitImport(store, queue, a.account, a.file, {
      resource,
      mode: a.mode,
      dryRun: a.dryRun,
      verify: a.verify,
      verifyWaitMs,
      read: readSettings(a.parsing),
      dateFormat: a.parsing.dateFormat,
      decimal: a.parsing.decimal
    }, a.chunkRows)
    yield* say(
      `queued job ${submitted.job}: import ${resource} for ${a.account}, ${submitted.rows} rows${
        submitted.chunks > 0 ? ` in ${submitted.chunks} parts` : ""
      }${submitted.invalid > 0 ? ` (${submitted.invalid} invalid: they will be reported, not sent)` : ""}`
    )
    if (a.json) yield* Console.log(JSON.stringify(submitted))
    else yield* Console.log(submitted.job)
    return 0 as ExitCode
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Validate a file offline, then queue its import for the fleet's workers")
  )

export const submitCommand = Command.make("submit").pipe(
  Command.withDescription("Queue work for the fleet's workers; prints the job id"),
  Command.withSubcommands([submitImportCommand])
)

// --- status, wait, fetch, cancel -------------------------------------------------------------------------------

interface JobStatus {
  readonly job: string
  readonly account: string
  readonly kind: string
  readonly resource: string | null
  readonly state: string
  readonly rows: number
  readonly done: number
  readonly exitCode: number | null
  readonly owner: string | null
  readonly error: string | null
}

const statusOf = (store: Store, rows: ReadonlyArray<JobRow>) =>
  Effect.gen(function*() {
    const ids = rows.map((r) => r.id)
    const counts = yield* store.query<{ job: string; n: string }>(
      `SELECT coalesce(j.parent, j.id) AS job, count(DISTINCT (l.job, l.line::jsonb->>'row')) AS n
       FROM ${schema}.journal l JOIN ${schema}.jobs j ON j.id = l.job
       WHERE coalesce(j.parent, j.id) = ANY($1) AND l.line::jsonb->>'state' = 'done'
       GROUP BY coalesce(j.parent, j.id)`,
      [ids]
    )
    const done = new Map(counts.map((c) => [c.job, Number(c.n)]))
    return rows.map((r): JobStatus => ({
      job: r.id,
      account: r.account,
      kind: r.kind,
      resource: r.resource,
      state: r.state,
      rows: r.rows,
      done: done.get(r.id) ?? 0,
      exitCode: r.exit_code,
      owner: r.owner,
      error: r.error
    }))
  })

const statusLine = (s: JobStatus) =>
  `${s.job}  ${s.account}  ${s.kind} ${s.resource ?? ""}  ${s.state}  ${s.done}/${s.rows}${
    s.exitCode !== null ? `  exit ${s.exitCode}` : ""
  }${s.owner !== null && s.state === "running" ? `  on ${s.owner}` : ""}${s.error !== null ? `  ${s.error}` : ""}`

export const statusCommand = Command.make("status", {
  job: Args.text({ name: "JOB" }).pipe(Args.optional),
  watch: Options.boolean("watch").pipe(Options.withDescription("Print again every 2 s until the jobs have ended")),
  fleet: fleetOption,
  json: jsonOption
}, (a) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    while (true) {
      const rows = Option.isSome(a.job)
        ? [yield* jobRow(store, a.job.value)]
        : yield* store.query<JobRow>(
          `SELECT * FROM ${schema}.jobs WHERE parent IS NULL ORDER BY created DESC LIMIT 200`
        )
      const statuses = yield* statusOf(store, rows)
      if (a.json) yield* Console.log(JSON.stringify({ jobs: statuses }))
      else for (const s of statuses) yield* Console.log(statusLine(s))
      if (!a.watch || statuses.every((s) => finalStates.includes(s.state))) return 0 as ExitCode
      yield* Effect.sleep(2_000)
    }
  }).pipe(Effect.scoped)).pipe(Command.withDescription("Where jobs stand: state, rows done, exit code"))

/** A job's exit code as the contract defines it: its run's, or 3 when it was cancelled. */
const jobExitCode = (row: JobRow): ExitCode => (row.state === "cancelled" ? 3 : (row.exit_code ?? 3)) as ExitCode

export const waitCommand = Command.make(
  "wait",
  { job: jobArg, fleet: fleetOption, json: jsonOption },
  (a) =>
    Effect.gen(function*() {
      const { store } = yield* fleetStore(a.fleet)
      while (true) {
        const row = yield* jobRow(store, a.job)
        if (finalStates.includes(row.state)) {
          const [status] = yield* statusOf(store, [row])
          yield* printSummary(a.json, { ...status, exitCode: jobExitCode(row), summary: row.summary }, [
            statusLine(status!)
          ])
          return jobExitCode(row)
        }
        yield* Effect.sleep(500)
      }
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Wait for a job to end; exits with the job's exit code"))

export const fetchCommand = Command.make("fetch", {
  job: jobArg,
  out: Options.text("out").pipe(Options.withDescription("A new (or empty) directory for the job's run directory")),
  fleet: fleetOption,
  json: jsonOption
}, (a) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    const row = yield* jobRow(store, a.job)
    if (!finalStates.includes(row.state)) {
      return yield* usage(`job ${a.job} is ${row.state}: fetch it once it has ended (fsm-bulk wait ${a.job})`)
    }
    const dir = Path.resolve(a.out)
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      return yield* usage(`--out ${a.out} is not empty: fetch into a new directory (nothing is overwritten)`)
    }
    const parts = yield* store.query<JobRow>(
      `SELECT * FROM ${schema}.jobs WHERE parent = $1 ORDER BY id`,
      [a.job]
    )
    if (parts.length > 0) return yield* fetchChunked(store, row, parts, Path.resolve(a.out), a.json)
    const lines = yield* journalLines(store, a.job)
    const sources = yield* files(store, a.job, "source/")
    const outs = yield* files(store, a.job, "out/")
    mkdirSync(Path.join(dir, "source"), { recursive: true })
    const source = sources[0]
    const sourceFile = source !== undefined ? Path.join(dir, "source", Path.basename(source.name)) : undefined
    if (source !== undefined && sourceFile !== undefined) writeFileSync(sourceFile, source.content)
    for (const f of outs) {
      const name = f.name.slice("out/".length)
      if (name === summaryFile) {
        const summary = JSON.parse(f.content.toString("utf8")) as Record<string, unknown>
        writeFileSync(
          Path.join(dir, name),
          JSON.stringify(
            { ...summary, runDir: dir, ...(sourceFile !== undefined ? { source: sourceFile } : {}) },
            null,
            2
          ) +
            "\n"
        )
      } else writeFileSync(Path.join(dir, name), f.content)
    }
    if (lines.length > 0) {
      const [head, ...rest] = lines
      const header = JSON.parse(head!) as { source: { file: string }; parse: { baseDir: string } }
      if (sourceFile !== undefined) {
        header.source.file = sourceFile
        header.parse.baseDir = Path.dirname(sourceFile)
      }
      writeFileSync(Path.join(dir, journalFile), [JSON.stringify(header), ...rest].join("\n") + "\n")
    }
    yield* printSummary(a.json, { job: a.job, runDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
      `job ${a.job} (${row.state}) fetched into ${dir}`
    ])
    return 0 as ExitCode
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Write a job's run directory (journal, reports, summary, source) to --out")
  )

/** A chunked job's run directory: the original file, its chunks' journals joined, reports written again. */
const fetchChunked = (store: Store, row: JobRow, parts: ReadonlyArray<JobRow>, dir: string, json: boolean) =>
  Effect.gen(function*() {
    const source = (yield* files(store, row.id, "source/"))[0]
    if (source === undefined) {
      return yield* new FleetError({ reason: "NotFound", message: `job ${row.id} has no source file` })
    }
    mkdirSync(Path.join(dir, "source"), { recursive: true })
    const sourceFile = Path.join(dir, "source", Path.basename(source.name))
    writeFileSync(sourceFile, source.content)
    const journals = yield* Effect.forEach(parts, (p) => journalLines(store, p.id))
    const spec = row.spec as unknown as ImportSpec
    const summary = yield* mergeChunks({
      dir,
      source: sourceFile,
      read: spec.read,
      sha256: createHash("sha256").update(source.content).digest("hex"),
      journals,
      summaries: parts.map((p) => p.state === "done" ? (p.summary as unknown as Summary) : undefined),
      write: (path, text) => Effect.sync(() => writeFileSync(path, text))
    })
    yield* printSummary(json, { job: row.id, runDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
      `job ${row.id} (${row.state}, ${parts.length} parts${
        summary === undefined ? ", none started" : ""
      }) fetched into ${dir}`
    ])
    return 0 as ExitCode
  })

export const cancelCommand = Command.make(
  "cancel",
  { job: jobArg, fleet: fleetOption, json: jsonOption },
  (a) =>
    Effect.gen(function*() {
      const { store, url } = yield* fleetStore(a.fleet)
      const row = yield* jobRow(store, a.job)
      if (finalStates.includes(row.state)) {
        yield* printSummary(a.json, { job: a.job, state: row.state }, [`job ${a.job} has already ended: ${row.state}`])
        return 0 as ExitCode
      }
      // A job in parts is cancelled with every part, which workers take and run as jobs of their own.
      const parts = yield* store.query<{ id: string }>(`SELECT id FROM ${schema}.jobs WHERE parent = $1`, [a.job])
      const ids = [a.job, ...parts.map((p) => p.id)]
      yield* store.query(
        `UPDATE ${schema}.jobs SET state = 'cancelled', finished = now() WHERE id = ANY($1) AND state NOT IN ('done', 'cancelled', 'failed')`,
        [ids]
      )
      const queue = yield* openQueue(url)
      for (const id of ids) {
        // A worker running it loses its lease: it stops before its next request.
        yield* takeLease(store, id, "cancel")
        yield* dequeue(queue, id)
      }
      yield* printSummary(a.json, { job: a.job, state: "cancelled" }, [
        `job ${a.job} cancelled: nothing more is sent; its journal and rows done so far stay (fsm-bulk fetch ${a.job} --out DIR)`
      ])
      return 0 as ExitCode
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Cancel a job: a worker running it stops before its next request"))
