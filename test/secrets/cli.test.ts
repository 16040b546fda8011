/**
 * Secrets never written, never printed (issue 28, item 3): a server that echoes the `Authorization` header in its
 * error answers, or the login's body in its refusal, must not put the access token, the apiToken or the apiKey in
 * any file of the run directory (report.csv/xlsx/html, summary.json, journal) nor on stdout/stderr.
 * A proxy on loopback stands before the real sandbox and answers the echoes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync, statSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { customersCsv, put, runCli, startTestSandbox, tempDir } from "../import/support.js"

type Echo = (req: http.IncomingMessage, body: string) => { status: number; body: string } | undefined

/** A proxy before `sandbox` on 127.0.0.1:0; `echo` answers a request itself when it returns an answer. */
const echoingProxy = (sandbox: RunningSandbox, echo: Echo) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; server: http.Server; tokens: Set<string> }>((resolve) => {
        const target = new URL(sandbox.url)
        const tokens = new Set<string>()
        const server = http.createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            const body = Buffer.concat(chunks).toString("utf8")
            const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")
            if (bearer) tokens.add(bearer[1]!)
            const own = echo(req, body)
            if (own !== undefined) {
              res.writeHead(own.status, { "content-type": "application/json" })
              res.end(own.body)
              return
            }
            const forward = http.request(
              { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
              (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers)
                answer.pipe(res)
              }
            )
            forward.end(body)
          })
        })
        server.listen(
          0,
          "127.0.0.1",
          () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`, server, tokens })
        )
      })
    ),
    ({ server }) => Effect.promise(() => new Promise<void>((r) => server.close(() => r())))
  )

/** Every file under `dir`, with its text. */
const filesUnder = (dir: string): ReadonlyArray<{ path: string; text: string }> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => Path.join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => ({ path, text: readFileSync(path).toString("latin1") + readFileSync(path).toString("utf8") }))

/** The report.xlsx is zipped: its strings are read through unzip to look into them. */
const xlsxText = (path: string): string =>
  execFileSync("unzip", ["-p", path], { encoding: "latin1", maxBuffer: 64 * 1024 * 1024 })

const assertNowhere = (
  secrets: ReadonlyArray<string>,
  places: ReadonlyArray<{ readonly path: string; readonly text: string }>
) => {
  for (const secret of secrets) {
    for (const place of places) assert.notInclude(place.text, secret, `a secret in ${place.path}`)
  }
}

describe("secrets echoed by a server", () => {
  it.scopedLive("an error answer echoing the Authorization header: the access token is in no file and no output", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const account = sandbox.accounts[0]!
      const proxy = yield* echoingProxy(
        sandbox,
        (req, body) =>
          req.method === "POST" && /\/customers/.test(req.url ?? "")
            ? {
              status: 400,
              body: body.includes("K-0")
                ? JSON.stringify({ error: `invalid request; headers were ${JSON.stringify(req.headers)}` })
                : JSON.stringify({
                  message: `token ${req.headers.authorization?.slice(7)} may not create \u001b[2J here`
                })
            }
            : undefined
      )
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", customersCsv(2))
      const runDir = Path.join(dir, "run")
      const run = yield* runCli(
        ["import", "customers", file, "--mode", "create", "--out", runDir],
        undefined,
        dir,
        { FSM_BASE_URL: proxy.url, FSM_API_KEY: account.apiKey, FSM_API_TOKEN: account.apiToken }
      )
      assert.strictEqual(run.code, 1, run.stderr)
      assert.isAbove(proxy.tokens.size, 0)
      const files = filesUnder(runDir)
      assert.includeMembers(files.map((f) => Path.basename(f.path)), [
        "report.csv",
        "report.xlsx",
        "report.html",
        "summary.json",
        "journal.ndjson"
      ])
      const places = [
        ...files,
        ...files.filter((f) => f.path.endsWith(".xlsx")).map((f) => ({ path: f.path, text: xlsxText(f.path) })),
        { path: "stdout", text: run.stdout },
        { path: "stderr", text: run.stderr }
      ]
      assertNowhere([...proxy.tokens, account.apiToken, account.apiKey], places)
      const report = readFileSync(Path.join(runDir, "report.csv"), "utf8")
      // The server's words are still there, with the mark in place of the secret, and no escape sequence.
      assert.include(report, "[redacted]")
      assert.include(report, "may not create")
      assert.notInclude(report, "\u001b")
      // Nor on the terminal: the server's escape sequence never reaches stderr.
      assert.include(run.stderr, "may not create")
      assert.notInclude(run.stderr, "\u001b")
    }))

  it.scopedLive("a login refusal echoing the request body: neither apiKey nor apiToken in any file or output", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const account = sandbox.accounts[0]!
      const proxy = yield* echoingProxy(sandbox, (req, body) =>
        /\/login$/.test(req.url ?? "")
          ? { status: 404, body: JSON.stringify({ message: `no account matches ${body}` }) }
          : undefined)
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", customersCsv(2))
      const runDir = Path.join(dir, "run")
      const run = yield* runCli(
        ["import", "customers", file, "--mode", "create", "--out", runDir, "--json"],
        undefined,
        dir,
        { FSM_BASE_URL: proxy.url, FSM_API_KEY: account.apiKey, FSM_API_TOKEN: account.apiToken }
      )
      assert.strictEqual(run.code, 3, run.stderr)
      assert.include(run.stderr, "no account matches")
      assertNowhere([account.apiToken, account.apiKey], [
        ...filesUnder(runDir),
        { path: "stdout", text: run.stdout },
        { path: "stderr", text: run.stderr }
      ])
    }))
})
