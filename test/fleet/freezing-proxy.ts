/**
 * A TCP proxy on 127.0.0.1 (port 0) in front of a store (PostgreSQL or redis-server) that can make the path between
 * a worker and its store go silent without closing anything: what a frozen server, or a NAT or firewall in between
 * that lost the connection's state, looks like from both ends (nothing arrives, no reset). Used by
 * stalled-store-cli.test.ts and the fleet's generated histories (`store-freeze`, test/history/fleet.ts).
 *
 * A connection whose server side fails or closes (the server refused it or went away) is closed on the client's side
 * too, as it would be without the proxy; so is the server's side of a client that goes.
 *
 * `freeze()` stops forwarding on every connection open now, both ways (a paused socket may still hand over a chunk it
 * had: the flag keeps it from the other side), leaving their sockets open; connections opened later are forwarded as
 * usual. `reset()` ends the frozen ones on both sides (the path back, or the state's expiry, turning into resets).
 * `deliver()` forwards them again instead: what a client sent while frozen reaches the server after all, its end
 * too, as a client's kernel sends its unacknowledged data again once the path is back (also after the client closed
 * the socket), or as a frozen server reads what it had received when it wakes. With
 * `freezeInTransaction`, the proxy freezes by itself, once, at the server's answer to the first statement whose text
 * holds `freezeInTransaction` a connection sends inside a transaction (PostgreSQL): the server has run it (its locks
 * are held) and the client never hears of it. With `freezeAtRequest`, it freezes by itself, once, as a connection sends
 * a chunk holding `freezeAtRequest` (Redis: a command, named by an argument of its own), which the server never gets:
 * the command is lost on the way, and the client sends it again when its connection is back (ioredis does).
 *
 * It can also end sessions as their server does (`pg_terminate_backend`, a restart): `endSessions(fatal)` ends every
 * connection open now (PostgreSQL: each right after the answer to its next statement, within a grace, else at once,
 * so that the end finds the client between two statements wherever it can; Redis: each at once);
 * `fatalOn(text)` (PostgreSQL) answers every later request holding `text` (a client's Terminate as it closes, say) with
 * the FATAL message and ends its connection, the request never reaching the server; `endAfter(text)` (PostgreSQL) ends
 * the next connection to send a statement holding `text` right after that statement's answer. With `fatal`
 * (PostgreSQL) the server's FATAL message (57P01) comes first, in the same packet as the answer: the client reads
 * both in one go, so its connection ends while checked out between two statements, before anything of it can go on
 * (test/fleet/pg-fatal.test.ts; the fleet histories' `store-session-end`). Everything is closed with the scope.
 */
import { Effect } from "effect"
import * as net from "node:net"

interface Pair {
  readonly client: net.Socket
  readonly server: net.Socket
  /** What the client sent while the pair was frozen and the paused socket still handed over. */
  readonly held: Array<Buffer>
  begun: boolean
  armed: boolean
  frozen: boolean
  /** The client sent something the server has not answered yet (as far as the proxy can tell). */
  awaiting: boolean
  /** To be ended at the server's next answer, with PostgreSQL's FATAL message. */
  ending: boolean
  /** The last bytes the server sent: a ReadyForQuery split between two chunks is still seen. */
  tail: Buffer
}

/** PostgreSQL's message to a session ended by `pg_terminate_backend` (an ErrorResponse: severity, code, text). */
export const terminatedMessage = (() => {
  const fields = Buffer.concat([
    ...[["S", "FATAL"], ["V", "FATAL"], ["C", "57P01"], ["M", "terminating connection due to administrator command"]]
      .map(([k, v]) => Buffer.from(`${k}${v}\0`, "utf8")),
    Buffer.from([0])
  ])
  const length = Buffer.alloc(4)
  length.writeInt32BE(fields.length + 4)
  return Buffer.concat([Buffer.from("E"), length, fields])
})()

/** Whether what PostgreSQL sent ends with ReadyForQuery (a statement's whole answer); keeps its last bytes. */
const endsAnswer = (pair: Pair, chunk: Buffer) => {
  const last = Buffer.concat([pair.tail, chunk]).subarray(-6)
  pair.tail = Buffer.from(last)
  return last.length === 6 && last[0] === 0x5a && last.readInt32BE(1) === 5
}

/** Ends `pair` as its server would, after `answer` (what the server had sent last) when there is one. */
const endPair = (pair: Pair, fatal: boolean, answer?: Buffer) => {
  const last = [...(answer === undefined ? [] : [answer]), ...(fatal ? [terminatedMessage] : [])]
  pair.client.end(Buffer.concat(last))
  pair.server.destroy()
}

export interface FreezingProxy {
  readonly port: number
  readonly pairs: ReadonlyArray<Pair>
  /** `at`: when the first freeze was (0: none yet); `connections`: how many were frozen in all. */
  readonly frozen: { connections: number; at: number }
  /** How many connections are open and forwarded now. */
  readonly open: () => number
  /** Freezes every connection open now (not frozen yet); how many. */
  readonly freeze: () => number
  /** Ends every frozen connection on both sides; how many. */
  readonly reset: () => number
  /** Forwards every frozen connection again, first what its client sent while frozen; how many. */
  readonly deliver: () => number
  /**
   * Ends every connection open now (not frozen) as its server would. PostgreSQL (`fatal`): each right after the
   * answer to its next statement (the one on its way, or the next it sends within `graceMs`, 2 s), else at once;
   * Redis: each at once. How many.
   */
  readonly endSessions: (fatal: boolean, graceMs?: number) => number
  /** Ends the next connection to send a statement holding `text` right after its answer, with the FATAL message. */
  readonly endAfter: (text: string) => void
  /** Answers every later request holding `text` with the FATAL message, and ends its connection. */
  readonly fatalOn: (text: string) => void
  /** How many sessions were ended (`endSessions`, `endAfter`, `fatalOn`), their FATAL message written. */
  readonly ended: () => number
}

