/**
 * What the commands of evidence/Commands.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as Path from "node:path"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { say, summary } from "../console/Output.js"
import { shellQuote } from "../Shell.js"
import { writeEvidence } from "./Bundle.js"
import { type evidenceConfig, type keysNewConfig } from "./Commands.js"
import { defaultKeyDir, loadPublicKey, loadSigningKey, newKeyPair } from "./Keys.js"
import { type Expected, isRunDir, sealExport, sealPlan, sealRun, type SignatureReport, verifyRun } from "./Seal.js"

/**
 * `--sign KEY` around a command: the key is read before anything is sent (a bad one is exit 2), and what the
 * command wrote is signed when it ends — an export once its manifest is written, a run directory whenever its
 * summary is (an interrupted or aborted run too: the signature covers what it did).
 */
export const withSigning = (
  sign: Option.Option<string>,
  target:
    | { readonly export: () => string }
    | {
      readonly run: () => string
      /** `--dry-run --plan PLAN`: the plan is signed too (`PLAN.sig`). */
      readonly plan?: string | undefined
    }
) =>
<A, E, R>(self: Effect.Effect<A, E, R>) =>
  Option.isNone(sign) ? self : Effect.gen(function*() {
    const key = yield* loadSigningKey(sign.value)
    if (key.warning !== undefined) yield* say(key.warning)
    const seal = "export" in target
      ? Effect.flatMap(Effect.sync(target.export), (dir) => sealExport(dir, "manifest.json", key))
      : Effect.flatMap(Effect.sync(target.run), (dir) => dir === "" ? Effect.succeed(undefined) : sealRun(dir, key))
    const signed = (file: string | undefined) =>
      file === undefined ? Effect.void : say(`signed: ${file} (key ${key.keyId.slice(0, 16)})`)
    // A plan is written only by a dry run that ran to its end (exit 0 or 1): signed when this run wrote it, not
    // when the file at that path is an older one.
    const plan = "plan" in target && target.plan !== undefined ? Path.resolve(target.plan) : undefined
    const stamp = () => plan !== undefined && fs.existsSync(plan) ? fs.statSync(plan).mtimeMs : undefined
    const before = stamp()
    const saidRun = Effect.flatMap(seal, signed)
    const said = saidRun.pipe(
      Effect.zipRight(Effect.suspend(() => {
        const after = stamp()
        return plan !== undefined && after !== undefined && after !== before
          ? Effect.flatMap(sealPlan(plan, key), signed)
          : Effect.void
      }))
    )
    const exit = yield* Effect.exit(self)
    if (Exit.isSuccess(exit)) {
      yield* said
      return exit.value
    }
    // The run failed (aborted, interrupted, or rows that did not end well): its summary is still signed when it
    // was written, and its plan when it wrote one.
    if (!("export" in target)) {
      yield* said.pipe(Effect.catchAll((e) => say(`fsm-bulk: the run could not be signed: ${e.message}`)))
    }
    return yield* exit
  })

export const signatureLine = (sig: SignatureReport, what: string): string =>
  sig.status === "unsigned"
    ? `unsigned ${what} carries no signature (--sign KEY signs it)`
    : sig.status === "valid"
    ? sig.trusted === true
      ? `signed   ${what}: signature by ${sig.keyId?.slice(0, 16)}, the key given with --public-key`
      : `signed   ${what}: signature by key ${
        sig.keyId?.slice(0, 16)
      } (the key inside the signature file: give --public-key PUB to check who signed)`
    : `refused  ${what}: the signature is not good`

/** `verify DIR`: a run directory here, an export by `verifyExport`. */
export const verifyTarget = <E, R>(
  dir: string,
  publicKey: string | undefined,
  json: boolean,
  verifyExport: (dir: string, expected: Expected, json: boolean) => Effect.Effect<ExitCode, E, R>
) =>
  Effect.gen(function*() {
    const expected = publicKey === undefined ? undefined : yield* loadPublicKey(publicKey)
    if (!isRunDir(dir)) return yield* verifyExport(dir, expected, json)
    const result = yield* verifyRun(dir, expected)
    const exitCode = result.ok ? 0 : 1
    yield* summary(json, { command: "verify", ...result, exitCode }, [
      ...result.journals.map((j) =>
        j.problems > 0
          ? `broken   ${j.file}: the hash chain is broken`
          : j.chained
          ? `ok       ${j.file}: ${j.lines} lines, hash chain intact`
          : `unchained ${j.file}`
      ),
      ...result.problems,
      ...result.notes,
      signatureLine(result.signature, "summary.sig"),
      result.ok
        ? `verify: the run in ${dir} is as it was written${result.signature.status === "valid" ? " and signed" : ""}`
        : `verify: ${result.problems.length} problem(s) in ${dir}`
    ])
    return exitCode as ExitCode
  })

export const handleKeysNew = (a: Input<typeof keysNewConfig>) =>
  Effect.gen(function*() {
    const dir = Option.getOrElse(a.out, defaultKeyDir)
    const keys = yield* newKeyPair(dir)
    yield* summary(a.json, { command: "keys new", ...keys, exitCode: 0 }, [
      `private key: ${keys.privateKey} (mode 0600: keep it to yourself; sign with --sign ${
        shellQuote(keys.privateKey)
      })`,
      `public key:  ${keys.publicKey} (give it to whoever checks: fsm-bulk verify DIR --public-key ${
        shellQuote(keys.publicKey)
      })`,
      `key id:      ${keys.keyId}`
    ])
    return 0 as ExitCode
  })

export const handleEvidence = (a: Input<typeof evidenceConfig>) =>
  Effect.gen(function*() {
    const result = yield* writeEvidence({
      runDir: a.runDir,
      out: a.out,
      withInput: a.withInput,
      publicKey: Option.getOrUndefined(a.publicKey)
    })
    yield* summary(a.json, { command: "evidence", ...result, exitCode: 0 }, [
      `evidence: ${result.files.length} files in ${result.out} (start with README.txt and index.json)`,
      ...result.notes,
      `check the run itself with: fsm-bulk verify ${shellQuote(Path.resolve(a.runDir))}`
    ])
    return 0 as ExitCode
  })
