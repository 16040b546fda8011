/**
 * `submit import`, `submit onboard`, `cancel` and `wait` made in the test's own process, through the functions those commands call
 * (src/fleet/Submit.ts `submitImport` and `submitOnboard`, the store's `cancelJob` and the queue's `dequeue`, the job's row): for the fleet
 * tests whose point is the workers (takeovers), not those commands. A spawned command costs about a second of CPU
 * before it does anything, and 2–6 s of wall time on a loaded 2-core machine (docs/benchmarks.md, "The test suite's
 * time"); test/fleet/cli.test.ts and the other `*-cli` files spawn them where they are the point.
 */
import { Effect, Option } from "effect"
import { readProfiles, withProfile } from "../../src/cli/Parsing.js"
import { dequeue, openQueue } from "../../src/fleet/Queue.js"
import { finalStates } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import { submitImport, submitOnboard } from "../../src/fleet/Submit.js"
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
 * `fsm-bulk submit onboard INPUT --account ACCOUNT [--map [RESOURCE=]PROFILE]…` with every other setting at its
 * default (no dry run, no `--verify`, `--verify-wait 6m`, formats `auto`, conflicts refused): checked offline and
 * queued as the command does; the job's id.
 */
export const submitOnboarding = (url: string, input: string, account: string, maps: ReadonlyArray<string> = []) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* openStore(url)
    const queue = yield* openQueue(url)
    const submitted = yield* submitOnboard(store, queue, account, input, {
      dryRun: false,
      verify: false,
      answerWaitMs: 6 * 60_000,
      answerPollMs: pollFor(6 * 60_000),
      read: { encoding: "auto", delimiter: "auto" },
      maps: yield* readProfiles(maps),
      dateFormat: "auto",
      decimal: "auto",
      onConflict: undefined
    })
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
