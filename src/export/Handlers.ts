/**
 * What the commands of export/Commands.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import { isPlatformError, type PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { resourceNamed } from "../Aliases.js"
import { apiLayer, type ConnectionOptions } from "../cli/Connection.js"
import { type ExitCode } from "../cli/Output.js"
import { say, stopAfterApiRequests, summary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { signatureLine, verifyTarget, withSigning } from "../evidence/Handlers.js"

import type { Input } from "../cli/Lazy.js"
import { type Expected } from "../evidence/Seal.js"
import { cannotWrite } from "../files/Write.js"
import { lockRunDir } from "../import/RunDir.js"
import { csvDialect, type exportConfig, type verifyConfig } from "./Commands.js"
import { type PreparedExport, prepareExport, runExport } from "./Export.js"
import { loadRedactKey, makeRedactor, planRedaction } from "./Redact.js"
import { runVerify } from "./Verify.js"
/** The redactor `--redact` and `--redact-key` ask for, checked before anything is sent. */
const redactorOf = (args: {
  readonly out: string
  readonly redact: Option.Option<string>
  readonly redactKey: Option.Option<string>
}) =>
  Effect.gen(function*() {
    if (Option.isNone(args.redact)) {
      if (Option.isSome(args.redactKey)) return yield* new UsageError({ message: "--redact-key needs --redact" })
      return undefined
    }
    if (Option.isNone(args.redactKey)) {
      return yield* new UsageError({
        message:
          "--redact needs --redact-key FILE: the fakes are derived with a secret key you keep (a new file name creates one), so they cannot be reversed by guessing"
      })
    }
    const plan = yield* planRedaction(args.redact.value)
    const key = yield* loadRedactKey(args.redactKey.value, args.out, say)
    return makeRedactor(plan, key)
  })

const continueHint = (out: string) =>
  `fsm-bulk: the export in ${out} is incomplete; run the same command again to continue it`

