/**
 * `fsm-bulk worker`: pulls jobs from the fleet's queue and runs each with the import pipeline, as `import` and
 * `resume` do, with three things of its own:
 *
 * - One budget per process (per egress address), shared by every job and account it runs; one egress id per
 *   worker, held through the store for the worker's life (a second worker is refused; the hold dies with the
 *   process: `FleetStore.holdEgress`). Outgoing requests leave from `--source-address` when given. One token
 *   per account.
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
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
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
import { enqueue, type JobData, jobFormat, openQueue, startEngineWorker } from "./Queue.js"
import { checkFleetKey, open } from "./Secrets.js"
import {
  type EgressHold,
  finalStates,
  type FleetStore,
  type JobRow,
  lostDataError,
  type StoredAccount
} from "./Store.js"
import type { ImportSpec } from "./Submit.js"
import { outlastingStore } from "./Transient.js"
import { runExportJob, runOnboardJob } from "./Whole.js"

interface WorkerOptions {
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

/**
 * The worker's budget with its gates in front of every request: the egress id's (a request waits while the hold
 * cannot be confirmed; once it is lost, the worker is stopping and the request is interrupted with the rest), then
 * the lease's.
 */
const gatedBudget = (budget: Budget, egress: EgressHold, stopping: Effect.Effect<void>): Budget => ({
  ...budget,
  spend: (request, unsent) =>
    budget.spend(
      Effect.flatMap(egress.gate, (held) => held ? Effect.void : Effect.zipRight(stopping, Effect.interrupt)).pipe(
        Effect.zipRight(
          Effect.flatMap(FiberRef.get(currentLease), (lease) => Option.isSome(lease) ? lease.value.gate : Effect.void)
        ),
        Effect.zipRight(Effect.sync(() => {
          if (stopAfterGate > 0 && ++gatesPassed === stopAfterGate) process.kill(process.pid, "SIGSTOP")
        })),
        Effect.zipRight(request)
      ),
      unsent
    )
})

/** Fails (`Lost`) when the store has lost the fleet's data: its marker gone, or records it lists. */
const intact = (store: FleetStore) =>
  Effect.zipRight(
    store.requireInit,
    Effect.flatMap(
      store.lostData,
      (finding) => finding === undefined ? Effect.void : Effect.fail(lostDataError(finding))
    )
  )

const ownerName = (egress: string) => `${egress}/${process.pid}`

/** What makes an account's client: a change of any of it (`accounts add` again) needs a new one. */
const accountSettings = (row: StoredAccount): string => JSON.stringify([row.baseUrl, row.rate, row.secret])

/** Whether process `pid` is alive on this machine. */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as { code?: string }).code === "EPERM"
  }
}

/**
 * The worker's scratch folder (the jobs' source files and run directories, customer data), removed when the
 * worker exits. It holds the worker's pid (`.owner`). A worker killed with -9 leaves its folder: the next worker of
 * the same egress id removes the id's folders whose owner is dead (or, without an owner file, that are over a minute
 * old). A folder of a live worker is never removed: an older worker of the id may still be winding down its job
 * (a whole run of the fleet tests once lost a running job's report that way).
 */
const workFolder = (egressId: string) =>
  Effect.sync(() => {
    const prefix = `fsm-fleet-${egressId.replace(/[^\w.-]/g, "_")}-`
    for (const name of fs.readdirSync(tmpdir())) {
      // mkdtemp's six letters and digits exactly: not the folder of another id that starts with this one.
      if (!name.startsWith(prefix) || !/^[A-Za-z0-9]{6}$/.test(name.slice(prefix.length))) continue
      const dir = Path.join(tmpdir(), name)
      try {
        const owner = Number(fs.readFileSync(Path.join(dir, ".owner"), "utf8"))
        if (Number.isInteger(owner) && owner > 0 && alive(owner)) continue
      } catch {
        const stat = fs.statSync(dir, { throwIfNoEntry: false })
        if (stat === undefined || Date.now() - stat.mtimeMs < 60_000) continue
      }
      fs.rmSync(dir, { recursive: true, force: true })
    }
    const root = fs.mkdtempSync(Path.join(tmpdir(), prefix))
    fs.writeFileSync(Path.join(root, ".owner"), String(process.pid))
    return root
  })

