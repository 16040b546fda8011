/**
 * Generated histories (issue 28, "Invariants over generated histories"): a seeded generator of user actions and
 * server behaviour run against the real sandbox, with the invariants checked after every step, and shrinking.
 *
 * - A history is a list of plain actions (JSON), generated from a seed alone: `generateHistory(seed)`. Actions
 *   name earlier runs by a number taken modulo the runs made so far, so dropping an action while shrinking never
 *   leaves one pointing nowhere.
 * - `actions` is the table: each kind's generator, runner (what it does against the sandbox, and what it
 *   targeted: the model's update) and simplifier (smaller variants, for shrinking). A feature adds its actions
 *   there and nowhere else.
 * - The model is what was observed: the account's records before every step, which step changed which key, and
 *   the runs made. Invariants compare the records after a step with what the step targeted and with the runs'
 *   reports (`checkStep`).
 * - `KNOWN_OPEN` lists the features that break an invariant today because of a known, open defect: the bounded
 *   run leaves them out; the soak can put them back (`HISTORY_ALL=1`).
 */
import { NodeContext } from "@effect/platform-node"
import { parse } from "csv-parse/sync"
import { Effect, Exit, Fiber, Layer } from "effect"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import yauzl from "yauzl"
import { Api } from "../../src/client/Api.js"
import { Notices } from "../../src/console/Output.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { loadExcelJs } from "../../src/files/ExcelJs.js"
import { normalKey } from "../../src/Identity.js"
import { runImport } from "../../src/import/Pipeline.js"
import { readAnyPlan } from "../../src/import/Plan.js"
import { rerun } from "../../src/import/Rerun.js"
import { resumeRun } from "../../src/import/Resume.js"
import { readProfile } from "../../src/mapping/Profile.js"
import { catalogues, currentLanguage, type Language, setLanguage } from "../../src/Messages.js"
import { closingLines } from "../../src/onboard/CommandRun.js"
import { prepareOnboarding, runOnboarding } from "../../src/onboard/Onboard.js"
import { isResourceName, resource as resourceOf } from "../../src/Resources.js"
import type { Faults, RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { RunStop } from "../../src/Signals.js"
import { shownStatus, Status, statusOfShown } from "../../src/Status.js"
import { runUndo } from "../../src/undo/Undo.js"
import { apiOf, job, spawnCli, writes } from "../import/support.js"
import type { EchoGateway } from "./echo.js"
import type { ColumnPlan, FileShape, Row } from "./files.js"
import {
  aliasRow,
  expectedValue,
  genForm,
  genRow,
  notes,
  pickName,
  planOf,
  planOfHeader,
  sameValue,
  simplerFiles,
  writeInput
} from "./files.js"

export type { FileShape, Row } from "./files.js"

// --- seeded randomness -----------------------------------------------------------------------------------------

/** mulberry32: small, fast, and the same sequence for a seed on every machine. */
export const rng = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
  const chance = (p: number) => next() < p
  return { next, int, pick, chance }
}
export type Rng = ReturnType<typeof rng>

// --- what the user has: keys, Brazilian-style rows, files (files.ts) --------------------------------------------

/** The keys every history draws from: few, so actions meet the same records. */
export const keyPool = ["CLI-01", "CLI-02", "CLI-03", "CLI-04", "CLI-05", "CLI-06"]

/**
 * A file of 1 to 4 rows. `own`: a customer's own sheet (Portuguese headers, title row, footer, `--map`); other
 * files have the template's headers. Either may be an .xlsx, have internal columns and the cells beyond the
 * template's four.
 */
const genFile = (g: Rng, features: ReadonlySet<Feature>, own = false): FileShape => {
  const count = 1 + g.int(4)
  const keys = [...keyPool].sort(() => g.next() - 0.5).slice(0, count)
  const full = !features.has("unsent-fields-edited-then-undo")
  const form = genForm(g)
  const more = own || form.internal === true || g.chance(0.5)
  const rows: Array<Row> = keys.map((k) => genRow(g, k, g.chance(0.1), full, more))
  if (features.has("keyless-rows") && g.chance(0.3)) {
    rows.push({ key: undefined, name: `Total de clientes: ${rows.length}`, note: "", phone: "" })
  }
  return {
    delimiter: own || g.chance(0.5) ? ";" : ",",
    encoding: g.chance(0.5) ? "windows-1252" : "utf-8",
    rows,
    ...form,
    style: own ? "portuguese" : "template"
  }
}

// --- actions ---------------------------------------------------------------------------------------------------

export type Mode = "create" | "upsert" | "update" | "delete"

export type Action =
  | { readonly kind: "import"; readonly mode: Mode; readonly file: FileShape; readonly dryRun: boolean }
  /**
   * A customer's own sheet (Portuguese headers, a title row, `Sim`/`Não`, a "Total" footer, internal columns;
   * CSV or XLSX) imported with `--map` and the profile the history writes beside it.
   */
  | { readonly kind: "own-sheet"; readonly mode: Mode; readonly file: FileShape; readonly dryRun: boolean }
  | {
    readonly kind: "interrupted-import"
    readonly mode: Mode
    readonly file: FileShape
    /** Writes the server receives before the stop. */
    readonly after: number
    /** A hard stop (the fiber interrupted, as a crash) or a soft one (the run's `stop`, as Ctrl-C). */
    readonly hard: boolean
  }
  | {
    readonly kind: "cli-kill"
    readonly mode: Mode
    readonly file: FileShape
    /** Writes the server receives before the built CLI is killed with SIGKILL. */
    readonly after: number
  }
  | { readonly kind: "resume"; readonly run: number }
  | { readonly kind: "rerun"; readonly run: number; readonly fix: boolean }
  | { readonly kind: "undo"; readonly run: number; readonly dryRun: boolean }
  /** `record`: which of the records the server holds at that moment (by key, modulo their number). */
  | {
    readonly kind: "actor-edit"
    readonly record: number
    readonly field: "name" | "note" | "address"
    readonly value: string
  }
  | { readonly kind: "actor-delete"; readonly record: number }
  | {
    readonly kind: "faults"
    readonly failRate: number
    readonly resetRate: number
    readonly dropAfterWriteRate: number
    readonly stormMs: number
    /** Requests answered by a gateway's error that echoes their secrets (`echo.ts`). */
    readonly echoRate: number
  }
  | { readonly kind: "revoke" }
  | { readonly kind: "export" }
  /** The server's page cap of the customers list changes (a number) or goes back to the table's (undefined). */
  | { readonly kind: "page-cap"; readonly cap: number | undefined }
  /** An export with small pages while the actor deletes the first records (issue 28.9). */
  | { readonly kind: "export-while-deleting"; readonly deletes: number; readonly pageSize: number }
  | {
    readonly kind: "reimport"
    readonly export: number
    /** The user's edits of the exported file: a row's note changed. */
    readonly edits: ReadonlyArray<{ readonly key: string; readonly note: string }>
  }
  | { readonly kind: "concurrent-imports"; readonly file: FileShape }
  /** `fsm-bulk apply` of the plan an earlier dry run wrote, an import's or an onboarding's (issue 25.2). */
  | { readonly kind: "apply"; readonly run: number }
  /**
   * `onboard DIR --dry-run --plan PLAN` of a directory holding the customers' file (issue 25.2): nothing written;
   * `apply` applies the plan later, after whatever the history does to the server in between.
   */
  | { readonly kind: "onboard-plan"; readonly file: FileShape }
  /**
   * A sheet of the Portuguese headers the tool knows without a profile (`Código`, `Nome`, `E-mail`, `CPF/CNPJ`…,
   * src/Aliases.ts), `;`, decimal commas, `Sim`/`Não`, a "Total" footer, maybe a title row; imported with the
   * profile the history writes beside it (`map`) or without one (a title row then stops the run before it sends).
   */
  | {
    readonly kind: "pt-headers"
    readonly mode: Mode
    readonly file: FileShape
    readonly map: boolean
    readonly dryRun: boolean
  }
  /**
   * `export --out D` (every resource, or an earlier export again: `export` modulo those made), then `onboard D`
   * into the second account (`other`) or back into this one: read-only lists skipped, nothing duplicated.
   */
  | { readonly kind: "export-onboard"; readonly export: number | undefined; readonly other: boolean }
  /** `export-onboard` under `--lang pt-BR`: its reports and printed lines held to the run's counts, none English. */
  | { readonly kind: "pt-br-onboard"; readonly export: number | undefined; readonly other: boolean }
  /**
   * `--lang pt-BR` (issue 27): a dry run in English and in Portuguese must report the same rows, statuses and
   * counts (statuses stay English), then the import itself runs in Portuguese.
   */
  | { readonly kind: "pt-br"; readonly mode: Mode; readonly file: FileShape }
  /**
   * A receivables file as a Brazilian implementer writes it: Windows-1252, `;`, due and competency dates in
   * dd/mm/yyyy (days of 12 or less too, which read both ways), values with a decimal comma and thousands dots; each
   * row for the customer the server holds at that moment (`customer`, modulo their number; none: a key of the pool).
   * `dateFormat` and `decimal` are what the run is told (`auto` or the file's); a test passes others to stand for a
   * tool that misreads.
   */
  | {
    readonly kind: "br-dates"
    readonly rows: ReadonlyArray<BrDateRow>
    readonly dateFormat: "auto" | "dd/mm/yyyy" | "mm/dd/yyyy"
    readonly decimal: "auto" | "," | "."
  }
  /**
   * A users file with passwords (a create-only, write-only field) imported in upsert mode, then again with other
   * passwords without `--send-write-only`, then with them and the flag: `passwords[round][i]` for `users[i]`.
   */
  | {
    readonly kind: "users"
    readonly users: ReadonlyArray<string>
    readonly passwords: ReadonlyArray<ReadonlyArray<string>>
  }

/** A row of a `br-dates` file: its due date, its value in cents (competency: the first of the due month). */
export interface BrDateRow {
  readonly customer: number
  readonly day: number
  readonly month: number
  readonly year: number
  readonly cents: number
}

export type Kind = Action["kind"]
type Of<K extends Kind> = Extract<Action, { kind: K }>

/**
 * Features a history may use. Each one the bounded run leaves out is in `KNOWN_OPEN`, with the issue it waits
 * for; once that fix is merged, delete the line and the bounded run covers it.
 */
export type Feature =
  | "keyless-rows"
  | "concurrent-imports"
  | "unsent-fields-edited-then-undo"
  | "faulted-create-then-undo"
  | "stale-after-server-delete"
  | "soft-stop"
  | "echoed-secrets"
  | "export-during-deletions"
  /** Spawning the built CLI (`dist/bin.js`) and killing it with SIGKILL: the soak's, not the bounded run's. */
  | "cli"

export const allFeatures: ReadonlyArray<Feature> = [
  "keyless-rows",
  "concurrent-imports",
  "unsent-fields-edited-then-undo",
  "faulted-create-then-undo",
  "stale-after-server-delete",
  "soft-stop",
  "echoed-secrets",
  "export-during-deletions"
]

/** Features that break an invariant today because of an open defect: left out of the bounded run. */
export const KNOWN_OPEN: Partial<Record<Feature, string>> = {}

/** What a step did, as the invariants need it: the model's update. */
export interface Step {
  /** Keys the step may change. */
  readonly targeted: ReadonlySet<string>
  /** Records without a key the step may create. */
  readonly keyless: number
  /** The run directory the step wrote (import, rerun, resume, undo), when it made one. */
  readonly runDir?: string | undefined
  /** An undo: the run directories it covered (from its summary). */
  readonly undid?: ReadonlyArray<string> | undefined
  /** An import of an export file: the keys whose records changed on the server since the export. */
  readonly stale?: ReadonlySet<string> | undefined
  /** Text the step printed or was told. */
  readonly output: ReadonlyArray<string>
  /** Short description of the outcome, for the log. */
  readonly note: string
  /** Violations the action itself saw (an export that missed records). */
  readonly found?: ReadonlyArray<string> | undefined
}

interface Spec<K extends Kind> {
  readonly weight: number
  /** Undefined: this kind needs a feature the history was not given. */
  readonly needs?: Feature
  readonly generate: (g: Rng, features: ReadonlySet<Feature>) => Of<K>
  readonly run: (w: World, a: Of<K>) => Effect.Effect<Step>
  readonly simplify: (a: Of<K>) => Array<Action>
}

// --- the world: sandbox, directories, the model ----------------------------------------------------------------

/** Records by key (`externalId`, normalised); records without one by `#id`. */
export type Snapshot = ReadonlyMap<string, Readonly<Record<string, unknown>>>

export interface RunInfo {
  readonly dir: string
  readonly firstStep: number
  readonly dryRun: boolean
  readonly undo: boolean
  /** The keys the run may change; records without a key it created are added as `#id` once seen. */
  readonly targeted: Set<string>
  /** What the report's columns mean (invariant iv); undefined for an undo. */
  readonly plan?: ColumnPlan | undefined
  /** Records without a key the run may create (its keyless rows, in create mode): a resume of it may too. */
  readonly keyless?: number
  /** A dry run's plan file (`--plan`), an import's or an onboarding's. */
  readonly planFile?: string | undefined
}

export interface World {
  readonly sandbox: RunningSandbox
  /** Where the history's clients send their requests: the echoing gateway in front of the sandbox. */
  readonly gateway: EchoGateway
  readonly dir: string
  readonly features: ReadonlySet<Feature>
  readonly runs: Array<RunInfo>
  /** `snapshots[i]`: the records before step i. */
  readonly snapshots: Array<Snapshot>
  /** Per step: who (a run directory, or "actor") changed which keys. */
  readonly changes: Array<{ readonly owner: string; readonly keys: ReadonlySet<string> }>
  /** Exports made, with the records as they were exported. */
  readonly exports: Array<{ readonly dir: string; readonly records: Snapshot }>
  faults: Faults
  counter: number
  /** Files invariant (v) read and found without a secret, with their modification time and size then. */
  readonly clean: Map<string, string>
}

