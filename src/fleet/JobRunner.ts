/**
 * How a worker runs one job the queue gave it: the lease taken in the store (a job that ended, or of a newer format,
 * is left), the run under the lease guard (Lease.ts) and the account's client (AccountClients.ts), and its end
 * recorded only while the lease holds. An import continues from the store's journal with `resume`'s rules when the
 * job ran before (taken over from a worker that died or stalled); onboard and export jobs run in Whole.ts. A job
 * always ends (done, failed with its reason and exit code) or goes back to the queue for another worker.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as Path from "node:path"
import { Api } from "../client/Api.js"
import { requestLane } from "../client/Lanes.js"
import { Notices } from "../console/Output.js"
import { cannotWrite } from "../files/Write.js"
import type { JournalWriter } from "../import/Journal.js"
import type { RunResult } from "../import/Pipeline.js"
import { reportCsv, reportXlsx, summaryFile } from "../import/RunFiles.js"
import type { ResourceName } from "../Resources.js"
import { RunStop } from "../Signals.js"
import type { WatchedAccount } from "./AccountClients.js"
import { FleetError } from "./Errors.js"
import { groupCommit } from "./GroupCommit.js"
import type * as ImportRun from "./ImportRun.js"
import { currentLease, freshMs, type Lease, type LeaseGuard, leaseGuard } from "./Lease.js"
import type { Pace } from "./Pace.js"
import { type JobData, jobFormat, LeftForOthers } from "./Queue.js"
import { finalStates, type FleetStore, type JobRow, journalLineFields } from "./Store.js"
import type { ImportSpec } from "./Submit.js"
import { jobStoreDeadline } from "./Transient.js"

/** Whether a job of this kind runs whole (Whole.ts: onboarding, export); else it is an import. */
const runsWhole = (kind: string) => kind === "onboard" || kind === "export"

/** A job's code that cannot be loaded: this worker cannot run jobs of the kind (JobRunner's `runJob` stops it). */
const unloadable = (kind: string) => (cause: unknown) =>
  new FleetError({
    reason: "Refused",
    message: `this worker cannot load its code for ${kind} jobs (${
      cause instanceof Error ? cause.message : String(cause)
    }); was fsm-bulk reinstalled while it ran? Restart the worker`,
    cause
  })

/**
 * What a job runs, loaded when the worker's first job of its kind arrives, not when the worker starts: the import
 * pipeline (ImportRun.ts) for an import, Whole.ts (onboarding, export) for the others. The worker is ready sooner,
 * and one that never runs a kind never compiles its code. Node keeps a module once loaded, so a later job's
 * `import()` is answered at once from Node's module map (docs/development.md, "The build").
 */
const importRun = Effect.tryPromise({ try: () => import("./ImportRun.js"), catch: unloadable("import") })
const wholeRun = Effect.tryPromise({ try: () => import("./Whole.js"), catch: unloadable("onboard and export") })
const loadRun = (kind: string): Effect.Effect<unknown, FleetError> => runsWhole(kind) ? wholeRun : importRun

/**
 * What an import's journal in the store says of its rows so far, each line read by its own `state`
 * (`journalLineFields`): whether a row was sent (a `sending` line) and how many rows ended (`done` lines). A line's
 * record images (a `sending` line's before-image, a `done` line's after-image) hold every field the server gave,
 * which may include a field named `state`: read as text, `"state":"done"` in a record counted a row as ended, and
 * `"state":"sending"` said rows were sent when none was.
 */
export const journalSoFar = (lines: ReadonlyArray<string>): { readonly sent: boolean; readonly done: number } => {
  let sent = false
  let done = 0
  for (const line of lines) {
    const { state } = journalLineFields(line)
    if (state === "sending") sent = true
    else if (state === "done") done += 1
  }
  return { sent, done }
}

/** The outputs of a run kept in the store (`out/NAME`); `fetch` writes them back with the journal. */
export const outputs = [reportCsv, reportXlsx, "report.html", summaryFile] as const