/** This very command, to run again: an interrupted export continues from its checkpoint. */
const sameCommand = () =>
  ["fsm-bulk", ...process.argv.slice(2)].map((
    a
  ) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(" ")

/** The file system's errors in the words import uses (`cannot write to DIR: read-only file system`), not raw. */
const fileSystemError = (out: string) => <A, E, R>(self: Effect.Effect<A, E | PlatformError, R>) =>
  Effect.catchIf(self, isPlatformError, (e) => {
    const path = e._tag === "SystemError" && typeof e.pathOrDescriptor === "string" ? e.pathOrDescriptor : out
    return Effect.fail(cannotWrite(path, e, `cannot write to ${path}`))
  })

/**
 * Said once when a CSV export holds CPF/CNPJ: Excel and Calc open a CSV's digits as numbers, dropping leading zeros
 * (the file itself keeps them); an XLSX holds them as text cells.
 */
const csvDigitsNote = (files: ReadonlyArray<string>) =>
  `note: ${files.join(", ")} hold${files.length === 1 ? "s" : ""} CPF/CNPJ: Excel and LibreOffice Calc open a CSV's ` +
  `digits as numbers and drop leading zeros; for files people open, export with --format xlsx (text cells)`

const csvDigitFiles = (prepared: PreparedExport): ReadonlyArray<string> =>
  prepared.request.format !== "csv"
    ? []
    : prepared.walks.flatMap((w) => w.outputs)
      .filter((o) => o.resource.fields.some((f) => f.type._tag === "cpfCnpj"))
      .map((o) => o.file)

/** Runs a checked export against the API the connection options describe, and prints its summary. */
const exportWith = (connection: ConnectionOptions, json: boolean, prepared: PreparedExport) =>
  Effect.gen(function*() {
    const digits = csvDigitFiles(prepared)
    if (digits.length > 0) yield* say(csvDigitsNote(digits))
    const result = yield* runExport(prepared)
    const rows = result.manifest.resources.reduce((n, r) => n + r.rows, 0)
    yield* summary(
      json,
      {
        command: "export",
        outDir: result.dir,
        format: prepared.request.format,
        ...(prepared.request.csv !== undefined ? { csv: prepared.request.csv } : {}),
        baseUrl: result.manifest.baseUrl,
        since: result.manifest.since,
        until: result.manifest.until,
        started: result.manifest.started,
        finished: result.manifest.finished,
        continued: result.continued,
        ...(result.manifest.redaction !== undefined ? { redaction: result.manifest.redaction } : {}),
        files: result.files,
        rows,
        requests: result.requests,
        rateLimited: result.rateLimited,
        retries: result.retries,
        exitCode: 0
      },
      [
        `export: ${result.files.length} files, ${rows} rows in ${result.dir} (manifest.json)` +
        (result.continued
          ? `; an interrupted export continued (${result.files.filter((f) => f.kept).length} files kept from before)`
          : ""),
        ...(result.manifest.redaction !== undefined
          ? [
            `redacted: ${result.manifest.redaction.fields.length} fields of personal data replaced with fakes (key ${result.manifest.redaction.keyId}, listed in manifest.json)`
          ]
          : []),
        `requests: ${result.requests} (rate-limited ${result.rateLimited}, retries ${result.retries})`,
        `check it any time with: fsm-bulk verify ${result.dir}`
      ]
    )
    return 0 as ExitCode
  }).pipe(
    fileSystemError(prepared.request.out),
    stopAfterApiRequests(sameCommand),
    Effect.catchTag("ListFailed", (e) =>
      Effect.gen(function*() {
        yield* say(
          `fsm-bulk: listing ${e.path} failed${e.status !== undefined ? ` (HTTP ${e.status})` : ""}: ${e.message}`
        )
        // A list that repeats its pages would stop at the same place again: say so instead of "run it again".
        yield* say(
          e.reason === "RepeatingPages"
            ? `fsm-bulk: the export in ${prepared.request.out} is incomplete: the files finished so far are kept; ` +
              `running it again would stop at the same list, which the API keeps repeating`
            : continueHint(prepared.request.out)
        )
        if (json) {
          yield* summary(true, {
            command: "export",
            outDir: prepared.request.out,
            status: "interrupted",
            error: e.message,
            exitCode: 3
          }, [])
        }
        return 3 as ExitCode
      })),
    Effect.tapErrorTag("ApiAborted", () => say(continueHint(prepared.request.out))),
    Effect.onInterrupt(() => say(continueHint(prepared.request.out))),
    Effect.provide(apiLayer(connection))
  )

export const handleExport = (args: Input<typeof exportConfig>) =>
  Effect.flatMap(
    Effect.all([csvDialect(args), redactorOf(args)]).pipe(Effect.flatMap(([csv, redact]) =>
      lockRunDir(args.out, "export").pipe(Effect.zipRight(prepareExport({
        resources: args.resources.map((n) => resourceNamed(n) ?? n), // English or Portuguese (src/Aliases.ts)
        out: args.out,
        format: args.format,
        ...(csv !== undefined ? { csv } : {}),
        ...(redact !== undefined ? { redact } : {}),
        since: Option.getOrUndefined(args.since),
        until: Option.getOrUndefined(args.until),
        say
      })))
    )),
    (prepared) =>
      exportWith(args.connection, args.json, prepared)
  ).pipe(withSigning(args.sign, { export: () => args.out }), fileSystemError(args.out), Effect.scoped)

export const handleVerify = (args: Input<typeof verifyConfig>) =>
  verifyTarget(args.dir, Option.getOrUndefined(args.publicKey), args.json, verifyExport)

/** `verify EXPORT_DIR`: the manifest's files, then its signature. */
const verifyExport = (dir: string, expected: Expected, json: boolean) =>
  Effect.gen(function*() {
    const result = yield* runVerify(dir, expected)
    const exitCode = result.ok ? 0 : 1
    const sig = result.signature
    yield* summary(json, { command: "verify", kind: "export", ...result, exitCode }, [
      ...result.files.map((f) => (f.status === "ok"
        ? `ok       ${f.file}: ${f.rows} rows, sha256 matches`
        : `${f.status.padEnd(8)} ${f.problem}`)
      ),
      ...(result.manifest
        ? result.problems.filter((p) => !result.files.some((f) => f.problem === p))
        : result.problems),
      ...(sig === undefined ? [] : [signatureLine(sig, "manifest.json")]),
      result.ok
        ? `verify: ${result.files.length} files match ${dir}/manifest.json`
        : `verify: ${result.problems.length} problem(s) in ${dir}`
    ])
    return exitCode as ExitCode
  })
