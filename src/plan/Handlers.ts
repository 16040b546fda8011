/**
 * What the commands of plan/Commands.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { continuingConnection } from "../cli/Connection.js"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { hintOnAbort, withApi } from "../cli/WithApi.js"
import { say, summary as printSummary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { signatureLine } from "../evidence/Handlers.js"
import { loadPublicKey } from "../evidence/Keys.js"
import { checkPlanSignature, planSignatureOf } from "../evidence/Seal.js"
import { afterRun } from "../import/Handlers.js"
import { runImport } from "../import/Pipeline.js"
import { type LoadedOnboardPlan, type LoadedPlan, type PlanRow, readAnyPlan } from "../import/Plan.js"
import { defaultRunDir } from "../import/RunDir.js"
import { ensurePlannedProfile } from "../mapping/Profile.js"
import { applyOnboardPlan } from "../onboard/Handlers.js"
import { isResourceName } from "../Resources.js"
import { type applyConfig, type showConfig } from "./Commands.js"
// --- plan show -------------------------------------------------------------------------------------------------

const shown = (v: unknown): string =>
  v === undefined || v === null || v === "" ? "(empty)" : typeof v === "string" ? JSON.stringify(v) : String(v)

/** One row of a plan as `plan show` prints it: number, status, the write, the record, the changes. */
const refLine = (p: PlanRow): string | undefined => {
  const planned = (p.refs ?? []).flatMap((r) =>
    r.to.flatMap((t) => typeof t === "object" ? [`${r.field} → the record row ${t.row} of ${t.resource} creates`] : [])
  )
  return planned.length > 0 ? planned.join("; ") : undefined
}

const planRowLine = (p: PlanRow): string => {
  const who = [
    p.key !== undefined ? p.key : undefined,
    p.recordId !== undefined ? `id ${String(p.recordId)}` : p.id !== undefined ? `id ${String(p.id)}` : undefined
  ].filter((x) => x !== undefined).join(", ")
  const what = p.changes !== undefined && p.changes.length > 0
    ? p.changes.map((c) => `${c.field}: ${shown(c.from)} → ${shown(c.to)}`).join("; ")
    : p.error ?? ""
  const refs = refLine(p)
  return `  row ${p.row}  ${p.status}${p.intent !== undefined ? ` (${p.intent})` : ""}${who !== "" ? `  ${who}` : ""}${
    what !== "" ? `  ${what}` : ""
  }${refs !== undefined ? `  (${refs})` : ""}`
}

