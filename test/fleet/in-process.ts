/**
 * `submit import`, `submit onboard`, `cancel` and `wait` made in the test's own process, through the functions those commands call
 * (src/fleet/Submit.ts `submitImport` and `submitOnboard`, the store's `cancelJob` and the queue's `dequeue`, the job's row): for the fleet
 * tests whose point is the workers (takeovers), not those commands. A spawned command costs about a second of CPU
 * before it does anything, and 2–6 s of wall time on a loaded 2-core machine (docs/benchmarks.md, "The test suite's
 * time"); test/fleet/cli.test.ts and the other `*-cli` files spawn them where they are the point.
 *
 * The `*As` helpers below go further, for tests whose commands must do exactly what the spawned ones did (the fleet's
 * generated histories): the store opened as the commands open it, the settings read from the command's environment
 * (`asCommand`), the commands' own work (`submitImport`, `cancelWithParts`, `untilEnded`, `statusOf`, `fetchJob`), and
 * the exit code the CLI would give.
 */
import { Config, ConfigProvider, Effect, Either, Option } from "effect"
import { readProfiles, withProfile } from "../../src/cli/Parsing.js"
import { fleetStore } from "../../src/fleet/CommandStore.js"
import { FleetError } from "../../src/fleet/Errors.js"
import { fetchJob } from "../../src/fleet/FetchHandlers.js"
import {
  cancelWithParts,
  checkIntact,
  jobExitCode,
  type JobStatus,
  statusOf,
  untilEnded
} from "../../src/fleet/JobHandlers.js"
import { dequeue, openQueue } from "../../src/fleet/Queue.js"
import { finalStates, type JobRow } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import { type ImportSpec, submitImport, submitOnboard } from "../../src/fleet/Submit.js"
import type { Mode } from "../../src/import/Journal.js"
import { pollFor } from "../../src/onboard/Commands.js"
import { eventually, withStore } from "./support.js"

/**
 * `fsm-bulk submit import customers FILE --account ACCOUNT [--chunk-rows N] [--map PROFILE] [--mode MODE]` with every
 * other setting at its default (`--mode upsert`, formats `auto`, `--verify-wait 6m`, `--chunk-rows 10000`): the job's
 * id. The profile is read as `--map` reads it (its content and sha256 kept with the job).
 */
export const submitCustomers = (
  url: string,
  file: string,
  account: string,
  chunkRows = 10_000,
  map?: string,
  mode: Mode = "upsert"
) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* openStore(url)
    const queue = yield* openQueue(url)
    const submitted = yield* submitImport(store, queue, account, file, {
      resource: "customers",
      mode,
      dryRun: false,
      verify: false,
      verifyWaitMs: 6 * 60_000,
      read: yield* withProfile({ encoding: "auto", delimiter: "auto" }, Option.fromNullable(map)),
      dateFormat: "auto",
      decimal: "auto"
    }, chunkRows)
    if (!submitted.queued) throw new Error(`job ${submitted.job} was stored but not queued`)
    return submitted.job
  })).pipe(Effect.orDie)

/**
 * `submit onboard`'s settings at their defaults (no dry run, no `--verify`, `--verify-wait 6m`, formats `auto`,
 * conflicts refused), with the profiles `--map` names read as the command reads them.
 */
const onboardDefaults = (maps: ReadonlyArray<string>) =>
  Effect.map(readProfiles(maps), (profiles) => ({
    dryRun: false,
    verify: false,
    answerWaitMs: 6 * 60_000,
    answerPollMs: pollFor(6 * 60_000),
    read: { encoding: "auto", delimiter: "auto" } as const,
    maps: profiles,
    dateFormat: "auto" as const,
    decimal: "auto" as const,
    onConflict: undefined
  }))

/**
 * `fsm-bulk submit onboard INPUT --account ACCOUNT [--map [RESOURCE=]PROFILE]…` with every other setting at its
 * default (no dry run, no `--verify`, `--verify-wait 6m`, formats `auto`, conflicts refused): checked offline and
 * queued as the command does; the job's id.
 */
