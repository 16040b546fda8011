/**
 * A request body over the sandbox's 64 MiB limit is answered 413 with the service's error body, whether its size
 * is announced (Content-Length) or not (chunked), and the connection stays usable: no reset, and the next
 * request on the same keep-alive connection is served. Real loopback HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import { session } from "./harness.js"

const limit = 64 * 1024 * 1024

interface Raw {
  readonly status: number | undefined
  readonly body: string
}

/** One request over `agent`: the answer, or the transport error (a reset shows as `ECONNRESET`/`EPIPE`). */
const send = (agent: Http.Agent, url: string, token: string, body: Buffer, chunked: boolean): Promise<Raw | string> =>
  new Promise((resolve) => {
    const req = Http.request(url, {
      method: "POST",
      agent,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) })
      }
    })
    req.on("response", (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (d) => (text += d))
      res.on("end", () => resolve({ status: res.statusCode, body: text }))
    })
    req.on("error", (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message))
    // Written in pieces, as a client streaming an upload does.
    const piece = 1024 * 1024
    let at = 0
    const writeMore = () => {
      while (at < body.length) {
        const ok = req.write(body.subarray(at, at + piece))
        at += piece
        if (!ok) return void req.once("drain", writeMore)
      }
      req.end()
    }
    writeMore()
  })

describe("sandbox: oversized bodies", () => {
  it.scopedLive(
    "a body over 64 MiB is answered 413 with {error}, announced or chunked, and the connection is kept",
    () =>
      Effect.gen(function*() {
        const { sandbox, token } = yield* session()
        const url = `${sandbox.url}/segments`
        const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
        yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
        // A JSON string longer than the limit.
        const huge = Buffer.alloc(limit + 1024, 0x61)
        huge[0] = 0x22
        huge[huge.length - 1] = 0x22
        for (const chunked of [false, true]) {
          const answer = yield* Effect.promise(() => send(agent, url, token, huge, chunked))
          assert.deepStrictEqual(answer, {
            status: 413,
            body: JSON.stringify({ error: "the request body is larger than 64 MiB" })
          }, chunked ? "chunked" : "content-length")
        }
        // The same connection still serves a normal request, and nothing was stored.
        const small = yield* Effect.promise(() =>
          send(agent, url, token, Buffer.from(JSON.stringify({ description: "Varejo" })), false)
        )
        assert.containSubset(small, { status: 201 })
        assert.deepStrictEqual(
          (yield* sandbox.control.records("sandbox-key", "segments")).map((r) => r["description"]),
          [
            "Varejo"
          ]
        )
      }),
    120_000
  )
})
