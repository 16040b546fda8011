/**
 * The jobs a worker runs whole, with the commands' own engines: an onboarding (`runOnboarding`, every step's
 * journal written to the store under the job's lease, so a takeover continues it as `resume ONBOARD_DIR` does)
 * and an export (`runExport`, read-only: a takeover starts it again from scratch under the new lease, and only
 * the files of the run that ends while holding the lease are kept, all at once).
 *
 * `fetch` writes what they leave as the commands' own directories: an onboarding directory (`resume`, `rerun`,
 * `report`, `undo` take it) or an export directory (`verify` passes it).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import type { Scope } from "effect"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as Path from "node:path"
import type { Api } from "../client/Api.js"
import { Notices } from "../console/Output.js"
import { prepareExport, runExport } from "../export/Export.js"
import { cannotWrite, type WriteError } from "../files/Write.js"
import { journalFile, type JournalWriter, openJournal } from "../import/Journal.js"
import { lockFile } from "../import/RunDir.js"
import { Journals } from "../import/Services.js"
import { prepareOnboarding, runOnboarding } from "../onboard/Onboard.js"
import { type OnboardSummary, SummaryCopies, summaryFile } from "../onboard/Summary.js"
import { RunStop, type StopSignal } from "../Signals.js"
import { describeCause, FleetError } from "./Errors.js"
import { type FleetStore, type JobRow, stepStream } from "./Store.js"
import type { ExportSpec, OnboardSpec } from "./Submit.js"

/** What a worker hands a whole job's run: the job, its lease, and where to work. */
interface WholeRun {
  readonly store: FleetStore
  readonly row: JobRow
  readonly epoch: number
  /** A scratch directory of this worker for this lease (removed afterwards). */
  readonly dir: string
  /** Completed when the lease is found lost. */
  readonly lost: Deferred.Deferred<void>
  /** Completes when the run must stop sending (lease lost, or the worker stopping). */
  readonly stop: StopSignal
  readonly say: (line: string) => Effect.Effect<void>
  /** Set when a journal line could not be recorded because the store stayed unusable (the job is handed back). */
  readonly storeFailed: { any: boolean }
}

/** How a whole job's run ended, as a value: its outcome and the files it leaves in the store (`out/NAME`). */
interface WholeEnd {
  /** The run stopped before its end (the worker is stopping, or the lease was lost). */
  readonly interrupted: boolean
  /** The command's exit code: 0, 1 (onboard: rows that did not end well), 3 (stopped, aborted). */
  readonly exitCode: number
  readonly summary: unknown
  readonly rows: number | undefined
  /** Why the run failed as a whole (credentials rejected, a list failing …), else undefined. */
  readonly error: string | undefined
  readonly outputs: ReadonlyArray<{ readonly name: string; readonly content: Uint8Array }>
}

/** Every file under `root` (relative names, `/`-separated), but lock files, scratch files and `skip`. */
const treeFiles = (root: string, skip: (name: string) => boolean): Array<string> => {
  if (!fs.existsSync(root)) return []
  const found: Array<string> = []
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(Path.join(root, rel), { withFileTypes: true })) {
      const name = rel === "" ? entry.name : `${rel}/${entry.name}`
      if (entry.isDirectory()) walk(name)
      else if (entry.isFile() && entry.name !== lockFile && !entry.name.endsWith(".tmp") && !skip(name)) {
        found.push(name)
      }
    }
  }
  walk("")
  return found.sort()
}

const readTree = (root: string, skip: (name: string) => boolean) =>
  treeFiles(root, skip).map((name) => ({ name, content: fs.readFileSync(Path.join(root, name)) }))

/** A step's journal is kept in the store (line by line, under the lease), not among its files. */
const isJournal = (name: string) => Path.posix.basename(name) === journalFile

/** Writes the job's `source/…` files under `dir` (the names are the ones `submit` stored). */
const writeSources = (store: FleetStore, job: string, dir: string) =>
  Effect.gen(function*() {
    for (const f of yield* store.files(job, "source/")) {
      const path = Path.join(dir, ...f.name.slice("source/".length).split("/"))
      fs.mkdirSync(Path.dirname(path), { recursive: true })
      fs.writeFileSync(path, f.content)
    }
  })

