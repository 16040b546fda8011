/**
 * The engine: BullMQ on its PostgreSQL backend, or on its Redis backend for a `redis://` address, one queue
 * `fsm-bulk` whose jobs carry only our job id (what to run is in the fleet store's jobs, credentials in its
 * accounts, never in job data; Store.ts, RedisStore.ts). Workers pull jobs when they have room; a job whose worker
 * stops renewing its lock (killed, paused) goes back to the queue after the lock expires and another worker takes
 * it over, so attempts and stalls are allowed many times: our journal, not the queue, decides what was done.
 */
import type { Job, JobsOptions } from "bullmq"
import type { Scope } from "effect"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Pool } from "pg"
import { UsageError } from "../Errors.js"
import { describeCause, FleetError } from "./Errors.js"
import { isTransient } from "./Store.js"

const queueName = "fsm-bulk"

/** What a queued job carries: our job id only. */
export interface JobData {
  readonly job: string
}

/**
 * The format of the jobs this version submits: what a worker must understand to run them as submitted (the
 * whole-file verdicts a part carries, the settings of its spec). Each job carries it (`spec.jobFormat`); a worker
 * leaves a job of a newer format to a newer worker instead of running it wrongly. Raise it when a job's meaning
 * changes so that an older worker would send what it should not.
 */
export const jobFormat = 2

/** How long a worker's hold on a job lasts without renewal (FSM_FLEET_LEASE_MS; default 30 s, at least 1 s). */
export const leaseMs = Effect.gen(function*() {
  const ms = yield* Config.option(Config.integer("FSM_FLEET_LEASE_MS")).pipe(
    Effect.orElseSucceed(() => Option.none<number>())
  )
  return Option.getOrElse(Option.filter(ms, (n) => n >= 1_000), () => 30_000)
})

/** A `redis://` or `rediss://` (TLS) address: the fleet on Redis. */
export const isRedisUrl = (url: string): boolean => /^rediss?:/i.test(url.trim())

/**
 * An address as text with its password hidden, also when it does not parse as a URL (`redactUrl` in Store.ts is for
 * those that do): everything between `//USER:` and the last `@` (a password may hold `/` and `@`; more hidden is safe).
 */
const withoutPassword = (text: string): string => text.replace(/^([^/]*\/\/[^/:@]*:).*@/, "$1***@")

/** The `--fleet` address, checked: a postgres:// or redis:// URL. */
export const fleetUrl = (text: string): Effect.Effect<string, UsageError> =>
  Effect.suspend(() => {
    let url: URL
    try {
      url = new URL(text.trim())
    } catch {
      return Effect.fail(
        new UsageError({
          message: `--fleet / FSM_FLEET_URL: "${
            withoutPassword(text.trim())
          }" is not an address (postgres://… or redis://…)`
        })
      )
    }
    if (url.protocol === "postgres:" || url.protocol === "postgresql:") return Effect.succeed(text.trim())
    if (url.protocol === "redis:" || url.protocol === "rediss:") return Effect.succeed(text.trim())
    return Effect.fail(
      new UsageError({
        message: `--fleet / FSM_FLEET_URL: ${url.protocol} is not supported: use postgres://… or redis://…`
      })
    )
  })

const engine = Effect.promise(() => import("bullmq"))

/** A failure of the engine's store, classified as the fleet store's own are (`isTransient`, Store.ts). */
const failed = (what: string) => (cause: unknown) =>
  new FleetError({
    reason: isTransient(cause) ? "Unavailable" : "Refused",
    message: `${what}: ${describeCause(cause)}`,
    cause
  })

/** Creates (or upgrades) BullMQ's tables; idempotent. */
export const migrateEngine = (pool: Pool) =>
  Effect.flatMap(engine, (bullmq) =>
    Effect.tryPromise({
      try: () => bullmq.runMigrations(pool),
      catch: failed("cannot create the queue's tables")
    }))

/** What the fleet does with the queue, on either backend. */
export interface FleetQueue {
  readonly add: (name: string, data: JobData, options: JobsOptions) => Promise<unknown>
  readonly remove: (id: string) => Promise<unknown>
  readonly close: () => Promise<void>
  readonly disconnect: () => Promise<void>
  readonly on: (event: "error", listener: (error: Error) => void) => unknown
}

/**
 * The queue, for submitting and cancelling, closed with the scope. Its connection's errors are the calls' to report
 * (`enqueue` fails with them): unheard, BullMQ printed each reconnection's stack trace. Closing waits at most a few
 * seconds for a server that does not answer (down), then drops the connection: closing alone waited for it to return.
 */
export const openQueue = (url: string): Effect.Effect<FleetQueue, never, Scope.Scope> =>
  Effect.gen(function*() {
    const bullmq = yield* engine
    return yield* Effect.acquireRelease(
      Effect.sync((): FleetQueue => {
        const queue: FleetQueue = isRedisUrl(url)
          ? new (bullmq.withBackend(bullmq.createRedisBackend).Queue)<JobData>(queueName, { connection: { url } })
          : new (bullmq.withBackend(bullmq.createPostgresBackend).Queue)<JobData>(queueName, {
            connection: { connectionString: url, max: 2 }
          })
        queue.on("error", () => undefined)
        return queue
      }),
      (q) =>
        // A release runs uninterruptibly: without `interruptible`, the timeout could not end the wait.
        Effect.promise(() => q.close()).pipe(
          Effect.interruptible,
          Effect.timeout(3_000),
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => void q.disconnect().catch(() => undefined)))
        )
    )
  })