export const submitOnboarding = (url: string, input: string, account: string, maps: ReadonlyArray<string> = []) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* openStore(url)
    const queue = yield* openQueue(url)
    const submitted = yield* submitOnboard(store, queue, account, input, yield* onboardDefaults(maps))
    if (!submitted.queued) throw new Error(`job ${submitted.job} was stored but not queued`)
    return submitted.job
  })).pipe(Effect.orDie)

/** `fsm-bulk cancel JOB` of a job that has not ended (and its parts): marked cancelled, taken out of the queue. */
export const cancelJob = (url: string, job: string) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* openStore(url)
    const queue = yield* openQueue(url)
    const ids = [job, ...(yield* store.parts(job)).map((p) => p.id)]
    for (const id of ids) {
      yield* store.cancelJob(id)
      yield* dequeue(queue, id)
    }
  })).pipe(Effect.orDie)

/**
 * `fsm-bulk wait JOB`: until the job has ended (read every 100 ms, not `wait`'s 500), its row then. Read through one
 * store for the whole wait, as `wait` reads it: a store opened for each read cost 8–12 ms of the test's CPU and a
 * connection (on PostgreSQL a server process) each time (docs/benchmarks.md, "The test suite's time").
 */
export const ended = (url: string, job: string, ms: number, detail: () => string) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* Effect.orDie(openStore(url))
    const row = () => Effect.runPromise(store.job(job))
    yield* eventually(`job ${job} ends`, async () => finalStates.includes((await row()).state), ms, detail)
    return yield* Effect.promise(row)
  }))

/**
 * `fsm-bulk status JOB --json`'s entry for the job, read from the store as the command reads it: its state, rows,
 * rows done (its journal's) and exit code (null until it ends). test/fleet/cli.test.ts spawns `status` where it is
 * the point.
 */
export const jobStatus = (url: string, job: string) =>
  withStore(url, (store) =>
    Effect.gen(function*() {
      const row = yield* store.job(job)
      const done = yield* store.rowsDone([job])
      return { state: row.state, rows: row.rows, done: done.get(job) ?? 0, exitCode: row.exit_code }
    })).pipe(Effect.orDie)

// --- as a spawned command runs ---------------------------------------------------------------------------------

/**
 * Knobs src/ reads from `process.env` when called rather than through Config (test-only settings: Store.ts
 * `stagingReclaimMs`, RedisStore.ts's egress lock, Submit.ts's batch size; `TMPDIR`, where os.tmpdir() puts a
 * submit's scratch folder and Scratch.ts looks for those a killed one left). While an in-process command runs they are
 * set from its environment, as the spawned command would have them, and put back after; calls that overlap share them
 * (and must agree).
 */
const processKnobs = ["FSM_FLEET_STAGING_RECLAIM_MS", "FSM_FLEET_EGRESS_MS", "FSM_FLEET_STAGE_BYTES", "TMPDIR"] as const
const knobsHeld = new Map<string, { users: number; value: string; before: string | undefined }>()

const holdKnobs = (env: NodeJS.ProcessEnv) =>
  Effect.sync(() => {
    const held = processKnobs.filter((k) => env[k] !== undefined && env[k] !== process.env[k])
    for (const k of held) {
      const value = env[k]!
      const now = knobsHeld.get(k)
      if (now !== undefined && now.value !== value) {
        throw new Error(`${k}: in-process commands overlap with ${now.value} and ${value}`)
      }
      knobsHeld.set(k, { users: (now?.users ?? 0) + 1, value, before: now?.before ?? process.env[k] })
      process.env[k] = value
    }
    return held
  })

const releaseKnobs = (held: ReadonlyArray<string>) =>
  Effect.sync(() => {
    for (const k of held) {
      const now = knobsHeld.get(k)!
      if (now.users > 1) knobsHeld.set(k, { ...now, users: now.users - 1 })
      else {
        knobsHeld.delete(k)
        if (now.before === undefined) delete process.env[k]
        else process.env[k] = now.before
      }
    }
  })

/**
 * `effect` as a fleet command spawned with environment `env` runs it: its settings (`FSM_FLEET_URL`,
 * `FSM_FLEET_LEASE_MS` — the lease its store outlasts faults for, the staging's heartbeat —, `FSM_FLEET_CHUNK_ROWS`…)
 * read from `env` (the Config provider, as the process's own environment is read: `_` between path parts), the knobs
 * above set from it; what it says (the store's retries) goes nowhere.
 */