/** The input of an onboarding as written under `sourceDir`: its path, and the file a step's rows come from. */
const onboardInput = (spec: OnboardSpec, sourceDir: string) => {
  const input = Path.join(sourceDir, spec.input)
  return {
    input,
    baseDir: spec.kind === "workbook" ? Path.dirname(input) : input,
    stepFile: (old: string) => spec.kind === "workbook" ? input : Path.join(input, Path.basename(old))
  }
}

/** A journal's header line pointed at the source where it now lies (the worker's, or the fetched directory's). */
const relocateHeader = (line: string, file: (old: string) => string, baseDir: string): string => {
  const header = JSON.parse(line) as { source: { file: string }; parse: { baseDir: string } }
  header.source.file = file(header.source.file)
  header.parse.baseDir = baseDir
  return JSON.stringify(header)
}

/** Writes the journal of one step (`lines` from the store) into `stepDir`. */
const writeJournal = (
  stepDir: string,
  lines: ReadonlyArray<string>,
  file: (old: string) => string,
  baseDir: string
) => {
  const [head, ...rest] = lines
  fs.mkdirSync(stepDir, { recursive: true })
  fs.writeFileSync(
    Path.join(stepDir, journalFile),
    [relocateHeader(head!, file, baseDir), ...rest].join("\n") + "\n"
  )
}

/** A journal whose every line is first recorded in the store under the lease; a refused line stops the run. */
const leasedJournal = (run: WholeRun, stream: string) => (path: string) =>
  Effect.gen(function*() {
    const local = yield* openJournal(path)
    return {
      path,
      append: (line) =>
        run.store.appendStreamLine(run.row.id, run.epoch, stream, JSON.stringify(line)).pipe(
          Effect.tapError((e) => Effect.sync(() => (run.storeFailed.any ||= e.reason === "Unavailable"))),
          Effect.mapError((e) => cannotWrite(path, e, "cannot record the journal line in the fleet store")),
          Effect.flatMap((held) =>
            held
              ? Effect.void
              : Effect.zipRight(
                Deferred.succeed(run.lost, undefined),
                Effect.fail(
                  cannotWrite(path, new Error("the job was taken over"), `job ${run.row.id}: lease ${run.epoch} lost`)
                )
              )
          ),
          Effect.zipRight(local.append(line))
        )
    } satisfies JournalWriter
  }) as Effect.Effect<JournalWriter, WriteError, Scope.Scope>

/** The steps' journals of an onboard job: each in the store under the lease, a stream per step's directory. */
const leasedJournals = (run: WholeRun) =>
  Layer.succeed(Journals, {
    open: (path) => leasedJournal(run, stepStream(run.row.id, Path.basename(Path.dirname(path))))(path)
  })

// --- onboarding --------------------------------------------------------------------------------------------------

/**
 * Runs an onboard job. Each step's journal goes to the store under the lease; after every step the run
 * directory's other files (summaries, reports) are copied there too. A takeover writes back what the last owner
 * left and continues with `resume`'s rules: steps that ended are kept, the step under way continues from its
 * journal (rows done are not sent again, rows in flight are looked up first), the rest run.
 */
