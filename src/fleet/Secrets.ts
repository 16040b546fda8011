/**
 * Account credentials at rest: AES-256-GCM with the key in FSM_FLEET_KEY (32 bytes, base64 or hex), a fresh
 * 12-byte nonce per value, stored as `v1:<nonce>:<tag>:<ciphertext>` (base64). The key never leaves the
 * environment; the credentials are decrypted in a worker's memory only, never put in job data, logs or reports.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import type { Credentials } from "../client/Config.js"
import { registerSecret } from "../Secrets.js"
import { FleetError } from "./Errors.js"
import type { FleetStore } from "./Store.js"

const keyProblem = (why: string) =>
  new FleetError({
    reason: "Key",
    message:
      `FSM_FLEET_KEY ${why}: set it to 32 random bytes, base64 or hex (e.g. \`openssl rand -base64 32\`), the same on every host`
  })

/** The key from FSM_FLEET_KEY. */
export const fleetKey = Effect.gen(function*() {
  const text = yield* Config.option(Config.redacted("FSM_FLEET_KEY")).pipe(
    Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>())
  )
  if (Option.isNone(text) || Redacted.value(text.value).trim() === "") return yield* keyProblem("is not set")
  const raw = Redacted.value(text.value).trim()
  registerSecret(raw)
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, "hex") : Buffer.from(raw, "base64")
  if (key.length !== 32) return yield* keyProblem(`is ${key.length} bytes, not 32`)
  return key
})

export const seal = (key: Buffer, credentials: Credentials): string => {
  const nonce = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, nonce)
  const plain = JSON.stringify({
    apiKey: Redacted.value(credentials.apiKey),
    apiToken: Redacted.value(credentials.apiToken)
  })
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
  return ["v1", nonce, cipher.getAuthTag(), body].map((p) => typeof p === "string" ? p : p.toString("base64")).join(":")
}

export const open = (key: Buffer, sealed: string, account: string): Effect.Effect<Credentials, FleetError> =>
  Effect.try({
    try: () => {
      const [v, nonce, tag, body] = sealed.split(":")
      if (v !== "v1" || nonce === undefined || tag === undefined || body === undefined) throw new Error("bad format")
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"))
      decipher.setAuthTag(Buffer.from(tag, "base64"))
      const plain = Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8")
      const json = JSON.parse(plain) as { apiKey: string; apiToken: string }
      return { apiKey: Redacted.make(json.apiKey), apiToken: Redacted.make(json.apiToken) }
    },
    catch: () =>
      new FleetError({
        reason: "Key",
        message:
          `the credentials of account "${account}" cannot be decrypted with FSM_FLEET_KEY: it is not the key they were added with`
      })
  })

/**
 * Fails (`Key`, exit 2) unless `key` opens the credentials of every account of the fleet: a worker or an
 * `accounts add` with another key would take jobs it cannot run, or seal credentials no worker can open.
 */
export const checkFleetKey = (store: FleetStore, key: Buffer): Effect.Effect<void, FleetError> =>
  Effect.gen(function*() {
    for (const entry of yield* store.accounts) {
      const row = yield* store.account(entry.name)
      if (row === undefined) continue
      yield* open(key, row.secret, row.name).pipe(Effect.mapError(() =>
        new FleetError({
          reason: "Key",
          message:
            `FSM_FLEET_KEY is not this fleet's key: it does not open the credentials of account "${row.name}" (set the key the accounts were added with, the same on every host)`
        })
      ))
    }
  })
