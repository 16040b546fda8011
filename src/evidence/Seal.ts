/**
 * Signing what a command wrote, and checking it: an export's `manifest.sig` (the manifest's sha256: the manifest
 * holds every data file's), a run directory's `summary.sig` (the sha256 of summary.json, the reports and every
 * other file the run wrote, and for each journal its chain's line count and last hash, so a cut tail shows).
 * `verify` reads both (export/Verify.ts for exports, `verifyRun` here for run directories).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as Path from "node:path"
import { RunError } from "../Errors.js"
import { sha256File, writeFileAtomic } from "../files/Write.js"
import { type ChainCheck, checkChain } from "./Chain.js"
import { checkStatement, type SignatureCheck, SignatureFile, type SigningKey, signStatement } from "./Keys.js"

const manifestSignature = "manifest.sig"
export const runSignature = "summary.sig"
const journalName = "journal.ndjson"
const summaryName = "summary.json"

/** Files a run directory holds that are not evidence: rewritten from the rest (report.html), or the tool's own. */
const notEvidence = (name: string) =>
  name === runSignature || name === withheldFile || name === "report.html" || name.startsWith(".") ||
  name.endsWith(".tmp")

/**
 * In an evidence bundle's copy of a run (Bundle.ts): the reports left out because they hold secrets of the
 * records (users' passwords), each with the sha256 the signature covers and the redacted copy put instead.
 */
export const withheldFile = "withheld.json"
export const Withheld = Schema.Struct({
  withheld: Schema.Array(
    Schema.Struct({
      file: Schema.String,
      sha256: Schema.String,
      why: Schema.String,
      copy: Schema.optional(Schema.String)
    })
  )
})
export type Withheld = typeof Withheld.Type
/** Only reports may be withheld: the journal and the summary are what the signature is about. */
const mayWithhold = (file: string) => /(^|\/)report\.(csv|xlsx)$/.test(file)

/** The files of a run directory and of its steps' sub-directories (an onboarding), relative, sorted. */
export const runFiles = (dir: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  const walk = (rel: string, depth: number) => {
    for (const entry of fs.readdirSync(Path.join(dir, rel), { withFileTypes: true })) {
      const name = rel === "" ? entry.name : `${rel}/${entry.name}`
      if (entry.isFile() && !notEvidence(entry.name)) out.push(name)
      else if (entry.isDirectory() && depth < 1 && !entry.name.startsWith(".")) walk(name, depth + 1)
    }
  }
  walk("", 0)
  return out.sort()
}

const FileEntry = Schema.Struct({ file: Schema.String, sha256: Schema.String })
const JournalEntry = Schema.Struct({
  file: Schema.String,
  chained: Schema.Boolean,
  lines: Schema.Number,
  lastHash: Schema.optional(Schema.String)
})
const RunStatement = Schema.Struct({
  kind: Schema.Literal("run"),
  files: Schema.Array(FileEntry),
  journals: Schema.Array(JournalEntry)
})
const ExportStatement = Schema.Struct({ kind: Schema.Literal("export"), manifest: FileEntry })

const isJournal = (file: string) => Path.basename(file) === journalName

/** What a run directory holds now, as a statement: the files' sha256 and the journals' chain ends. */
const runStatement = Effect.fn("Seal.runStatement")(function*(dir: string) {
  const names = runFiles(dir)
  const files = yield* Effect.forEach(
    names,
    (file) => Effect.map(sha256File(Path.join(dir, file)), (sha256) => ({ file, sha256 }))
  )
  const journals = yield* Effect.forEach(names.filter(isJournal), (file) =>
    Effect.map(
      Effect.promise(() => checkChain(Path.join(dir, file), file)),
      (chain) => ({ file, chained: chain.chained, lines: chain.lines, lastHash: chain.lastHash })
    ))
  return { kind: "run" as const, files, journals }
})

/** Signs the run directory `dir` as it is now (`--sign` on import, onboard, rerun, resume, undo). */
export const sealRun = Effect.fn("Seal.run")(function*(dir: string, key: SigningKey) {
  if (!fs.existsSync(Path.join(dir, summaryName))) return undefined
  const statement = yield* runStatement(dir)
  const file = Path.join(dir, runSignature)
  yield* writeFileAtomic(file, `${JSON.stringify(signStatement(key, statement), null, 2)}\n`)
  return file
})

