/**
 * `submit onboard` end to end, spawned as users run it, against a throwaway PostgreSQL and the real sandbox: a bad
 * workbook is refused offline (exit 2, nothing queued); a good one is onboarded by a worker (`wait` exits as
 * `onboard` would), leaves on the account what a local onboarding (in process) of the same workbook leaves on
 * another, and `fetch` writes a standard onboarding directory that `resume`, `report` and `undo --dry-run` take. A
 * worker killed mid-onboarding is taken over: the next one continues from the step journals, no record twice.
 *
 * Spawned: `submit onboard` in the first test (its refusals and output are the point), the workers, and the local
 * commands a fetched directory is for (`resume`, `report`, `rerun`, `undo`). `wait`, `fetch`, `cancel` and the other
 * tests' submits run in the test's process through the commands' own functions (./in-process.ts `*As`): a spawned
 * command costs about a second of CPU before it does anything; test/fleet/cli.test.ts spawns `wait --json`, `fetch`
 * (and its refusal to overwrite) and `cancel` where they are the point.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { prepareOnboarding, runOnboarding } from "../../src/onboard/Onboard.js"
import { isLogin, readReport, startDrillSandbox, tempDir } from "../drills/support.js"
import { request } from "../onboard/support.js"
import { testClientLayer } from "../support.js"
import { cancelAs, fetchAs, submitOnboardAs, waitAs } from "./in-process.js"
import { fleetEnv, initFleet, lastJson, query, runCli, sqlSession, startPostgres, startWorker } from "./support.js"
import { workbookFile } from "./workbook.js"

/** An account's records of a resource, without the ids the server gave them (which differ between accounts). */
const withoutIds = (records: ReadonlyArray<Record<string, unknown>>) =>
  records.map((r) =>
    Object.fromEntries(
      Object.entries(r).filter(([k, v]) =>
        !(/(^id$|Ids?$)/.test(k) && (typeof v === "number" || Array.isArray(v))) &&
        !/^(dateLastUpdate|creationDate|dateCreated)$/.test(k)
      )
    )
  ).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))

/** A step's journal lines so far, read on one session of the test's (it is polled every 200 ms). */
const stepLines = (session: Effect.Effect.Success<ReturnType<typeof sqlSession>>, job: string, step: string) =>
  Effect.promise(() =>
    session.query("SELECT count(*)::int AS n FROM fsm_bulk.journal WHERE job = $1", [`${job}/${step}`])
  ).pipe(Effect.map((rows) => rows[0].n as number))

