/**
 * The sandbox's access tokens: HS256 JWTs signed with a per-process secret (node:crypto), carrying `sub` (the
 * apiKey), `iat`, `exp` and `jti`. Every token issued is remembered with its exact expiry in milliseconds, so
 * TTLs of a few seconds in tests are honoured precisely while `exp` stays a standard whole-second claim.
 *
 * A token whose signature was checked is remembered (token → jti, at most `verifiedCap`, the oldest forgotten
 * first), so a client sending the same token request after request costs one HMAC, not one a request (issue 26).
 * Only the signature and the claims' parse are skipped: every request still looks its jti up among the tokens
 * issued, so expiry (exact, on the caller's clock) and revocation (`revokeAll`) answer as before.
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto"

interface Issued {
  readonly accessToken: string
  readonly issuedAt: number
  readonly expiresAt: number
}

type Verified = { readonly _tag: "Valid"; readonly apiKey: string } | {
  readonly _tag: "Invalid"
  readonly reason: string
}

/** How many verified tokens are remembered: more than any test or user holds at once. */
const verifiedCap = 1024

const base64url = (data: string | Buffer): string => Buffer.from(data).toString("base64url")

export class Tokens {
  private readonly secret = randomBytes(32)
  /** jti → apiKey and exact expiry */
  private readonly issued = new Map<string, { readonly apiKey: string; readonly expiresAt: number }>()
  /** token → its jti, for tokens whose signature was checked; in insertion order, the oldest first */
  private readonly verified = new Map<string, string>()

  constructor(private readonly ttlMs: number) {}

  issue(apiKey: string, now: number): Issued {
    const jti = randomUUID()
    const expiresAt = now + this.ttlMs
    const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))
    const claims = base64url(
      JSON.stringify({ sub: apiKey, iat: Math.floor(now / 1000), exp: Math.floor(expiresAt / 1000), jti })
    )
    const accessToken = `${header}.${claims}.${this.sign(`${header}.${claims}`)}`
    this.issued.set(jti, { apiKey, expiresAt })
    if (this.issued.size % 1000 === 0) {
      for (const [id, t] of this.issued) if (now >= t.expiresAt) this.issued.delete(id)
    }
    return { accessToken, issuedAt: now, expiresAt }
  }

  /** Checks an `Authorization` header value; the reason never quotes the token. */
  verify(authorization: string | undefined, now: number): Verified {
    if (authorization === undefined || authorization.trim() === "") return invalid("Authorization header missing")
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim())
    if (!m) return invalid("Authorization header must be 'Bearer <token>'")
    const token = m[1]!
    const jti = this.verified.get(token) ?? this.checkSignature(token)
    if (typeof jti !== "string") return jti
    const known = this.issued.get(jti)
    if (known === undefined) return invalid("Invalid token")
    if (now >= known.expiresAt) return invalid("Token expired")
    return { _tag: "Valid", apiKey: known.apiKey }
  }

  /** The token's jti when its signature is ours (remembered from then on), or why it is refused. */
  private checkSignature(token: string): string | Verified {
    const parts = token.split(".")
    if (parts.length !== 3) return invalid("Malformed token")
    const [header, claims, signature] = parts as [string, string, string]
    const expected = Buffer.from(this.sign(`${header}.${claims}`))
    const given = Buffer.from(signature)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid("Invalid token")
    let jti: unknown
    try {
      jti = (JSON.parse(Buffer.from(claims, "base64url").toString("utf8")) as { jti?: unknown }).jti
    } catch {
      return invalid("Malformed token")
    }
    if (typeof jti !== "string") return invalid("Invalid token")
    if (this.verified.size >= verifiedCap) this.verified.delete(this.verified.keys().next().value!)
    this.verified.set(token, jti)
    return jti
  }

  /** Every token issued so far answers 401 from now on. */
  revokeAll(): void {
    this.issued.clear()
    this.verified.clear()
  }

  private sign(input: string): string {
    return createHmac("sha256", this.secret).update(input).digest("base64url")
  }
}

const invalid = (reason: string): Verified => ({ _tag: "Invalid", reason })
