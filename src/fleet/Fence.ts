/**
 * The lease fence at the socket: a fleet worker's HTTP agents refuse to write a request's bytes unless the lease
 * of the job it belongs to was confirmed within a bound, measured on the monotonic clock when the bytes are about
 * to leave. The gate before a request (Worker.ts) checks the lease first; the fence covers the instant after it:
 * a worker paused (SIGSTOP, a frozen VM) between the gate and the write wakes with its clock past the bound, so
 * the write is refused, the connection destroyed, and the request reported as never sent (it never left: the
 * row is not in doubt). Its retry passes the gate again, which finds the lease lost and ends the job's run.
 *
 * Which job a request belongs to is read when it is made: Node builds the request synchronously on the fiber
 * that sends it, so the fiber's lease is at hand; the request's socket takes that fence when it is given the
 * socket (one request at a time per socket). A new connection is handed over only once it is connected (TLS:
 * once its handshake is done), so the check is followed at once by the write, with nothing queued in between.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import * as https from "node:https"
import type * as net from "node:net"
import type { Duplex } from "node:stream"
import { notSentCode } from "../client/Transport.js"

/** Whether a request may leave now: undefined when it may, else why not. */
export interface Fence {
  readonly refusal: () => string | undefined
}

/** The fence of the request being made now (read synchronously on its fiber), if it has one. */
type FenceOf = () => Fence | undefined

/** The error a refused write fails with: the request never left. */
class FenceRefused extends Error {
  readonly code = notSentCode
}

type Write = net.Socket["_write"]
type Writev = NonNullable<net.Socket["_writev"]>

/** The fence each socket writes under: its current request's. */
const fences = new WeakMap<Duplex, Fence>()

/** Every write of `socket` checks the fence of the request it carries first, at the last moment in JavaScript. */
const guard = (socket: net.Socket): void => {
  const write: Write = socket._write
  const writev: Writev | undefined = socket._writev
  const refused = (callback: (error?: Error | null) => void): boolean => {
    const why = fences.get(socket)?.refusal()
    if (why === undefined) return false
    // The callback's error destroys the socket: nothing of this request leaves on it.
    callback(new FenceRefused(`not sent: ${why}`))
    return true
  }
  socket._write = function(this: net.Socket, chunk, encoding, callback) {
    if (!refused(callback)) write.call(this, chunk, encoding, callback)
  }
  if (writev !== undefined) {
    socket._writev = function(this: net.Socket, chunks, callback) {
      if (!refused(callback)) writev.call(this, chunks, callback)
    }
  }
}

/** Hands `socket` over once it is connected (`ready`), or the error that ended it first. */
const whenReady = (
  socket: net.Socket,
  ready: "connect" | "secureConnect",
  callback: ((err: Error | null, stream: Duplex) => void) | undefined
): void => {
  const onReady = () => {
    socket.off("error", onError)
    guard(socket)
    callback?.(null, socket)
  }
  const onError = (error: Error) => {
    socket.off(ready, onReady)
    callback?.(error, socket)
  }
  socket.once(ready, onReady)
  socket.once("error", onError)
}

/** Each request takes the fence of the fiber making it; its socket writes under it. */
const fenceRequests = (agent: http.Agent, fenceOf: FenceOf): void => {
  const add = (agent as unknown as { addRequest: (req: http.ClientRequest, options: unknown) => void }).addRequest
  ;(agent as unknown as { addRequest: typeof add }).addRequest = function(this: http.Agent, req, options) {
    const fence = fenceOf()
    req.once("socket", (socket) => {
      if (fence !== undefined) fences.set(socket, fence)
      else fences.delete(socket)
    })
    add.call(this, req, options)
  }
}

class FencedHttpAgent extends http.Agent {
  constructor(options: http.AgentOptions, fenceOf: FenceOf) {
    super(options)
    fenceRequests(this, fenceOf)
  }
  override createConnection(
    options: http.ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void
  ): undefined {
    whenReady(super.createConnection(options) as net.Socket, "connect", callback)
    return undefined
  }
}

class FencedHttpsAgent extends https.Agent {
  constructor(options: https.AgentOptions, fenceOf: FenceOf) {
    super(options)
    fenceRequests(this, fenceOf)
  }
  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void
  ): undefined {
    whenReady(super.createConnection(options) as net.Socket, "secureConnect", callback)
    return undefined
  }
}

/** The worker's HTTP agents (what `NodeHttpClient.layerWithoutAgent` needs), with the fence on every socket. */
export const fencedAgentLayer = (
  options: https.AgentOptions,
  fenceOf: FenceOf
): Layer.Layer<NodeHttpClient.HttpAgent> =>
  Layer.scoped(
    NodeHttpClient.HttpAgent,
    Effect.map(
      Effect.all([
        Effect.acquireRelease(
          Effect.sync(() => new FencedHttpAgent(options, fenceOf)),
          (agent) => Effect.sync(() => agent.destroy())
        ),
        Effect.acquireRelease(
          Effect.sync(() => new FencedHttpsAgent(options, fenceOf)),
          (agent) => Effect.sync(() => agent.destroy())
        )
      ]),
      ([agentHttp, agentHttps]) => ({
        [NodeHttpClient.HttpAgentTypeId]: NodeHttpClient.HttpAgentTypeId,
        http: agentHttp,
        https: agentHttps
      })
    )
  )