describe("fleet: submit onboard", () => {
  it.scopedLive(
    "a workbook checked offline, onboarded by a worker, fetched as a standard onboarding directory",
    () =>
      Effect.gen(function*() {
        const pgServer = yield* startPostgres
        const sandbox = yield* startDrillSandbox({
          rate: { limit: 10_000, windowMs: 1_000 },
          accounts: [{ apiKey: "sandbox-key", apiToken: "sandbox-token" }, {
            apiKey: "beta-key",
            apiToken: "beta-token"
          }]
        })
        const dir = yield* tempDir
        const env = fleetEnv(pgServer.url)
        const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
          Effect.promise(() => runCli(args, { ...env, ...extra }))
        const [acme, beta] = sandbox.accounts
        // Credentials go only to a base URL the user pairs with them, never to one a fetched directory names.
        const asAcme = { FSM_API_KEY: acme!.apiKey, FSM_API_TOKEN: acme!.apiToken, FSM_BASE_URL: sandbox.url }
        yield* initFleet(pgServer.url, [{ name: "acme", baseUrl: sandbox.url, ...acme! }])

        // Bad input: refused offline with the sheet named, exit 2, nothing queued or stored.
        const bad = yield* Effect.promise(async () => {
          const book = new ExcelJS.Workbook()
          book.addWorksheet("clientes").addRows([["externalId", "name"], ["C-1", "Padaria"]])
          const file = Path.join(dir, "ruim.xlsx")
          writeFileSync(file, new Uint8Array(await book.xlsx.writeBuffer()))
          return file
        })
        const refused = yield* run(["submit", "onboard", bad, "--account", "acme"])
        assert.strictEqual(refused.code, 2, refused.stderr)
        assert.include(refused.stderr, `sheet "clientes"`)
        const missing = yield* run(["submit", "onboard", Path.join(dir, "nowhere.xlsx"), "--account", "acme"])
        assert.strictEqual(missing.code, 2, missing.stderr)
        const workbook = yield* workbookFile(dir, "cadastro.xlsx", 12)
        const unknown = yield* run(["submit", "onboard", workbook, "--account", "nobody-here"])
        assert.strictEqual(unknown.code, 2)
        assert.include(unknown.stderr, `no account "nobody-here"`)
        assert.deepStrictEqual(
          yield* Effect.promise(() =>
            query(
              pgServer.url,
              "SELECT (SELECT count(*) FROM fsm_bulk.jobs)::int AS jobs, (SELECT count(*) FROM fsm_bulk.files)::int AS files"
            )
          ),
          [{ jobs: 0, files: 0 }]
        )

        const submitted = yield* run(["submit", "onboard", workbook, "--account", "acme", "--json"])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string
        assert.deepStrictEqual(lastJson(submitted.stdout), {
          job,
          rows: 19,
          steps: ["segments", "customers", "equipments"],
          queued: true
        })
        assert.include(submitted.stderr, "segments → customers → equipments")

        const worker = yield* startWorker(["--egress-id", "w11", "--source-address", "127.0.0.11"], env)
        const waited = yield* waitAs(env, job, 240_000)
        assert.strictEqual(waited.code, 0, `${JSON.stringify(waited)}\n${worker.stderr()}`)
        assert.strictEqual(waited.status?.state, "done")
        assert.strictEqual(waited.status?.done, 19, "status counts the rows done in every step")

        // The same workbook onboarded locally into another account: the same records. In process (the pipeline
        // `fsm-bulk onboard` runs), without a CLI start.
        const local = Path.join(dir, "local")
        const direct = yield* Effect.flatMap(
          prepareOnboarding(request({ input: workbook, runDir: local })),
          (prepared) => runOnboarding(prepared)
        ).pipe(Effect.provide(testClientLayer(sandbox, { credentials: beta! })))
        assert.strictEqual(direct.exitCode, 0)
        for (const resource of ["segments", "customers", "equipments"] as const) {
          const fleet = yield* sandbox.control.records(acme!.apiKey, resource)
          const alone = yield* sandbox.control.records(beta!.apiKey, resource)
          assert.strictEqual(fleet.length, resource === "segments" ? 2 : resource === "customers" ? 12 : 5, resource)
          assert.deepStrictEqual(withoutIds(fleet), withoutIds(alone), resource)
        }

        // fetch: a standard onboarding directory, every path in it pointing into it.
        const out = Path.join(dir, "fetched")
        const fetched = yield* fetchAs(env, job, out)
        assert.strictEqual(fetched.code, 0, JSON.stringify(fetched))
        const summary = JSON.parse(readFileSync(Path.join(out, "summary.json"), "utf8"))
        assert.strictEqual(summary.runDir, out)
        assert.strictEqual(summary.source, Path.join(out, "source", "cadastro.xlsx"))
        assert.strictEqual(summary.exitCode, 0)
        assert.deepStrictEqual(summary.notRun, [])
        for (const resource of ["segments", "customers", "equipments"]) {
          const step = Path.join(out, resource)
          const [header] = readFileSync(Path.join(step, "journal.ndjson"), "utf8").split("\n")
          assert.strictEqual(JSON.parse(header!).source.file, summary.source, resource)
          assert.strictEqual(JSON.parse(readFileSync(Path.join(step, "summary.json"), "utf8")).runDir, step)
          assert.deepStrictEqual(
            readReport(step).map((r) => `${r._row}:${r._status}`),
            readReport(Path.join(local, resource)).map((r) => `${r._row}:${r._status}`),
            resource
          )
        }
        assert.isTrue(existsSync(Path.join(out, "report.html")))

        const writes = Effect.map(sandbox.control.requests, (log) =>
          log.filter((e) => e.method !== "GET" && !isLogin(e)).length)
        const writesBefore = yield* writes
        const resumed = yield* run(["resume", out, "--json"], asAcme)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.strictEqual(yield* writes, writesBefore, "resume of a finished onboarding writes nothing again")
        assert.strictEqual((yield* run(["report", out])).code, 0)
        const rerun = yield* run(["rerun", Path.join(out, "customers"), "--json"], asAcme)
        assert.strictEqual(rerun.code, 0, rerun.stderr)
        assert.include(rerun.stderr, "nothing to rerun")
        const undo = yield* run(["undo", out, "--dry-run", "--out", Path.join(dir, "undo")], asAcme)
        assert.strictEqual(undo.code, 0, undo.stderr)
        assert.strictEqual((yield* fetchAs(env, job, out)).code, 2, "fetch never overwrites")
      }),
    { timeout: 300_000 }
  )

  it.scopedLive(
    "a worker killed mid-onboarding: another continues from the step journals, no record twice",
    () =>
      Effect.gen(function*() {
        const pgServer = yield* startPostgres
        const sandbox = yield* startDrillSandbox({ rate: { limit: 10_000, windowMs: 1_000 } })
        const dir = yield* tempDir
        const env = fleetEnv(pgServer.url, { FSM_FLEET_LEASE_MS: "2000" })
        const acme = sandbox.accounts[0]!
        yield* initFleet(pgServer.url, [{ name: "acme", baseUrl: sandbox.url, ...acme }])
        const workbook = yield* workbookFile(dir, "cadastro.xlsx", 60)
        const submitted = yield* submitOnboardAs(env, workbook, "acme")
        assert.strictEqual(submitted.code, 0, JSON.stringify(submitted))
        const job = submitted.value!.job

        // A slow worker, killed in the middle of the customers step.
        const first = yield* startWorker(
          ["--egress-id", "w12", "--source-address", "127.0.0.12", "--rate", "10/1s"],
          env
        )
        const session = yield* sqlSession(pgServer.url)
        const deadline = Date.now() + 90_000
        while ((yield* stepLines(session, job, "customers")) < 20) {
          assert.isBelow(Date.now(), deadline, `no journal lines: ${first.stderr()}`)
          yield* Effect.sleep(200)
        }
        first.child.kill("SIGKILL")
        yield* Effect.promise(() => first.exit)
        const customersBefore = yield* sandbox.control.records(acme.apiKey, "customers")
        assert.isBelow(customersBefore.length, 60, "killed before the customers step ended")

        const next = yield* startWorker(["--egress-id", "w13", "--source-address", "127.0.0.13"], env)
        const waited = yield* waitAs(env, job, 240_000)
        assert.strictEqual(waited.code, 0, `${JSON.stringify(waited)}\n${next.stderr()}`)
        assert.include(next.stderr(), "continuing the onboarding from its journals")

        const customers = yield* sandbox.control.records(acme.apiKey, "customers")
        assert.strictEqual(customers.length, 60)
        assert.strictEqual(new Set(customers.map((c) => c.externalId)).size, 60, "no customer twice")
        assert.strictEqual((yield* sandbox.control.records(acme.apiKey, "segments")).length, 2, "segments once")
        assert.strictEqual((yield* sandbox.control.records(acme.apiKey, "equipments")).length, 5)

        const out = Path.join(dir, "fetched")
        assert.strictEqual((yield* fetchAs(env, job, out)).code, 0)
        const summary = JSON.parse(readFileSync(Path.join(out, "summary.json"), "utf8"))
        assert.strictEqual(summary.exitCode, 0)
        assert.strictEqual(summary.rows, 67)
        assert.deepStrictEqual(
          readReport(Path.join(out, "customers")).map((r) => Number(r._row)),
          Array.from({ length: 60 }, (_, i) => i + 2),
          "one report line per row, in row order"
        )
      }),
    { timeout: 300_000 }
  )
  it.scopedLive(
    "an onboarding cancelled midway is fetched as a directory that `resume` finishes locally",
    () =>
      Effect.gen(function*() {
        const pgServer = yield* startPostgres
        const sandbox = yield* startDrillSandbox({ rate: { limit: 10_000, windowMs: 1_000 } })
        const dir = yield* tempDir
        const env = fleetEnv(pgServer.url)
        const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
          Effect.promise(() => runCli(args, { ...env, ...extra }))
        const acme = sandbox.accounts[0]!
        const asAcme = { FSM_API_KEY: acme.apiKey, FSM_API_TOKEN: acme.apiToken, FSM_BASE_URL: sandbox.url }
        yield* initFleet(pgServer.url, [{ name: "acme", baseUrl: sandbox.url, ...acme! }])
        const workbook = yield* workbookFile(dir, "cadastro.xlsx", 60)
        const submitted = yield* submitOnboardAs(env, workbook, "acme")
        assert.strictEqual(submitted.code, 0, JSON.stringify(submitted))
        const job = submitted.value!.job

        const worker = yield* startWorker(
          ["--egress-id", "w12", "--source-address", "127.0.0.12", "--rate", "10/1s"],
          env
        )
        const session = yield* sqlSession(pgServer.url)
        const deadline = Date.now() + 90_000
        while ((yield* stepLines(session, job, "customers")) < 20) {
          assert.isBelow(Date.now(), deadline, `no journal lines: ${worker.stderr()}`)
          yield* Effect.sleep(200)
        }
        assert.strictEqual((yield* cancelAs(env, job)).code, 0)
        assert.strictEqual((yield* waitAs(env, job, 60_000)).code, 3)

        const out = Path.join(dir, "fetched")
        assert.strictEqual((yield* fetchAs(env, job, out)).code, 0)
        const left = JSON.parse(readFileSync(Path.join(out, "summary.json"), "utf8"))
        assert.strictEqual(left.runDir, out)
        assert.include(left.notRun, "equipments", "fetched as it stood: the last step never started")

        const resumed = yield* run(["resume", out, "--json"], asAcme)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        const customers = yield* sandbox.control.records(acme.apiKey, "customers")
        assert.strictEqual(customers.length, 60)
        assert.strictEqual(new Set(customers.map((c) => c.externalId)).size, 60, "no customer twice")
        assert.strictEqual((yield* sandbox.control.records(acme.apiKey, "segments")).length, 2, "segments once")
        assert.strictEqual((yield* sandbox.control.records(acme.apiKey, "equipments")).length, 5)
        const summary = JSON.parse(readFileSync(Path.join(out, "summary.json"), "utf8"))
        assert.deepStrictEqual([summary.exitCode, summary.rows, summary.notRun], [0, 67, []])
      }),
    { timeout: 300_000 }
  )
})
