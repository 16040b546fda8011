/**
 * The fenced agents alone, over loopback HTTP and HTTPS: a request whose fence refuses is never written (the
 * server sees no request, the error says it was not sent), one whose fence is open is answered, and a kept-alive
 * connection takes the fence of each request it carries. The HTTPS server's certificate is made with `openssl`
 * (the case is skipped where it is missing).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { notSentCode } from "../../src/client/Transport.js"
import { type Fence, fencedAgentLayer } from "../../src/fleet/Fence.js"
import { temporaryDir } from "../support.js"

const hasOpenssl = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** A server answering 200 "ok", counting the requests it receives, closed with the scope. */
const serve = (secure: boolean) =>
  Effect.gen(function*() {
    let received = 0
    const handler: http.RequestListener = (_req, res) => {
      received += 1
      res.end("ok")
    }
    let server: http.Server
    if (secure) {
      const dir = yield* temporaryDir("fsm-fence-")
      const [key, cert] = [Path.join(dir, "key.pem"), Path.join(dir, "cert.pem")]
      execFileSync("openssl", [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1"
      ], { stdio: "ignore" })
      server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, handler)
    } else server = http.createServer(handler)
    yield* Effect.acquireRelease(
      Effect.promise(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))),
      () =>
        Effect.promise(() =>
          new Promise<void>((r) => {
            server.closeAllConnections()
            server.close(() => r())
          })
        )
    )
    const port = (server.address() as AddressInfo).port
    return { url: `${secure ? "https" : "http"}://127.0.0.1:${port}/`, received: () => received }
  })

/** One request through `agent`: its answer's text, or the error's code and message. */
const send = (agent: http.Agent, url: string) =>
  Effect.promise(() =>
    new Promise<{ text?: string; code?: string; message?: string }>((resolve) => {
      const get = url.startsWith("https") ? https.get : http.get
      const req = get(url, { agent, rejectUnauthorized: false }, (res) => {
        let text = ""
        res.on("data", (d: Buffer) => (text += d.toString()))
        res.on("end", () => resolve({ text }))
      })
      req.on("error", (e: Error & { code?: string }) => resolve({ code: e.code!, message: e.message }))
    })
  )

describe("the fenced agents", () => {
  for (const secure of [false, true]) {
    it.scoped(`${secure ? "HTTPS" : "HTTP"}: a refused request is never written; an open one is answered`, () =>
      Effect.gen(function*() {
        if (secure && !hasOpenssl) return
        const server = yield* serve(secure)
        let current: Fence | undefined
        const context = yield* Layer.build(
          fencedAgentLayer({ keepAlive: true, maxSockets: 1 }, () => current)
        )
        const agents = Context.get(context, NodeHttpClient.HttpAgent)
        const agent = secure ? agents.https : agents.http
        const open: Fence = { refusal: () => undefined }
        const shut: Fence = { refusal: () => "the lease was confirmed too long ago" }

        current = open
        assert.deepStrictEqual(yield* send(agent, server.url), { text: "ok" })
        // The same kept-alive connection, now under a fence that refuses.
        current = shut
        const refused = yield* send(agent, server.url)
        assert.strictEqual(refused.code, notSentCode)
        assert.include(refused.message, "not sent: the lease was confirmed too long ago")
        // A new connection, refused as well; then one more request under an open fence.
        const again = yield* send(agent, server.url)
        assert.strictEqual(again.code, notSentCode)
        current = open
        assert.deepStrictEqual(yield* send(agent, server.url), { text: "ok" })
        current = undefined
        assert.deepStrictEqual(yield* send(agent, server.url), { text: "ok" }, "a request outside a job is not fenced")
        assert.strictEqual(server.received(), 3, "the refused requests never reached the server")
      }))
  }
})