const apiKey = (w: World) => w.sandbox.accounts[0]!.apiKey

/** Fields the server sets on every write, left out of comparisons. */
const serverSet = new Set(["id", "creationDate", "dateLastUpdate"])

export const snapshot = (w: World): Effect.Effect<Snapshot> =>
  Effect.map(w.sandbox.control.records(apiKey(w), "customers"), (records) => {
    const out = new Map<string, Record<string, unknown>>()
    for (const r of records) {
      const key = typeof r.externalId === "string" && r.externalId.trim() !== "" ? normalKey(r.externalId) : undefined
      const name = key ?? `#${String(r.id)}`
      // A second record of one key is kept under a name of its own: invariant (iii) reports it.
      out.set(out.has(name) ? `${name}#dup${String(r.id)}` : name, r)
    }
    return out
  })

/** A record's content, as compared: server-set fields left out, properties in order. */
export const content = (r: Readonly<Record<string, unknown>> | undefined): string =>
  r === undefined
    ? "(none)"
    : JSON.stringify(
      Object.fromEntries(Object.entries(r).filter(([k]) => !serverSet.has(k)).sort(([a], [b]) => a < b ? -1 : 1))
    )

export const changedKeys = (before: Snapshot, after: Snapshot): Set<string> => {
  const keys = new Set<string>()
  for (const k of new Set([...before.keys(), ...after.keys()])) {
    if (content(before.get(k)) !== content(after.get(k))) keys.add(k)
  }
  return keys
}

const nextDir = (w: World, what: string) => Path.join(w.dir, `${String(++w.counter).padStart(3, "0")}-${what}`)

/** Writes the file of `shape` (and its mapping profile) and returns them, with the read settings for a job. */
const writeFile = Effect.fn("History.writeFile")(function*(w: World, shape: FileShape, useMap = true) {
  const { file, profile } = yield* writeInput(nextDir(w, "file"), shape)
  const map = profile === undefined || !useMap ? undefined : yield* Effect.orDie(readProfile(profile))
  return {
    file,
    /** The profile, when the run reads through it. */
    profile: map !== undefined ? profile : undefined,
    read: { encoding: "auto", delimiter: "auto", ...(map !== undefined ? { map } : {}) } as const
  }
})

const keysOf = (rows: ReadonlyArray<Row>) =>
  new Set(rows.flatMap((r) => (r.key !== undefined ? [normalKey(r.key)] : [])))

/** The client of a history (its first account, or `apiKey`'s): fast backoff, attempts the faults rarely exhaust. */
const clientOf = (w: World, apiKey?: string) =>
  apiOf(w.sandbox, apiKey, { baseUrl: w.gateway.url, maxAttempts: 12, backoffBaseMs: 5, backoffMaxMs: 50 })

const sayInto = (output: Array<string>) => (line: string) => Effect.sync(() => void output.push(line))

/** A run's lines gathered into `output`, and its stop when the step stops it (the rest: the client's quiet ones). */
const runServices = (output: Array<string>, stop?: Effect.Effect<void>) =>
  Layer.merge(Notices.to(sayInto(output)), stop !== undefined ? RunStop.when(stop) : RunStop.never)

/** A failure of a whole command, as text: an outcome of the step like any other (checked for secrets too). */
const failureText = (exit: Exit.Exit<unknown, unknown>): string =>
  Exit.isFailure(exit) ? `failed: ${String((exit.cause as { toString(): string }).toString()).slice(0, 400)}` : "ok"

const runOf = (w: World, n: number, filter: (r: RunInfo) => boolean = () => true): RunInfo | undefined => {
  const runs = w.runs.filter(filter)
  return runs.length === 0 ? undefined : runs[n % runs.length]
}

const noStep = (note: string): Step => ({ targeted: new Set(), keyless: 0, output: [], note })

const importStep = Effect.fn("History.import")(function*(
  w: World,
  a: { mode: Mode; file: FileShape; dryRun: boolean },
  interrupt?: { after: number; hard: boolean },
  useMap = true
) {
  const { file, read } = yield* writeFile(w, a.file, useMap)
  const runDir = nextDir(w, `import-${a.mode}`)
  const output: Array<string> = []
  const mark = (yield* w.sandbox.control.requests).length
  const enough = Effect.gen(function*() {
    while (writes((yield* w.sandbox.control.requests).slice(mark)).length < (interrupt?.after ?? 0)) {
      yield* Effect.sleep(5)
    }
  })
  const base = job({
    resource: "customers",
    file,
    read,
    runDir,
    mode: a.mode,
    dryRun: a.dryRun,
    ...(a.dryRun ? { planOut: `${runDir}.plan.json` } : {})
  })
  const softStop = interrupt !== undefined && !interrupt.hard
  const theJob = { ...base, concurrency: 4, ...(softStop ? { graceMs: 20 } : {}) }
  const services = runServices(output, softStop ? enough : undefined)
  // Without the fix of issue 28.1, a create meets no fault: an in-doubt create found existing is called ours.
  const guarded = a.mode === "create" && !w.features.has("faulted-create-then-undo")
  const running = guarded
    ? withoutFaults(w, runImport(theJob).pipe(Effect.provide(services), Effect.provide(clientOf(w))))
    : runImport(theJob).pipe(Effect.provide(services), Effect.provide(clientOf(w)))
  let exit: Exit.Exit<unknown, unknown>
  if (interrupt?.hard) {
    const fiber = yield* Effect.fork(running)
    yield* Effect.race(Effect.asVoid(Fiber.await(fiber)), enough)
    yield* Fiber.interrupt(fiber)
    exit = yield* Fiber.await(fiber)
  } else {
    exit = yield* Effect.exit(running)
  }
  // A failure's whole text is part of what the user is told (searched for secrets; the header hint, `pt-headers`).
  if (Exit.isFailure(exit)) output.push(String((exit.cause as { toString(): string }).toString()))
  const made = existsSync(runDir)
  if (made) {
    w.runs.push({
      dir: runDir,
      firstStep: w.snapshots.length - 1,
      dryRun: a.dryRun,
      undo: false,
      targeted: keysOf(a.file.rows),
      plan: planOf(a.file),
      keyless: a.dryRun || a.mode !== "create" ? 0 : a.file.rows.filter((r) => r.key === undefined).length,
      ...(a.dryRun ? { planFile: `${runDir}.plan.json` } : {})
    })
  }
  return {
    targeted: a.dryRun ? new Set<string>() : keysOf(a.file.rows),
    keyless: a.dryRun || a.mode !== "create" ? 0 : a.file.rows.filter((r) => r.key === undefined).length,
    runDir: made ? runDir : undefined,
    output,
    note: `${Path.basename(runDir)}: ${
      Exit.isSuccess(exit) ? `exit ${String((exit.value as { exitCode: number }).exitCode)}` : failureText(exit)
    }`
  } satisfies Step
})

/**
 * `fsm-bulk apply` of a dry run's plan (issue 25.2), an import's or an onboarding's (its customers step): only the
 * plan's rows that send a write may change a record, and only while the record is as the plan read it: a row whose
 * record changed on the server since the plan (another run, the actor, an undo in between) is `conflict`, not sent.
 */
const applyStep = Effect.fn("History.apply")(function*(w: World, n: number) {
  const planned = runOf(w, n, (r) => r.planFile !== undefined && existsSync(r.planFile))
  if (planned === undefined) return noStep("apply: no plan")
  const read = yield* Effect.either(readAnyPlan(planned.planFile!))
  if (read._tag === "Left") return noStep(`apply: ${read.left.message}`)
  const any = read.right
  const runDir = nextDir(w, "apply")
  const output: Array<string> = []
  const steps = any.kind === "import" ? [any.plan.content] : any.plan.content.steps
  const rows = steps.filter((c) => c.resource === "customers").flatMap((c) => c.plan)
  const exit = yield* Effect.exit(
    (any.kind === "import"
      ? Effect.map(
        runImport({
          ...job({ resource: "customers", file: any.plan.content.source.file, runDir, mode: any.plan.content.mode }),
          read: any.plan.content.read,
          dateFormat: any.plan.content.parse.dateFormat,
          decimal: any.plan.content.parse.decimal,
          concurrency: 4,
          applying: { plan: any.plan, approvedBy: "history" }
        }).pipe(Effect.provide(runServices(output))),
        (r) => r.exitCode
      )
      : Effect.gen(function*() {
        // As `apply` runs an onboarding's plan (onboard/Commands.ts: applyOnboardPlan), in process.
        const first = any.plan.content.steps[0]!
        const prepared = yield* prepareOnboarding({
          command: "onboard",
          input: any.plan.content.input,
          runDir,
          dryRun: false,
          verify: false,
          sendWriteOnly: any.plan.content.options.sendWriteOnly,
          answerWaitMs: 20_000,
          answerPollMs: 100,
          read: { encoding: first.read.encoding, delimiter: first.read.delimiter },
          dateFormat: first.parse.dateFormat,
          decimal: first.parse.decimal,
          applying: { plan: any.plan, approvedBy: "history" }
        })
        return (yield* runOnboarding(prepared).pipe(Effect.provide(runServices(output)))).exitCode
      })).pipe(Effect.provide(clientOf(w)))
  )
  // The records as the plan read them (after its dry run's step), and those changed since.
  const then = w.snapshots[planned.firstStep + 1] ?? w.snapshots[w.snapshots.length - 1]!
  const changedSince = changedKeys(then, w.snapshots[w.snapshots.length - 1]!)
  const keyOf = (p: (typeof rows)[number]) => (p.key !== undefined ? normalKey(p.key) : undefined)
  const writing = rows.filter((p) => p.intent !== undefined)
  const bound = (p: (typeof rows)[number]) => p.state === undefined || p.state.read !== "unread"
  const targeted = new Set(
    writing.flatMap((p) => {
      const k = keyOf(p)
      return k !== undefined && !(bound(p) && changedSince.has(k)) ? [k] : []
    })
  )
  const reportDir = any.kind === "import" ? runDir : Path.join(runDir, "customers")
  const made = existsSync(reportDir)
  if (made) {
    w.runs.push({
      dir: reportDir,
      firstStep: w.snapshots.length - 1,
      dryRun: false,
      undo: false,
      targeted,
      plan: planned.plan
    })
  }
  // A planned write whose record changed since the plan is never sent, even one that would change nothing visible.
  const found: Array<string> = []
  const report = readCsv(Path.join(reportDir, "report.csv"))
  for (const p of writing) {
    const k = keyOf(p)
    if (k === undefined || !bound(p) || !changedSince.has(k)) continue
    const line = report.find((r) => Number(r._row) === p.row)
    if (line !== undefined && ["created", "updated", "deleted"].includes(line._status!)) {
      found.push(
        `(apply) ${
          Path.basename(reportDir)
        } row ${p.row} (${k}) ${line._status}: its record changed on the server since the plan`
      )
    }
  }
  return {
    targeted,
    keyless: writing.filter((p) => p.key === undefined && p.intent === "create").length,
    runDir: made ? reportDir : undefined,
    output,
    found,
    note: `apply ${Path.basename(planned.planFile!)} (changed since: ${[...changedSince].join(" ") || "none"}): ${
      Exit.isSuccess(exit) ? `exit ${exit.value}` : failureText(exit)
    }`
  } satisfies Step
})

/**
 * `onboard DIR --dry-run --plan PLAN` of a directory holding `customers.csv` (or `.xlsx`): writes nothing; the
 * plan is `apply`'s to send later.
 */
const onboardPlanStep = Effect.fn("History.onboardPlan")(function*(w: World, a: Of<"onboard-plan">) {
  const input = nextDir(w, "onboarding")
  mkdirSync(input, { recursive: true })
  yield* writeInput(Path.join(input, "customers"), a.file)
  const runDir = nextDir(w, "onboard-dry")
  const planFile = `${runDir}.plan.json`
  const output: Array<string> = []
  const exit = yield* Effect.exit(
    Effect.flatMap(
      prepareOnboarding(onboardRequest(input, runDir, { dryRun: true, planOut: planFile })),
      (prepared) => runOnboarding(prepared).pipe(Effect.provide(runServices(output)))
    ).pipe(Effect.provide(clientOf(w)))
  )
  if (existsSync(planFile)) {
    w.runs.push({
      dir: Path.join(runDir, "customers"),
      firstStep: w.snapshots.length - 1,
      dryRun: true,
      undo: false,
      targeted: keysOf(a.file.rows),
      plan: planOf(a.file),
      planFile
    })
  }
  return {
    ...noStep(
      `onboard --dry-run --plan ${Path.basename(planFile)}: ${
        Exit.isSuccess(exit) ? `exit ${exit.value.exitCode}` : failureText(exit)
      }`
    ),
    output
  } satisfies Step
})

/** An onboarding request with the CLI's defaults. */
const onboardRequest = (
  input: string,
  runDir: string,
  more: Partial<Parameters<typeof prepareOnboarding>[0]> = {}
): Parameters<typeof prepareOnboarding>[0] => ({
  command: "onboard",
  input,
  runDir,
  dryRun: false,
  verify: false,
  answerWaitMs: 20_000,
  answerPollMs: 100,
  read: { encoding: "auto", delimiter: "auto" },
  dateFormat: "auto",
  decimal: "auto",
  ...more
})

/**
 * A sheet of Portuguese aliases. With a profile, or without one and no title row: an import like any other (the
 * checker's column plan reads the aliases). Without a profile above a title row: the run stops before it sends
 * anything, and says which row looks like the header and the `map` command that reads it there.
 */
const ptHeadersStep = Effect.fn("History.ptHeaders")(function*(w: World, a: Of<"pt-headers">) {
  if (a.map || a.file.title !== true) return yield* importStep(w, a, undefined, a.map)
  const mark = (yield* w.sandbox.control.requests).length
  const step = yield* importStep(w, a, undefined, false)
  const found = ptHeadersTitleChecks((yield* w.sandbox.control.requests).slice(mark), step.output)
  return { ...step, targeted: new Set<string>(), keyless: 0, found } satisfies Step
})

