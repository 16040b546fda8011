/** Test support: a sandbox on a free loopback port and a client built for it with scaled settings. */
import { Effect, Fiber } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Api } from "../../src/client/Api.js"
import { requestLane } from "../../src/client/Lanes.js"
import type { RequestLogEntry, RunningSandbox, SandboxOptionsInput } from "../../src/sandbox/Sandbox.js"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { testClient } from "../support.js"

export const startTestSandbox = (options: SandboxOptionsInput = {}) =>
  startSandbox({ port: 0, rate: { limit: 10_000, windowMs: 1_000 }, ...options })

/** A client of `sandbox` (its first account unless `credentials` say otherwise), with fast backoff. */
export const makeClient = testClient

/** The sandbox's request log without the given path prefixes. */
export const requestsTo = (log: ReadonlyArray<RequestLogEntry>, method: string, path: RegExp) =>
  log.filter((e) => e.method === method && path.test(e.path))

/** Polls `check` every few milliseconds until it holds (or fails the test after `timeoutMs`). */
export const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, timeoutMs = 5_000) =>
  Effect.gen(function*() {
    const until = Date.now() + timeoutMs
    while (!(yield* check)) {
      if (Date.now() > until) return yield* Effect.die(new Error("condition not met in time"))
      yield* Effect.sleep(5)
    }
  })

/** The largest number of entries inside any half-open interval of `windowMs`. */
export const busiestWindow = (times: ReadonlyArray<number>, windowMs: number): number => {
  const sorted = [...times].sort((a, b) => a - b)
  let best = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++
    best = Math.max(best, i - j + 1)
  }
  return best
}

/** One request a `fakeApi` received. */
export interface Hit {
  readonly method: string
  /** Path and query, as sent (`/v2/customers?page=1`). */
  readonly url: string
  readonly bearer: string | undefined
  readonly body: string
}

/**
 * A loopback server for what the sandbox cannot be made to answer (an HTML 200, an endless body, a redirect, a
 * revocation at one precise moment): `answer` writes the response of each request; what it leaves unanswered
 * gets a token `t1`, `t2`, … for `POST /v2/login` and an empty 404 otherwise. Closed, connections included, with
 * the test's scope.
 */
export const fakeApi = (answer: (hit: Hit, res: Http.ServerResponse, hits: ReadonlyArray<Hit>) => void) =>
  Effect.acquireRelease(
    Effect.async<
      { readonly url: string; readonly hits: Array<Hit>; readonly server: Http.Server; readonly target: RunningSandbox }
    >((resume) => {
      const hits: Array<Hit> = []
      let logins = 0
      const server = Http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const auth = req.headers.authorization
          const hit: Hit = {
            method: req.method ?? "",
            url: req.url ?? "",
            bearer: auth?.replace(/^Bearer /, ""),
            body: Buffer.concat(chunks).toString("utf8")
          }
          hits.push(hit)
          res.setHeader("x-request-id", `req-${hits.length}`)
          answer(hit, res, hits)
          if (res.headersSent || res.writableEnded) return
          res.setHeader("content-type", "application/json")
          if (hit.method === "POST" && hit.url === "/v2/login") {
            res.end(
              JSON.stringify({
                result: { authenticated: true, accessToken: `t${++logins}`, expiration: "2030-01-01 00:00:00" }
              })
            )
          } else {
            res.statusCode = 404
            res.end()
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`
        resume(
          Effect.succeed({
            url,
            hits,
            server,
            target: { url, accounts: [{ apiKey: "k", apiToken: "t" }] } as unknown as RunningSandbox
          })
        )
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** Answers `status` with `body` as JSON (or as it is, when a string). */
export const reply = (
  res: Http.ServerResponse,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  res.statusCode = status
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v)
  if (body === undefined) return void res.end()
  if (typeof body === "string") return void res.end(body)
  res.setHeader("content-type", "application/json")
  res.end(JSON.stringify(body))
}

/**
 * A request asked again alone behind another caller's queue (client/Lanes.ts): a record made (so that the first
 * caller's lists answer 200; an empty list is a 404 on this API), then lane `job-1` queues `queued` lists at the client
 * and lane `job-2` asks for a record that is not there, answered 404 while the others are in flight, so the client
 * asks it again alone (HttpAdapter.ts), which needs every permit. What reached the sandbox after the record, in order
 * (`A…` the first caller's, `B…` the look-up's, each with its status), and where the look-up's two attempts are in it.
 */
/**
 * A customer created through `api` (so a list of customers answers 200: an empty one is a 404 on this API, asked
 * again alone), then where the sandbox's request log stands: the requests after it are the test's.
 */
export const oneCustomerThenLogFrom = (api: Api["Type"], sandbox: Pick<RunningSandbox, "control">) =>
  Effect.gen(function*() {
    yield* api.request({
      method: "POST",
      path: "/customers",
      body: { externalId: "L-1", name: "Cliente", cpfCnpj: "20000000027" }
    })
    return (yield* sandbox.control.requests).length
  })

export const aloneBehindQueue = (
  api: Api["Type"],
  sandbox: Pick<RunningSandbox, "control">,
  queued: number
) =>
  Effect.gen(function*() {
    const from = yield* oneCustomerThenLogFrom(api, sandbox)
    yield* Effect.forEach(
      Array.from({ length: queued }),
      () => Effect.fork(Effect.locally(api.request({ method: "GET", path: "/customers" }), requestLane, "job-1")),
      { discard: true }
    )
    const lookUp = yield* Effect.fork(
      Effect.locally(api.request({ method: "GET", path: "/customers/424242" }), requestLane, "job-2")
    )
    const reply = yield* Fiber.join(lookUp)
    const order = (yield* sandbox.control.requests).slice(from).map((e) =>
      e.path.endsWith("/424242") ? `B${e.status}` : `A${e.status}`
    )
    const asked = order.flatMap((o, i) => o.startsWith("B") ? [i] : [])
    return { reply, order, asked }
  })
