/**
 * A gateway in front of the sandbox that, when told to, answers a request itself with an error that echoes its
 * secrets, as misconfigured gateways and servers do (issue 28.3): a login's body (the apiKey and apiToken), any
 * other request's `Authorization` header (the access token). Everything else passes through unchanged; a
 * connection the sandbox resets is reset for the client too.
 */
import type { Scope } from "effect"
import { Effect } from "effect"
import * as Http from "node:http"
import type { Rng } from "./model.js"

export interface EchoGateway {
  /** "http://127.0.0.1:PORT/v2" */
  readonly url: string
  /** Probability that a request is answered by an echoing error (0: a plain pass-through). */
  readonly setEchoRate: (rate: number) => void
}

export const startEchoGateway = (target: string, dice: Rng): Effect.Effect<EchoGateway, never, Scope.Scope> =>
  Effect.gen(function*() {
    const upstream = new URL(target)
    let rate = 0
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = Buffer.concat(chunks)
        if (rate > 0 && dice.next() < rate) {
          const error = /\/login$/i.test(req.url ?? "")
            ? `login failed for ${body.toString("utf8")}`
            : `Bad Gateway: upstream refused ${req.method} ${req.url} (Authorization: ${
              req.headers.authorization ?? "none"
            })`
          res.writeHead(/\/login$/i.test(req.url ?? "") ? 500 : 502, { "content-type": "application/json" })
          res.end(JSON.stringify({ error }))
          return
        }
        const forward = Http.request(
          { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(res)
            answer.on("error", () => req.socket.destroy())
          }
        )
        forward.on("error", () => req.socket.destroy())
        forward.end(body)
      })
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const port = (server.address() as { port: number }).port
    return { url: `http://127.0.0.1:${port}/v2`, setEchoRate: (r) => void (rate = r) }
  })