/** Signs an export's manifest (`export --sign`). */
export const sealExport = Effect.fn("Seal.export")(function*(dir: string, manifest: string, key: SigningKey) {
  const sha256 = yield* sha256File(Path.join(dir, manifest))
  const file = Path.join(dir, manifestSignature)
  yield* writeFileAtomic(
    file,
    `${JSON.stringify(signStatement(key, { kind: "export", manifest: { file: manifest, sha256 } }), null, 2)}\n`
  )
  return file
})

export type Expected = Parameters<typeof checkStatement>[2]

/** What `verify` says of a signature: none, good (by the key given, or only by the key inside), or refused. */
export interface SignatureReport {
  readonly status: "unsigned" | "valid" | "invalid" | "other-key"
  readonly keyId?: string
  /** Checked against the key given with --public-key. */
  readonly trusted?: boolean
}

const readSignature = (path: string, name: string) =>
  Effect.gen(function*() {
    const text = yield* Effect.try(() => fs.readFileSync(path, "utf8")).pipe(Effect.either)
    if (Either.isLeft(text)) return Either.left(`${name} cannot be read`)
    return Either.mapLeft(
      Schema.decodeUnknownEither(Schema.parseJson(SignatureFile))(text.right),
      () => `${name} is not a signature file of this tool`
    )
  })

const signatureProblems = (
  check: SignatureCheck
): { readonly report: SignatureReport; readonly problems: ReadonlyArray<string> } =>
  check.status === "valid"
    ? { report: { status: "valid", keyId: check.keyId, trusted: check.trusted }, problems: [] }
    : { report: { status: check.status, keyId: check.keyId }, problems: [check.problem] }

/**
 * The statement a signature file signs, decoded by `schema`, once the file is there, readable and signed by the
 * expected key; else what the check reports (`unsigned`, `invalid`, refused) and why.
 */
const signedStatement = <A, I>(
  path: string,
  what: "export" | "plan",
  schema: Schema.Schema<A, I>,
  expected: Expected
) =>
  Effect.gen(function*() {
    const name = Path.basename(path)
    type Ended = { readonly report: SignatureReport; readonly problems: ReadonlyArray<string> }
    if (!fs.existsSync(path)) {
      return Either.left<Ended>({
        report: { status: "unsigned" },
        problems: expected !== undefined
          ? [
            `${name} is missing: the ${what} is unsigned, and --public-key ${expected.file} asks for a signature by that key`
          ]
          : []
      })
    }
    const file = yield* readSignature(path, name)
    if (Either.isLeft(file)) return Either.left<Ended>({ report: { status: "invalid" }, problems: [file.left] })
    const checked = signatureProblems(checkStatement(file.right, name, expected))
    if (checked.problems.length > 0) return Either.left<Ended>(checked)
    const statement = Schema.decodeUnknownEither(schema)(file.right.signed)
    if (Either.isLeft(statement)) {
      return Either.left<Ended>({
        report: { status: "invalid" },
        problems: [`${name} does not sign ${what === "plan" ? "a plan" : "an export"}`]
      })
    }
    return Either.right({ statement: statement.right, report: checked.report })
  })

/** Checks an export's `manifest.sig` against its manifest: the manifest's own checks are Verify.ts's. */
export const checkExportSignature = Effect.fn("Seal.checkExport")(function*(dir: string, expected: Expected) {
  const signed = yield* signedStatement(Path.join(dir, manifestSignature), "export", ExportStatement, expected)
  if (Either.isLeft(signed)) return signed.left
  const { report, statement } = signed.right
  const now = yield* sha256File(Path.join(dir, statement.manifest.file)).pipe(Effect.either)
  const problems = Either.isLeft(now)
    ? [`${statement.manifest.file} cannot be read`]
    : now.right !== statement.manifest.sha256
    ? [
      `${statement.manifest.file} was changed after it was signed (its sha256 is ${now.right}, the signature covers ${statement.manifest.sha256}): a file and its checksum may have been edited together`
    ]
    : []
  return { report, problems }
})