export const runOnboardJob = (run: WholeRun): Effect.Effect<WholeEnd, FleetError, Api> =>
  Effect.gen(function*() {
    const spec = run.row.spec as unknown as OnboardSpec
    const sourceDir = Path.join(run.dir, "source")
    const runDir = Path.join(run.dir, "run")
    yield* writeSources(run.store, run.row.id, sourceDir)
    const where = onboardInput(spec, sourceDir)

    // What an earlier owner left: the run directory's files, then each step's journal from the store.
    const left = yield* run.store.files(run.row.id, "out/")
    for (const f of left) {
      const path = Path.join(runDir, ...f.name.slice("out/".length).split("/"))
      fs.mkdirSync(Path.dirname(path), { recursive: true })
      fs.writeFileSync(path, f.content)
    }
    let continued = left.length > 0
    for (const resource of spec.resources) {
      const lines = yield* run.store.journalLines(stepStream(run.row.id, resource))
      if (lines.length === 0) continue
      writeJournal(Path.join(runDir, resource), lines, where.stepFile, where.baseDir)
      continued = true
    }
    const earlier = continued && fs.existsSync(Path.join(runDir, summaryFile))
      ? JSON.parse(fs.readFileSync(Path.join(runDir, summaryFile), "utf8")) as OnboardSummary
      : undefined
    if (continued) yield* run.say(`job ${run.row.id}: continuing the onboarding from its journals`)

    // After each write of the summary: the files that changed since the last copy go to the store.
    const copied = new Map<string, string>()
    const saved = () =>
      Effect.gen(function*() {
        for (const name of treeFiles(runDir, isJournal)) {
          const stat = fs.statSync(Path.join(runDir, name))
          const stamp = `${stat.size}:${stat.mtimeMs}`
          if (copied.get(name) === stamp) continue
          const held = yield* run.store.putFileUnderLease(
            run.row.id,
            run.epoch,
            `out/${name}`,
            fs.readFileSync(Path.join(runDir, name))
          )
          if (!held) return yield* Deferred.succeed(run.lost, undefined)
          copied.set(name, stamp)
        }
      }).pipe(
        Effect.catchAll((e) =>
          run.say(`job ${run.row.id}: could not copy the run directory to the store: ${e.message}`)
        )
      )

    const ran = yield* Effect.either(Effect.gen(function*() {
      const prepared = yield* prepareOnboarding({
        command: "onboard",
        input: where.input,
        runDir,
        dryRun: spec.dryRun,
        verify: spec.verify,
        answerWaitMs: spec.answerWaitMs,
        answerPollMs: spec.answerPollMs,
        read: spec.read,
        maps: spec.maps,
        dateFormat: spec.dateFormat,
        decimal: spec.decimal,
        onConflict: spec.onConflict,
        ...(continued
          ? {
            resuming: {
              earlier: {
                requests: earlier?.requests ?? 0,
                rateLimited: earlier?.rateLimited ?? 0,
                retries: earlier?.retries ?? 0
              }
            }
          }
          : {})
      })
      return yield* runOnboarding(prepared).pipe(
        Effect.provide(
          Layer.mergeAll(leasedJournals(run), Notices.to(run.say), RunStop.signal(run.stop), SummaryCopies.to(saved))
        )
      )
    }))
    const outputs = readTree(runDir, isJournal)
    if (ran._tag === "Left") {
      const error = ran.left
      return {
        interrupted: false,
        exitCode: (error as { exitCode?: number }).exitCode ?? 3,
        summary: earlierSummary(runDir),
        rows: undefined,
        error: describeCause(error),
        outputs
      } satisfies WholeEnd
    }
    const result = ran.right
    return {
      interrupted: result.interrupted,
      exitCode: result.exitCode,
      summary: result.summary,
      rows: undefined,
      error: undefined,
      outputs
    } satisfies WholeEnd
  })

/** The onboarding's summary as it stands on disk (an aborted onboarding writes it before it fails). */
const earlierSummary = (runDir: string): unknown => {
  try {
    return JSON.parse(fs.readFileSync(Path.join(runDir, summaryFile), "utf8"))
  } catch {
    return null
  }
}

// --- export --------------------------------------------------------------------------------------------------------

/**
 * Runs an export job from scratch in a directory of this lease (a takeover starts again: the export only reads,
 * and its checkpoint lay on the other host). Its files reach the store only when it has ended, all at once.
 */
