/**
 * The answers of `Answers.test.ts` seen through the built CLI (`dist/bin.js`, built first), against loopback
 * fakes: what a user sees (exit code, report, message) when the API answers 200 without the record, repeats a
 * list page forever, or redirects the login.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { readReport, runCli } from "../import/support.js"
import { temporaryDir } from "../support.js"
import { fakeApi, reply } from "./support.js"

const html = "<html><body><h1>Welcome to nginx!</h1></body></html>"

describe("the CLI against answers the sandbox never gives", () => {
  it.scopedLive(
    "import exits 1 and reports no row created when the API answers 200 without the record",
    () =>
      Effect.gen(function*() {
        const server = yield* fakeApi((hit, res) => {
          if (hit.method === "POST" && hit.url === "/v2/customers") {
            const key = JSON.parse(hit.body).externalId
            return key === "C1" ? reply(res, 200, html) : key === "C2" ? reply(res, 200) : reply(res, 202, { foo: 1 })
          }
          if (hit.method === "GET") return reply(res, 404)
        })
        const dir = yield* temporaryDir("fsm-answers-")
        const file = Path.join(dir, "clientes.csv")
        writeFileSync(file, "externalId,name\nC1,Um\nC2,Dois\nC3,Tres\n")
        const runDir = Path.join(dir, "run")
        const run = yield* runCli(
          [
            "import",
            "customers",
            file,
            "--mode",
            "create",
            "--out",
            runDir,
            "--max-attempts",
            "2",
            "--rate",
            "1000/1s"
          ],
          server.target,
          dir
        )
        assert.strictEqual(run.code, 1, run.stderr)
        const report = readReport(runDir)
        assert.deepStrictEqual(report.map((r) => r._status), ["failed", "failed", "in-doubt"])
        assert.match(report[0]!._error!, /HTML page/)
        assert.match(report[1]!._error!, /empty body/)
        assert.match(report[2]!._error!, /202/)
      }),
    60_000
  )

  it.scopedLive("export stops with an error instead of running forever, naming the list", () =>
    Effect.gen(function*() {
      const server = yield* fakeApi((hit, res) => {
        if (hit.url.startsWith("/v2/keywords")) {
          const size = Number(new URL(hit.url, "http://x").searchParams.get("pageSize"))
          const entityList = Array.from({ length: size }, (_, i) => ({ id: i + 1, description: `k${i}` }))
          return reply(res, 200, { result: { entityList, links: [{ rel: "nextPage", href: "x" }] } })
        }
      })
      const dir = yield* temporaryDir("fsm-answers-")
      const run = yield* runCli(["export", "keywords", "--out", Path.join(dir, "out")], server.target, dir)
      assert.notStrictEqual(run.code, 0)
      assert.match(run.stderr, /listing \/keywords failed: page 2 holds only records already listed on earlier pages/)
      assert.include(run.stderr, "running it again would stop at the same list")
      assert.notInclude(run.stderr, "run the same command again")
      assert.strictEqual(server.hits.filter((h) => h.url.startsWith("/v2/keywords")).length, 2)
    }), 60_000)

  it.scopedLive(
    "a login answered with a redirect: exit 3 with a message that says redirect, and no GET /login",
    () =>
      Effect.gen(function*() {
        const server = yield* fakeApi((hit, res) => {
          if (hit.url === "/v2/login") {
            return reply(res, 302, undefined, { location: "http://127.0.0.1:1/elsewhere/v2/login" })
          }
        })
        const dir = yield* temporaryDir("fsm-answers-")
        const file = Path.join(dir, "palavras.csv")
        writeFileSync(file, "description\nUrgente\n")
        const run = yield* runCli(["import", "keywords", file, "--out", Path.join(dir, "run")], server.target, dir)
        assert.strictEqual(run.code, 3, run.stderr)
        assert.match(
          run.stderr,
          /the API answered a redirect \(HTTP 302\) to http:\/\/127\.0\.0\.1:1\/elsewhere\/v2\/login/
        )
        assert.notMatch(run.stderr, /rejected the credentials/)
        assert.isTrue(server.hits.every((h) => h.method === "POST"))
      }),
    60_000
  )
})
