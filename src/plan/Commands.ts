/**
 * `fsm-bulk plan show PLAN` (a plan printed for sign-off: what it is bound to, counts, each row's changes) and
 * `fsm-bulk apply PLAN` (an import that sends exactly the plan: see `import/Plan.ts` for the per-row rule).
 */
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { connectionOptions, continuingConnection, forceBaseUrlOption } from "../cli/Connection.js"
import { type ExitCode, jsonOption } from "../cli/Output.js"
import { hintOnAbort, withApi } from "../cli/WithApi.js"
import { say, summary as printSummary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { afterRun, outOption } from "../import/Commands.js"
import { runImport } from "../import/Pipeline.js"
import { type LoadedPlan, type PlanRow, readPlan } from "../import/Plan.js"
import { defaultRunDir } from "../import/RunDir.js"
import { readProfile } from "../mapping/Profile.js"
import { isResourceName } from "../Resources.js"

const planArg = Args.text({ name: "PLAN" }).pipe(
  Args.withDescription("A plan written by `import … --dry-run --plan PLAN`")
)

// --- plan show -------------------------------------------------------------------------------------------------

const shown = (v: unknown): string =>
  v === undefined || v === null || v === "" ? "(empty)" : typeof v === "string" ? JSON.stringify(v) : String(v)

/** One row of a plan as `plan show` prints it: number, status, the write, the record, the changes. */
export const planRowLine = (p: PlanRow): string => {
  const who = [
    p.key !== undefined ? p.key : undefined,
    p.recordId !== undefined ? `id ${String(p.recordId)}` : p.id !== undefined ? `id ${String(p.id)}` : undefined
  ].filter((x) => x !== undefined).join(", ")
  const what = p.changes !== undefined && p.changes.length > 0
    ? p.changes.map((c) => `${c.field}: ${shown(c.from)} → ${shown(c.to)}`).join("; ")
    : p.error ?? ""
  return `  row ${p.row}  ${p.status}${p.intent !== undefined ? ` (${p.intent})` : ""}${who !== "" ? `  ${who}` : ""}${
    what !== "" ? `  ${what}` : ""
  }`
}

/** The head of a plan for sign-off: what it is bound to and its counts. */
export const planHead = (plan: LoadedPlan): ReadonlyArray<string> => {
  const c = plan.content
  const counts = Object.entries(c.counts).sort((a, b) => b[1] - a[1]).map(([s, n]) => `${s} ${n}`).join(", ")
  return [
    `plan ${plan.file}`,
    `  sha256     ${plan.sha256}`,
    `  made       ${c.created} by \`fsm-bulk ${c.command}\` (fsm-bulk ${c.toolVersion ?? "?"})`,
    `  resource   ${c.resource}, mode ${c.mode}${c.options.sendWriteOnly ? ", --send-write-only" : ""}`,
    `  input      ${c.source.file} (sha256 ${c.source.sha256})`,
    ...(c.read.map !== undefined ? [`  profile    ${c.read.map.file} (sha256 ${c.read.map.sha256})`] : []),
    `  target     ${c.target.embedded === true ? "the embedded sandbox" : c.target.baseUrl}${
      c.target.account !== undefined ? `, account ${c.target.account}` : ""
    }`,
    `  rows       ${c.rows}: ${counts}`
  ]
}

const showCommand = Command.make(
  "show",
  {
    plan: planArg,
    all: Options.boolean("all").pipe(Options.withDescription("List every row (default: the first --limit)")),
    limit: Options.integer("limit").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("How many rows to list"),
      Options.withDefault(50)
    ),
    status: Options.text("status").pipe(
      Options.withPseudoName("STATUSES"),
      Options.withDescription("Only rows with these statuses, comma-separated (default: the rows that send a write)"),
      Options.optional
    ),
    json: jsonOption
  },
  (a) =>
    Effect.gen(function*() {
      const plan = yield* readPlan(a.plan)
      const wanted = Option.map(a.status, (s) => new Set(s.split(",").map((x) => x.trim()).filter((x) => x !== "")))
      const rows = plan.content.plan.filter((p) =>
        Option.match(wanted, { onNone: () => p.intent !== undefined, onSome: (set) => set.has(p.status) })
      )
      const listed = a.all ? rows : rows.slice(0, Math.max(0, a.limit))
      const lines = [
        ...planHead(plan),
        "",
        `${Option.isSome(a.status) ? `rows ${a.status.value}` : "rows that send a write"}: ${rows.length}`,
        ...listed.map(planRowLine),
        ...(listed.length < rows.length
          ? [`  … and ${rows.length - listed.length} more (--all lists every row, --limit N more of them)`]
          : []),
        "",
        `send exactly this: fsm-bulk apply ${plan.file} --approved-by NAME`
      ]
      // The plan is what is printed, on stdout (a sign-off can be saved or paged); --json prints its head instead.
      if (!a.json) { for (const l of lines) yield* Effect.sync(() => process.stdout.write(l + "\n")) }
      else {
        yield* printSummary(true, {
          command: "plan show",
          plan: plan.file,
          sha256: plan.sha256,
          resource: plan.content.resource,
          mode: plan.content.mode,
          source: plan.content.source,
          target: plan.content.target,
          rows: plan.content.rows,
          counts: plan.content.counts,
          exitCode: 0
        }, [])
      }
      return 0 as ExitCode
    })
).pipe(Command.withDescription("Print a plan for sign-off: its input, profile and target, counts, each row's changes"))