/**
 * Queues job `id` (BullMQ's job id is ours: adding it twice queues it once). A queue that does not answer within a
 * lease fails as one that cannot be reached (`Unavailable`): on Redis, BullMQ's client waits for the server to come
 * back instead of failing, and a `submit` whose jobs were stored hung for as long as the server was down.
 */
export const enqueue = (queue: FleetQueue, id: string) =>
  Effect.flatMap(leaseMs, (ms) =>
    Effect.tryPromise({
      try: () =>
        queue.add("run", { job: id }, {
          jobId: id,
          attempts: 1_000,
          backoff: { type: "fixed", delay: 500 },
          removeOnComplete: true,
          removeOnFail: 100
        }),
      catch: failed("cannot queue the job")
    }).pipe(
      Effect.timeoutFail({
        duration: ms,
        onTimeout: () =>
          new FleetError({
            reason: "Unavailable",
            message: `cannot queue the job: the queue did not answer in ${ms} ms`
          })
      }),
      Effect.asVoid
    ))

/** Takes a queued job off the queue, when it is waiting (a running one is stopped through its lease). */
export const dequeue = (queue: FleetQueue, id: string) =>
  Effect.tryPromise({ try: () => queue.remove(id), catch: failed("cannot remove the job from the queue") }).pipe(
    Effect.ignore
  )

/**
 * How often every worker looks for jobs whose worker stopped renewing its lock (killed, paused): the queue moves
 * such a job back to the waiting list at the first look after its lock expired, so a killed worker's job waits at
 * most the lease plus this (then a worker's takeover slot takes it; see `startEngineWorker`).
 */
export const stalledInterval = (leaseMs: number): number => Math.max(250, Math.min(1_000, Math.floor(leaseMs / 4)))

/** How long a new job that reached a busy worker's takeover slot waits before it is offered again. */
export const takeoverSlotDelay = (leaseMs: number): number => Math.max(250, Math.min(1_000, Math.floor(leaseMs / 4)))

/**
 * Whether a job given by the queue continues a run that stopped (its worker was killed or stalled: the queue moved it
 * back; or it was handed back): a takeover, as opposed to a job not started yet.
 */
export const isTakeover = (job: { readonly stalledCounter?: number; readonly attemptsMade?: number }): boolean =>
  (job.stalledCounter ?? 0) > 0 || (job.attemptsMade ?? 0) > 0

/**
 * A worker pulling up to `jobs` jobs at once for the scope, plus one slot kept for takeovers; `process` runs one
 * (its promise ends it). Without that slot, a killed worker's job waited for the first survivor to finish a job
 * (28–38 s with every survivor busy, issue 29): the queue only gives jobs to workers with room. The slot takes any
 * job the queue gives; a new one that reaches it while the `jobs` slots are all busy is put back (delayed, its
 * attempts untouched) for a worker with room, so a busy worker always has room to take over a stalled job (within
 * half a `takeoverSlotDelay` of its return to the queue).
 */
export const startEngineWorker = (
  url: string,
  options: { readonly jobs: number; readonly leaseMs: number },
  process: (data: JobData) => Promise<void>
): Effect.Effect<{ readonly close: Effect.Effect<void> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const bullmq = yield* engine
    const settings = {
      concurrency: options.jobs + 1,
      lockDuration: options.leaseMs,
      stalledInterval: stalledInterval(options.leaseMs),
      maxStalledCount: 1_000
    }
    let running = 0
    const processor = async (job: Job<JobData>, token?: string) => {
      if (running >= options.jobs && !isTakeover(job)) {
        const delay = takeoverSlotDelay(options.leaseMs)
        await job.moveToDelayed(Date.now() + delay, token)
        // The slot is held a moment before it takes the next job: with many jobs queued and every slot busy, it
        // would otherwise put them all back, one after another, as fast as the queue answers.
        await new Promise((resolve) => setTimeout(resolve, Math.floor(delay / 2)))
        throw new bullmq.DelayedError()
      }
      running++
      try {
        await process(job.data)
      } finally {
        running--
      }
    }
    const worker = yield* Effect.acquireRelease(
      Effect.sync(() => {
        if (isRedisUrl(url)) {
          const { Worker } = bullmq.withBackend(bullmq.createRedisBackend)
          return new Worker<JobData>(queueName, processor, { connection: { url }, ...settings })
        }
        const { Worker } = bullmq.withBackend(bullmq.createPostgresBackend)
        return new Worker<JobData>(queueName, processor, {
          connection: { connectionString: url, max: 4 },
          ...settings
        })
      }),
      (w) => Effect.promise(() => w.close()).pipe(Effect.ignore)
    )
    // A lost connection is retried by the engine; its errors must not end the process.
    worker.on("error", () => undefined)
    return { close: Effect.promise(() => worker.close()).pipe(Effect.ignore) }
  })