/**
 * A title row above Portuguese headers and no profile: no write among the server's `requests` of the run, and the
 * user `told` that row 2 looks like the header and which `map` command reads it.
 */
export const ptHeadersTitleChecks = (
  requests: Parameters<typeof writes>[0],
  told: ReadonlyArray<string>
): Array<string> => {
  const sent = writes(requests).length
  const text = told.join("\n")
  return [
    ...(sent > 0 ? [`(pt-headers) a title row above the header, no profile: ${sent} writes were sent`] : []),
    ...(!/row 2 looks like the header/.test(text) || !text.includes("fsm-bulk map customers")
      ? [
        `(pt-headers) a title row above the header, no profile: not told that row 2 looks like it (${
          text.slice(0, 300)
        })`
      ]
      : [])
  ]
}

/** The read-only lists among an export's files that hold rows (an onboarding of it must skip them). */
const readOnlyFilesOf = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const base = name.replace(/\.csv$/, "")
    return name.endsWith(".csv") && isResourceName(base) && resourceOf(base).kind === "readonly" &&
        readCsv(Path.join(dir, name)).length > 0
      ? [base]
      : []
  })

/** The customers of the second account by key (`#id` without one), and the key of each second record of a key. */
export const otherAccount = (w: World) =>
  Effect.map(w.sandbox.control.records(w.sandbox.accounts[1]!.apiKey, "customers"), (records) => {
    const byKey = new Map<string, Record<string, unknown>>()
    const twice: Array<string> = []
    for (const r of records) {
      const key = typeof r.externalId === "string" && r.externalId.trim() !== "" ? normalKey(r.externalId) : undefined
      if (key !== undefined && byKey.has(key)) twice.push(key)
      byKey.set(key ?? `#${String(r.id)}`, r)
    }
    return { byKey, twice }
  })

/** `fsm-bulk export` of `resources` (every one when empty) into `out`, in process, with the server's faults off. */
const exportAll = (w: World, resources: Array<string>, out: string, output: Array<string>) =>
  withoutFaults(
    w,
    Effect.gen(function*() {
      const prepared = yield* prepareExport({
        resources,
        out,
        format: "csv",
        since: undefined,
        until: undefined,
        say: sayInto(output)
      })
      return yield* runExport(prepared)
    }).pipe(Effect.provide(Layer.merge(clientOf(w), NodeContext.layer)))
  )

/** The second account's customers by key, and the keys held twice (`otherAccount`). */
export type OtherAccount = Effect.Effect.Success<ReturnType<typeof otherAccount>>

/**
 * The checks of an export's folder onboarded (`export-onboard`), over what is on disk and, into the other account,
 * that account's customers before and after: read-only lists named as skipped and never a step; one record per key;
 * no record replaced or removed; no record without a key beyond the file's; each reported row's record holding the
 * file's values. Its own function so a test can show each check fails on a doctored run or account.
 */
export const exportOnboardChecks = (
  exportDir: string,
  runDir: string,
  succeeded: boolean,
  other: { readonly before: OtherAccount; readonly after: OtherAccount } | undefined
): Array<string> => {
  const found: Array<string> = []
  const summaryPath = Path.join(runDir, "summary.json")
  if (existsSync(summaryPath)) {
    const summary = JSON.parse(readFileSync(summaryPath, "utf8")) as {
      resources: ReadonlyArray<string>
      readOnly?: ReadonlyArray<string>
    }
    const skipped = new Set(summary.readOnly ?? [])
    for (const name of readOnlyFilesOf(exportDir)) {
      if (!skipped.has(name)) found.push(`(export-onboard) the read-only list ${name} was not named as skipped`)
    }
    for (const name of summary.resources) {
      if (isResourceName(name) && resourceOf(name).kind === "readonly") {
        found.push(`(export-onboard) the read-only list ${name} was a step of the onboarding`)
      }
    }
  } else if (succeeded) found.push(`(export-onboard) ${Path.basename(runDir)} has no summary.json`)
  if (other === undefined) return found
  // Into the other account: one record per key, each with the file's values; none made again or replaced.
  const { after, before } = other
  const rows = readCsv(Path.join(exportDir, "customers.csv"))
  const plan = planOfHeader(rows.length > 0 ? Object.keys(rows[0]!) : ["externalId", "name", "note"], ".")
  for (const k of after.twice) found.push(`(export-onboard) the other account has a second record of ${k}`)
  for (const [k, r] of before.byKey) {
    const still = after.byKey.get(k)
    if (still === undefined || String(still.id) !== String(r.id)) {
      found.push(`(export-onboard) the other account's ${k} (id ${String(r.id)}) was replaced or removed`)
    }
  }
  const keyless = (m: ReadonlyMap<string, unknown>) => [...m.keys()].filter((k) => k.startsWith("#")).length
  const keylessRows = rows.filter((r) => !r.externalId).length
  if (keyless(after.byKey) > Math.max(keyless(before.byKey), keylessRows)) {
    found.push(
      `(export-onboard) the other account has ${keyless(after.byKey)} records without a key (${
        keyless(before.byKey)
      } before, ${keylessRows} rows without one in the file)`
    )
  }
  for (const row of readCsv(Path.join(runDir, "customers", "report.csv"))) {
    const key = row.externalId ? normalKey(row.externalId) : undefined
    if (key === undefined || !["created", "updated", "unchanged"].includes(row._status!)) continue
    const record = after.byKey.get(key)
    if (record === undefined) {
      found.push(`(export-onboard) row ${row._row} (${key}) ${row._status}, but the other account has no such record`)
      continue
    }
    for (const column of plan.mapped) {
      const value = expectedValue(column.kind, row[column.column], plan.decimal)
      if (value !== undefined && !sameValue(value, record[column.property])) {
        found.push(
          `(export-onboard) row ${row._row} (${key}): ${column.column} ${
            JSON.stringify(row[column.column])
          }, the other account's ${column.property} is ${JSON.stringify(record[column.property])}`
        )
      }
    }
  }
  return found
}

/**
 * English sentences of the message catalogue (src/Messages.ts) whose Portuguese differs: each message's literal
 * pieces between `{placeholders}` of three words or more, not found in its translation. One of them in a pt-BR
 * output is a message left in English.
 */
const englishPieces: ReadonlyArray<readonly [string, string]> = Object.entries(catalogues.en).flatMap(([key, en]) => {
  const pt = catalogues["pt-BR"][key as keyof typeof catalogues.en]
  return en.split(/\{\w+\}/).map((piece) => piece.trim()).filter((piece) =>
    /[a-z]{2,} [a-z]{2,} [a-z]{2,}/i.test(piece) && !pt.includes(piece)
  ).map((piece) => [key, piece] as const)
})

/** The catalogue's English pieces found in `text` (what a pt-BR reader was shown), one line each. */
export const englishLeft = (where: string, text: string, label = "pt-BR onboard"): Array<string> =>
  englishPieces.filter(([, piece]) => text.includes(piece)).map(([key, piece]) =>
    `(${label}) ${where}: English left, ${JSON.stringify(piece)} (${key})`
  )

/** A figure of report.html (`data-figure="NAME"`) as a number, written the Brazilian way (`1.234`). */
const htmlFigure = (html: string, name: string): number | undefined => {
  const m = new RegExp(`data-figure="${name}"[^>]*>([^<]*)<`).exec(html)
  return m === null ? undefined : Number(m[1]!.replace(/\./g, "").replace(",", "."))
}