export const asCommand = (env: NodeJS.ProcessEnv) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    holdKnobs(env),
    () =>
      effect.pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(
            new Map(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
            { pathDelim: "_", seqDelim: "," }
          )
        ),
        silently
      ),
    releaseKnobs
  )

const silently = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    Effect.console,
    (console) => Effect.withConsole(effect, { ...console, log: () => Effect.void, error: () => Effect.void })
  )

/**
 * What a command ended with: `code` 0 and its `value`, or the exit code the CLI gives its failure (the error's own
 * `exitCode`, src/bin.ts) and the failure's message (what it prints after `fsm-bulk: `).
 */
export type CommandEnd<A> =
  | { readonly code: 0; readonly value: A }
  | { readonly code: number; readonly value?: undefined; readonly error: string }

const ending = <A, E extends { readonly message: string }, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<CommandEnd<A>, never, R> =>
  Effect.map(Effect.either(effect), (e) =>
    Either.isRight(e)
      ? { code: 0 as const, value: e.right }
      : {
        code: "exitCode" in e.left && typeof e.left.exitCode === "number" ? e.left.exitCode : 1,
        error: e.left.message
      })

/** The fleet store of `env` (its `FSM_FLEET_URL`) opened as every fleet command opens it (Handlers.ts `fleetStore`). */
const storeOf = (env: NodeJS.ProcessEnv) => fleetStore(env.FSM_FLEET_URL ?? "")

/**
 * `fsm-bulk submit import customers FILE --account ACCOUNT [--mode MODE] [--chunk-rows N]`, run as spawned with `env`
 * (./support.ts `fleetEnv`): the command's store (outlasting faults for a lease), `submitImport` with the command's
 * defaults (`--mode upsert`, `--chunk-rows` from FSM_FLEET_CHUNK_ROWS, else 10,000; formats `auto`); its end: the
 * submission (what `--json` prints) or the failure (a removed account: exit 2).
 */
export const submitImportAs = (
  env: NodeJS.ProcessEnv,
  file: string,
  account: string,
  options: { readonly mode?: ImportSpec["mode"]; readonly chunkRows?: number | undefined } = {}
) =>
  asCommand(env)(ending(Effect.scoped(Effect.gen(function*() {
    const { store, url } = yield* storeOf(env)
    const queue = yield* openQueue(url)
    const rows = options.chunkRows ?? (yield* Config.withDefault(Config.integer("FSM_FLEET_CHUNK_ROWS"), 10_000))
    return yield* submitImport(store, queue, account, file, {
      resource: "customers",
      mode: options.mode ?? "upsert",
      dryRun: false,
      verify: false,
      verifyWaitMs: 6 * 60_000,
      read: { encoding: "auto", delimiter: "auto" },
      dateFormat: "auto",
      decimal: "auto"
    }, rows)
  }))))

/**
 * `fsm-bulk submit onboard INPUT --account ACCOUNT [--map [RESOURCE=]PROFILE]…`, run as spawned with `env`: the
 * command's store (outlasting faults for a lease; its staging's heartbeat and reclaim age from `env`), `submitOnboard`
 * with the command's defaults (no dry run, no `--verify`, `--verify-wait 6m`, formats `auto`, conflicts refused); its
 * end: the submission (what `--json` prints) or the failure (a workbook refused offline, an unknown account: exit 2).
 * test/fleet/onboard-cli.test.ts spawns `submit onboard` where it is the point.
 */
export const submitOnboardAs = (
  env: NodeJS.ProcessEnv,
  input: string,
  account: string,
  maps: ReadonlyArray<string> = []
) =>
  asCommand(env)(ending(Effect.scoped(Effect.gen(function*() {
    const { store, url } = yield* storeOf(env)
    const queue = yield* openQueue(url)
    return yield* submitOnboard(store, queue, account, input, yield* onboardDefaults(maps))
  }))))

/**
 * `fsm-bulk cancel JOB`, run as spawned with `env` (Handlers.ts `cancelWithParts`): exit 0 with the state of a job that
 * had already ended (left as it was) or undefined (cancelled with its parts), or the failure (a staged submission).
 */
