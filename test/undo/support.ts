/**
 * Helpers of the undo tests: the import helpers (sandbox, client, files, reports), an undo run in process, and the
 * account's records as the sandbox holds them, for comparisons record by record.
 */
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import type { ResourceName } from "../../src/Resources.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { runUndo, type UndoRequest } from "../../src/undo/Undo.js"
import { apiOf } from "../import/support.js"

export * from "../import/support.js"

export const undoIn = (
  sandbox: RunningSandbox,
  request: Pick<UndoRequest, "target" | "runDir"> & Partial<UndoRequest>
) => runUndo({ dryRun: false, force: false, ...request }).pipe(Effect.provide(apiOf(sandbox)))

/**
 * The account's records of `resource`, keyed by `key`, every field but those the server sets on each write: the
 * id (a record created again gets a new one) and the creation and last-update times.
 */
export const recordsByKey = (sandbox: RunningSandbox, resource: ResourceName, key = "externalId") =>
  Effect.map(sandbox.control.records(sandbox.accounts[0]!.apiKey, resource), (records) =>
    Object.fromEntries(
      records.map((r) => {
        const { creationDate: _c, dateLastUpdate: _u, id: _id, ...rest } = r
        return [String(r[key]), rest]
      })
    ))

/** Drops the journal lines `drop` matches, as if the process had died before writing them. */
export const crashJournal = (runDir: string, drop: (line: Record<string, any>) => boolean) => {
  const path = Path.join(runDir, "journal.ndjson")
  const kept = readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "" && !drop(JSON.parse(l)))
  writeFileSync(path, kept.map((l) => `${l}\n`).join(""))
}

/**
 * A gateway in front of `sandbox` (loopback, port 0) that answers 502 with its own HTML page where the sandbox
 * answered `status`: the server did (or refused) the work, the client never learns which. The sandbox it returns
 * is `sandbox` reached through the gateway.
 */
export const gateway = (sandbox: RunningSandbox, status = 409) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: Http.Server; readonly via: RunningSandbox }>((resume) => {
      const server = Http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const upstream = Http.request(
            { host: "127.0.0.1", port: sandbox.port, method: req.method, path: req.url, headers: req.headers },
            (answer) => {
              const body: Array<Buffer> = []
              answer.on("data", (c: Buffer) => body.push(c))
              answer.on("end", () => {
                if (answer.statusCode === status) {
                  res.writeHead(502, { "content-type": "text/html" })
                  res.end("<html><body>502 Bad Gateway</body></html>")
                } else {
                  res.writeHead(answer.statusCode ?? 502, answer.headers)
                  res.end(Buffer.concat(body))
                }
              })
            }
          )
          upstream.end(Buffer.concat(chunks))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as { port: number }).port
        resume(Effect.succeed({ server, via: { ...sandbox, port, url: `http://127.0.0.1:${port}/v2` } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ via }) => via))