/** The text a reader sees on a page: no tags, no style, no entities. */
const visibleText = (html: string): string =>
  html.replace(/<style>[\s\S]*?<\/style>/g, " ").replace(/<[^>]+>/g, "\n").replace(/&[a-z#0-9]+;/g, " ")

/** The rows of report.xlsx's Summary sheet in `dir` (undefined: no report.xlsx). */
export const summarySheetOf = (dir: string) =>
  Effect.promise(async () => {
    const file = Path.join(dir, "report.xlsx")
    if (!existsSync(file)) return undefined
    const ExcelJS = await loadExcelJs()
    const book = new ExcelJS.Workbook()
    await book.xlsx.readFile(file)
    const rows: Array<ReadonlyArray<unknown>> = []
    book.getWorksheet("Summary")?.eachRow((row) => rows.push((row.values as Array<unknown>).slice(1)))
    return rows as ReadonlyArray<ReadonlyArray<unknown>>
  })

/** The Summary sheet of each step's report.xlsx of an onboarding (`runDir`), by the step's run directory. */
export const summarySheets = (runDir: string) =>
  Effect.gen(function*() {
    const summary = JSON.parse(readFileSync(Path.join(runDir, "summary.json"), "utf8")) as {
      steps: ReadonlyArray<{ runDir: string }>
    }
    const sheets = new Map<string, ReadonlyArray<ReadonlyArray<unknown>>>()
    for (const step of summary.steps) {
      const sheet = yield* summarySheetOf(step.runDir)
      if (sheet !== undefined) sheets.set(step.runDir, sheet)
    }
    return sheets
  })

type Counts = Readonly<Record<string, number>>

const nonZero = (counts: Counts) => Object.entries(counts).filter(([, n]) => n > 0).sort()

/**
 * One run directory's reports under `--lang pt-BR` held to its summary.json (`run`): report.html's rows and counts by
 * status, report.xlsx's Summary sheet's counts (`sheet`, when read), report.csv's lines of each status (unless not
 * `lines`), its statuses English (a dry run's planned: `would-create`); and no English sentence of the catalogue on
 * the page or the sheet.
 */
const ptBrReportChecks = (
  label: string,
  dir: string,
  where: string,
  run: { readonly rows: number; readonly counts: Counts; readonly dryRun: boolean },
  sheet: ReadonlyArray<ReadonlyArray<unknown>> | undefined,
  lines = true
): Array<string> => {
  const found: Array<string> = []
  const shown = new Set<string>(Status.literals.map((s) => shownStatus(s, run.dryRun)))
  const page = Path.join(dir, "report.html")
  if (!existsSync(page)) found.push(`(${label}) ${where}: no report.html`)
  else {
    const html = readFileSync(page, "utf8")
    if (htmlFigure(html, "rows") !== run.rows) {
      found.push(`(${label}) ${where}: report.html says ${htmlFigure(html, "rows")} rows, summary.json ${run.rows}`)
    }
    for (const [status, n] of nonZero(run.counts)) {
      const figure = htmlFigure(html, `count:${status}`)
      if (figure !== n) found.push(`(${label}) ${where}: report.html says ${status} ${figure}, summary.json ${n}`)
    }
    found.push(...englishLeft(`${where} report.html`, visibleText(html), label))
  }
  if (sheet !== undefined) {
    // report.xlsx's Summary sheet: a status and its count per line, then the total of rows.
    const inSheet: Record<string, number> = {}
    for (const row of sheet) {
      if (shown.has(String(row[0])) && typeof row[1] === "number") inSheet[statusOfShown(String(row[0]))] = row[1]
    }
    if (JSON.stringify(nonZero(inSheet)) !== JSON.stringify(nonZero(run.counts))) {
      found.push(
        `(${label}) ${where}: report.xlsx Summary counts ${JSON.stringify(Object.fromEntries(nonZero(inSheet)))}, ` +
          `summary.json ${JSON.stringify(Object.fromEntries(nonZero(run.counts)))}`
      )
    }
    found.push(...englishLeft(`${where} report.xlsx Summary`, sheet.map((r) => r.join(" ")).join("\n"), label))
  }
  if (!lines) return found
  const byStatus: Record<string, number> = {}
  for (const line of readCsv(Path.join(dir, "report.csv"))) {
    const status = statusOfShown(line._status!)
    byStatus[status] = (byStatus[status] ?? 0) + 1
    if (!shown.has(line._status!)) {
      found.push(`(${label}) ${where} report.csv row ${line._row}: status ${JSON.stringify(line._status)}`)
    }
  }
  if (JSON.stringify(nonZero(byStatus)) !== JSON.stringify(nonZero(run.counts))) {
    found.push(
      `(${label}) ${where}: report.csv counts ${JSON.stringify(Object.fromEntries(nonZero(byStatus)))}, ` +
        `summary.json ${JSON.stringify(Object.fromEntries(nonZero(run.counts)))}`
    )
  }
  return found
}

/** A run's summary.json: its rows, counts by status and whether it was a dry run (undefined: none written). */
const runSummary = (dir: string) => {
  const path = Path.join(dir, "summary.json")
  if (!existsSync(path)) return undefined
  const s = JSON.parse(readFileSync(path, "utf8")) as { rows: number; counts: Counts; dryRun?: boolean }
  return { rows: s.rows, counts: s.counts, dryRun: s.dryRun === true }
}

/**
 * The checks of an onboarding run under `--lang pt-BR` (`pt-br-onboard`, its dry run and the onboarding itself): its
 * reports stay true and speak Portuguese. For the onboarding and each step, report.html's rows and counts by status
 * equal summary.json's; each step's report.csv holds as many lines of each status (English; a dry run's planned) as
 * its summary.json counts, and so does its report.xlsx's Summary sheet; the printed closing table lists each status
 * with the onboarding's count; and no English sentence of the catalogue is in report.html's visible text, the Summary
 * sheet or anything printed. Its own function so a test can show each check fails on a doctored run.
 */
export const ptBrOnboardChecks = (
  runDir: string,
  printed: ReadonlyArray<string>,
  sheets: ReadonlyMap<string, ReadonlyArray<ReadonlyArray<unknown>>> = new Map()
): Array<string> => {
  const label = "pt-BR onboard"
  const summaryPath = Path.join(runDir, "summary.json")
  if (!existsSync(summaryPath)) return [`(${label}) ${Path.basename(runDir)} has no summary.json`]
  const summary = JSON.parse(readFileSync(summaryPath, "utf8")) as {
    rows: number
    counts: Counts
    dryRun: boolean
    steps: ReadonlyArray<{ resource: string; runDir: string; counts: Counts }>
  }
  const dryRun = summary.dryRun === true
  // The onboarding's own directory has a page, not a report of lines: its steps have those.
  const found = ptBrReportChecks(label, runDir, "the onboarding", { ...summary, dryRun }, undefined, false)
  for (const step of summary.steps) {
    const rows = runSummary(step.runDir)?.rows ?? 0
    found.push(
      ...ptBrReportChecks(label, step.runDir, `step ${step.resource}`, {
        rows,
        counts: step.counts,
        dryRun
      }, sheets.get(step.runDir))
    )
  }
  for (const [status, n] of nonZero(summary.counts)) {
    const text = shownStatus(status as Status, dryRun)
    if (!printed.some((line) => new RegExp(`^\\s+${text}\\s+${n}$`).test(line))) {
      found.push(`(${label}) the printed summary has no line "${text} ${n}"`)
    }
  }
  found.push(...englishLeft("printed", printed.join("\n"), label))
  return found
}

/**
 * The checks of an import's own run under `--lang pt-BR` (`pt-br`'s import, `dir`): its report.html, report.csv and
 * report.xlsx's Summary sheet held to its summary.json as an onboarding step's are, and no English sentence of the
 * catalogue in what it printed. None when the run wrote no summary.json (a run that could not start).
 */
export const ptBrImportChecks = (
  dir: string,
  printed: ReadonlyArray<string>,
  sheet: ReadonlyArray<ReadonlyArray<unknown>> | undefined
): Array<string> => {
  const run = runSummary(dir)
  if (run === undefined) return []
  return [
    ...ptBrReportChecks("pt-BR", dir, "the import", run, sheet),
    ...englishLeft("printed", printed.join("\n"), "pt-BR")
  ]
}

/**
 * An export's folder fed to `onboard` (issue 27): a fresh export of every resource (or an earlier export again),
 * onboarded into the second account or back into this one. Read-only lists are skipped and named; into this account
 * it changes only records the file differs on and nothing changed since the export (those are `conflict`: the
 * stale check); into the other one it makes one record per key with the file's values, and onboarding again
 * (a later export, or the same) changes no record's id and adds none.
 */
const exportOnboardStep = Effect.fn("History.exportOnboard")(function*(
  w: World,
  a: Of<"export-onboard"> | Of<"pt-br-onboard">
) {
  const pt = a.kind === "pt-br-onboard"
  // In process the language is the process's: with the `cli` feature (parallel histories) the built CLI's
  // `--lang pt-BR` runs the export and the onboarding instead.
  const cli = pt && w.features.has("cli")
  const output: Array<string> = []
  let exported = a.export !== undefined && w.exports.length > 0 ? w.exports[a.export % w.exports.length] : undefined
  if (exported === undefined) {
    const out = nextDir(w, "export-all")
    const failed = cli
      ? yield* cliExportAll(w, out, output)
      : failureOf(yield* Effect.exit(inLanguageIf(pt, exportAll(w, [], out, output))))
    if (failed !== undefined) return { ...noStep(`export of everything: ${failed}`), output }
    exported = { dir: out, records: yield* snapshot(w) }
    w.exports.push(exported)
  }
  const target = a.other ? w.sandbox.accounts[1]! : w.sandbox.accounts[0]!
  const onboard = (runDir: string, printed: Array<string>, dryRun: boolean) =>
    cli
      ? cliOnboard(w, exported.dir, runDir, target, printed, dryRun)
      : inProcessOnboard(w, exported.dir, runDir, target.apiKey, printed, dryRun, pt)
  // In Portuguese, a dry run first: what it shows is held to its summaries as the onboarding's is (it sends nothing).
  const dryFound: Array<string> = []
  if (pt) {
    const dryDir = nextDir(w, "onboard-dry-pt-BR")
    const printed: Array<string> = []
    const dry = yield* onboard(dryDir, printed, true)
    output.push(...printed)
    if (dry.failure === undefined) dryFound.push(...ptBrOnboardChecks(dryDir, printed, yield* summarySheets(dryDir)))
  }
  const runDir = nextDir(w, a.other ? "onboard-other" : "onboard-same")
  const file = Path.join(exported.dir, "customers.csv")
  const rows = readCsv(file)
  const header = rows.length > 0 ? Object.keys(rows[0]!) : ["externalId", "name", "note"]
  const keys = new Set(rows.flatMap((r) => (r.externalId ? [normalKey(r.externalId)] : [])))
  const now = yield* snapshot(w)
  const stale = a.other ? new Set<string>() : changedKeys(exported.records, now)
  const otherBefore = a.other ? yield* otherAccount(w) : undefined
  const printed: Array<string> = []
  const done = yield* onboard(runDir, printed, false)
  output.push(...printed)
  const stepDir = Path.join(runDir, "customers")
  const plan = planOfHeader(header, ".")
  const found = [
    ...exportOnboardChecks(
      exported.dir,
      runDir,
      done.failure === undefined,
      otherBefore !== undefined ? { before: otherBefore, after: yield* otherAccount(w) } : undefined
    ),
    ...dryFound,
    ...(pt && done.failure === undefined ? ptBrOnboardChecks(runDir, printed, yield* summarySheets(runDir)) : [])
  ]
  const targeted = a.other ? new Set<string>() : new Set([...keys].filter((k) => !stale.has(k)))
  const owned = !a.other && existsSync(Path.join(stepDir, "journal.ndjson"))
  if (owned) {
    w.runs.push({ dir: stepDir, firstStep: w.snapshots.length - 1, dryRun: false, undo: false, targeted, plan })
  }
  return {
    targeted,
    keyless: 0,
    runDir: owned ? stepDir : undefined,
    stale,
    output,
    found,
    note: `${pt ? `pt-BR${cli ? " (the CLI's --lang pt-BR)" : ""}, a dry run first: ` : ""}onboard ${
      Path.basename(exported.dir)
    } into the ${a.other ? "other" : "same"} account (stale: ${[...stale].join(" ") || "none"}): ${
      done.failure ?? `exit ${done.exitCode}`
    }`
  } satisfies Step
})

/** A command's failure as text, or undefined when it succeeded. */
const failureOf = (exit: Exit.Exit<unknown, unknown>): string | undefined =>
  Exit.isFailure(exit) ? failureText(exit) : undefined

/** `effect` in pt-BR when `pt`, else as it is. */
const inLanguageIf = <A, E>(pt: boolean, effect: Effect.Effect<A, E>) => (pt ? inLanguage("pt-BR", effect) : effect)

/**
 * An onboarding of `input` into `runDir` (a dry run when `dryRun`) in process, in pt-BR when `pt`, with `apiKey`'s
 * account: what it prints at the end (its closing table and where the reports are) into `printed`.
 */
const inProcessOnboard = (
  w: World,
  input: string,
  runDir: string,
  apiKey: string,
  printed: Array<string>,
  dryRun: boolean,
  pt: boolean
) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(inLanguageIf(
      pt,
      Effect.flatMap(
        prepareOnboarding(onboardRequest(input, runDir, { dryRun })),
        (prepared) =>
          Effect.tap(runOnboarding(prepared).pipe(Effect.provide(runServices(printed))), (done) =>
            Effect.sync(() => {
              const closing = closingLines(done.summary)
              printed.push(...closing.table, ...closing.where)
            }))
      ).pipe(Effect.provide(clientOf(w, apiKey)))
    ))
    if (Exit.isFailure(exit)) printed.push(String((exit.cause as { toString(): string }).toString()))
    return { failure: failureOf(exit), exitCode: Exit.isSuccess(exit) ? exit.value.exitCode : undefined }
  })

/** The CLI's lines, one string each (what a check of printed lines reads). */
const linesOf = (cli: { readonly stdout: () => string; readonly stderr: () => string }) =>
  [...cli.stdout().split(/\r?\n/), ...cli.stderr().split(/\r?\n/)].filter((line) => line !== "")

/** The built CLI's `--lang pt-BR export --out DIR` of every resource, faults off as `exportAll`: its failure, if any. */
const cliExportAll = (w: World, out: string, output: Array<string>) =>
  withoutFaults(
    w,
    Effect.promise(async () => {
      const cli = spawnCli(["--lang", "pt-BR", "export", "--out", out], { ...w.sandbox, url: w.gateway.url }, w.dir)
      const end = await cli.exit
      output.push(...linesOf(cli))
      return end.code === 0 ? undefined : `exit ${String(end.code ?? end.signal)}`
    })
  )

/**
 * The built CLI's `--lang pt-BR onboard DIR --out RUN_DIR [--dry-run]` into `target`'s account: its lines into
 * `printed`; a failure when it wrote no summary.json (it stopped before running the onboarding).
 */
const cliOnboard = (
  w: World,
  input: string,
  runDir: string,
  target: { readonly apiKey: string; readonly apiToken: string },
  printed: Array<string>,
  dryRun: boolean
) =>
  Effect.promise(async () => {
    const cli = spawnCli(
      ["--lang", "pt-BR", "onboard", input, "--out", runDir, ...(dryRun ? ["--dry-run"] : [])],
      { ...w.sandbox, url: w.gateway.url },
      w.dir,
      { FSM_API_KEY: target.apiKey, FSM_API_TOKEN: target.apiToken }
    )
    const end = await cli.exit
    printed.push(...linesOf(cli))
    const summary = existsSync(Path.join(runDir, "summary.json"))
    return {
      failure: summary ? undefined : `exit ${String(end.code ?? end.signal)}, no summary.json`,
      exitCode: end.code ?? undefined
    }
  })

/** Runs `effect` with the messages in `language` (the process's choice, as `--lang` makes it), then goes back. */
const inLanguage = <A, E>(language: Language, effect: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const was = currentLanguage()
      setLanguage(language)
      return was
    }),
    () => effect,
    (was) => Effect.sync(() => setLanguage(was))
  )

/** Report columns whose text differs between two runs by design: the message's language, the request's id. */
const perRun = new Set(["_error", "_request_id", "_attempts", "_retry_outcomes"])

/**
 * The checks of a `pt-br` step: the dry runs in English and in pt-BR (`dirs`) report the same lines, cells (but the
 * message's language and the request's id) and counts, and the import run in pt-BR (`imported`) keeps English
 * statuses. Its own function so a test can show each check fails on a doctored run directory.
 */
export const ptBrChecks = (dirs: { readonly en: string; readonly pt: string }, imported: string | undefined) => {
  const found: Array<string> = []
  const en = readCsv(Path.join(dirs.en, "report.csv"))
  const pt = readCsv(Path.join(dirs.pt, "report.csv"))
  if (en.length !== pt.length) {
    found.push(`(pt-BR) the dry run's report has ${pt.length} lines in pt-BR, ${en.length} in English`)
  }
  en.forEach((row, i) => {
    const other = pt[i] ?? {}
    for (const column of new Set([...Object.keys(row), ...Object.keys(other)])) {
      if (!perRun.has(column) && row[column] !== other[column]) {
        found.push(
          `(pt-BR) report row ${row._row}, column ${column}: ${JSON.stringify(row[column])} in English, ${
            JSON.stringify(other[column])
          } in pt-BR`
        )
      }
    }
  })
  const summaryOf = (dir: string) => {
    const path = Path.join(dir, "summary.json")
    if (!existsSync(path)) return "(no summary.json)"
    const s = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>
    return JSON.stringify({ rows: s.rows, counts: s.counts, exitCode: s.exitCode, dryRun: s.dryRun })
  }
  if (summaryOf(dirs.en) !== summaryOf(dirs.pt)) {
    found.push(`(pt-BR) summary.json: ${summaryOf(dirs.en)} in English, ${summaryOf(dirs.pt)} in pt-BR`)
  }
  const english = new Set<string>(Status.literals)
  for (const row of imported !== undefined ? readCsv(Path.join(imported, "report.csv")) : []) {
    if (!english.has(row._status!)) found.push(`(pt-BR) report row ${row._row}: status ${JSON.stringify(row._status)}`)
  }
  return found
}

/**
 * `--lang pt-BR` (issue 27): a dry run in English and one in Portuguese (faults off: the same requests answered the
 * same) report the same rows, statuses (English in both), record ids and source cells, and the same counts; then
 * the import runs in Portuguese, its statuses English and its own reports true and Portuguese (`ptBrImportChecks`).
 * In the soak the Portuguese runs are the built CLI's
 * `--lang pt-BR` (in process the language is the process's: one history at a time in the bounded run).
 */
const ptBrStep = Effect.fn("History.ptBr")(function*(w: World, a: Of<"pt-br">) {
  const { file, profile, read } = yield* writeFile(w, a.file)
  const cli = w.features.has("cli")
  const output: Array<string> = []
  const dirs = { en: nextDir(w, "dry-en"), pt: nextDir(w, "dry-pt-BR") }
  const flags = ["--mode", a.mode, ...(profile !== undefined ? ["--map", profile] : [])]
  const dry = (runDir: string) =>
    Effect.exit(
      runImport(job({ resource: "customers", file, read, runDir, mode: a.mode, dryRun: true }))
        .pipe(Effect.provide(runServices(output)), Effect.provide(clientOf(w)))
    )
  yield* withoutFaults(
    w,
    Effect.gen(function*() {
      yield* inLanguage("en", dry(dirs.en))
      if (!cli) yield* inLanguage("pt-BR", dry(dirs.pt))
      else {
        const run = spawnCli(
          ["--lang", "pt-BR", "import", "customers", file, ...flags, "--dry-run", "--out", dirs.pt],
          { ...w.sandbox, url: w.gateway.url },
          w.dir
        )
        yield* Effect.promise(() => run.exit)
        output.push(run.stdout(), run.stderr())
      }
    })
  )
  // The import itself, in Portuguese.
  const step = cli
    ? yield* cliImport(w, { mode: a.mode, file: a.file, after: Infinity }, ["--lang", "pt-BR"])
    : yield* inLanguage("pt-BR", importStep(w, { mode: a.mode, file: a.file, dryRun: false }))
  const found = [
    ...ptBrChecks(dirs, step.runDir),
    ...(step.runDir !== undefined
      ? ptBrImportChecks(step.runDir, step.output, yield* summarySheetOf(step.runDir))
      : [])
  ]
  return {
    ...step,
    output: [...output, ...step.output],
    found,
    note: `pt-BR: dry runs compared (${readCsv(Path.join(dirs.en, "report.csv")).length} lines${
      cli ? ", the CLI's --lang pt-BR" : ""
    }); ${step.note}`
  } satisfies Step
})