export const cancelAs = (env: NodeJS.ProcessEnv, job: string) =>
  asCommand(env)(ending(Effect.scoped(Effect.gen(function*() {
    const { store, url } = yield* storeOf(env)
    return yield* cancelWithParts(store, url, job)
  }))))

/**
 * `fsm-bulk accounts remove NAME`, run as spawned with `env` (Handlers.ts `handleAccountsRemove`: the command's store,
 * `removeAccount`): exit 0, or the failure (no such account: exit 2). test/fleet/faults-cli.test.ts spawns it where
 * the command is the point.
 */
export const accountsRemoveAs = (env: NodeJS.ProcessEnv, name: string) =>
  asCommand(env)(ending(Effect.scoped(Effect.gen(function*() {
    const { store } = yield* storeOf(env)
    const removed = yield* store.removeAccount(name)
    if (!removed) return yield* new FleetError({ reason: "NotFound", message: `no account "${name}" in this fleet` })
  }))))

/**
 * `fsm-bulk wait JOB`, run as spawned with `env` (Handlers.ts `untilEnded`, the job read every 100 ms, not 500):
 * `code` the job's exit code as `wait` exits with it (3 for a cancelled job), `row` and `status` what it prints; or
 * its failure (data the store lost: exit 2); `code` null when the job has not ended within `ms` (`wait` killed).
 */
export const waitAs = (env: NodeJS.ProcessEnv, job: string, ms: number) =>
  asCommand(env)(
    Effect.scoped(Effect.gen(function*() {
      const { store } = yield* storeOf(env)
      const row = yield* untilEnded(store, job, 100)
      const [status] = yield* statusOf(store, [row])
      return { row, status: status! }
    })).pipe(
      ending,
      Effect.map((end): Waited =>
        end.value !== undefined
          ? { code: jobExitCode(end.value.row), row: end.value.row, status: end.value.status }
          : { code: end.code, error: end.error }
      ),
      Effect.timeoutTo({
        duration: ms,
        onTimeout: (): Waited => ({ code: null, error: `job ${job} had not ended within ${ms} ms` }),
        onSuccess: (end) => end
      })
    )
  )

/** What `wait` ended with (./in-process.ts `waitAs`). */
export interface Waited {
  /** `wait`'s exit code; null: killed, the job had not ended. */
  readonly code: number | null
  readonly row?: JobRow
  readonly status?: JobStatus
  /** Its failure's message, or why it was killed. */
  readonly error?: string
}

/**
 * `fsm-bulk status JOB --json`, run as spawned with `env`: the job as the command shows it (Handlers.ts `statusOf`,
 * after the same check that the store lost nothing), or the failure.
 */
export const statusAs = (env: NodeJS.ProcessEnv, job: string) =>
  asCommand(env)(ending(Effect.scoped(Effect.gen(function*() {
    const { store } = yield* storeOf(env)
    yield* checkIntact(store)
    const [status] = yield* statusOf(store, [yield* store.job(job)])
    return status! satisfies JobStatus
  }))))

/**
 * `fsm-bulk status --json` (no job named), run as spawned with `env`: the jobs it lists (the store's 200 most recent,
 * after the same check that the store lost nothing), as Handlers.ts `statusOf` shows them; or the failure.
 * test/fleet/cli.test.ts spawns it where it is the point.
 */
export const statusListAs = (env: NodeJS.ProcessEnv) =>
  asCommand(env)(ending(Effect.scoped(Effect.gen(function*() {
    const { store } = yield* storeOf(env)
    yield* checkIntact(store)
    return yield* statusOf(store, yield* store.recentJobs(200))
  }))))

/**
 * `fsm-bulk fetch JOB --out DIR`, run as spawned with `env` (Handlers.ts `fetchJob`): the run directory written to
 * `out`; exit 0, or the failure (a job not ended, an `out` not empty: exit 2).
 */
export const fetchAs = (env: NodeJS.ProcessEnv, job: string, out: string) =>
  asCommand(env)(ending(Effect.scoped(Effect.gen(function*() {
    const { store } = yield* storeOf(env)
    return yield* fetchJob(store, job, out, true)
  }))))