/**
 * How many workers may refuse a job (it cannot serve it: a format newer than it knows, a key that does not open the
 * job's account, the store refusing to give it) before the job ends failed, even while other live workers have not
 * been asked. It ends at once when every live worker refused it.
 */
export const refusalLimit = 3

/** Where a worker's refusal of a job is kept with the job (one per egress id, its reason as the content). */
const refusalPrefix = "refusals/"

interface JobRunnerOptions {
  readonly store: FleetStore
  readonly egressId: string
  /** The lease's holder name in the store. */
  readonly owner: string
  readonly leaseMs: number
  readonly workRoot: string
  readonly say: (line: string) => Effect.Effect<void>
  /** Completed when the worker stops: jobs in progress stop sending and are handed back. */
  readonly shutdown: Deferred.Deferred<void>
  /** Completed when this worker cannot serve the fleet (its key does not open an account's credentials). */
  readonly unfit: Deferred.Deferred<FleetError>
  readonly watchAccount: (name: string) => Effect.Effect<WatchedAccount, FleetError>
  /** Told an import's rows and each row sent, for when the worker takes its next job (Pace.ts). */
  readonly tally?: Pick<Pace, "rows" | "sending" | "done">
}

/** A job's run under its lease: what it runs with and how it stops. */
interface Leased {
  readonly row: JobRow
  readonly epoch: number
  readonly sent: { any: boolean }
  readonly guard: LeaseGuard
  readonly watch: WatchedAccount
  /** Completed when the run must stop: lease lost, worker stopping, account changed. */
  readonly stopped: Effect.Effect<void>
  readonly lease: Lease
  /** A run stopped because its account was replaced or removed: handed back, or ended failed (true); else false. */
  readonly accountEnd: Effect.Effect<boolean, FleetError | Error>
  /**
   * Set when a journal line could not be recorded because the store stayed unusable past its retries (Transient.ts):
   * the run stopped for the store, not for its rows, so the job is handed back (never failed for good).
   */
  readonly storeFailed: { any: boolean }
}

/**
 * A worker's book of the jobs it refused (given again, it does not take them: it looks only whether they should end),
 * with each job's refusals read from the store.
 */
const refusalBook = (store: FleetStore) => {
  const refused = new Set<string>()

  /**
   * A job's refusals (each refusing worker's reason) and whether they end it now: every live worker, or
   * `refusalLimit` workers, refused it.
   */
  const refusalsOf = (id: string) =>
    Effect.gen(function*() {
      const by = new Map(
        (yield* store.files(id, refusalPrefix)).map((f) => [f.name.slice(refusalPrefix.length), f.content.toString()])
      )
      const live = yield* store.liveWorkers
      return { by, due: by.size >= refusalLimit || live.every((w) => by.has(w)) }
    })

  /**
   * The jobs this worker refused and parked that should end now: since they were parked, the live workers that had
   * not refused them stopped or died, so every live worker (or `refusalLimit` workers) has refused them. Their park
   * would otherwise hold them for up to ten leases before this worker looked again. Jobs that ended or went are
   * forgotten; a job the store cannot read now is looked at again at the next sweep.
   */
  const refusedDue: Effect.Effect<ReadonlyArray<string>, FleetError> = Effect.gen(function*() {
    const due: Array<string> = []
    for (const id of [...refused]) {
      const row = yield* Effect.either(store.job(id))
      if (row._tag === "Left") {
        if (row.left.reason === "NotFound") refused.delete(id)
        continue
      }
      if (finalStates.includes(row.right.state)) {
        refused.delete(id)
        continue
      }
      if ((yield* refusalsOf(id)).due) due.push(id)
    }
    return due
  })

  return { refused, refusalsOf, refusedDue }
}

/** The queue is told the job was not run here: it gives it again (after its back-off) to a worker. */
const handedBackBy = (egressId: string) => (id: string) =>
  Effect.fail(new Error(`job ${id} handed back by ${egressId}`))