const two = (n: number) => String(n).padStart(2, "0")

/** `cents` as a Brazilian sheet writes it: thousands dots, a decimal comma (`123456` → `1.234,56`). */
export const brazilianNumber = (cents: number) =>
  `${Math.floor(cents / 100).toString().replace(/\B(?=(\d{3})+$)/g, ".")},${two(cents % 100)}`

/** The lines of a `br-dates` file as written and as meant, each for a customer `customers` holds (by its number). */
export const brDateLines = (a: Of<"br-dates">, customers: Snapshot) => {
  const keys = [...customers.keys()].filter((k) => !k.startsWith("#") && !k.includes("#dup")).sort()
  return a.rows.map((r) => {
    const key = keys.length > 0 ? keys[r.customer % keys.length]! : keyPool[r.customer % keyPool.length]!
    return {
      key,
      exists: keys.length > 0,
      due: { text: `${two(r.day)}/${two(r.month)}/${r.year}`, iso: `${r.year}-${two(r.month)}-${two(r.day)}` },
      competency: { text: `01/${two(r.month)}/${r.year}`, iso: `${r.year}-${two(r.month)}-01` },
      value: { text: brazilianNumber(r.cents), number: r.cents / 100 }
    }
  })
}

/**
 * `br-dates`: a receivables file in the Brazilian way (see the action) imported in create mode, faults off. Every
 * row whose customer the server holds must end `created` (and no other), with a record that holds the intended due
 * and competency dates (not day and month swapped) and the intended value (not scaled by a misread comma or dot),
 * for that customer; the account gains exactly one receivable per created row. The rows are receivables, not
 * customers: the run is no run of the model (no undo, rerun or resume of it), and (i)–(iv) do not read it.
 */
const brDatesStep = Effect.fn("History.brDates")(function*(w: World, a: Of<"br-dates">) {
  const customers = yield* snapshot(w)
  const lines = brDateLines(a, customers)
  const dir = nextDir(w, "receivables")
  mkdirSync(dir, { recursive: true })
  const file = Path.join(dir, "contas a receber.csv")
  const text = [
    "customerExternalId;value;dueDate;competencyDate;description",
    ...lines.map((l) =>
      `${l.key};${l.value.text};${l.due.text};${l.competency.text};Manutenção preventiva ${l.due.text}`
    )
  ].join("\r\n") + "\r\n"
  writeFileSync(file, Buffer.from(text, "latin1"))
  const runDir = Path.join(dir, "run")
  const output: Array<string> = []
  const stored = w.sandbox.control.records(apiKey(w), "receivables")
  const before = yield* stored
  const exit = yield* Effect.exit(withoutFaults(
    w,
    runImport(
      job({ resource: "receivables", file, runDir, mode: "create", dateFormat: a.dateFormat, decimal: a.decimal })
    ).pipe(Effect.provide(runServices(output)), Effect.provide(clientOf(w)))
  ))
  if (Exit.isFailure(exit)) output.push(String((exit.cause as { toString(): string }).toString()))
  const after = yield* stored
  const found = brDatesChecks(lines, readCsv(Path.join(runDir, "report.csv")), customers, before, after)
  return {
    ...noStep(
      `br-dates ${a.dateFormat} ${a.decimal}, ${lines.length} rows: ${
        Exit.isSuccess(exit) ? `exit ${(exit.value as { exitCode: number }).exitCode}` : failureText(exit)
      }`
    ),
    output,
    found
  } satisfies Step
})

/** The checks of a `br-dates` step over its file's lines, its report and the receivables before and after. */
export const brDatesChecks = (
  lines: ReturnType<typeof brDateLines>,
  report: ReadonlyArray<Record<string, string>>,
  customers: Snapshot,
  before: ReadonlyArray<Record<string, unknown>>,
  after: ReadonlyArray<Record<string, unknown>>
): Array<string> => {
  const found: Array<string> = []
  const byId = new Map(after.map((r) => [String(r.id), r]))
  const created = report.filter((row) => row._status === "created")
  if (after.length - before.length !== created.length) {
    found.push(
      `(br-dates) ${created.length} rows created, the account has ${after.length - before.length} more receivables`
    )
  }
  lines.forEach((line, i) => {
    const row = report.find((r) => Number(r._row) === i + 2)
    const where = `(br-dates) row ${i + 2} (${line.key})`
    if (row?._status !== "created") {
      if (line.exists) found.push(`${where} ${row?._status ?? "not in the report"}: ${row?._error ?? ""}`.trim())
      return
    }
    const record = byId.get(row._record_id ?? "")
    if (record === undefined) {
      return void found.push(`${where} created, but the server has no receivable ${row._record_id}`)
    }
    for (const [field, date] of [["dueDate", line.due], ["competencyDate", line.competency]] as const) {
      const held = String(record[field] ?? "").slice(0, 10)
      if (held !== date.iso) {
        found.push(`${where}: ${field} ${date.text} is ${date.iso}, the server holds ${JSON.stringify(record[field])}`)
      }
    }
    if (record.value !== line.value.number) {
      found.push(
        `${where}: value ${line.value.text} is ${line.value.number}, the server holds ${JSON.stringify(record.value)}`
      )
    }
    const customer = customers.get(line.key)
    if (customer !== undefined && String(record.customerId) !== String(customer.id)) {
      found.push(
        `${where}: customer ${String(customer.id)}, the server's receivable is for ${String(record.customerId)}`
      )
    }
  })
  return found
}

/** The users a `users` step may touch (a pool, so a later step meets users an earlier one created). */
export const userPool = ["USR-01", "USR-02", "USR-03", "USR-04"]

/**
 * The `users` flow: one file, three imports in upsert mode (faults off: the step checks what the server keeps,
 * not retries). Checked here, from the sandbox's store (`control.stored`: the passwords no GET lists back):
 * the first import sets the password of the users it creates and leaves the others' alone; the re-import without
 * `--send-write-only` changes no password; the one with the flag sets them all. And no password in anything
 * the runs print or write, except the input and the reports, which hold the input's columns by design
 * (docs/rehearsal.md: a users run's report holds the passwords; `bundle` withholds it).
 */
const usersStep = Effect.fn("History.users")(function*(w: World, a: Of<"users">) {
  const found: Array<string> = []
  const output: Array<string> = []
  const inputs = new Set<string>()
  const dirs: Array<string> = []
  const stored = Effect.map(
    w.sandbox.control.stored(apiKey(w), "users"),
    (records) => new Map(records.map((r) => [normalKey(String(r.externalId ?? "")), r.password as unknown]))
  )
  const rounds = [
    { passwords: a.passwords[0]!, sendWriteOnly: false },
    { passwords: a.passwords[1]!, sendWriteOnly: false },
    { passwords: a.passwords[2]!, sendWriteOnly: true }
  ]
  for (const [n, round] of rounds.entries()) {
    const before = yield* stored
    const dir = nextDir(w, `users-${n + 1}`)
    mkdirSync(dir, { recursive: true })
    const file = Path.join(dir, "usuarios.csv")
    const lines = a.users.map((key, i) =>
      `${key};Técnico ${key.slice(-2)};tec.${key.toLowerCase()};${round.passwords[i]!}`
    )
    writeFileSync(file, ["externalId;name;login;password", ...lines, ""].join("\r\n"), "utf8")
    inputs.add(file)
    const runDir = Path.join(dir, "run")
    dirs.push(dir)
    const exit = yield* Effect.exit(withoutFaults(
      w,
      runImport(job({ resource: "users", file, runDir, mode: "upsert", sendWriteOnly: round.sendWriteOnly })).pipe(
        Effect.provide(runServices(output)),
        Effect.provide(clientOf(w))
      )
    ))
    const code = Exit.isSuccess(exit) ? (exit.value as { exitCode: number }).exitCode : undefined
    if (code !== 0) found.push(`users import ${n + 1}: ${code === undefined ? failureText(exit) : `exit ${code}`}`)
    found.push(...usersPasswordChecks(a.users, n, round, { before, after: yield* stored }, runDir))
  }
  found.push(...(yield* passwordLeaks(w, a.passwords.flat(), dirs, inputs, output)))
  return {
    targeted: new Set<string>(),
    keyless: 0,
    output,
    note: `users ${a.users.join(",")}: 3 imports`,
    found
  } satisfies Step
})

/**
 * Import `n` (0-based) of `users` with `round`'s passwords: each user's password on the server (`stored`, by
 * normalised key) is the file's when the run sent write-only fields or created the user, else the one kept before.
 */
export const usersPasswordChecks = (
  users: ReadonlyArray<string>,
  n: number,
  round: { readonly passwords: ReadonlyArray<string>; readonly sendWriteOnly: boolean },
  stored: { readonly before: ReadonlyMap<string, unknown>; readonly after: ReadonlyMap<string, unknown> },
  runDir: string
): Array<string> => {
  const { after, before } = stored
  const flag = round.sendWriteOnly ? "with --send-write-only" : "without --send-write-only"
  const report = readCsv(Path.join(runDir, "report.csv"))
  return users.flatMap((key, i) => {
    const k = normalKey(key)
    const expected = round.sendWriteOnly || !before.has(k) ? round.passwords[i] : before.get(k)
    return after.get(k) === expected ? [] : [
      `(users) import ${n + 1} ${flag}: ${key}'s password on the server is ${JSON.stringify(after.get(k))}, ` +
      `expected ${JSON.stringify(expected)} (before: ${JSON.stringify(before.get(k))}; report: ${
        report.filter((r) => r.externalId === key).map((r) => `${r._status} ${r._error}`).join(" | ")
      })`
    ]
  })
}

/**
 * The passwords in anything the users runs wrote under `dirs` or printed (`output`): only the `inputs` and the
 * reports (report.csv, report.xlsx, which hold the input's columns) may hold them.
 */
export const passwordLeaks = Effect.fn("History.passwordLeaks")(function*(
  w: World,
  secrets: ReadonlyArray<string>,
  dirs: ReadonlyArray<string>,
  inputs: ReadonlySet<string>,
  output: ReadonlyArray<string>
) {
  const found: Array<string> = []
  const allowed = (path: string) => inputs.has(path) || /^report\.(csv|xlsx)$/.test(Path.basename(path))
  for (const path of dirs.flatMap(filesUnder)) {
    if (allowed(path)) continue
    for (const [part, text] of yield* readableParts(path)) {
      for (const s of secrets) {
        if (text.includes(s)) found.push(`(v) ${Path.relative(w.dir, path)}${part} holds a password (${s})`)
      }
    }
  }
  for (const line of output) {
    for (const s of secrets) if (line.includes(s)) found.push(`(v) the output holds a password: ${line.slice(0, 120)}`)
  }
  return found
})

const withoutFaults = <A, E>(w: World, effect: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    w.sandbox.control.setFaults({ ...noFaults }),
    () => effect,
    () => w.sandbox.control.setFaults(w.faults)
  )

/** The second actor: someone in the web app, editing or deleting one record the server holds (faults off for it). */
const actorWrite = (w: World, n: number, request: (id: unknown) => Parameters<Context["request"]>[0]) =>
  withoutFaults(
    w,
    Effect.gen(function*() {
      const now = yield* snapshot(w)
      const keys = [...now.keys()].filter((k) => !k.startsWith("#")).sort()
      if (keys.length === 0) return noStep("actor: no record")
      const key = keys[n % keys.length]!
      const api = yield* Api
      const reply = yield* Effect.exit(api.request(request(now.get(key)!.id)))
      return {
        targeted: new Set([key.split("#dup")[0]!]),
        keyless: 0,
        output: [],
        note: `actor ${key}: ${Exit.isSuccess(reply) ? String(reply.value.status) : "failed"}`
      } satisfies Step
    }).pipe(Effect.provide(clientOf(w)))
  )
type Context = Effect.Effect.Success<typeof Api>