/** The head of a plan for sign-off: what it is bound to and its counts. */
const planHead = (plan: LoadedPlan): ReadonlyArray<string> => {
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

/** The head of an onboarding's plan: its workbook, target and counts, then its steps in order. */
const onboardHead = (plan: LoadedOnboardPlan): ReadonlyArray<string> => {
  const c = plan.content
  const counts = Object.entries(c.counts).sort((a, b) => b[1] - a[1]).map(([s, n]) => `${s} ${n}`).join(", ")
  return [
    `plan ${plan.file}`,
    `  sha256     ${plan.sha256}`,
    `  made       ${c.created} by \`fsm-bulk onboard\` (fsm-bulk ${c.toolVersion ?? "?"})`,
    `  input      ${c.input}${c.options.sendWriteOnly ? ", --send-write-only" : ""}`,
    `  target     ${c.target.embedded === true ? "the embedded sandbox" : c.target.baseUrl}${
      c.target.account !== undefined ? `, account ${c.target.account}` : ""
    }`,
    `  steps      ${c.steps.map((s) => `${s.resource} (${s.rows})`).join(" → ")}`,
    `  rows       ${c.rows}: ${counts}`
  ]
}

export const handleShow = (a: Input<typeof showConfig>) =>
  Effect.gen(function*() {
    const read = yield* readAnyPlan(a.plan)
    const wanted = Option.map(a.status, (s) => new Set(s.split(",").map((x) => x.trim()).filter((x) => x !== "")))
    const pick = (rows: ReadonlyArray<PlanRow>) =>
      rows.filter((p) =>
        Option.match(wanted, { onNone: () => p.intent !== undefined, onSome: (set) => set.has(p.status) })
      )
    const title = Option.isSome(a.status) ? `rows ${a.status.value}` : "rows that send a write"
    const listing = (rows: ReadonlyArray<PlanRow>, indent: string) => {
      const listed = a.all ? rows : rows.slice(0, Math.max(0, a.limit))
      return [
        ...listed.map((p) => indent + planRowLine(p)),
        ...(listed.length < rows.length
          ? [`${indent}  … and ${rows.length - listed.length} more (--all lists every row, --limit N more of them)`]
          : [])
      ]
    }
    const plan = read.plan
    const signature = yield* checkPlanSignature(plan.file, plan.sha256, undefined)
    const signatureText = signature.problems.length > 0
      ? `  signature  refused: ${signature.problems.join("; ")}`
      : signature.report.status === "valid"
      ? `  signature  signed by key ${signature.report.keyId} (${
        planSignatureOf(plan.file)
      }; \`apply --public-key PUB\` checks who)`
      : "  signature  unsigned (`--sign KEY` on the dry run signs it)"
    const lines = read.kind === "import"
      ? (() => {
        const rows = pick(read.plan.content.plan)
        return [...planHead(read.plan), signatureText, "", `${title}: ${rows.length}`, ...listing(rows, "")]
      })()
      : [
        ...onboardHead(read.plan),
        signatureText,
        ...read.plan.content.steps.flatMap((step, i) => {
          const rows = pick(step.plan)
          return [
            "",
            `step ${i + 1}/${read.plan.content.steps.length} ${step.resource}: ${step.source.file}${
              step.source.sheet !== undefined ? `, sheet "${step.source.sheet}"` : ""
            }${step.read.map !== undefined ? `, profile ${step.read.map.file}` : ""}`,
            `  ${title}: ${rows.length}`,
            ...listing(rows, "  ")
          ]
        })
      ]
    lines.push("", `send exactly this: fsm-bulk apply ${plan.file} --approved-by NAME`)
    // The plan is what is printed, on stdout (a sign-off can be saved or paged); --json prints its head instead.
    if (!a.json) { for (const l of lines) yield* Effect.sync(() => process.stdout.write(l + "\n")) }
    else {
      yield* printSummary(true, {
        command: "plan show",
        plan: plan.file,
        sha256: plan.sha256,
        ...(read.kind === "import"
          ? { resource: read.plan.content.resource, mode: read.plan.content.mode, source: read.plan.content.source }
          : {
            input: read.plan.content.input,
            steps: read.plan.content.steps.map((s) => ({
              resource: s.resource,
              source: s.source,
              rows: s.rows,
              counts: s.counts
            }))
          }),
        target: plan.content.target,
        signature: signature.problems.length > 0
          ? { status: "refused", problems: signature.problems }
          : {
            status: signature.report.status,
            ...(signature.report.keyId !== undefined ? { keyId: signature.report.keyId } : {})
          },
        rows: plan.content.rows,
        counts: plan.content.counts,
        exitCode: 0
      }, [])
    }
    return 0 as ExitCode
  })

/**
 * The plan's signature, checked before anything is sent: a signature that does not hold (the plan edited after it
 * was signed, another key than `--public-key`, a bad signature), or none when `--public-key` asks for one, is
 * refused (exit 2). An unsigned plan without `--public-key` applies as before.
 */
const planSigner = Effect.fn("Plan.signer")(function*(file: string, sha256: string, publicKey: string | undefined) {
  const expected = publicKey !== undefined ? yield* loadPublicKey(publicKey) : undefined
  const checked = yield* checkPlanSignature(file, sha256, expected)
  if (checked.problems.length > 0) {
    return yield* new UsageError({
      message: `${file}: the plan's signature does not hold: ${checked.problems.join("; ")}: nothing was sent`
    })
  }
  if (checked.report.status !== "valid" || checked.report.keyId === undefined) return undefined
  yield* say(signatureLine(checked.report, "plan"))
  return { keyId: checked.report.keyId, trusted: checked.report.trusted === true }
})

// --- apply -----------------------------------------------------------------------------------------------------

export const handleApply = (a: Input<typeof applyConfig>) =>
  Effect.gen(function*() {
    const read = yield* readAnyPlan(a.plan)
    const signer = yield* planSigner(read.plan.file, read.plan.sha256, Option.getOrUndefined(a.publicKey))
    if (read.kind === "onboard") {
      return yield* applyOnboardPlan(read.plan, {
        approvedBy: Option.getOrUndefined(a.approvedBy),
        signer,
        out: Option.getOrUndefined(a.out),
        forceBaseUrl: a.forceBaseUrl,
        json: a.json,
        connection: a.connection
      }).pipe(Effect.scoped)
    }
    const plan = read.plan
    const c = plan.content
    if (!isResourceName(c.resource)) {
      return yield* new UsageError({ message: `${plan.file}: the plan names an unknown resource "${c.resource}"` })
    }
    const resource = c.resource
    // The profile is applied as the plan recorded it; its file must still be that profile.
    if (c.read.map !== undefined) yield* ensurePlannedProfile(c.read.map, plan.file)
    const connection = yield* continuingConnection(
      a.connection,
      { baseUrl: c.target.baseUrl, embedded: c.target.embedded === true },
      a.forceBaseUrl,
      "the plan",
      "plan"
    )
    const runDir = Option.getOrElse(a.out, () => defaultRunDir(resource))
    const approvedBy = Option.getOrUndefined(a.approvedBy)
    return yield* withApi(connection, `apply ${resource}`, () => runDir, () =>
      runImport({
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
        applying: { plan, approvedBy, otherTarget: a.forceBaseUrl, signer }
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
