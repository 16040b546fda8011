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
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import { type Budget, makeBudget } from "../client/Budget.js"
import { defaultBudgetMargin } from "../client/Config.js"
import type { Rate } from "../Units.js"
import { makeAccountClients } from "./AccountClients.js"
import { describeCause, FleetError } from "./Errors.js"
import type { Fence } from "./Fence.js"
import { makeJobRunner } from "./JobRunner.js"
import { currentFence, currentLease } from "./Lease.js"
import { makePace } from "./Pace.js"
import { enqueue, LeftForOthers, openQueue, promote, startEngineWorker } from "./Queue.js"
import { ownedScratch } from "./Scratch.js"
import { checkFleetKey } from "./Secrets.js"
import { type EgressHold, type FleetStore, lostDataError, missingIndexesWarning, stagingReclaimMs } from "./Store.js"
import { outlastingStore } from "./Transient.js"

export { outputs } from "./JobRunner.js"

interface WorkerOptions {
  readonly egressId: string
  readonly sourceAddress: string | undefined
  readonly rate: Rate
  readonly jobs: number
  readonly leaseMs: number
  readonly say: (line: string) => Effect.Effect<void>
}

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

/**
 * The worker's scratch folder (the jobs' source files and run directories, customer data), removed when the
 * worker exits. A worker killed with -9 leaves its folder: the next worker of the same egress id removes the id's
 * folders whose owner is dead (Scratch.ts). A folder of a live worker is never removed: an older worker of the id
 * may still be winding down its job (a whole run of the fleet tests once lost a running job's report that way).
 */
const workFolder = (egressId: string) => ownedScratch(`fsm-fleet-${egressId.replace(/[^\w.-]/g, "_")}-`)

/**
 * What a worker checks before it starts. A worker whose key cannot open the accounts it would serve refuses to
 * start: it would take their jobs and fail every one of them. A server that may evict keys can drop a journal line
 * or a lease under a running job (rows sent twice): no worker starts on one. Nor on a store that has already lost
 * the fleet's data.
 */
const preflight = Effect.fn("Fleet.workerPreflight")(function*(stored: FleetStore, key: Buffer) {
  yield* checkFleetKey(stored, key)
  const policy = yield* stored.evictionPolicy
  if (policy !== undefined) {
    return yield* new FleetError({
      reason: "Refused",
      message: `the fleet's Redis server runs with maxmemory-policy ${policy}: it may evict a running job's ` +
        `journal or lease, and rows would be sent twice; the worker does not start until it is set to noeviction ` +
        `(docs/fleet.md, "On Redis")`
    })
  }
  yield* intact(stored)
})

/**
 * Every half lease: submissions whose `submit` was killed before they were all queued are queued (nothing of them
 * runs twice: the queue takes a job id once, and a job that ran keeps its journal), those it left half stored
 * (`staging`, untouched for `stagingReclaimMs`) are removed with their files, and a store that lost the
 * fleet's data (FLUSHALL, eviction) stops the worker (`unfit`), exit 2, rather than leaving it to serve an empty
 * fleet. `stored` is the store as it is, `store` with its short faults outlasted.
 */
const startSweep = Effect.fn("Fleet.workerSweep")(function*(
  stored: FleetStore,
  store: FleetStore,
  url: string,
  options: WorkerOptions,
  unfit: Deferred.Deferred<FleetError>,
  refusedDue: Effect.Effect<ReadonlyArray<string>, FleetError>
) {
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
    const reclaimed = yield* store.reclaimStaging(stagingReclaimMs(options.leaseMs))
    if (reclaimed > 0) {
      yield* options.say(
        `worker ${options.egressId}: removed ${reclaimed} submission(s) whose submit stopped while storing their parts`
      )
    }
    // A parked job every live worker has refused by now is given again at once: the refusal that takes it ends it.
    for (const id of yield* refusedDue) {
      if (yield* promote(queue, id)) {
        yield* options.say(`worker ${options.egressId}: job ${id}: every live worker has refused it: it ends now`)
      }
    }
    // A job in parts whose parts have all ended while it has not (the worker of its last part stopped between the
    // part's end and the job's): it ends now, as that worker would have ended it.
    for (const id of yield* store.unsettledParents) {
      if (yield* store.settleParent(id)) {
        yield* options.say(`worker ${options.egressId}: job ${id}: its parts had all ended but it had not: it ends now`)
      }
    }
  })
  yield* Effect.forkScoped(
    Effect.repeat(Effect.ignore(sweep), Schedule.spaced(Duration.millis(Math.max(500, options.leaseMs / 2))))
  )
})

export const runWorker = Effect.fn("Fleet.worker")(function*(
  stored: FleetStore,
  url: string,
  key: Buffer,
  options: WorkerOptions,
  stop: Effect.Effect<void>
) {
  yield* preflight(stored, key)
  // A fleet made by an older version works without the indexes added since, only slower: said once, at the start.
  const missing = missingIndexesWarning(yield* Effect.orElseSucceed(stored.missingIndexes, () => []))
  if (missing !== undefined) yield* options.say(`worker ${options.egressId}: warning: ${missing}`)
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

  const { watchAccount } = yield* makeAccountClients({
    store,
    key,
    rate: options.rate,
    budget,
    sourceAddress: options.sourceAddress,
    fenceOf,
    scope
  })
  // When the job slots take a further job: when the budget would otherwise have room (Pace.ts).
  const pace = makePace(budget, options.rate, defaultBudgetMargin(options.rate.windowMs))
  const { handBack, refuseJob, refusedDue, refusedJobs, runJob } = makeJobRunner({
    store,
    egressId: options.egressId,
    owner,
    leaseMs: options.leaseMs,
    workRoot,
    say: options.say,
    shutdown,
    unfit,
    watchAccount,
    tally: pace
  })

  const runtime = yield* Effect.runtime<never>()
  const engine = yield* startEngineWorker(
    url,
    {
      jobs: options.jobs,
      leaseMs: options.leaseMs,
      refused: refusedJobs,
      mayTakeMore: () => Runtime.runPromise(runtime)(pace.mayTakeMore)
    },
    (data) => {
      // Held from the moment it is given (before its run's first step): the slots' next fetch counts it.
      const end = Runtime.runSync(runtime)(pace.begin(data.job))
      return Runtime.runPromise(runtime)(
        runJob(data).pipe(
          Effect.catchAllDefect((d) => Effect.fail(new Error(describeCause(d)))),
          // Before its lease was taken: a job whose record is gone has nothing to run; one the store refuses to give
          // this worker is refused (it ends once no worker can take it); else (the store failed past its retries)
          // the job goes back to the queue.
          Effect.catchTag("FleetError", (e) =>
            e.reason === "NotFound"
              ? options.say(`worker ${options.egressId}: ${e.message}`)
              : e.reason === "Refused"
              ? refuseJob(data.job, e.message)
              : handBack(data.job, e.message)),
          Effect.asVoid,
          // Refused here: parked in the queue for the other workers (Queue.ts).
          Effect.catchIf((e) => e instanceof LeftForOthers, () => Effect.succeed("left-for-others" as const)),
          Effect.ensuring(end)
        )
      )
    }
  )
  yield* startSweep(stored, store, url, options, unfit, refusedDue)
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