const actions: { readonly [K in Kind]: Spec<K> } = {
  import: {
    weight: 6,
    generate: (g, f) => ({
      kind: "import",
      mode: g.pick(["create", "upsert", "upsert", "update", "delete"] as const),
      file: genFile(g, f),
      dryRun: g.chance(0.2)
    }),
    run: (w, a) => importStep(w, a),
    simplify: (a) => [
      ...simplerFiles(a.file).map((file) => ({ ...a, file })),
      ...(a.dryRun ? [{ ...a, dryRun: false }] : []),
      ...(a.mode !== "upsert" ? [{ ...a, mode: "upsert" as const }] : [])
    ]
  },
  "own-sheet": {
    weight: 3,
    generate: (g, f) => ({
      kind: "own-sheet",
      mode: g.pick(["create", "upsert", "upsert", "update"] as const),
      file: genFile(g, f, true),
      dryRun: g.chance(0.2)
    }),
    run: (w, a) => importStep(w, a),
    simplify: (a) => [
      { kind: "import", mode: a.mode, file: { ...a.file, style: "template" }, dryRun: a.dryRun },
      ...simplerFiles(a.file).filter((file) => file.style === "portuguese").map((file) => ({ ...a, file })),
      ...(a.dryRun ? [{ ...a, dryRun: false }] : []),
      ...(a.mode !== "upsert" ? [{ ...a, mode: "upsert" as const }] : [])
    ]
  },
  "interrupted-import": {
    weight: 2,
    generate: (g, f) => ({
      kind: "interrupted-import",
      mode: f.has("faulted-create-then-undo")
        ? g.pick(["create", "upsert", "update", "delete"] as const)
        : g.pick(["upsert", "update", "delete"] as const),
      file: genFile(g, f),
      after: g.int(3),
      hard: !f.has("soft-stop") || g.chance(0.5)
    }),
    run: (w, a) => importStep(w, { ...a, dryRun: false }, a),
    simplify: (a) => [
      { kind: "import", mode: a.mode, file: a.file, dryRun: false },
      ...simplerFiles(a.file).map((file) => ({ ...a, file })),
      ...(a.hard ? [{ ...a, hard: false }] : [])
    ]
  },
  "cli-kill": {
    weight: 2,
    needs: "cli",
    generate: (g, f) => ({
      kind: "cli-kill",
      mode: f.has("faulted-create-then-undo")
        ? g.pick(["create", "upsert", "update", "delete"] as const)
        : g.pick(["upsert", "update", "delete"] as const),
      file: genFile(g, f, g.chance(0.3)),
      after: g.int(4)
    }),
    run: (w, a) => cliKill(w, a),
    simplify: (a) => [
      { kind: "interrupted-import", mode: a.mode, file: a.file, after: a.after, hard: true },
      ...simplerFiles(a.file).map((file) => ({ ...a, file }))
    ]
  },
  resume: {
    weight: 2,
    generate: (g) => ({ kind: "resume", run: g.int(100) }),
    run: (w, a) =>
      Effect.gen(function*() {
        const run = runOf(w, a.run, (r) => !r.undo && !r.dryRun)
        if (run === undefined) return noStep("resume: no run")
        const output: Array<string> = []
        const exit = yield* Effect.exit(
          resumeRun(run.dir).pipe(Effect.provide(runServices(output)), Effect.provide(clientOf(w)))
        )
        return {
          targeted: run.targeted,
          // The rows the run had not sent yet, keyless ones of a create included.
          keyless: run.keyless ?? 0,
          runDir: run.dir,
          output,
          note: `resume ${Path.basename(run.dir)}: ${
            Exit.isSuccess(exit) ? `exit ${exit.value.exitCode}` : failureText(exit)
          }`
        } satisfies Step
      }),
    simplify: () => []
  },
  rerun: {
    weight: 2,
    generate: (g) => ({ kind: "rerun", run: g.int(100), fix: g.chance(0.5) }),
    run: (w, a) =>
      Effect.gen(function*() {
        const run = runOf(w, a.run, (r) => !r.undo)
        if (run === undefined) return noStep("rerun: no run")
        const out = nextDir(w, "rerun")
        let fixed: string | undefined
        if (a.fix) {
          // The corrections of invalid rows: the report's rows with a name, by their `_row`.
          const report = readCsv(Path.join(run.dir, "report.csv"))
          const invalid = report.filter((r) => r._status === "invalid")
          if (invalid.length > 0) {
            fixed = `${out}-fixed.csv`
            writeFileSync(
              fixed,
              ["_row;externalId;name", ...invalid.map((r) => `${r._row};${r.externalId ?? ""};Cliente Corrigido`)].join(
                "\r\n"
              ) + "\r\n"
            )
          }
        }
        const output: Array<string> = []
        const exit = yield* Effect.exit(
          rerun({ target: run.dir, only: undefined, fixed, dryRun: false, out: () => out }).pipe(
            Effect.provide(runServices(output)),
            Effect.provide(clientOf(w))
          )
        )
        const made = existsSync(Path.join(out, "journal.ndjson"))
        if (made) {
          w.runs.push({
            dir: out,
            firstStep: w.snapshots.length - 1,
            dryRun: false,
            undo: false,
            targeted: run.targeted,
            plan: run.plan
          })
        }
        return {
          targeted: run.targeted,
          keyless: 0,
          runDir: made ? out : undefined,
          output,
          note: `rerun ${Path.basename(run.dir)}${fixed ? " --fixed" : ""}: ${
            Exit.isSuccess(exit) ? `exit ${exit.value.result?.exitCode ?? "(nothing to rerun)"}` : failureText(exit)
          }`
        } satisfies Step
      }),
    simplify: (a) => (a.fix ? [{ ...a, fix: false }] : [])
  },
  undo: {
    weight: 3,
    generate: (g) => ({ kind: "undo", run: g.int(100), dryRun: g.chance(0.2) }),
    run: (w, a) =>
      Effect.gen(function*() {
        const run = runOf(w, a.run, (r) => !r.undo)
        if (run === undefined) return noStep("undo: no run")
        const out = nextDir(w, a.dryRun ? "undo-dry" : "undo")
        const output: Array<string> = []
        const exit = yield* Effect.exit(
          runUndo({ target: run.dir, runDir: out, dryRun: a.dryRun, force: false }).pipe(
            Effect.provide(runServices(output)),
            Effect.provide(clientOf(w))
          )
        )
        const covered = Exit.isSuccess(exit) ? exit.value.summary.runs : []
        const targets = new Set<string>()
        for (const dir of covered) for (const k of w.runs.find((r) => r.dir === dir)?.targeted ?? []) targets.add(k)
        if (existsSync(out)) {
          w.runs.push({ dir: out, firstStep: w.snapshots.length - 1, dryRun: a.dryRun, undo: true, targeted: targets })
        }
        return {
          targeted: a.dryRun ? new Set<string>() : targets,
          keyless: 0,
          runDir: existsSync(out) ? out : undefined,
          undid: a.dryRun ? undefined : covered,
          output,
          note: `undo ${Path.basename(run.dir)}${a.dryRun ? " --dry-run" : ""}: ${
            Exit.isSuccess(exit) ? `exit ${exit.value.exitCode}` : failureText(exit)
          }`
        } satisfies Step
      }),
    simplify: (a) => (a.dryRun ? [{ ...a, dryRun: false }] : [])
  },
  "actor-edit": {
    weight: 2,
    generate: (g, f) => {
      const field = f.has("unsent-fields-edited-then-undo") ? g.pick(["name", "note", "address"] as const) : "name"
      return { kind: "actor-edit", record: g.int(100), field, value: `${pickName(g)} (editado)` }
    },
    run: (w, a) =>
      actorWrite(w, a.record, (id) => ({
        method: "PATCH",
        path: `/customers/${String(id)}`,
        body: [{ op: "replace", path: a.field, value: a.value }]
      })),
    simplify: (a) => (a.field !== "name" ? [{ ...a, field: "name" }] : [])
  },
  "actor-delete": {
    weight: 1,
    generate: (g) => ({ kind: "actor-delete", record: g.int(100) }),
    run: (w, a) => actorWrite(w, a.record, (id) => ({ method: "DELETE", path: `/customers/${String(id)}` })),
    simplify: () => []
  },
  faults: {
    weight: 2,
    generate: (g, f) => ({
      kind: "faults",
      failRate: g.pick([0, 0, 0.05, 0.15]),
      resetRate: g.pick([0, 0, 0.05]),
      dropAfterWriteRate: g.pick([0, 0, 0.1, 0.3]),
      stormMs: g.pick([0, 0, 0, 300]),
      echoRate: f.has("echoed-secrets") ? g.pick([0, 0, 0.1]) : 0
    }),
    run: (w, a) =>
      Effect.gen(function*() {
        w.faults = {
          ...noFaults,
          failRate: a.failRate,
          resetRate: a.resetRate,
          dropAfterWriteRate: a.dropAfterWriteRate,
          rateLimitStormUntil: a.stormMs > 0 ? Date.now() + a.stormMs : 0
        }
        yield* w.sandbox.control.setFaults(w.faults)
        w.gateway.setEchoRate(a.echoRate)
        return noStep(`faults ${JSON.stringify(a)}`)
      }),
    simplify: (a) =>
      (["failRate", "resetRate", "dropAfterWriteRate", "stormMs", "echoRate"] as const).flatMap((k) =>
        a[k] !== 0 ? [{ ...a, [k]: 0 }] : []
      )
  },
  revoke: {
    weight: 1,
    generate: () => ({ kind: "revoke" }),
    run: (w) => Effect.as(w.sandbox.control.revokeTokens, noStep("tokens revoked")),
    simplify: () => []
  },
  "export-while-deleting": {
    weight: 1,
    needs: "export-during-deletions",
    generate: (g) => ({ kind: "export-while-deleting", deletes: 1 + g.int(2), pageSize: 1 + g.int(2) }),
    run: (w, a) => exportWhileDeleting(w, a),
    simplify: (a) => (a.deletes > 1 ? [{ ...a, deletes: 1 }] : [])
  },
  export: {
    weight: 1,
    generate: () => ({ kind: "export" }),
    run: (w) => exportStep(w),
    simplify: () => []
  },
  // Issue 23: a list's page limit that falls (or rises) between two steps: lookups, exports and the export
  // steps' onboarding then walk the customers in pages of at most `cap` (a 400 naming the limit above it).
  "page-cap": {
    weight: 0.5,
    generate: (g) => ({ kind: "page-cap", cap: g.chance(0.25) ? undefined : 1 + g.int(5) }),
    run: (w, a) =>
      Effect.as(
        w.sandbox.control.setPageCap("customers", a.cap),
        noStep(a.cap === undefined ? "customers: the table's page cap again" : `customers: at most ${a.cap} a page`)
      ),
    simplify: (a) => (a.cap === undefined ? [] : [{ ...a, cap: undefined }])
  },
  reimport: {
    weight: 2,
    generate: (g, f) => ({
      kind: "reimport",
      export: g.int(100),
      edits: keyPool.filter(() => g.chance(0.4)).map((key) => ({
        key,
        note: g.pick(f.has("unsent-fields-edited-then-undo") ? notes : notes.filter((n) => n !== ""))
      }))
    }),
    run: (w, a) => reimportStep(w, a),
    simplify: (a) => a.edits.map((_, i) => ({ ...a, edits: a.edits.filter((_, j) => j !== i) }))
  },
  "concurrent-imports": {
    weight: 1,
    needs: "concurrent-imports",
    generate: (g, f) => ({ kind: "concurrent-imports", file: genFile(g, f) }),
    run: (w, a) =>
      Effect.gen(function*() {
        const { file, read } = yield* writeFile(w, a.file)
        const dirs = [nextDir(w, "twin-a"), nextDir(w, "twin-b")]
        const output: Array<string> = []
        const exits = yield* Effect.all(
          dirs.map((runDir) =>
            Effect.exit(
              runImport(job({ resource: "customers", file, read, runDir, mode: "upsert" })).pipe(
                Effect.provide(runServices(output)),
                Effect.provide(clientOf(w))
              )
            )
          ),
          { concurrency: 2 }
        )
        for (const dir of dirs) {
          if (existsSync(dir)) {
            w.runs.push({
              dir,
              firstStep: w.snapshots.length - 1,
              dryRun: false,
              undo: false,
              targeted: keysOf(a.file.rows),
              plan: planOf(a.file)
            })
          }
        }
        // The step's changes belong to the twin that wrote (the writer lock lets one at a time): owned by that run, an
        // undo of it is not taken for an undo of records "someone else" changed.
        const wrote = dirs.filter((dir) => existsSync(Path.join(dir, "journal.ndjson")))
        const writer = wrote.find((dir) => {
          const report = Path.join(dir, "report.csv")
          return existsSync(report) && readCsv(report).some((r) => r._status === "created" || r._status === "updated")
        }) ?? wrote[0]
        return {
          targeted: keysOf(a.file.rows),
          keyless: 0,
          ...(writer !== undefined ? { runDir: writer } : {}),
          output,
          note: `two imports at once: ${
            exits.map((e) => (Exit.isSuccess(e) ? `exit ${e.value.exitCode}` : failureText(e))).join(", ")
          }`
        } satisfies Step
      }),
    simplify: (a) => simplerFiles(a.file).map((file) => ({ ...a, file }))
  },
  apply: {
    weight: 1,
    generate: (g) => ({ kind: "apply", run: g.int(100) }),
    run: (w, a) => applyStep(w, a.run),
    simplify: () => []
  },
  "onboard-plan": {
    weight: 1,
    generate: (g, f) => ({ kind: "onboard-plan", file: { ...genFile(g, f), style: "template" } }),
    run: (w, a) => onboardPlanStep(w, a),
    simplify: (a) => simplerFiles(a.file).filter((file) => file.style === "template").map((file) => ({ ...a, file }))
  },
  "pt-headers": {
    weight: 1,
    generate: (g, f) => {
      const file = genFile(g, f, true)
      return {
        kind: "pt-headers",
        mode: g.pick(["create", "upsert", "upsert", "update"] as const),
        file: { ...file, style: "aliases", title: g.chance(0.5), rows: file.rows.map(aliasRow) },
        map: g.chance(0.5),
        dryRun: g.chance(0.2)
      }
    },
    run: (w, a) => ptHeadersStep(w, a),
    simplify: (a) => [
      { kind: "import", mode: a.mode, file: { ...a.file, style: "template", title: false }, dryRun: a.dryRun },
      ...simplerFiles(a.file).filter((file) => file.style === "aliases").map((file) => ({ ...a, file })),
      ...(a.map ? [{ ...a, map: false }] : []),
      ...(a.dryRun ? [{ ...a, dryRun: false }] : [])
    ]
  },
  "export-onboard": {
    weight: 1,
    generate: (g) => ({ kind: "export-onboard", export: g.chance(0.5) ? g.int(100) : undefined, other: g.chance(0.6) }),
    run: (w, a) => exportOnboardStep(w, a),
    simplify: (a) => (a.export !== undefined ? [{ ...a, export: undefined }] : [])
  },
  "pt-br-onboard": {
    weight: 1,
    generate: (g) => ({ kind: "pt-br-onboard", export: g.chance(0.5) ? g.int(100) : undefined, other: g.chance(0.6) }),
    run: (w, a) => exportOnboardStep(w, a),
    simplify: (a) => [{ ...a, kind: "export-onboard" }]
  },
  "pt-br": {
    weight: 1,
    generate: (g, f) => ({
      kind: "pt-br",
      mode: g.pick(["create", "upsert", "upsert", "update", "delete"] as const),
      file: genFile(g, f, g.chance(0.3))
    }),
    run: (w, a) => ptBrStep(w, a),
    simplify: (a) => [
      { kind: "import", mode: a.mode, file: a.file, dryRun: false },
      ...simplerFiles(a.file).map((file) => ({ ...a, file }))
    ]
  },
  "br-dates": {
    weight: 1,
    generate: (g) => {
      const rows = Array.from({ length: 1 + g.int(4) }, () => ({
        customer: g.int(100),
        day: 1 + g.int(28),
        month: 1 + g.int(12),
        year: g.pick([2025, 2026, 2027]),
        cents: g.pick([35000, 123456, 99, 4250, 1000000 + g.int(9000000)])
      }))
      const dateFormat = g.pick(["auto", "dd/mm/yyyy"] as const)
      // Told nothing, the tool needs one day over 12 to settle the file as day-first.
      const first = dateFormat === "auto" ? { ...rows[0]!, day: 13 + g.int(16) } : rows[0]!
      return { kind: "br-dates", rows: [first, ...rows.slice(1)], dateFormat, decimal: g.pick(["auto", ","] as const) }
    },
    run: (w, a) => brDatesStep(w, a),
    simplify: (a) => (a.rows.length > 1 ? [{ ...a, rows: a.rows.slice(0, 1) }] : [])
  },
  users: {
    weight: 1,
    generate: (g) => {
      const users = userPool.filter(() => g.chance(0.5))
      const chosen = users.length > 0 ? users : [g.pick(userPool)]
      const password = () => `Senha@${String(100000 + g.int(900000))}`
      return { kind: "users", users: chosen, passwords: [0, 1, 2].map(() => chosen.map(password)) }
    },
    run: (w, a) => usersStep(w, a),
    simplify: (a) =>
      a.users.length > 1
        ? [{ ...a, users: a.users.slice(0, 1), passwords: a.passwords.map((p) => p.slice(0, 1)) }]
        : []
  }
}