interface RunVerifyResult {
  readonly dir: string
  readonly kind: "run"
  readonly ok: boolean
  readonly journals: ReadonlyArray<
    Pick<ChainCheck, "chained" | "lines" | "torn"> & { readonly file: string; readonly problems: number }
  >
  readonly signature: SignatureReport
  /** Every problem found, one sentence each. */
  readonly problems: ReadonlyArray<string>
  /** What is not a problem but worth saying (unchained journals, torn lines, no signature). */
  readonly notes: ReadonlyArray<string>
}

/** Is `dir` a run directory (a journal, or an onboarding's summary with steps), rather than an export? */
export const isRunDir = (dir: string): boolean =>
  fs.existsSync(Path.join(dir, journalName)) ||
  (fs.existsSync(Path.join(dir, summaryName)) && !fs.existsSync(Path.join(dir, "manifest.json")))

/** `verify RUN_DIR`: every journal's chain, and the signature (when there is one) against what the dir holds. */
export const verifyRun = Effect.fn("Seal.verifyRun")(function*(dir: string, expected: Expected) {
  if (!fs.existsSync(Path.join(dir, summaryName)) && !fs.existsSync(Path.join(dir, journalName))) {
    return yield* new RunError({ message: `${dir} holds neither a journal nor a summary.json: not a run directory` })
  }
  const names = runFiles(dir)
  const problems: Array<string> = []
  const notes: Array<string> = []
  const journals = yield* Effect.forEach(
    names.filter(isJournal),
    (file) => Effect.map(Effect.promise(() => checkChain(Path.join(dir, file), file)), (chain) => ({ file, ...chain }))
  )
  for (const j of journals) {
    problems.push(...j.problems)
    if (!j.chained) {
      notes.push(
        `${j.file} is unchained: written by a version of fsm-bulk before the hash chain, so lines removed or edited cannot be detected`
      )
    }
    for (const t of j.torn) notes.push(`${j.file}: line ${t} is torn (the run was stopped mid-write; it is read past)`)
  }
  const sigPath = Path.join(dir, runSignature)
  let signature: SignatureReport = { status: "unsigned" }
  if (!fs.existsSync(sigPath)) {
    if (expected !== undefined) {
      problems.push(
        `${runSignature} is missing: the run is unsigned, and --public-key ${expected.file} asks for a signature by that key`
      )
    } else notes.push(`unsigned: no ${runSignature} (sign runs with --sign KEY); only the journal's chain was checked`)
  } else {
    const file = yield* readSignature(sigPath, runSignature)
    if (Either.isLeft(file)) {
      signature = { status: "invalid" }
      problems.push(file.left)
    } else {
      const checked = signatureProblems(checkStatement(file.right, runSignature, expected))
      signature = checked.report
      problems.push(...checked.problems)
      const statement = Schema.decodeUnknownEither(RunStatement)(file.right.signed)
      if (checked.problems.length === 0 && Either.isLeft(statement)) {
        problems.push(`${runSignature} does not sign a run directory`)
      } else if (checked.problems.length === 0 && Either.isRight(statement)) {
        const now = yield* runStatement(dir)
        const withheld = Either.getOrElse(
          Schema.decodeUnknownEither(Schema.parseJson(Withheld))(
            fs.existsSync(Path.join(dir, withheldFile))
              ? fs.readFileSync(Path.join(dir, withheldFile), "utf8")
              : "{\"withheld\":[]}"
          ),
          () => ({ withheld: [] })
        )
        const compared = compareRun(statement.right, now, withheld)
        problems.push(...compared.problems)
        notes.push(...compared.notes)
      }
    }
  }
  return {
    dir,
    kind: "run",
    ok: problems.length === 0,
    journals: journals.map((j) => ({
      file: j.file,
      chained: j.chained,
      lines: j.lines,
      torn: j.torn,
      problems: j.problems.length
    })),
    signature,
    problems,
    notes
  } satisfies RunVerifyResult as RunVerifyResult
})

