/**
 * `fsm-bulk worker`: pulls jobs from the fleet's queue and runs each with the import pipeline, as `import` and
 * `resume` do, with three things of its own:
 *
 * - One budget per process (per egress address), shared by every job and account it runs; one egress id per
 *   worker, held by a PostgreSQL advisory lock on a connection of its own (a second worker is refused; the lock
 *   dies with the process). Outgoing requests leave from `--source-address` when given. One token per account.
 * - A job's journal is written to the store, each line only while this worker holds the job's lease (see
 *   Store.ts); a lost lease fails the append, which stops the run's sending. Requests also pass a gate: when the
 *   lease was not confirmed recently (the process was paused, say), it is checked before the request leaves,
 *   and a lost lease ends the job's run there. The instant after the gate is covered by the fence at the socket
 *   (Fence.ts): a request's bytes are written only within a bound of the last confirmation, so a worker that
 *   wakes up after its job was taken over sends nothing.
 * - A job taken over (its worker died or stalled) continues from the store's journal with `resume`'s rules:
 *   rows done are not sent again, rows in flight are looked up before any resend.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Cause, Context, Deferred, Effect, Either, Exit, Fiber, FiberRef, Layer, Option, Runtime } from "effect"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Api } from "../client/Api.js"
import { type Budget, makeBudget, SharedBudget } from "../client/Budget.js"
import { ClientConfig, type Credentials, defaultBudgetMargin } from "../client/Config.js"
import { HttpAdapter } from "../client/HttpAdapter.js"
import { cannotWrite } from "../files/Write.js"
import { journalFile, type JournalWriter, openJournal } from "../import/Journal.js"
import { runImport } from "../import/Pipeline.js"
import { resumeRun } from "../import/Resume.js"
import { reportCsv, reportXlsx, summaryFile } from "../import/RunDir.js"
import type { ResourceName } from "../Resources.js"
import { parseRate, type Rate } from "../Units.js"
import { describeCause, FleetError } from "./Errors.js"
import { type Fence, fencedAgentLayer } from "./Fence.js"
import { type JobData, startEngineWorker } from "./Queue.js"
import { open } from "./Secrets.js"
import {
  appendLine,
  dedicated,
  files,
  finalStates,
  holdsLease,
  jobRow,
  journalLines,
  putFile,
  schema,
  settleParent,
  type Store,
  takeOpenLease
} from "./Store.js"
import type { ImportSpec } from "./Submit.js"

export interface WorkerOptions {
  readonly egressId: string
  readonly sourceAddress: string | undefined
  readonly rate: Rate
  readonly jobs: number
  readonly leaseMs: number
  readonly say: (line: string) => Effect.Effect<void>
}

/** The outputs of a run kept in the store (`out/NAME`); `fetch` writes them back with the journal. */
export const outputs = [reportCsv, reportXlsx, "report.html", summaryFile] as const

/**
 * The lease a request runs under (set on the fiber of a job's run; none outside a job): the gate it passes before
 * it is sent, and the fence its bytes pass at the socket (Fence.ts).
 */
interface Lease {
  readonly gate: Effect.Effect<void>
  readonly fence: Fence
}

const currentLease = FiberRef.unsafeMake<Option.Option<Lease>>(Option.none())

/** The fence of the request being made now: the lease of the fiber making it. */
const currentFence = (): Fence | undefined =>
  Option.getOrUndefined(Option.flatMap(Fiber.getCurrentFiber(), (fiber) => fiber.getFiberRef(currentLease)))?.fence

/**
 * For tests only: `FSM_FLEET_DEBUG_STOP_AFTER_GATE=N` stops the process (SIGSTOP) right after the N-th request
 * passed the lease gate, the instant the fence at the socket exists for.
 */
const stopAfterGate = Number(process.env.FSM_FLEET_DEBUG_STOP_AFTER_GATE ?? "0")
let gatesPassed = 0

/** The worker's budget with the lease gate in front of every request. */
const gatedBudget = (budget: Budget): Budget => ({
  ...budget,
  spend: (request, unsent) =>
    budget.spend(
      Effect.flatMap(FiberRef.get(currentLease), (lease) => Option.isSome(lease) ? lease.value.gate : Effect.void).pipe(
        Effect.zipRight(Effect.sync(() => {
          if (stopAfterGate > 0 && ++gatesPassed === stopAfterGate) process.kill(process.pid, "SIGSTOP")
        })),
        Effect.zipRight(request)
      ),
      unsent
    )
})