/** The built CLI imports a file and is killed with SIGKILL once the server has `after` of its writes. */
const cliKill = (w: World, a: Of<"cli-kill">) => cliImport(w, a)

/**
 * The built CLI imports a file (`first`: arguments before the command, as `--lang pt-BR`), killed with SIGKILL once
 * the server has `after` of its writes (never, with `Infinity`).
 */
const cliImport = Effect.fn("History.cliImport")(function*(
  w: World,
  a: { readonly mode: Mode; readonly file: FileShape; readonly after: number },
  first: ReadonlyArray<string> = []
) {
  const { file, profile } = yield* writeFile(w, a.file)
  const runDir = nextDir(w, `cli-${a.mode}`)
  const mark = (yield* w.sandbox.control.requests).length
  const args = [
    ...first,
    "import",
    "customers",
    file,
    "--mode",
    a.mode,
    "--out",
    runDir,
    ...(profile !== undefined ? ["--map", profile] : [])
  ]
  const cli = spawnCli(args, { ...w.sandbox, url: w.gateway.url }, w.dir)
  let exited = false
  void cli.exit.then(() => (exited = true))
  while (!exited && writes((yield* w.sandbox.control.requests).slice(mark)).length < a.after) yield* Effect.sleep(5)
  if (!exited) cli.child.kill("SIGKILL")
  const end = yield* Effect.promise(() => cli.exit)
  const made = existsSync(Path.join(runDir, "journal.ndjson"))
  if (made) {
    w.runs.push({
      dir: runDir,
      firstStep: w.snapshots.length - 1,
      dryRun: false,
      undo: false,
      targeted: keysOf(a.file.rows),
      plan: planOf(a.file),
      keyless: a.mode !== "create" ? 0 : a.file.rows.filter((r) => r.key === undefined).length
    })
  }
  return {
    targeted: keysOf(a.file.rows),
    keyless: a.mode !== "create" ? 0 : a.file.rows.filter((r) => r.key === undefined).length,
    runDir: made ? runDir : undefined,
    output: [cli.stdout(), cli.stderr()],
    note: `${Path.basename(runDir)}: ${end.signal === "SIGKILL" ? "killed" : `exit ${String(end.code)}`}`
  } satisfies Step
})

/**
 * An export walks small pages (the sandbox slowed down so a page is in transit) while the actor deletes the
 * records with the lowest ids: every record there before and after must be in the file of an export that ended
 * well.
 */
const exportWhileDeleting = Effect.fn("History.exportWhileDeleting")(function*(
  w: World,
  a: Of<"export-while-deleting">
) {
  const before = yield* snapshot(w)
  const doomed = [...before.entries()].filter(([k]) => !k.startsWith("#")).sort(([, x], [, y]) =>
    Number(x.id) - Number(y.id)
  ).slice(0, a.deletes)
  const out = nextDir(w, "export-deleting")
  const output: Array<string> = []
  const mark = (yield* w.sandbox.control.requests).length
  const exported = yield* withoutFaults(
    w,
    Effect.gen(function*() {
      yield* w.sandbox.control.setFaults({ latencyMs: 40 })
      const fiber = yield* Effect.fork(
        Effect.gen(function*() {
          const prepared = yield* prepareExport({
            resources: ["customers"],
            out,
            format: "csv",
            since: undefined,
            until: undefined,
            pageSize: a.pageSize,
            say: sayInto(output)
          })
          return yield* runExport(prepared)
        }).pipe(Effect.provide(Layer.merge(clientOf(w), NodeContext.layer)), Effect.exit)
      )
      // Once the first page has been asked for, the deletes.
      while ((yield* w.sandbox.control.requests).slice(mark).filter((e) => /\/customers$/i.test(e.path)).length < 1) {
        yield* Effect.sleep(2)
      }
      const api = yield* Effect.provide(Api, clientOf(w))
      for (const [, record] of doomed) {
        yield* Effect.exit(api.request({ method: "DELETE", path: `/customers/${String(record.id)}` }))
      }
      return yield* Fiber.join(fiber)
    })
  )
  const found = Exit.isSuccess(exported) ? exportThroughoutChecks(before, yield* snapshot(w), out) : []
  return {
    targeted: new Set(doomed.map(([k]) => k)),
    keyless: 0,
    output,
    found,
    note: `export (pages of ${a.pageSize}) while deleting ${doomed.map(([k]) => k).join(" ")}: ${failureText(exported)}`
  } satisfies Step
})

/** Every record (with a key) there before an export and after it is in the customers file it wrote to `out`. */
export const exportThroughoutChecks = (before: Snapshot, after: Snapshot, out: string): Array<string> => {
  const inFile = new Set(readCsv(Path.join(out, "customers.csv")).map((r) => normalKey(r.externalId ?? "")))
  return [...before.keys()].filter((k) => !k.startsWith("#") && after.has(k) && !inFile.has(k)).map((k) =>
    `(export) ${k} existed throughout the export, which ended well without it`
  )
}

/** Keys the customers file an export wrote to `out` holds more than once. */
export const exportedTwice = (out: string): Array<string> => {
  const counts = new Map<string, number>()
  for (const r of readCsv(Path.join(out, "customers.csv"))) {
    const key = normalKey(r.externalId ?? "")
    if (key !== "") counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].filter(([, n]) => n > 1).map(([k, n]) => `(export) ${k} is in the export's file ${n} times`)
}

/** An export of the customers (faults off: the export's own faults are other tests' business). */
const exportStep = Effect.fn("History.export")(function*(w: World) {
  const out = nextDir(w, "export")
  const output: Array<string> = []
  const before = yield* snapshot(w)
  const exported = yield* Effect.exit(exportAll(w, ["customers"], out, output))
  const found: Array<string> = []
  if (Exit.isSuccess(exported)) {
    const after = yield* snapshot(w)
    w.exports.push({ dir: out, records: after })
    // Nothing changes records meanwhile: each record is in the file once, whatever the pages were (page caps).
    found.push(...exportThroughoutChecks(before, after, out), ...exportedTwice(out))
  }
  return { ...noStep(`export ${Path.basename(out)}: ${failureText(exported)}`), output, found } satisfies Step
})

/**
 * The user edits an export's file (some rows' notes) and imports it back (upsert): the stale check must leave
 * alone every record changed on the server since the export.
 */
const reimportStep = Effect.fn("History.reimport")(function*(w: World, a: Of<"reimport">) {
  const exported = w.exports.length === 0 ? undefined : w.exports[a.export % w.exports.length]!
  if (exported === undefined) return noStep("reimport: no export")
  const file = Path.join(exported.dir, "customers.csv")
  const now = yield* snapshot(w)
  const stale = changedKeys(exported.records, now)
  const edits = new Map(a.edits.map((e) => [normalKey(e.key), e.note]))
  let columns: Array<string> = []
  const header = (names: Array<string>) => (columns = names)
  const rows = (parse(readFileSync(file), { columns: header, bom: true }) as Array<Record<string, string>>).filter(
    // Without the fix of a deleted record's stale check, the user drops the rows of records deleted since.
    (row) =>
      w.features.has("stale-after-server-delete") || !stale.has(normalKey(row.externalId ?? "")) ||
      now.has(normalKey(row.externalId ?? ""))
  )
  for (const row of rows) {
    const note = edits.get(normalKey(row.externalId ?? ""))
    if (note !== undefined) row.note = note
  }
  const cell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll("\"", "\"\"")}"` : s)
  writeFileSync(
    file,
    "\uFEFF" + [columns.join(","), ...rows.map((r) => columns.map((c) => cell(r[c] ?? "")).join(","))].join("\r\n") +
      "\r\n"
  )
  const runDir = nextDir(w, "reimport")
  const output: Array<string> = []
  const exit = yield* Effect.exit(
    runImport(job({ resource: "customers", file, runDir, mode: "upsert" })).pipe(
      Effect.provide(runServices(output)),
      Effect.provide(clientOf(w))
    )
  )
  const targeted = new Set(rows.flatMap((r) => (r.externalId ? [normalKey(r.externalId)] : [])))
  const made = existsSync(runDir)
  if (made) {
    // An export is written with `,` and a decimal point (docs/export.md).
    const plan = planOfHeader(columns, ".")
    w.runs.push({ dir: runDir, firstStep: w.snapshots.length - 1, dryRun: false, undo: false, targeted, plan })
  }
  return {
    targeted,
    keyless: 0,
    runDir: made ? runDir : undefined,
    stale,
    output,
    note: `reimport ${Path.basename(exported.dir)} (${a.edits.length} notes edited, stale: ${
      [...stale].join(" ") || "none"
    }): ${Exit.isSuccess(exit) ? `exit ${exit.value.exitCode}` : failureText(exit)}`
  } satisfies Step
})

export const runAction = (w: World, a: Action): Effect.Effect<Step> =>
  (actions[a.kind] as unknown as Spec<Kind>).run(w, a as never)

// --- generation and shrinking ----------------------------------------------------------------------------------

/** The kinds of action a history may draw with `features` (those whose feature is among them, or that need none). */
export const drawnKinds = (features: ReadonlySet<Feature>): Array<Kind> =>
  (Object.keys(actions) as Array<Kind>).filter((k) => {
    const needs = actions[k].needs
    return needs === undefined || features.has(needs)
  })

/**
 * `focus`: kinds drawn four times as often (HISTORY_FOCUS=onboard-plan,pt-br: a soak aimed at new actions; a seed
 * replays the same history only with the same focus).
 */
export const generateHistory = (
  seed: number,
  length: number,
  features: ReadonlySet<Feature>,
  focus: ReadonlySet<string> = new Set((process.env.HISTORY_FOCUS ?? "").split(",").filter((k) => k !== ""))
): Array<Action> => {
  const g = rng(seed)
  const kinds = drawnKinds(features)
  const weight = (k: Kind) => actions[k].weight * (focus.has(k) ? 4 : 1)
  const total = kinds.reduce((s, k) => s + weight(k), 0)
  const out: Array<Action> = []
  for (let i = 0; i < length; i++) {
    let x = g.next() * total
    // A history starts with records to work on.
    const kind = i === 0 ? "import" : kinds.find((k) => (x -= weight(k)) < 0) ?? kinds[0]!
    const action = (actions[kind] as unknown as Spec<Kind>).generate(g, features)
    out.push(action.kind === "import" && i === 0 ? { ...action, mode: "upsert", dryRun: false } : action)
  }
  return out
}

/** Smaller histories: each action dropped, then each action replaced by a simpler one. */
export const smaller = (history: ReadonlyArray<Action>): Array<Array<Action>> => [
  ...history.map((_, i) => history.filter((_, j) => j !== i)),
  ...history.flatMap((a, i) =>
    (actions[a.kind] as unknown as Spec<Kind>).simplify(a as never).map((b) => history.map((x, j) => (j === i ? b : x)))
  )
]

/** Shrinks while `fails` holds, one smaller history at a time, at most `budget` tries. */
export const shrink = <E>(
  history: ReadonlyArray<Action>,
  fails: (h: ReadonlyArray<Action>) => Effect.Effect<boolean, E>,
  budget = 60
) => shrinkWith(history, smaller, fails, budget)

/** `shrink` over any kind of history (the fleet's, fleet.ts): `smallerOf` gives the candidates, simplest first. */
export const shrinkWith = <A, E>(
  history: ReadonlyArray<A>,
  smallerOf: (h: ReadonlyArray<A>) => Array<Array<A>>,
  fails: (h: ReadonlyArray<A>) => Effect.Effect<boolean, E>,
  budget: number
) =>
  Effect.gen(function*() {
    let current = history
    let tries = 0
    let progress = true
    while (progress && tries < budget) {
      progress = false
      for (const candidate of smallerOf(current)) {
        if (++tries > budget) break
        if (yield* fails(candidate)) {
          current = candidate
          progress = true
          break
        }
      }
    }
    return current
  })