export const runExportJob = (run: WholeRun): Effect.Effect<WholeEnd, never, Api> =>
  Effect.gen(function*() {
    const spec = run.row.spec as unknown as ExportSpec
    const out = Path.join(run.dir, "export")
    const ran = yield* Effect.either(
      Effect.gen(function*() {
        const prepared = yield* prepareExport({
          resources: spec.resources,
          out,
          format: spec.format,
          ...(spec.csv !== undefined ? { csv: spec.csv } : {}),
          since: spec.since,
          until: spec.until,
          say: (line) => run.say(`job ${run.row.id}: ${line}`)
        })
        return yield* runExport(prepared)
      }).pipe(
        Effect.map((result) => ({ result })),
        Effect.raceFirst(Effect.as(run.stop.stopped, { result: undefined })),
        Effect.provide(NodeContext.layer)
      )
    )
    if (ran._tag === "Left") {
      return {
        interrupted: false,
        exitCode: 3,
        summary: null,
        rows: undefined,
        error: describeCause(ran.left),
        outputs: []
      } satisfies WholeEnd
    }
    const result = ran.right.result
    if (result === undefined) {
      return { interrupted: true, exitCode: 3, summary: null, rows: undefined, error: undefined, outputs: [] }
    }
    const rows = result.manifest.resources.reduce((n, r) => n + r.rows, 0)
    return {
      interrupted: false,
      exitCode: 0,
      summary: {
        command: "export",
        format: spec.format,
        ...(spec.csv !== undefined ? { csv: spec.csv } : {}),
        baseUrl: result.manifest.baseUrl,
        since: result.manifest.since,
        until: result.manifest.until,
        started: result.manifest.started,
        finished: result.manifest.finished,
        files: result.files.map((f) => ({ name: f.name, file: f.file, rows: f.rows })),
        rows,
        requests: result.requests,
        rateLimited: result.rateLimited,
        retries: result.retries,
        exitCode: 0
      },
      rows,
      error: undefined,
      outputs: readTree(out, () => false)
    } satisfies WholeEnd
  })

// --- fetch ---------------------------------------------------------------------------------------------------------

/** Writes the job's `out/…` files under `dir`. */
const writeOutputs = (store: FleetStore, job: string, dir: string) =>
  Effect.gen(function*() {
    const outs = yield* store.files(job, "out/")
    for (const f of outs) {
      const path = Path.join(dir, ...f.name.slice("out/".length).split("/"))
      fs.mkdirSync(Path.dirname(path), { recursive: true })
      fs.writeFileSync(path, f.content)
    }
    return outs.length
  })

const rewriteJson = (path: string, change: (value: Record<string, unknown>) => Record<string, unknown>) => {
  if (!fs.existsSync(path)) return
  const value = JSON.parse(fs.readFileSync(path, "utf8")) as Record<string, unknown>
  fs.writeFileSync(path, `${JSON.stringify(change(value), null, 2)}\n`)
}

/**
 * An onboard job as a standard onboarding directory in `dir`: its input under `source/`, the top-level summary,
 * one directory per step (journal from the store, reports, summary), every path pointing into `dir`. What was
 * left when the job ended (done, failed, cancelled), so `resume` continues an onboarding that did not finish.
 */
export const fetchOnboard = (store: FleetStore, row: JobRow, dir: string) =>
  Effect.gen(function*() {
    const spec = row.spec as unknown as OnboardSpec
    const sourceDir = Path.join(dir, "source")
    yield* writeSources(store, row.id, sourceDir)
    const where = onboardInput(spec, sourceDir)
    yield* writeOutputs(store, row.id, dir)
    const steps: Array<string> = []
    for (const resource of spec.resources) {
      const lines = yield* store.journalLines(stepStream(row.id, resource))
      if (lines.length === 0) continue
      writeJournal(Path.join(dir, resource), lines, where.stepFile, where.baseDir)
      steps.push(resource)
    }
    for (const resource of spec.resources) {
      rewriteJson(Path.join(dir, resource, summaryFile), (s) => ({
        ...s,
        runDir: Path.join(dir, resource),
        ...(typeof s.source === "string" ? { source: where.stepFile(s.source) } : {})
      }))
    }
    rewriteJson(Path.join(dir, summaryFile), (s) => ({
      ...s,
      runDir: dir,
      source: where.input,
      steps: (s.steps as Array<Record<string, unknown>> | undefined ?? []).map((step) => ({
        ...step,
        runDir: Path.join(dir, String(step.resource)),
        source: where.stepFile(String(step.source))
      }))
    }))
    return { steps, summary: fs.existsSync(Path.join(dir, summaryFile)) }
  })

/** An export job as its export directory in `dir` (manifest, files, fingerprints): none when it did not finish. */
export const fetchExport = (store: FleetStore, row: JobRow, dir: string) =>
  Effect.gen(function*() {
    fs.mkdirSync(dir, { recursive: true })
    const written = yield* writeOutputs(store, row.id, dir)
    if (written === 0 && row.state === "done") {
      return yield* new FleetError({ reason: "NotFound", message: `job ${row.id} has no export files in the store` })
    }
    return written
  })