/**
 * Says that this worker lost a job's lease, and to what; a job that has not ended goes back to the queue. Only an
 * ended job leaves the queue: the lease's holder may run nothing (on Redis, a takeover whose worker gave up on it
 * lands when its connection is back, as ioredis sends a command again at the reconnection), and a run that left the
 * job to it as if done let the queue drop a job nobody runs: it never ended (issue 29). A holder that runs the job
 * has the queue's lock, so the hand-back of a job it holds changes nothing there.
 */
const lostLease = (
  options: Pick<JobRunnerOptions, "store" | "egressId" | "say">,
  handedBack: (id: string) => Effect.Effect<never, Error>
) =>
(id: string, epoch: number) =>
  Effect.flatMap(options.store.job(id), (row) =>
    Effect.zipRight(
      options.say(
        `worker ${options.egressId}: job ${id}: lease ${epoch} lost; ${
          row.state === "cancelled" ? "the job was cancelled" : "another worker has it"
        }`
      ),
      finalStates.includes(row.state) ? Effect.void : handedBack(id)
    ))

export const makeJobRunner = (options: JobRunnerOptions) => {
  const { store } = options
  const worker = `worker ${options.egressId}`
  const handedBack = handedBackBy(options.egressId)

  const sayLost = lostLease(options, handedBack)

  /**
   * After a run whose lease is gone: handed back when the store could not confirm the lease for a whole lease and
   * still cannot say it was taken (no other worker took it: left as taken, the job would be lost), else said lost
   * (another worker has it, or it was cancelled).
   */
  const leaseGone = (guard: LeaseGuard, id: string, epoch: number) =>
    Effect.flatMap(guard.whyLost, (why) =>
      why === "unconfirmed"
        ? handBack(
          id,
          `the fleet store could not confirm lease ${epoch} for a whole lease; the journal says where it stood`
        )
        : sayLost(id, epoch))

  /**
   * Gives a job back to the queue (this worker is stopping, or cannot go on with it now): the queue gives it again,
   * and a worker continues it from the journal.
   */
  const handBack = (id: string, why?: string) =>
    Effect.zipRight(
      options.say(`${worker}: job ${id} handed back${why !== undefined ? `: ${why}` : ""}`),
      handedBack(id)
    )

  const { refused, refusalsOf, refusedDue } = refusalBook(store)

  /**
   * A job this worker cannot serve (`why`; undefined when it refused it before and the queue gave it again): the
   * refusal is kept with the job, then the job ends failed with the reasons (exit 2, 3 when a run of it had sent
   * rows) once every live worker, or `refusalLimit` workers, refused it; until then it is parked in the queue for the
   * other workers (`LeftForOthers`, Queue.ts: their claims take it at once, this worker's never; the queue gives it
   * again after a park, when this worker looks again whether it should end). Without an end, a job no worker can
   * serve went round the queue for good.
   */
  const refuse = (row: JobRow, why: string | undefined) =>
    Effect.gen(function*() {
      if (why !== undefined) {
        refused.add(row.id)
        yield* store.putFile(row.id, `${refusalPrefix}${options.egressId}`, Buffer.from(why))
      }
      const { by, due } = yield* refusalsOf(row.id)
      if (!due) {
        if (why !== undefined) yield* options.say(`${worker}: job ${row.id} handed back: refused: ${why}`)
        return yield* Effect.fail(new LeftForOthers(`job ${row.id} refused by ${options.egressId}`))
      }
      const before = yield* store.lease(row.id)
      const epoch = yield* store.takeOpenLease(row.id, options.owner)
      if (epoch === undefined) return yield* settleEnded(row)
      // Rows sent by an earlier run of it: an import's journal says; of a job that runs whole, any run may have.
      const sent = before !== undefined &&
        (row.kind !== "import" || journalSoFar(yield* store.journalLines(row.id)).sent)
      const reasons = [...by].map(([w, reason]) => `worker ${w}: ${reason}`).join("; ")
      yield* failFor(row, epoch, sent, `no worker can run it (refused by ${by.size}): ${reasons}`)
    })

  /** `refuse` for a job known by its id only (the store refused to give it): handed back when it cannot be read. */
  const refuseJob = (id: string, why: string) =>
    Effect.flatMap(
      Effect.either(store.job(id)),
      (row) => row._tag === "Right" ? refuse(row.right, why) : handBack(id, why)
    )

  /**
   * Ends a job failed, under its lease, its parent settled: exit 2 when nothing of it was sent, 3 when rows were
   * (`fetch` and `resume` take it from there). When the lease is gone nothing is recorded: the worker says so
   * (another worker has the job, or it was cancelled), and neither says it failed nor settles its parent.
   */
  const failFor = (row: JobRow, epoch: number, sent: boolean, message: string, code = 2) =>
    Effect.gen(function*() {
      const exitCode = code === 2 && sent ? 3 : code
      if (!(yield* store.failJob(row.id, epoch, { exitCode, error: message }))) return yield* sayLost(row.id, epoch)
      if (row.parent !== null) yield* store.settleParent(row.parent)
      yield* options.say(`${worker}: job ${row.id} failed (exit ${exitCode}): ${message}`)
    })

  /**
   * A fleet failure met by a job after its lease was taken: a key that does not open the account's credentials
   * stops this worker (exit 2) and hands the job back for a worker that can; a store still unusable after the
   * retries hands it back; anything else (its account removed, its source missing) ends it, failed with the reason.
   */
  const settleFailure = (row: JobRow, epoch: number, sent: { readonly any: boolean }) => (e: FleetError) =>
    e.reason === "Key"
      ? Effect.zipRight(Deferred.succeed(options.unfit, e), refuse(row, e.message))
      : e.reason === "Unavailable"
      ? handBack(row.id, e.message)
      : failFor(row, epoch, sent.any, e.message)

  /**
   * A part the queue gave that has ended (its end recorded by a worker that stopped, or whose settling of the job
   * failed, before the queue heard of it): its job ends now if every part has, as that worker would have ended it,
   * instead of at the next sweep (Worker.ts). Nothing when the job has ended already (cancelled with its parts, say).
   */
  const settleEnded = (row: JobRow) =>
    Effect.gen(function*() {
      if (row.parent === null || finalStates.includes((yield* store.job(row.parent)).state)) return
      if (yield* store.settleParent(row.parent)) {
        yield* options.say(
          `${worker}: job ${row.parent}: its part ${row.id} had ended, and so had the others: it ends now`
        )
      }
    })

  /** The job the queue gave: left when it ended or is of a newer format, else run under a new lease. */
  const runJob = (data: JobData): Effect.Effect<void, FleetError | Error> =>
    Effect.scoped(Effect.gen(function*() {
      const row = yield* store.job(data.job)
      if (finalStates.includes(row.state)) return yield* settleEnded(row)
      if (refused.has(row.id)) return yield* refuse(row, undefined)
      // A job of a newer format than this worker knows is left (before its lease is taken) to a newer worker.
      const format = (row.spec as { readonly jobFormat?: unknown }).jobFormat
      if (typeof format === "number" && format > jobFormat) {
        return yield* refuse(
          row,
          `it needs job format ${format} and this worker knows up to ${jobFormat}: left to a newer worker`
        )
      }
      // Its code is loaded before its lease is taken (at the worker's first job of the kind; at once after). A
      // worker that cannot load it (fsm-bulk reinstalled under it) can run no job of the kind: it stops, and the job
      // goes back to the queue, not refused: nothing is wrong with the job, and the worker restarted runs it.
      const loaded = yield* Effect.either(loadRun(row.kind))
      if (Either.isLeft(loaded)) {
        return yield* Effect.zipRight(
          Deferred.succeed(options.unfit, loaded.left),
          handBack(row.id, loaded.left.message)
        )
      }
      const epoch = yield* store.takeOpenLease(row.id, options.owner)
      if (epoch === undefined) return yield* settleEnded(row)
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
      yield* options.say(`${worker}: job ${id} (${row.kind} ${row.resource ?? ""}) lease ${epoch}`)
      const guard = yield* leaseGuard(store, id, epoch, options.leaseMs)
      const watch = yield* options.watchAccount(row.account)
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
      const leased: Leased = {
        row,
        epoch,
        sent,
        guard,
        watch,
        stopped: Effect.raceAll([Deferred.await(guard.lost), Deferred.await(options.shutdown), watch.changed]),
        lease: {
          gate: Effect.zipRight(guard.gate, watch.gate),
          fence: { refusal: () => watch.refusal() ?? guard.fence.refusal() }
        },
        accountEnd,
        storeFailed: { any: false }
      }
      // Every store operation of the run ends before the lease would lapse (Transient.ts), so that a store fault hands
      // the job back while no other worker can have taken it, instead of holding it for the store's answer timeout.
      const deadline = { at: guard.deadline, firstTryMs: freshMs(options.leaseMs) }
      return yield* (runsWhole(row.kind) ? runWhole(leased) : runImportJob(leased)).pipe(
        Effect.locally(jobStoreDeadline, Option.some(deadline))
      )
    })

  /** Runs `run` with the job's account client and lease, its heartbeat beside it; its exit as a value. */
  const underLease = <A, E, R>(leased: Leased, run: Effect.Effect<A, E, R>) =>
    Effect.exit(
      run.pipe(
        Effect.provideService(Api, leased.watch.api),
        Effect.locally(currentLease, Option.some(leased.lease)),
        // Its requests take turns with other jobs' at the account's client and the worker's budget (Lanes.ts).
        Effect.locally(requestLane, leased.row.id),
        Effect.raceFirst(Effect.zipRight(leased.guard.heartbeat, Effect.never))
      )
    )

  /**
   * Whether a run ended only because this worker is stopping (a signal, its egress hold lost, its key unfit): the run
   * says it was interrupted, or its requests were interrupted under it (the egress gate interrupts them once the hold
   * is lost). Such a job is handed back, never failed: its rows have no outcome of their own yet.
   */
  const stoppedByWorker = (exit: Exit.Exit<{ readonly interrupted: boolean }, unknown>) =>
    Effect.map(
      Deferred.isDone(options.shutdown),
      (stopping) => stopping && (Exit.isSuccess(exit) ? exit.value.interrupted : Cause.isInterruptedOnly(exit.cause))
    )

  /** Whether the lease still holds once the run is over (the store asked again). */
  const stillHeld = (guard: LeaseGuard) =>
    Effect.flatMap(Deferred.isDone(guard.lost), (gone) => gone ? Effect.succeed(false) : guard.check)

  /** An import job: its source from the store, its journal to the store, a continued run when it ran before. */
  const runImportJob = (leased: Leased) =>
    Effect.gen(function*() {
      const { epoch, guard, row, sent } = leased
      const id = row.id
      // loaded before the lease was taken (`runJob`): Node's module map answers
      const { ImportServices, journalFile, Journals, openJournal, resumeRun, runImport } = yield* importRun
      const dir = Path.join(options.workRoot, `${id}-${epoch}`)
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const sourceDir = Path.join(dir, "source")
      const runDir = Path.join(dir, "run")
      fs.mkdirSync(sourceDir, { recursive: true })
      const source = (yield* store.files(id, "source/"))[0]
      if (source === undefined) return yield* failFor(row, epoch, sent.any, `job ${id} has no source file`)
      const file = Path.join(sourceDir, Path.basename(source.name))
      fs.writeFileSync(file, source.content)
      // The run's services as the CLI's quiet ones, but its journal recorded in the store under the lease, its lines
      // in the worker's log and its stop when the lease is lost, the worker stops or the account changes.
      const services = Layer.mergeAll(
        Layer.succeed(Journals, { open: storeJournal(leased, openJournal) }),
        Notices.to(options.say),
        RunStop.when(leased.stopped)
      )
      const prior = yield* store.journalLines(id)
      const soFar = journalSoFar(prior)
      if (soFar.sent) sent.any = true
      if (options.tally !== undefined) yield* options.tally.rows(id, row.rows, soFar.done)
      const spec = row.spec as unknown as ImportSpec
      const run = prior.length > 0
        ? Effect.gen(function*() {
          fs.mkdirSync(runDir, { recursive: true })
          const [head, ...rest] = prior
          const header = JSON.parse(head!) as { source: { file: string }; parse: { baseDir: string } }
          header.source.file = file
          header.parse.baseDir = sourceDir
          fs.writeFileSync(Path.join(runDir, journalFile), [JSON.stringify(header), ...rest].join("\n") + "\n")
          return yield* resumeRun(runDir, { writerLock: false })
        })
        : runImport({
          writerLock: false,
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
      const exit = yield* underLease(leased, run.pipe(Effect.provide(services), Effect.provide(ImportServices.quiet)))
      if (!(yield* stillHeld(guard))) return yield* leaseGone(guard, id, epoch)
      return yield* endImport(leased, exit)
    })

  /** The journal of an import job: each line to the store under the lease (a refused line loses it), then locally. */
  const storeJournal = (leased: Leased, openJournal: typeof ImportRun.openJournal) => (path: string) =>
    Effect.gen(function*() {
      const { epoch, guard, row, sent } = leased
      const local = yield* openJournal(path)
      // Lines of rows sent at once go to the store together (GroupCommit.ts); each still waits for its own.
      const record = groupCommit((lines: ReadonlyArray<string>) => store.appendLines(row.id, epoch, lines))
      return {
        path,
        append: (line) =>
          record(JSON.stringify(line)).pipe(
            // The store stayed unusable past the retries (Transient.ts): the job goes back to the queue.
            Effect.tapError((e) => Effect.sync(() => (leased.storeFailed.any ||= e.reason === "Unavailable"))),
            Effect.mapError((e) => cannotWrite(path, e, "cannot record the journal line in the fleet store")),
            Effect.flatMap((held) =>
              held
                ? Effect.void
                : Effect.zipRight(
                  guard.lose,
                  Effect.fail(
                    cannotWrite(path, new Error("the job was taken over"), `job ${row.id}: lease ${epoch} lost`)
                  )
                )
            ),
            Effect.zipRight(Effect.sync(() => {
              if (line.state === "sending") sent.any = true
            })),
            // For when the worker takes its next job (Pace.ts): the rows on their way, and those ended.
            Effect.zipRight(
              options.tally === undefined
                ? Effect.void
                : line.state === "sending"
                ? options.tally.sending(row.id)
                : line.state === "done"
                ? options.tally.done(row.id)
                : Effect.void
            ),
            Effect.zipRight(local.append(line))
          )
      } satisfies JournalWriter
    })

  /** An import's end, under a lease that still holds: recorded with its outputs, handed back, or failed. */
  const endImport = (leased: Leased, exit: Exit.Exit<RunResult, unknown>) =>
    Effect.gen(function*() {
      const { epoch, row, sent } = leased
      const id = row.id
      if (yield* leased.accountEnd) return
      // Handed back: the queue gives it to another worker, which continues from the journal.
      if (yield* stoppedByWorker(exit)) return yield* handBack(id)
      if (Exit.isSuccess(exit)) {
        const result = exit.value
        // Its outputs and its end, each written only under the lease: a worker that lost it (another took the job
        // over, or it was cancelled) neither replaces the holder's reports nor says the job is done.
        for (const name of outputs) {
          const path = Path.join(result.runDir, name)
          if (!fs.existsSync(path)) continue
          if (!(yield* store.putFileUnderLease(id, epoch, `out/${name}`, fs.readFileSync(path)))) {
            return yield* sayLost(id, epoch)
          }
        }
        const recorded = yield* store.finishJob(id, epoch, {
          exitCode: result.exitCode,
          summary: result.summary,
          rows: result.summary.rows
        })
        if (!recorded) return yield* sayLost(id, epoch)
        if (row.parent !== null) yield* store.settleParent(row.parent)
        return yield* options.say(`${worker}: job ${id} done (exit ${result.exitCode})`)
      }
      const failure = Cause.failureOption(exit.cause)
      const error = Option.isSome(failure) ? failure.value : undefined
      const message = error !== undefined ? (error as { message?: string }).message ?? String(error) : "interrupted"
      if (leased.storeFailed.any) return yield* handBack(id, message)
      yield* failFor(row, epoch, sent.any, message, (error as { exitCode?: number } | undefined)?.exitCode ?? 3)
    })

  /**
   * An onboard or export job (Whole.ts), under the lease taken for it: the run as a value, then its end recorded
   * with its files in one step that holds only while the lease does.
   */
  const runWhole = (leased: Leased) =>
    Effect.gen(function*() {
      const { epoch, guard, row } = leased
      const id = row.id
      const dir = Path.join(options.workRoot, `${id}-${epoch}`)
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      fs.mkdirSync(dir, { recursive: true })
      const stop = {
        stopped: leased.stopped,
        isStopped: Effect.map(
          Effect.all([Deferred.isDone(guard.lost), Deferred.isDone(options.shutdown)]),
          ([lost, stopping]) => lost || stopping
        )
      }
      const whole = {
        store,
        row,
        epoch,
        dir,
        lost: guard.lost,
        stop,
        say: options.say,
        storeFailed: leased.storeFailed
      }
      const { runExportJob, runOnboardJob } = yield* wholeRun
      if (options.tally !== undefined) yield* options.tally.sending(id)
      const exit = yield* underLease(leased, row.kind === "onboard" ? runOnboardJob(whole) : runExportJob(whole))
      if (!(yield* stillHeld(guard))) return yield* leaseGone(guard, id, epoch)
      // Stopped by its account's removal or replacement.
      if (yield* leased.accountEnd) return
      if (yield* stoppedByWorker(exit)) return yield* handBack(id)
      // A step's journal line the store could not record: the next owner continues from the journals it holds.
      if (leased.storeFailed.any) return yield* handBack(id, "the fleet store could not record a journal line")
      const end = Exit.isSuccess(exit) ? exit.value : undefined
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
      // What the run reads from the store before it starts (its source files, an earlier owner's files and journals)
      // failed: the rule of a store failure met before a run (`settleFailure`): a store unusable past its retries
      // hands the job back, never fails it. Recorded as the job's end, it ended failed for good once the store came
      // back before its end was written (test/fleet/claimed-read-cli.test.ts).
      if (Option.isSome(failure) && failure.value instanceof FleetError) return yield* failure.value
      const error = end?.error ??
        (Option.isSome(failure) ? (failure.value as { message?: string }).message ?? String(failure.value) : undefined)
      const ended = yield* store.endWhole(id, epoch, end?.outputs ?? [], {
        state: end !== undefined && end.error === undefined ? "done" : "failed",
        exitCode: end?.exitCode ?? 3,
        summary: end?.summary ?? null,
        rows: end?.rows,
        error: end === undefined && error === undefined ? "interrupted" : error
      })
      // Refused: the lease was lost, to another worker or to a cancel (`sayLost` says which).
      if (!ended) return yield* sayLost(id, epoch)
      yield* options.say(
        error !== undefined
          ? `${worker}: job ${id} failed: ${error}`
          : `${worker}: job ${id} done (exit ${end?.exitCode ?? 3})`
      )
    })

  /** The jobs this worker refused (its claims skip them). */
  const refusedJobs = (): ReadonlyArray<string> => [...refused]

  return { runJob, handBack, refuseJob, refusedJobs, refusedDue }
}