export const freezingProxy = (port: number, freezeInTransaction?: string, freezeAtRequest?: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const pairs: Array<Pair> = []
      const frozen = { connections: 0, at: 0 }
      const forwarded = () => pairs.filter((p) => !p.frozen && !p.client.destroyed && !p.server.destroyed)
      const freeze = () => {
        const now = forwarded()
        for (const pair of now) {
          pair.frozen = true
          pair.client.pause()
          pair.server.pause()
        }
        frozen.connections += now.length
        if (frozen.at === 0 && now.length > 0) frozen.at = Date.now()
        return now.length
      }
      const reset = () => {
        const now = pairs.filter((p) => p.frozen && !(p.client.destroyed && p.server.destroyed))
        for (const { client, server } of now) {
          client.resetAndDestroy()
          server.resetAndDestroy()
        }
        return now.length
      }
      const deliver = () => {
        const now = pairs.filter((p) => p.frozen && !p.server.destroyed)
        for (const pair of now) {
          for (const chunk of pair.held.splice(0)) pair.server.write(chunk)
          pair.frozen = false
          pair.client.resume()
          pair.server.resume()
          // A client's end while frozen comes with its data, once resumed; a client already gone is passed on now.
          if (pair.client.destroyed) pair.server.end()
        }
        return now.length
      }
      let ended = 0
      const endNow = (pair: Pair, fatal: boolean) => {
        if (pair.client.destroyed || pair.server.destroyed) return
        endPair(pair, fatal)
        ended += 1
      }
      const endSessions = (fatal: boolean, graceMs = 2_000) => {
        const now = forwarded()
        // On Redis (no `fatal`) at once: its client sends again what was unanswered.
        if (!fatal) { for (const pair of now) endNow(pair, false) }
        else {
          for (const pair of now) pair.ending = true
          const late = setTimeout(() => {
            for (const pair of now) if (pair.ending && !pair.frozen) endNow(pair, true)
          }, graceMs)
          late.unref()
        }
        return now.length
      }
      let endAfter: string | undefined
      let fatalOn: string | undefined
      const proxy = net.createServer((client) => {
        const server = net.connect(port, "127.0.0.1")
        const pair: Pair = {
          client,
          server,
          held: [],
          begun: false,
          armed: false,
          frozen: false,
          awaiting: false,
          ending: false,
          tail: Buffer.alloc(0)
        }
        client.on("error", () => client.destroy())
        server.on("error", () => server.destroy())
        client.on("data", (chunk: Buffer) => {
          if (freezeAtRequest !== undefined && frozen.at === 0 && chunk.toString("latin1").includes(freezeAtRequest)) {
            freeze()
          }
          if (pair.frozen) return void pair.held.push(chunk)
          if (fatalOn !== undefined && chunk.toString("latin1").includes(fatalOn)) {
            endPair(pair, true)
            ended += 1
            return
          }
          pair.awaiting = true
          if (endAfter !== undefined && chunk.toString("latin1").includes(endAfter)) {
            endAfter = undefined
            pair.ending = true
          }
          if (freezeInTransaction !== undefined) {
            const text = chunk.toString("latin1")
            // A pooled connection runs transactions and single statements in turn: only one inside a transaction.
            if (text.includes("BEGIN")) pair.begun = true
            else if (text.includes("COMMIT") || text.includes("ROLLBACK")) pair.begun = false
            else if (pair.begun && text.includes(freezeInTransaction)) pair.armed = true
          }
          server.write(chunk)
        })
        server.on("data", (chunk: Buffer) => {
          if (pair.armed && frozen.at === 0) freeze()
          if (pair.frozen) return
          if (endsAnswer(pair, chunk)) {
            if (pair.ending) {
              pair.ending = false
              endPair(pair, true, chunk)
              ended += 1
              return
            }
            pair.awaiting = false
          }
          client.write(chunk)
        })
        // A frozen connection's end is not passed on either: the server never hears that its client gave up.
        client.on("end", () => pair.frozen || server.end())
        server.on("end", () => pair.frozen || client.end())
        // Nor its failure. A side that fails or closes otherwise (the server refused, as while redis-server restarts;
        // a reset) closes the other, as the server itself would: a connection accepted while the server was down was
        // left open with nothing behind it, silent for ever, and a client without an answer timeout (BullMQ's) stayed
        // on it (issue 29, seed 896 on Redis; ./freezing-proxy.test.ts).
        client.on("close", () => pair.frozen || server.destroy())
        server.on("close", () => pair.frozen || client.destroy())
        pairs.push(pair)
      })
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
      const running: FreezingProxy = {
        port: (proxy.address() as net.AddressInfo).port,
        pairs,
        frozen,
        open: () => forwarded().length,
        freeze,
        reset,
        deliver,
        endSessions,
        endAfter: (text) => void (endAfter = text),
        fatalOn: (text) => void (fatalOn = text),
        ended: () => ended
      }
      return { running, proxy }
    }),
    ({ proxy, running }) =>
      Effect.promise(async () => {
        for (const { client, server } of running.pairs) {
          client.destroy()
          server.destroy()
        }
        await new Promise<void>((resolve) => proxy.close(() => resolve()))
      })
  ).pipe(Effect.map(({ running }) => running))

/** `url` (postgres://… or redis://…) with its port the proxy's. */
export const throughProxy = (url: string, proxy: FreezingProxy): string => {
  const proxied = new URL(url)
  proxied.port = String(proxy.port)
  return proxied.toString()
}