export const runWorker = Effect.fn("Fleet.worker")(function*(
  stored: FleetStore,
  url: string,
  key: Buffer,
  options: WorkerOptions,
  stop: Effect.Effect<void>
) {
  // A worker whose key cannot open the accounts it would serve refuses to start: it would take their jobs and
  // fail every one of them.
  yield* checkFleetKey(stored, key)
  // A server that may evict keys can drop a journal line or a lease under a running job (rows sent twice): this
  // worker does not start on one. Nor on a store that has already lost the fleet's data.
  const policy = yield* stored.evictionPolicy
  if (policy !== undefined) {
    return yield* new FleetError({
      reason: "Unavailable",
      message: `the fleet's Redis server runs with maxmemory-policy ${policy}: it may evict a running job's ` +
        `journal or lease, and rows would be sent twice; the worker does not start until it is set to noeviction ` +
        `(docs/fleet.md, "On Redis")`
    })
  }
  yield* intact(stored)
  // Its source address too: a second egress id leaving from the same address is refused (exit 2, naming it).
  const egress = yield* stored.holdEgress(options.egressId, options.sourceAddress)
  // Short store faults are outlasted (Transient.ts); what lasts longer hands the job back to the queue.
  const store = outlastingStore(
    stored,
    options.leaseMs,
    (e) => options.say(`worker ${options.egressId}: the fleet store failed, trying again: ${e.message}`)
  )
  const scope = yield* Effect.scope
  const shutdown = yield* Deferred.make<void>()
  const budget = gatedBudget(
    yield* makeBudget(options.rate, defaultBudgetMargin(options.rate.windowMs)),
    egress,
    Deferred.await(shutdown)
  )
  // Every request's bytes leave only under a confirmed egress id, and (in a job) a confirmed lease.
  const fenceOf = (): Fence => {
    const lease = currentFence()
    return { refusal: () => egress.refusal() ?? lease?.refusal() }
  }
  const owner = ownerName(options.egressId)
  const workRoot = yield* workFolder(options.egressId)
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(workRoot, { recursive: true, force: true })))
  // Set when this worker cannot serve the fleet (its key does not open an account's credentials): it stops.
  const unfit = yield* Deferred.make<FleetError>()

  // One Api per account and settings (address, budget, credentials): an account replaced by `accounts add` gets a
  // new one at its next job, and its token lives in this process only.
  const apis = new Map<string, { readonly settings: string; readonly api: Context.Tag.Service<Api> }>()
  const apiLock = yield* Effect.makeSemaphore(1)
  const apiFor = (row: StoredAccount) =>
    apiLock.withPermits(1)(Effect.gen(function*() {
      const account = row.name
      const known = apis.get(account)
      if (known !== undefined && known.settings === accountSettings(row)) return known.api
      const credentials: Credentials = yield* open(key, row.secret, account)
      const settings = ClientConfig.make({
        baseUrl: row.baseUrl,
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
            }, fenceOf))
          )
        )
      )
      const context = yield* Layer.buildWithScope(layer, scope)
      const api = Context.get(context, Api)
      apis.set(account, { settings: accountSettings(row), api })
      return api
    }))

  /**
   * The account a job works for, read when the job starts (so a job always runs with the account's settings of
   * now), and looked up again before each of its requests: once the account is removed or replaced (`accounts add`
   * with another address, budget or credentials), no request of the job leaves with the old ones.
   */
  const watchAccount = (name: string) =>
    Effect.gen(function*() {
      const first = yield* store.account(name)
      if (first === undefined) {
        return yield* new FleetError({ reason: "NotFound", message: `account "${name}" was removed` })
      }
      const api = yield* apiFor(first)
      let change: "removed" | "replaced" | undefined
      const changed = yield* Deferred.make<void>()
      const gate = Effect.gen(function*() {
        if (change === undefined) {
          // A store that cannot answer (after its retries) is the lease check's to find: it stops the run too.
          const now = yield* store.account(name).pipe(Effect.orElseSucceed(() => first))
          if (now === undefined) change = "removed"
          else if (accountSettings(now) !== accountSettings(first)) change = "replaced"
          else return
          yield* Deferred.succeed(changed, undefined)
        }
        return yield* Effect.interrupt
      })
      return {
        api,
        gate,
        changed: Deferred.await(changed),
        change: () => change,
        refusal: () => change === undefined ? undefined : `account "${name}" was ${change}`
      }
    })

  /** Says that this worker lost a job's lease, and to what. */
  const sayLost = (id: string, epoch: number) =>
    Effect.flatMap(store.job(id), (row) =>
      options.say(
        `worker ${options.egressId}: job ${id}: lease ${epoch} lost; ${
          row.state === "cancelled" ? "the job was cancelled" : "another worker has it"
        }`
      ))
  /**
   * Gives a job back to the queue (this worker is stopping, or cannot go on with it now): the queue gives it again,
   * and a worker continues it from the journal.
   */
  const handBack = (id: string, why?: string) =>
    Effect.zipRight(
      options.say(`worker ${options.egressId}: job ${id} handed back${why !== undefined ? `: ${why}` : ""}`),
      Effect.fail(new Error(`job ${id} handed back by ${options.egressId}`))
    )

  /**
   * Ends a job failed, under its lease (nothing is recorded when the lease is gone), its parent settled: exit 2
   * when nothing of it was sent, 3 when rows were (`fetch` and `resume` take it from there).
   */
  const failFor = (row: JobRow, epoch: number, sent: boolean, message: string, code = 2) =>
    Effect.gen(function*() {
      const exitCode = code === 2 && sent ? 3 : code
      yield* store.failJob(row.id, epoch, { exitCode, error: message })
      if (row.parent !== null) yield* store.settleParent(row.parent)
      yield* options.say(`worker ${options.egressId}: job ${row.id} failed (exit ${exitCode}): ${message}`)
    })

  /**
   * A fleet failure met by a job after its lease was taken: a key that does not open the account's credentials
   * stops this worker (exit 2) and hands the job back for a worker that can; a store still unusable after the
   * retries hands it back; anything else (its account removed, its source missing) ends it, failed with the reason.
   * A job always ends or goes back to the queue: none is left queued or running with nobody on it.
   */
  const settleFailure = (row: JobRow, epoch: number, sent: { readonly any: boolean }) => (e: FleetError) =>
    e.reason === "Key"
      ? Effect.zipRight(Deferred.succeed(unfit, e), handBack(row.id, e.message))
      : e.reason === "Unavailable"
      ? handBack(row.id, e.message)
      : failFor(row, epoch, sent.any, e.message)

  const runJob = (data: JobData): Effect.Effect<void, FleetError | Error> =>
    Effect.scoped(Effect.gen(function*() {
      const row = yield* store.job(data.job)
      if (finalStates.includes(row.state)) return
      // A job of a newer format than this worker knows is left (before its lease is taken) to a newer worker.
      const format = (row.spec as { readonly jobFormat?: unknown }).jobFormat
      if (typeof format === "number" && format > jobFormat) {
        return yield* handBack(
          row.id,
          `it needs job format ${format} and this worker knows up to ${jobFormat}: left to a newer worker`
        )
      }
      const epoch = yield* store.takeOpenLease(row.id, owner)
      if (epoch === undefined) return
      const sent = { any: false }
      return yield* runLeased(row, epoch, sent).pipe(Effect.catchTag("FleetError", settleFailure(row, epoch, sent)))
    }))

  /** A job under the lease this worker took for it (`sent.any`: a row of it was sent, by this worker or before). */
  const runLeased = (
    row: JobRow,
    epoch: number,
    sent: { any: boolean }
  ): Effect.Effect<void, FleetError | Error, Scope.Scope> =>
    Effect.gen(function*() {
      const id = row.id
      yield* store.markRunning(id, options.egressId)
      yield* options.say(`worker ${options.egressId}: job ${id} (${row.kind} ${row.resource ?? ""}) lease ${epoch}`)
      const lost = yield* Deferred.make<void>()
      let lostSeen = false
      const lose = Effect.zipRight(Effect.sync(() => (lostSeen = true)), Deferred.succeed(lost, undefined))
      // However the loss is found (here, or by an onboarding or export step's journal), the fence learns it at once.
      yield* Effect.forkScoped(Effect.zipRight(Deferred.await(lost), Effect.sync(() => (lostSeen = true))))
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
          const ok = yield* store.holdsLease(id, epoch).pipe(Effect.orElseSucceed(() => false))
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
      const watch = yield* watchAccount(row.account)
      const stopRun = Effect.raceAll([Deferred.await(lost), Deferred.await(shutdown), watch.changed])
      const leased = {
        gate: Effect.zipRight(gate, watch.gate),
        fence: { refusal: () => watch.refusal() ?? fence.refusal() }
      }
      /** A run stopped because its account was replaced or removed: handed back, or ended failed. */
      const accountEnd = Effect.suspend(() => {
        const change = watch.change()
        return change === "replaced"
          ? handBack(id, `account "${row.account}" was replaced (address or credentials): the job goes on with it`)
          : change === "removed"
          ? Effect.as(
            failFor(row, epoch, sent.any, `account "${row.account}" was removed while the job ran: it stopped sending`),
            true
          )
          : Effect.succeed(false)
      })
      if (row.kind === "onboard" || row.kind === "export") {
        return yield* runWhole(row, epoch, watch.api, {
          lost,
          stopped: stopRun,
          held: Effect.flatMap(Deferred.isDone(lost), (gone) => gone ? Effect.succeed(false) : check),
          ...leased,
          heartbeat,
          accountEnd
        })
      }

      const dir = Path.join(workRoot, `${id}-${epoch}`)
      const sourceDir = Path.join(dir, "source")
      const runDir = Path.join(dir, "run")
      fs.mkdirSync(sourceDir, { recursive: true })
      const sources = yield* store.files(id, "source/")
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
              store.appendLine(id, epoch, JSON.stringify(line)).pipe(
                // The store stayed unusable past the retries (Transient.ts): the job goes back to the queue.
                Effect.tapError(() => Effect.sync(() => (storeFailed = true))),
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
                Effect.zipRight(Effect.sync(() => {
                  if (line.state === "sending") sent.any = true
                })),
                Effect.zipRight(local.append(line))
              )
          } satisfies JournalWriter
        })
      let storeFailed = false
      const prior = yield* store.journalLines(id)
      if (prior.some((line) => line.includes(`"state":"sending"`))) sent.any = true
      const spec = row.spec as unknown as ImportSpec
      const tools = { stop: stopRun, journal, say: options.say, writerLock: false }
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
          Effect.provideService(Api, watch.api),
          Effect.locally(currentLease, Option.some(leased)),
          Effect.raceFirst(Effect.zipRight(heartbeat, Effect.never))
        )
      )
      const held = !(yield* Deferred.isDone(lost)) && (yield* check)
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      if (!held) {
        return yield* sayLost(id, epoch)
      }
      if (yield* accountEnd) return
      if (Exit.isSuccess(exit) && exit.value.interrupted && (yield* Deferred.isDone(shutdown))) {
        // Handed back: the queue gives it to another worker, which continues from the journal.
        return yield* handBack(id)
      }
      if (Exit.isSuccess(exit)) {
        const result = exit.value
        for (const name of outputs) {
          const path = Path.join(result.runDir, name)
          if (fs.existsSync(path)) yield* store.putFile(id, `out/${name}`, fs.readFileSync(path))
        }
        yield* store.finishJob(id, epoch, {
          exitCode: result.exitCode,
          summary: result.summary,
          rows: result.summary.rows
        })
        if (row.parent !== null) yield* store.settleParent(row.parent)
        yield* options.say(`worker ${options.egressId}: job ${id} done (exit ${result.exitCode})`)
        return
      }
      const failure = Cause.failureOption(exit.cause)
      const error = Option.isSome(failure) ? failure.value : undefined
      const message = error !== undefined ? (error as { message?: string }).message ?? String(error) : "interrupted"
      if (storeFailed) return yield* handBack(id, message)
      yield* failFor(row, epoch, sent.any, message, (error as { exitCode?: number } | undefined)?.exitCode ?? 3)
    })

  /**
   * An onboard or export job (Whole.ts), under the lease taken for it: the run as a value, then its end recorded
   * with its files in one step that holds only while the lease does.
   */
  const runWhole = (
    row: JobRow,
    epoch: number,
    api: Context.Tag.Service<Api>,
    lease: {
      readonly lost: Deferred.Deferred<void>
      readonly stopped: Effect.Effect<void>
      readonly held: Effect.Effect<boolean>
      readonly gate: Effect.Effect<void>
      readonly fence: Fence
      readonly heartbeat: Effect.Effect<unknown>
      readonly accountEnd: Effect.Effect<boolean, FleetError | Error>
    }
  ) =>
    Effect.gen(function*() {
      const id = row.id
      const dir = Path.join(workRoot, `${id}-${epoch}`)
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      fs.mkdirSync(dir, { recursive: true })
      const stop = {
        stopped: lease.stopped,
        isStopped: Effect.map(
          Effect.all([Deferred.isDone(lease.lost), Deferred.isDone(shutdown)]),
          ([lost, stopping]) => lost || stopping
        )
      }
      const whole = { store, row, epoch, dir, lost: lease.lost, stop, say: options.say }
      const exit = yield* Effect.exit(
        (row.kind === "onboard" ? runOnboardJob(whole) : runExportJob(whole)).pipe(
          Effect.provideService(Api, api),
          Effect.locally(currentLease, Option.some({ gate: lease.gate, fence: lease.fence })),
          Effect.raceFirst(Effect.zipRight(lease.heartbeat, Effect.never))
        )
      )
      if (!(yield* lease.held)) {
        return yield* sayLost(id, epoch)
      }
      // Stopped by its account's removal or replacement.
      if (yield* lease.accountEnd) return
      if (Exit.isSuccess(exit) && exit.value.interrupted && (yield* Deferred.isDone(shutdown))) {
        return yield* handBack(id)
      }
      const end = Exit.isSuccess(exit) ? exit.value : undefined
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
      const error = end?.error ??
        (Option.isSome(failure) ? (failure.value as { message?: string }).message ?? String(failure.value) : undefined)
      const ended = yield* store.endWhole(id, epoch, end?.outputs ?? [], {
        state: end !== undefined && end.error === undefined ? "done" : "failed",
        exitCode: end?.exitCode ?? 3,
        summary: end?.summary ?? null,
        rows: end?.rows,
        error: end === undefined && error === undefined ? "interrupted" : error
      })
      yield* options.say(
        !ended
          ? `worker ${options.egressId}: job ${id}: lease ${epoch} lost; another worker has it`
          : error !== undefined
          ? `worker ${options.egressId}: job ${id} failed: ${error}`
          : `worker ${options.egressId}: job ${id} done (exit ${end?.exitCode ?? 3})`
      )
    })

  const runtime = yield* Effect.runtime<never>()
  const engine = yield* startEngineWorker(
    url,
    { jobs: options.jobs, leaseMs: options.leaseMs },
    (data) =>
      Runtime.runPromise(runtime)(
        runJob(data).pipe(
          Effect.catchAllDefect((d) => Effect.fail(new Error(describeCause(d)))),
          // Before its lease was taken: a job whose record is gone has nothing to run; else (the store failed past
          // its retries) the job goes back to the queue.
          Effect.catchTag("FleetError", (e) =>
            e.reason === "NotFound"
              ? options.say(`worker ${options.egressId}: ${e.message}`)
              : handBack(data.job, e.message))
        )
      )
  )
  // Every lease: submissions whose `submit` was killed before they were all queued are queued (nothing of them
  // runs twice: the queue takes a job id once, and a job that ran keeps its journal), and a store that lost the
  // fleet's data (FLUSHALL, eviction) stops the worker, exit 2, rather than leaving it to serve an empty fleet.
  const queue = yield* openQueue(url)
  const sweep = Effect.gen(function*() {
    const lost = yield* Effect.flip(intact(stored)).pipe(Effect.option)
    if (Option.isSome(lost) && lost.value.reason === "Lost") return yield* Deferred.succeed(unfit, lost.value)
    for (const s of yield* store.unqueued(options.leaseMs)) {
      yield* Effect.forEach(s.leaves, (id) => enqueue(queue, id), { discard: true })
      yield* store.markQueued(s.id)
      yield* options.say(
        `worker ${options.egressId}: job ${s.id} was left unqueued by its submit (stopped midway): queued now`
      )
    }
  })
  yield* Effect.forkScoped(
    Effect.repeat(Effect.ignore(sweep), Schedule.spaced(Duration.millis(Math.max(500, options.leaseMs / 2))))
  )
  yield* options.say(
    `worker ${options.egressId} (${owner}) ready${
      options.sourceAddress !== undefined ? `, requests leave from ${options.sourceAddress}` : ""
    }`
  )
  // A lost egress lock stops the worker as a signal does: another worker may now spend this address's budget. So
  // does a key found not to open an account's credentials: the worker cannot serve this fleet.
  const ended = yield* Effect.raceAll([
    Effect.as(stop, "stop" as const),
    Effect.as(egress.lost, "egress" as const),
    Deferred.await(unfit)
  ])
  const lostEgress = ended === "egress"
  if (lostEgress) yield* options.say(`worker ${options.egressId}: its hold on --egress-id ${options.egressId} was lost`)
  yield* options.say(`worker ${options.egressId}: stopping; jobs in progress stop sending and are handed back`)
  yield* Deferred.succeed(shutdown, undefined)
  yield* engine.close
  if (typeof ended !== "string") return yield* ended
  if (lostEgress) {
    return yield* new FleetError({
      reason: "Locked",
      message:
        `worker ${options.egressId} stopped: its hold on the egress id was lost (the store's connection died, or the worker was paused past the lock's expiry)`
    })
  }
})