/** Takes the egress id for the worker's lifetime, or fails when another worker holds it. */
const holdEgress = (store: Store, id: string) =>
  Effect.gen(function*() {
    const client = yield* dedicated(store)
    const got = yield* Effect.tryPromise({
      try: () =>
        client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [`fsm-bulk egress ${id}`]),
      catch: (cause) => new FleetError({ reason: "Unavailable", message: describeCause(cause), cause })
    })
    if (got.rows[0]?.ok !== true) {
      return yield* new FleetError({
        reason: "Locked",
        message:
          `another worker already runs with --egress-id ${id}: one worker per egress address, as the budget is counted per address`
      })
    }
  })

const ownerName = (egress: string) => `${egress}/${process.pid}`

export const runWorker = Effect.fn("Fleet.worker")(function*(
  store: Store,
  url: string,
  key: Buffer,
  options: WorkerOptions,
  stop: Effect.Effect<void>
) {
  yield* holdEgress(store, options.egressId)
  const scope = yield* Effect.scope
  const budget = gatedBudget(yield* makeBudget(options.rate, defaultBudgetMargin(options.rate.windowMs)))
  const owner = ownerName(options.egressId)
  const workRoot = fs.mkdtempSync(Path.join(tmpdir(), `fsm-fleet-${options.egressId.replace(/[^\w.-]/g, "_")}-`))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(workRoot, { recursive: true, force: true })))
  const shutdown = yield* Deferred.make<void>()

  // One Api per account for the worker's lifetime: its token lives in this process only.
  const apis = new Map<string, Context.Tag.Service<Api>>()
  const apiLock = yield* Effect.makeSemaphore(1)
  const apiFor = (account: string) =>
    apiLock.withPermits(1)(Effect.gen(function*() {
      const known = apis.get(account)
      if (known !== undefined) return known
      const rows = yield* store.query<{ base_url: string; secret: string; rate: string | null }>(
        `SELECT base_url, secret, rate FROM ${schema}.accounts WHERE name = $1`,
        [account]
      )
      const row = rows[0]
      if (row === undefined) {
        return yield* new FleetError({ reason: "NotFound", message: `account "${account}" was removed` })
      }
      const credentials: Credentials = yield* open(key, row.secret, account)
      const settings = ClientConfig.make({
        baseUrl: row.base_url,
        credentials,
        rate: options.rate,
        concurrency: Math.max(2, Math.ceil((options.rate.limit / options.rate.windowMs) * 1000 * 0.3) * 2)
      })
      // An account's own budget (`accounts add --rate`) is spent first, then the worker's.
      const own = row.rate !== null ? Either.getOrUndefined(parseRate(row.rate)) : undefined
      const accountBudget = own !== undefined ? yield* makeBudget(own, defaultBudgetMargin(own.windowMs)) : undefined
      const spending: Budget = accountBudget === undefined ? budget : {
        spend: (request, unsent) => accountBudget.spend(budget.spend(request, unsent), unsent),
        pause: (ms) => Effect.zipRight(budget.pause(ms), accountBudget.pause(ms)),
        paused: budget.paused,
        // What progress shows: the account's own budget holds first, then the worker's.
        holding: Effect.flatMap(accountBudget.holding, (own) =>
          own.forRoom || own.pausedUntil !== undefined ? Effect.succeed(own) : budget.holding)
      }
      const layer = HttpAdapter.layer.pipe(
        Layer.provide(Layer.succeed(ClientConfig, settings)),
        Layer.provide(Layer.succeed(SharedBudget, spending)),
        Layer.provide(
          NodeHttpClient.layerWithoutAgent.pipe(
            Layer.provide(fencedAgentLayer({
              keepAlive: true,
              maxSockets: settings.concurrency,
              ...(options.sourceAddress !== undefined ? { localAddress: options.sourceAddress } : {})
            }, currentFence))
          )
        )
      )
      const context = yield* Layer.buildWithScope(layer, scope)
      const api = Context.get(context, Api)
      apis.set(account, api)
      return api
    }))

  const runJob = (data: JobData): Effect.Effect<void, FleetError | Error> =>
    Effect.scoped(Effect.gen(function*() {
      const id = data.job
      const row = yield* jobRow(store, id)
      if (finalStates.includes(row.state)) return
      const epoch = yield* takeOpenLease(store, id, owner)
      if (epoch === undefined) return
      yield* store.query(
        `UPDATE ${schema}.jobs SET state = 'running', owner = $2 WHERE id = $1 AND state NOT IN ('done', 'cancelled', 'failed')`,
        [id, options.egressId]
      )
      yield* options.say(`worker ${options.egressId}: job ${id} (${row.kind} ${row.resource ?? ""}) lease ${epoch}`)
      const lost = yield* Deferred.make<void>()
      let lostSeen = false
      const lose = Effect.zipRight(Effect.sync(() => (lostSeen = true)), Deferred.succeed(lost, undefined))
      // When the lease was last confirmed, on the monotonic clock (a pause moves it on, a change of the wall clock
      // does not). Read synchronously by the fence at the socket.
      let confirmed = performance.now()
      const fresh = Math.max(250, Math.floor(options.leaseMs / 3))
      // How old a confirmation a request's bytes may still leave under (the fence at the socket): above `fresh`,
      // so that a request that just passed the gate is not refused, and at most half the lease, the earliest
      // another worker can take the job after the last confirmation (the queue renews its lock at half of it).
      const bound = Math.max(Math.floor(options.leaseMs / 2), Math.ceil(fresh * 1.5))
      // A confirmation counts from when it was asked: an answer that arrives after a pause (the question left
      // before it) is not fresh, so the question is asked again.
      const check: Effect.Effect<boolean> = Effect.gen(function*() {
        while (true) {
          const asked = performance.now()
          const ok = yield* holdsLease(store, id, epoch).pipe(Effect.orElseSucceed(() => false))
          if (!ok) {
            yield* lose
            return false
          }
          if (performance.now() - asked < fresh) {
            confirmed = asked
            return true
          }
        }
      })
      // Checked again before a request when the last confirmation is old (the process may have been paused).
      const gate = Effect.gen(function*() {
        if (yield* Deferred.isDone(lost)) return yield* Effect.interrupt
        if (performance.now() - confirmed < fresh) return
        if (!(yield* check)) return yield* Effect.interrupt
      })
      // The bytes of a request leave only under a recent confirmation.
      const fence: Fence = {
        refusal: () => {
          if (lostSeen) return `lease ${epoch} of job ${id} was lost (taken over or cancelled)`
          const age = performance.now() - confirmed
          return age < bound
            ? undefined
            : `the lease of job ${id} was last confirmed ${
              Math.round(age)
            } ms ago (a request leaves within ${bound} ms of it)`
        }
      }
      const heartbeat = Effect.repeat(Effect.zipRight(Effect.sleep(fresh), check), {
        while: (ok) => ok
      })
      const stopRun = Effect.raceFirst(Deferred.await(lost), Deferred.await(shutdown))

      const dir = Path.join(workRoot, `${id}-${epoch}`)
      const sourceDir = Path.join(dir, "source")
      const runDir = Path.join(dir, "run")
      fs.mkdirSync(sourceDir, { recursive: true })
      const sources = yield* files(store, id, "source/")
      const source = sources[0]
      if (source === undefined) {
        return yield* new FleetError({ reason: "NotFound", message: `job ${id} has no source file` })
      }
      const file = Path.join(sourceDir, Path.basename(source.name))
      fs.writeFileSync(file, source.content)
      const journal = (path: string) =>
        Effect.gen(function*() {
          const local = yield* openJournal(path)
          return {
            path,
            append: (line) =>
              appendLine(store, id, epoch, JSON.stringify(line)).pipe(
                Effect.mapError((e) => cannotWrite(path, e, "cannot record the journal line in the fleet store")),
                Effect.flatMap((held) =>
                  held
                    ? Effect.void
                    : Effect.zipRight(
                      lose,
                      Effect.fail(
                        cannotWrite(path, new Error("the job was taken over"), `job ${id}: lease ${epoch} lost`)
                      )
                    )
                ),
                Effect.zipRight(local.append(line))
              )
          } satisfies JournalWriter
        })
      const prior = yield* journalLines(store, id)
      const api = yield* apiFor(row.account)
      const spec = row.spec as unknown as ImportSpec
      const tools = { stop: stopRun, journal, say: options.say }
      const run = prior.length > 0
        ? Effect.gen(function*() {
          fs.mkdirSync(runDir, { recursive: true })
          const [head, ...rest] = prior
          const header = JSON.parse(head!) as { source: { file: string }; parse: { baseDir: string } }
          header.source.file = file
          header.parse.baseDir = sourceDir
          fs.writeFileSync(Path.join(runDir, journalFile), [JSON.stringify(header), ...rest].join("\n") + "\n")
          return yield* resumeRun(runDir, tools)
        })
        : runImport({
          ...tools,
          command: "import",
          resource: spec.resource as ResourceName,
          file,
          read: spec.read,
          dateFormat: spec.dateFormat,
          decimal: spec.decimal,
          mode: spec.mode,
          dryRun: spec.dryRun,
          verify: spec.verify,
          verifyWaitMs: spec.verifyWaitMs,
          baseDir: sourceDir,
          rowColumn: spec.rowColumn,
          runDir
        })
      const exit = yield* Effect.exit(
        run.pipe(
          Effect.provideService(Api, api),
          Effect.locally(currentLease, Option.some({ gate, fence })),
          Effect.raceFirst(Effect.zipRight(heartbeat, Effect.never))
        )
      )
      const held = !(yield* Deferred.isDone(lost)) && (yield* check)
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      if (!held) {
        const cancelled = (yield* jobRow(store, id)).state === "cancelled"
        yield* options.say(
          `worker ${options.egressId}: job ${id}: lease ${epoch} lost; ${
            cancelled ? "the job was cancelled" : "another worker has it"
          }`
        )
        return
      }
      if (Exit.isSuccess(exit) && exit.value.interrupted && (yield* Deferred.isDone(shutdown))) {
        // Handed back: the queue gives it to another worker, which continues from the journal.
        yield* options.say(`worker ${options.egressId}: job ${id} handed back`)
        return yield* Effect.fail(new Error(`job ${id} handed back by ${options.egressId}`))
      }
      if (Exit.isSuccess(exit)) {
        const result = exit.value
        for (const name of outputs) {
          const path = Path.join(result.runDir, name)
          if (fs.existsSync(path)) yield* putFile(store, id, `out/${name}`, fs.readFileSync(path))
        }
        yield* store.query(
          `UPDATE ${schema}.jobs SET state = 'done', exit_code = $2, summary = $3, rows = $4, finished = now()
           WHERE id = $1 AND EXISTS (SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $5)`,
          [id, result.exitCode, JSON.stringify(result.summary), result.summary.rows, epoch]
        )
        if (row.parent !== null) yield* settleParent(store, row.parent)
        yield* options.say(`worker ${options.egressId}: job ${id} done (exit ${result.exitCode})`)
        return
      }
      const failure = Cause.failureOption(exit.cause)
      const error = Option.isSome(failure) ? failure.value : undefined
      const message = error !== undefined ? (error as { message?: string }).message ?? String(error) : "interrupted"
      const code = (error as { exitCode?: number } | undefined)?.exitCode ?? 3
      yield* store.query(
        `UPDATE ${schema}.jobs SET state = 'failed', exit_code = $2, error = $3, finished = now()
         WHERE id = $1 AND EXISTS (SELECT 1 FROM ${schema}.leases WHERE job = $1 AND epoch = $4)`,
        [id, code, message, epoch]
      )
      if (row.parent !== null) yield* settleParent(store, row.parent)
      yield* options.say(`worker ${options.egressId}: job ${id} failed: ${message}`)
    }))

  const runtime = yield* Effect.runtime<never>()
  const engine = yield* startEngineWorker(
    url,
    { jobs: options.jobs, leaseMs: options.leaseMs },
    (data) =>
      Runtime.runPromise(runtime)(
        runJob(data).pipe(
          Effect.catchAllDefect((d) => Effect.fail(new Error(describeCause(d)))),
          Effect.catchTag("FleetError", (e) => options.say(`worker ${options.egressId}: ${e.message}`))
        )
      )
  )
  yield* options.say(
    `worker ${options.egressId} (${owner}) ready${
      options.sourceAddress !== undefined ? `, requests leave from ${options.sourceAddress}` : ""
    }`
  )
  yield* stop
  yield* options.say(`worker ${options.egressId}: stopping; jobs in progress stop sending and are handed back`)
  yield* Deferred.succeed(shutdown, undefined)
  yield* engine.close
})