// --- invariants ------------------------------------------------------------------------------------------------

export const readCsv = (path: string): Array<Record<string, string>> =>
  existsSync(path)
    ? (parse(readFileSync(path), {
      columns: true,
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true
    }) as Array<
      Record<string, string>
    >)
    : []

/** Every file under `dir`, recursively. */
const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = Path.join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })

/** The sandbox's access tokens are HS256 JWTs: they all start with this header. */
const jwtHeader = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"

/** Checks step `index` (records `before` → `after`); returns the violations, each a sentence. */
export const checkStep = Effect.fn("History.checkStep")(function*(
  w: World,
  index: number,
  step: Step,
  before: Snapshot,
  after: Snapshot
) {
  const problems: Array<string> = [...(step.found ?? [])]
  const changed = changedKeys(before, after)

  // (i) no record changes that no command targeted.
  let newKeyless = 0
  for (const k of changed) {
    if (k.startsWith("#") && before.get(k) === undefined) newKeyless++
    else if (!step.targeted.has(k.split("#dup")[0]!)) {
      problems.push(
        `(i) ${k} changed although no command targeted it: ${content(before.get(k))} → ${content(after.get(k))}`
      )
    }
  }
  if (newKeyless > step.keyless) {
    problems.push(`(i) ${newKeyless} records without a key appeared (${step.keyless} allowed)`)
  }

  // (iii) at most one record per key.
  for (const k of after.keys()) {
    if (k.includes("#dup")) problems.push(`(iii) a second record of key ${k.split("#dup")[0]}`)
  }

  // (iv) every report line agrees with the server (rows whose key nobody else touched since the run began).
  const run = step.runDir !== undefined ? w.runs.find((r) => r.dir === step.runDir) : undefined
  if (run !== undefined && !run.undo && !run.dryRun) {
    const others = touchedBy(w, run.firstStep, index, (owner) => owner !== run.dir)
    const plan = run.plan ?? planOfHeader(["externalId", "name", "note"], ".")
    for (const row of readCsv(Path.join(run.dir, "report.csv"))) {
      const keyCell = row[plan.keyColumn]?.trim()
      const key = keyCell ? normalKey(keyCell) : undefined
      if (key === undefined || others.has(key)) continue
      const record = after.get(key)
      const where = `${Path.basename(run.dir)} row ${row._row} (${key}) ${row._status}`
      if (["created", "updated", "unchanged"].includes(row._status!)) {
        if (record === undefined) problems.push(`(iv) ${where}, but the server has no such record`)
        else {
          // Every mapped column of the row, as the server should keep it (trimmed, numbers, Sim/Não …).
          for (const column of plan.mapped) {
            if (!(column.column in row)) {
              problems.push(`(iv) ${where}: the report has no column ${JSON.stringify(column.column)} of the file`)
              continue
            }
            const expected = expectedValue(column.kind, row[column.column], plan.decimal, column.values)
            if (expected !== undefined && !sameValue(expected, record[column.property])) {
              problems.push(
                `(iv) ${where}: ${column.column} ${JSON.stringify(row[column.column])} (${
                  JSON.stringify(expected)
                }), the server's ${column.property} is ${JSON.stringify(record[column.property])}`
              )
            }
          }
          if (row._record_id && String(record.id) !== row._record_id) {
            problems.push(`(iv) ${where}: record ${row._record_id}, the server's is ${String(record.id)}`)
          }
        }
      }
      if (row._status === "deleted" && record !== undefined) problems.push(`(iv) ${where}, but the record is there`)
      // A row that was not sent (or refused) in this very step left its record as it was.
      if (["invalid", "conflict", "skipped"].includes(row._status!) && index === run.firstStep && changed.has(key)) {
        problems.push(`(iv) ${where}, but its record changed: ${content(before.get(key))} → ${content(record)}`)
      }
    }
  }

  // (i) a column that is no field never reaches the server: neither its name nor any of its values is on a record.
  for (const leak of unsentLeaks(w, after)) problems.push(leak)

  // (ii) undo restores the before-state of records nobody else touched, and leaves alone those somebody did.
  if (step.undid !== undefined && step.undid.length > 0 && step.runDir !== undefined) {
    const covered = new Set(step.undid)
    const runs = w.runs.filter((r) => covered.has(r.dir))
    const first = Math.min(...runs.map((r) => r.firstStep))
    const beforeRun = w.snapshots[first]!
    const others = touchedBy(w, first, index, (owner) => !covered.has(owner))
    const undoRows = readCsv(Path.join(step.runDir, "report.csv"))
    const done = new Set(
      undoRows.filter((r) => ["created", "updated", "deleted"].includes(r._status!)).map((r) => r.record_id)
    )
    for (const k of step.targeted) {
      const now = content(after.get(k))
      // Someone else changed it since, then it came back to exactly what a covered run left (an update undone, say):
      // undo may take it back, as it only acts while every field equals the run's own image (README).
      const asTheRunLeftIt = runs.some((r) => {
        const left = w.snapshots[r.firstStep + 1]
        return left !== undefined && left.has(k) && content(left.get(k)) === content(before.get(k))
      })
      if (others.has(k) && !asTheRunLeftIt) {
        if (now !== content(before.get(k))) {
          problems.push(
            `(ii) undo changed ${k}, which someone else changed since the run: ${content(before.get(k))} → ${now}`
          )
        }
      } else if (others.has(k)) {
        // Someone else changed it between the covered runs: undo takes back only the covered runs' own changes,
        // latest first, each while the record is as that run left it, so it may stop at any state down that chain
        // but never goes past the other owner's change (soak seed 600086: a rerun's update of a record another run
        // had created, undone back to what that run made, not to "none").
        const chain = undoChain(w, runs, k, content(before.get(k)))
        if (!chain.includes(now)) {
          problems.push(
            `(ii) undo left ${k} as ${now}; its covered runs' own changes lead back only to ${chain.join(" ← ")}`
          )
        }
      } else if (now !== content(beforeRun.get(k))) {
        const id = before.get(k)?.id
        if (now !== content(before.get(k)) || (id !== undefined && done.has(String(id)))) {
          problems.push(`(ii) undo left ${k} as ${now}; before the run it was ${content(beforeRun.get(k))}`)
        }
      }
    }
  }

  // Stale edits: a record changed on the server since the export is not overwritten by importing the export.
  for (const k of step.stale ?? []) {
    if (content(after.get(k)) !== content(before.get(k))) {
      problems.push(
        `(stale) ${k} changed on the server since the export, and the re-import changed it: ${
          content(before.get(k))
        } → ${content(after.get(k))}`
      )
    }
  }

  // (v) no secret in any file of the histories' directory (inside compressed ones too), or in any output.
  const secrets = [...w.sandbox.accounts.flatMap((a) => [a.apiKey, a.apiToken]), jwtHeader]
  for (const path of filesUnder(w.dir)) {
    // A file already read and found clean is read again only once it changed.
    const { mtimeMs, size } = statSync(path)
    const seen = `${mtimeMs}:${size}`
    if (w.clean.get(path) === seen) continue
    const found = (yield* readableParts(path)).flatMap(([part, text]) =>
      secrets.filter((s) => text.includes(s)).map((s) =>
        `(v) ${Path.relative(w.dir, path)}${part} holds a secret (${s.slice(0, 6)}…)`
      )
    )
    if (found.length === 0) w.clean.set(path, seen)
    problems.push(...found)
  }
  for (const line of step.output) {
    for (const s of secrets) if (line.includes(s)) problems.push(`(v) the output holds a secret: ${line.slice(0, 120)}`)
  }
  return problems
})

/** A zip's local file header: .xlsx, .zip and every other archive of the zip family start with it. */
const zipMagic = Buffer.from("PK\x03\x04", "latin1")

/**
 * A file's text as a search for secrets needs it: `["", text]` for a plain file; for a zip (report.xlsx, a
 * .zip) the text of every entry, each as `[":entry/name", text]` (an .xlsx keeps its cells compressed, so its raw
 * bytes hide whatever they hold). An archive that cannot be read counts as its raw bytes.
 */
export const readableParts = (path: string): Effect.Effect<Array<readonly [string, string]>> => {
  const bytes = readFileSync(path)
  const raw: Array<readonly [string, string]> = [["", bytes.toString("latin1")]]
  if (bytes.length < 4 || !bytes.subarray(0, 4).equals(zipMagic)) return Effect.succeed(raw)
  return Effect.async<Array<readonly [string, string]>>((resume) => {
    const parts: Array<readonly [string, string]> = [...raw]
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, zip) => {
      if (error !== null) return resume(Effect.succeed(raw))
      zip.on("error", () => resume(Effect.succeed(raw)))
      zip.on("end", () => resume(Effect.succeed(parts)))
      zip.on("entry", (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (openError, stream) => {
          if (openError !== null) return resume(Effect.succeed(raw))
          const chunks: Array<Buffer> = []
          stream.on("data", (c: Buffer) => chunks.push(c))
          stream.on("error", () => resume(Effect.succeed(raw)))
          stream.on("end", () => {
            parts.push([`:${entry.fileName}`, Buffer.concat(chunks).toString("latin1")])
            zip.readEntry()
          })
        })
      })
      zip.readEntry()
    })
  })
}

/** Records holding the name or a value of a column that was never to be sent, in any run's file so far. */
const unsentLeaks = (w: World, records: Snapshot): Array<string> => {
  const unsent = new Map(w.runs.flatMap((r) => r.plan?.unsentValues ?? []))
  const headers = new Set(w.runs.flatMap((r) => r.plan?.unsent ?? []).map((h) => normalKey(h)))
  const out: Array<string> = []
  for (const [k, record] of records) {
    for (const property of Object.keys(record)) {
      if (headers.has(normalKey(property))) out.push(`(i) ${k} has a property "${property}", a column never to be sent`)
    }
    const text = JSON.stringify(record)
    for (const [value, column] of unsent) {
      if (text.includes(JSON.stringify(value).slice(1, -1))) {
        out.push(`(i) ${k} holds ${JSON.stringify(value)}, a value of the column "${column}", never to be sent`)
      }
    }
  }
  return out
}

/**
 * The states an undo of `runs` may leave record `k` in, from `now` back: through each covered run's change of it,
 * latest first, while the run left it as the state reached so far.
 */
const undoChain = (w: World, runs: ReadonlyArray<RunInfo>, k: string, now: string): Array<string> => {
  const states = [now]
  for (const r of [...runs].sort((a, b) => b.firstStep - a.firstStep)) {
    const left = w.snapshots[r.firstStep + 1]
    const was = w.snapshots[r.firstStep]
    if (left === undefined || was === undefined || content(left.get(k)) !== states[states.length - 1]) continue
    if (content(was.get(k)) !== states[states.length - 1]) states.push(content(was.get(k)))
  }
  return states
}

/** Keys changed by the steps from `from` up to `to` (excluded) whose owner `other` picks. */
const touchedBy = (w: World, from: number, to: number, other: (owner: string) => boolean): Set<string> => {
  const keys = new Set<string>()
  w.changes.slice(from, to).forEach((c) => {
    if (other(c.owner)) { for (const k of c.keys) keys.add(k) }
  })
  return keys
}

// --- one history -----------------------------------------------------------------------------------------------

export interface Outcome {
  /** One line per step: the action and what came of it. */
  readonly log: ReadonlyArray<string>
  /** Empty when every invariant held after every step. */
  readonly violations: ReadonlyArray<string>
  readonly failedAt: number | undefined
  /** Milliseconds spent, by action kind and in the checks ("check"): where a soak's time goes. */
  readonly spent: Readonly<Record<string, number>>
}

/** A world with nothing done yet, its directory made. */
export const newWorld = (
  sandbox: RunningSandbox,
  gateway: EchoGateway,
  dir: string,
  features: ReadonlySet<Feature>
): World => {
  mkdirSync(dir, { recursive: true })
  return {
    sandbox,
    gateway,
    dir,
    features,
    runs: [],
    snapshots: [],
    changes: [],
    exports: [],
    faults: noFaults,
    counter: 0,
    clean: new Map()
  }
}

/** Runs `history` against `sandbox` (fresh, seeded) in `dir`; stops at the first step that breaks an invariant. */
export const runHistory = (
  sandbox: RunningSandbox,
  gateway: EchoGateway,
  dir: string,
  history: ReadonlyArray<Action>,
  features: ReadonlySet<Feature>
) =>
  Effect.gen(function*() {
    const w = newWorld(sandbox, gateway, dir, features)
    const log: Array<string> = []
    const spent: Record<string, number> = {}
    const spend = (what: string, since: number) => void (spent[what] = (spent[what] ?? 0) + performance.now() - since)
    for (let i = 0; i < history.length; i++) {
      const before = yield* snapshot(w)
      w.snapshots.push(before)
      const started = performance.now()
      const step = yield* runAction(w, history[i]!)
      spend(history[i]!.kind, started)
      // The checks read the server without faults; the history's faults come back for the next step.
      const after = yield* snapshot(w)
      const owner = history[i]!.kind.startsWith("actor") ? "actor" : (step.runDir ?? `step ${i}`)
      const changed = changedKeys(before, after)
      w.changes.push({ owner, keys: changed })
      // Records without a key that a run created are its own too (by `#id`): its undo may delete them.
      const run = w.runs.find((r) => r.dir === step.runDir && !r.undo)
      for (const k of changed) if (run !== undefined && k.startsWith("#") && !before.has(k)) run.targeted.add(k)
      log.push(`${i}. ${JSON.stringify(history[i])}\n   → ${step.note}`)
      const checking = performance.now()
      const violations = yield* checkStep(w, i, step, before, after)
      spend("check", checking)
      if (violations.length > 0) return { log, violations, failedAt: i, spent } satisfies Outcome
    }
    return { log, violations: [], failedAt: undefined, spent } satisfies Outcome
  })
