/**
 * Signing keys (`fsm-bulk keys new`) and signatures: Ed25519 from node:crypto. A signature file is JSON beside
 * what it signs: the algorithm, the signer's public key (PEM) and its id (the sha256 of the key's DER form), the
 * signed statement (`signed`: the files' sha256 and the journal's last chain hash) and the signature over that
 * statement's JSON text.
 *
 * The public key inside a signature file only says who claims to have signed: `verify --public-key PUB` checks
 * the signature against the key the auditor was given, and refuses a signature by any other.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { UsageError } from "../Errors.js"
import { shellQuote } from "../Shell.js"

const privateKeyFile = "fsm-bulk-signing.key"
const publicKeyFile = "fsm-bulk-signing.pub"

/** Where `keys new` puts a pair without --out: the user's configuration directory, never the project. */
export const defaultKeyDir = (): string =>
  Path.join(process.env.XDG_CONFIG_HOME ?? Path.join(os.homedir(), ".config"), "fsm-bulk", "keys")

/** The key's id: the sha256 of its public key in DER (SPKI) form, hex. */
const keyIdOf = (publicKey: crypto.KeyObject): string =>
  crypto.createHash("sha256").update(publicKey.export({ type: "spki", format: "der" })).digest("hex")

interface NewKeys {
  readonly privateKey: string
  readonly publicKey: string
  readonly keyId: string
}

/** A new pair in `dir`: the private key 0600 (refused when one is already there), the public key 0644. */
export const newKeyPair = Effect.fn("Keys.new")(function*(dir: string) {
  const privatePath = Path.join(dir, privateKeyFile)
  const publicPath = Path.join(dir, publicKeyFile)
  if (fs.existsSync(privatePath)) {
    return yield* new UsageError({
      message:
        `${privatePath} already exists: a key pair is never overwritten (move it away first, or give --out another directory)`
    })
  }
  return yield* Effect.try({
    try: (): NewKeys => {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      const { privateKey, publicKey } = crypto.generateKeyPairSync("ed25519")
      // `wx`: never over a file that appeared meanwhile; the mode is set at creation, never after.
      fs.writeFileSync(privatePath, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600, flag: "wx" })
      fs.writeFileSync(publicPath, publicKey.export({ type: "spki", format: "pem" }), { mode: 0o644 })
      return { privateKey: privatePath, publicKey: publicPath, keyId: keyIdOf(publicKey) }
    },
    catch: (cause) =>
      new UsageError({ message: `cannot write the key pair in ${dir}: ${(cause as Error).message ?? String(cause)}` })
  })
})

export interface SigningKey {
  readonly file: string
  readonly privateKey: crypto.KeyObject
  readonly publicKey: crypto.KeyObject
  readonly keyId: string
  /** A warning to print: the private key file is readable by its group or others. */
  readonly warning: string | undefined
}

/** `--sign KEY`: an Ed25519 private key in PEM; anything else is bad usage, said before a row is sent. */
export const loadSigningKey = Effect.fn("Keys.loadSigning")(function*(file: string) {
  return yield* Effect.try({
    try: (): SigningKey => {
      const privateKey = crypto.createPrivateKey(fs.readFileSync(file))
      if (privateKey.asymmetricKeyType !== "ed25519") {
        throw new Error(
          `it is a ${privateKey.asymmetricKeyType ?? "unknown"} key, not an Ed25519 one (fsm-bulk keys new makes one)`
        )
      }
      const publicKey = crypto.createPublicKey(privateKey)
      const mode = process.platform === "win32" ? undefined : fs.statSync(file).mode
      return {
        file,
        privateKey,
        publicKey,
        keyId: keyIdOf(publicKey),
        warning: mode !== undefined && (mode & 0o077) !== 0
          ? `fsm-bulk: warning: ${file} is a private signing key and its group or others can read it (mode ${
            (mode & 0o777).toString(8).padStart(4, "0")
          }); make it private: chmod 600 ${shellQuote(file)}`
          : undefined
      }
    },
    catch: (cause) =>
      new UsageError({
        message: `--sign ${file}: not a usable private key: ${(cause as Error).message ?? String(cause)}`
      })
  })
})

/** `--public-key PUB`: the key an auditor was given (a public key, or a private one it is derived from). */
export const loadPublicKey = Effect.fn("Keys.loadPublic")(function*(file: string) {
  return yield* Effect.try({
    try: () => {
      const key = crypto.createPublicKey(fs.readFileSync(file))
      if (key.asymmetricKeyType !== "ed25519") throw new Error("it is not an Ed25519 key")
      return { file, publicKey: key, keyId: keyIdOf(key) }
    },
    catch: (cause) =>
      new UsageError({
        message: `--public-key ${file}: not a usable public key: ${(cause as Error).message ?? String(cause)}`
      })
  })
})

// --- signature files -----------------------------------------------------------------------------------------------

export const SignatureFile = Schema.Struct({
  tool: Schema.Literal("fsm-bulk"),
  algorithm: Schema.Literal("Ed25519"),
  keyId: Schema.String,
  publicKey: Schema.String,
  signed: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  signature: Schema.String
})
export type SignatureFile = typeof SignatureFile.Type

/** The text a signature covers: the statement as JSON (its properties in the order they were written). */
const statementBytes = (signed: Record<string, unknown>) => Buffer.from(JSON.stringify(signed), "utf8")

export const signStatement = (key: SigningKey, signed: Record<string, unknown>): SignatureFile => ({
  tool: "fsm-bulk",
  algorithm: "Ed25519",
  keyId: key.keyId,
  publicKey: key.publicKey.export({ type: "spki", format: "pem" }).toString(),
  signed,
  signature: crypto.sign(null, statementBytes(signed), key.privateKey).toString("base64")
})

export type SignatureCheck =
  | { readonly status: "valid"; readonly keyId: string; readonly trusted: boolean }
  | { readonly status: "invalid" | "other-key"; readonly keyId: string; readonly problem: string }

/**
 * Checks a signature file's signature over its statement: with `expected`, only a signature by that key is
 * accepted (`trusted`); without, the key inside the file is used and the result says it is not trusted.
 */
export const checkStatement = (
  file: SignatureFile,
  name: string,
  expected: { readonly publicKey: crypto.KeyObject; readonly keyId: string; readonly file: string } | undefined
): SignatureCheck => {
  let key: crypto.KeyObject
  try {
    key = crypto.createPublicKey(file.publicKey)
  } catch {
    return { status: "invalid", keyId: file.keyId, problem: `${name}: its public key cannot be read` }
  }
  const keyId = keyIdOf(key)
  if (expected !== undefined && keyId !== expected.keyId) {
    return {
      status: "other-key",
      keyId,
      problem: `${name} is signed by key ${keyId.slice(0, 16)}, not by ${expected.file} (${
        expected.keyId.slice(0, 16)
      }): refused`
    }
  }
  let good = false
  try {
    good = crypto.verify(null, statementBytes(file.signed), key, Buffer.from(file.signature, "base64"))
  } catch {
    good = false
  }
  if (!good || keyId !== file.keyId) {
    return {
      status: "invalid",
      keyId,
      problem: `${name}: the signature does not match what it signs (the signature file was edited)`
    }
  }
  return { status: "valid", keyId, trusted: expected !== undefined }
}