export const planCommand = Command.make("plan").pipe(
  Command.withDescription("Plans a dry run wrote, for sign-off before `apply`: `plan show PLAN`"),
  Command.withSubcommands([showCommand])
)

// --- apply -----------------------------------------------------------------------------------------------------

export const applyCommand = Command.make(
  "apply",
  {
    plan: planArg,
    approvedBy: Options.text("approved-by").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription("Who approved the plan: recorded in the journal, the summary and the reports"),
      Options.optional
    ),
    out: outOption,
    json: jsonOption,
    forceBaseUrl: forceBaseUrlOption,
    connection: connectionOptions
  },
  (a) =>
    Effect.gen(function*() {
      const plan = yield* readPlan(a.plan)
      const c = plan.content
      if (!isResourceName(c.resource)) {
        return yield* new UsageError({ message: `${plan.file}: the plan names an unknown resource "${c.resource}"` })
      }
      const resource = c.resource
      // The profile is applied as the plan recorded it; its file must still be that profile.
      if (c.read.map !== undefined) {
        const now = yield* readProfile(c.read.map.file)
        if (now.sha256 !== c.read.map.sha256) {
          return yield* new UsageError({
            message:
              `${c.read.map.file}: the mapping profile changed since the plan ${plan.file} was made: nothing was sent; make a new plan`
          })
        }
      }
      const connection = yield* continuingConnection(
        a.connection,
        { baseUrl: c.target.baseUrl, embedded: c.target.embedded === true },
        a.forceBaseUrl,
        "the plan"
      )
      const runDir = Option.getOrElse(a.out, () => defaultRunDir(resource))
      const approvedBy = Option.getOrUndefined(a.approvedBy)
      return yield* withApi(connection, `apply ${resource}`, () => runDir, (tools) =>
        runImport({
          ...tools,
          command: "apply",
          resource,
          file: c.source.file,
          read: c.read,
          dateFormat: c.parse.dateFormat,
          decimal: c.parse.decimal,
          baseDir: c.parse.baseDir,
          attachmentsRoot: c.parse.attachmentsRoot,
          maxAttachmentBytes: c.parse.maxAttachmentBytes,
          mode: c.mode,
          dryRun: false,
          verify: false,
          sendWriteOnly: c.options.sendWriteOnly,
          runDir,
          clientConcurrency: Option.getOrUndefined(a.connection.concurrency),
          applying: { plan, approvedBy, otherTarget: a.forceBaseUrl }
        }).pipe(
          Effect.tap(() =>
            say(
              `applied plan ${plan.file} (sha256 ${plan.sha256})${
                approvedBy !== undefined ? `, approved by ${approvedBy}` : ""
              }`
            )
          ),
          Effect.flatMap((result) => afterRun(a.json, `apply ${resource}`, result))
        )).pipe(hintOnAbort(() => runDir))
    })
).pipe(
  Command.withDescription(
    "Send exactly an approved plan: a row whose record changed since the plan is `conflict` (not sent); a changed input is refused"
  )
)