/** What differs between the signed statement and the directory now. */
const compareRun = (
  signed: typeof RunStatement.Type,
  now: Effect.Effect.Success<ReturnType<typeof runStatement>>,
  withheld: Withheld
): { readonly problems: ReadonlyArray<string>; readonly notes: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const notes: Array<string> = []
  const current = new Map(now.files.map((f) => [f.file, f.sha256]))
  const copies = new Set(withheld.withheld.flatMap((w) => (w.copy !== undefined ? [w.copy] : [])))
  for (const f of signed.files) {
    const sha = current.get(f.file)
    const held = withheld.withheld.find((w) => w.file === f.file && w.sha256 === f.sha256 && mayWithhold(w.file))
    if (sha === undefined && held !== undefined) {
      notes.push(
        `${f.file} was withheld from this copy (${held.why})${
          held.copy !== undefined ? `; ${held.copy} is a redacted copy, not signed` : ""
        }`
      )
    } else if (sha === undefined) problems.push(`${f.file} is missing: the signature covers it`)
    else if (sha !== f.sha256 && !isJournal(f.file)) {
      problems.push(`${f.file} was changed after the run was signed (sha256 ${sha}, signed ${f.sha256})`)
    }
  }
  const signedNames = new Set(signed.files.map((f) => f.file))
  for (const f of now.files) {
    if (!signedNames.has(f.file) && !copies.has(f.file)) {
      problems.push(`${f.file} is not covered by the signature (added after the run was signed)`)
    }
  }
  const journals = new Map(now.journals.map((j) => [j.file, j]))
  for (const j of signed.journals) {
    const cur = journals.get(j.file)
    if (cur === undefined) continue
    if (!j.chained) {
      const sha = current.get(j.file)
      const was = signed.files.find((f) => f.file === j.file)?.sha256
      if (sha !== was) {
        problems.push(`${j.file} was changed after the run was signed (an unchained journal: compared whole)`)
      }
    } else if (cur.lines < j.lines) {
      problems.push(
        `${j.file} has ${cur.lines} lines, the signature covers ${j.lines}: its last ${
          j.lines - cur.lines
        } line(s) were removed`
      )
    } else if (cur.lines > j.lines) {
      problems.push(
        `${j.file} has ${cur.lines} lines, the signature covers ${j.lines}: lines were added after the run was signed (resume with --sign signs again)`
      )
    } else if (cur.lastHash !== j.lastHash) {
      problems.push(`${j.file}: its last line is not the one signed (line ${j.lines} was changed)`)
    } else if (current.get(j.file) !== signed.files.find((f) => f.file === j.file)?.sha256) {
      problems.push(`${j.file} was changed after the run was signed`)
    }
  }
  return { problems, notes }
}

// --- plans -------------------------------------------------------------------------------------------------------

/** A plan's signature file: `PLAN.sig` beside `PLAN`. */
export const planSignatureOf = (plan: string): string => `${plan}.sig`

const PlanStatement = Schema.Struct({ kind: Schema.Literal("plan"), plan: FileEntry })

/** Signs a plan (`import|onboard --dry-run --plan PLAN --sign KEY`): its sha256, so any edit of it shows. */
export const sealPlan = Effect.fn("Seal.plan")(function*(plan: string, key: SigningKey) {
  const sha256 = yield* sha256File(plan)
  const file = planSignatureOf(plan)
  yield* writeFileAtomic(
    file,
    `${JSON.stringify(signStatement(key, { kind: "plan", plan: { file: Path.basename(plan), sha256 } }), null, 2)}\n`
  )
  return file
})

/**
 * Checks a plan's `PLAN.sig` against the plan's bytes (`sha256`, as read): unsigned (a problem only when
 * `expected` asks for a signature), signed by the key given or by the key inside, or refused (another key, a bad
 * signature, a plan edited after it was signed).
 */
export const checkPlanSignature = Effect.fn("Seal.checkPlan")(function*(
  plan: string,
  sha256: string,
  expected: Expected
) {
  const signed = yield* signedStatement(planSignatureOf(plan), "plan", PlanStatement, expected)
  if (Either.isLeft(signed)) return signed.left
  const { report, statement } = signed.right
  const problems = statement.plan.sha256 !== sha256
    ? [
      `${
        Path.basename(plan)
      } was changed after it was signed (its sha256 is ${sha256}, the signature covers ${statement.plan.sha256})`
    ]
    : []
  return { report, problems }
})
