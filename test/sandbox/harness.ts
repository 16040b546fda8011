/**
 * Test harness for the sandbox: a sandbox on 127.0.0.1:0 inside the test's scope, and a tiny fetch client that
 * returns status, headers and parsed body of real loopback HTTP calls.
 */
import { Effect } from "effect"
import type { RunningSandbox, SandboxOptionsInput } from "../../src/sandbox/Sandbox.js"
import { startSandbox } from "../../src/sandbox/Sandbox.js"

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

export interface CallOptions {
  readonly body?: unknown
  /** A raw body sent as is (no JSON encoding). */
  readonly raw?: string
  readonly token?: string | null
  readonly headers?: Record<string, string>
  readonly query?: Record<string, string | number | object>
}

export const fetchAnswer = (url: string, init: RequestInit): Effect.Effect<Answer> =>
  Effect.promise(async () => {
    const res = await fetch(url, init)
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text), text }
  })

export const queryString = (query: CallOptions["query"]): string => {
  if (query === undefined) return ""
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) params.set(k, typeof v === "object" ? JSON.stringify(v) : String(v))
  return `?${params.toString()}`
}

export interface Session {
  readonly sandbox: RunningSandbox
  readonly token: string
  readonly call: (method: string, path: string, options?: CallOptions) => Effect.Effect<Answer>
}

export const call =
  (sandbox: RunningSandbox, token: string | null) => (method: string, path: string, options: CallOptions = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    const bearer = options.token === undefined ? token : options.token
    if (bearer !== null) headers["authorization"] = `Bearer ${bearer}`
    let body: string | undefined
    if (options.raw !== undefined) body = options.raw
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers["content-type"] ??= "application/json"
    }
    return fetchAnswer(`${sandbox.url}${path}${queryString(options.query)}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body })
    })
  }

export const login = (sandbox: RunningSandbox, apiKey = "sandbox-key", apiToken = "sandbox-token") =>
  Effect.map(call(sandbox, null)("POST", "/login", { body: { apiKey, apiToken } }), (a) => {
    if (a.status !== 200) throw new Error(`login failed: ${a.status} ${a.text}`)
    return a.body.result.accessToken as string
  })

/** A sandbox on port 0 (stopped with the test's scope) and a logged-in session on it. */
export const session = (options: SandboxOptionsInput = {}, apiKey = "sandbox-key", apiToken = "sandbox-token") =>
  Effect.gen(function*() {
    const sandbox = yield* startSandbox({ port: 0, ...options })
    const token = yield* login(sandbox, apiKey, apiToken)
    return { sandbox, token, call: call(sandbox, token) } satisfies Session
  })

/** Today's window for date-windowed lists. */
export const wideWindow = { startDate: "2000-01-01", endDate: "2100-12-31" }

/** A JSON Patch document. */
export const replace = (path: string, value: unknown) => ({ op: "replace", path, value })
