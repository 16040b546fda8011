/**
 * A PostgreSQL store that stops answering without closing its connections (issue 29: a server frozen, a NAT or a
 * failover in between that drops the path and sends no reset), with the real server, a real worker process and the
 * sandbox over loopback: a TCP proxy in the test's process stands between the worker and the run's PostgreSQL, and
 * mid-job it freezes every connection it has (nothing forwarded either way, every socket left open: a dead peer),
 * while connections opened after that are forwarded as usual.
 *
 * The job must still end `done`, one record per key, no row sent twice, within a bound derived from the lease (the
 * store's answer timeout, `storeAnswerTimeoutMs`). Before: a query had no client-side timeout, so the worker's next
 * statement waited for an answer for ever (until TCP keep-alive, hours) and the job never ended.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { schema, storeAnswerTimeoutMs } from "../../src/fleet/Store.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { ended, submitCustomers } from "./in-process.js"
import {
  acmeFleet,
  eventually,
  lastJson,
  postgresBin,
  type RunningWorker,
  startPostgres,
  startWorker
} from "./support.js"
import { clientesCsv, customerCsvDirectory } from "./workbook.js"

const leaseMs = 3_000
const rows = 60

/**
 * A fleet on the run's PostgreSQL with a lease of `leaseMs`, and a worker whose fleet URL is a `freezingProxy` to it:
 * `writes(resource)` the sandbox's writes to a resource, `ended(job)` the job's row once it ended within a bound
 * derived from the lease (from the freeze), with what the worker said.
 */
const stalledFleet = (freezeInTransaction?: string) =>
  Effect.gen(function*() {
    const server = yield* startPostgres
    const fleet = yield* acmeFleet(server.url, { env: { FSM_FLEET_LEASE_MS: String(leaseMs) } })
    const proxy = yield* freezingProxy(Number(new URL(server.url).port), freezeInTransaction)
    const startProxiedWorker = startWorker(["--egress-id", "w-stalled", "--rate", "10/1s"], {
      ...fleet.env,
      FSM_FLEET_URL: throughProxy(server.url, proxy)
    })
    const writes = (resource: string) =>
      Effect.runPromise(Effect.map(fleet.sandbox.control.requests, (log) =>
        log.filter((e) =>
          e.method !== "GET" && e.path.toLowerCase().startsWith(`/v2/${resource}`)
        )))
    // Each frozen statement waits for the answer timeout and is tried again on a new connection within the lease;
    // the queue's lock may lapse meanwhile (its renewal waits as long) and the job be claimed again and run on from
    // its journal; a session frozen inside a transaction is ended by the server after the same time: a few answer
    // timeouts and the job's rest, with room for a loaded machine.
    const bound = 6 * storeAnswerTimeoutMs(leaseMs) + 30_000
    const jobEnded = (job: string, worker: RunningWorker) =>
      Effect.gen(function*() {
        yield* eventually(
          "the proxy froze",
          () =>
            proxy.frozen.at !== 0,
          120_000,
          worker.stderr
        )
        const row = yield* ended(
          server.url,
          job,
          bound,
          () =>
            `${proxy.pairs.length} connections through the proxy, ${proxy.frozen.connections} frozen\n${worker.stderr()}`
        )
        assert.strictEqual(row.state, "done", worker.stderr())
        assert.strictEqual(row.exit_code, 0, worker.stderr())
        assert.isAbove(proxy.frozen.connections, 0, "the worker's connections went through the proxy")
        assert.isAbove(proxy.pairs.length, proxy.frozen.connections, "new connections were opened after the freeze")
        // A frozen statement fails on a timeout: the client's (`query_timeout`) outside a job, or, inside one, the
        // job's own bound, which ends each try before the lease would lapse (src/fleet/Transient.ts).
        assert.match(
          worker.stderr(),
          /Query read timeout|the fleet store gave no answer within \d+ ms/,
          "a frozen statement failed on a timeout"
        )
        console.log(`job done ${Date.now() - proxy.frozen.at} ms after the freeze (bound ${bound} ms)`)
      })
    return { ...fleet, url: server.url, proxy, startProxiedWorker, writes, jobEnded }
  })

describe("a PostgreSQL store that stops answering without closing its connections (issue 29)", () => {
  it.scopedLive.skipIf(postgresBin() === undefined)(
    "midway through an import: the frozen statements time out, new connections are opened, the job ends done, once",
    () =>
      Effect.gen(function*() {
        const { account, dir, jobEnded, proxy, sandbox, startProxiedWorker, url, writes } = yield* stalledFleet()
        const input = clientesCsv(dir, rows)
        const job = yield* submitCustomers(url, input.file, "acme")
        const worker = yield* startProxiedWorker
        // Midway: a third of the rows sent (at 10 a second, the job has about 4 s to go).
        yield* eventually(
          "the job sends",
          async () => (await writes("customers")).length >= rows / 3,
          60_000,
          worker.stderr
        )
        proxy.freeze()
        yield* jobEnded(job, worker)
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.keys].sort(), "one record per key")
        const sent = yield* Effect.promise(() => writes("customers"))
        assert.strictEqual(sent.length, rows, `no row sent twice: ${sent.map((e) => `${e.method} ${e.path}`)}`)
      }),
    { timeout: 300_000 }
  )

  it.scopedLive.skipIf(postgresBin() === undefined)(
    "inside the transaction that ends an onboarding: the server ends the frozen session, the job ends done, once",
    () =>
      Effect.gen(function*() {
        // Frozen once the server has stored the first of the job's outputs, uncommitted: its row (and the lease's
        // share lock) held by a session whose client will never send another word. The next try's insert of the
        // same output waits for that session's end.
        const { account, dir, jobEnded, run, sandbox, startProxiedWorker, writes } = yield* stalledFleet(
          `INSERT INTO ${schema}.files (job, name, content) VALUES`
        )
        const input = customerCsvDirectory(dir, rows)
        const submitted = yield* run(["submit", "onboard", input.input, ...input.maps, "--account", "acme", "--json"])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string
        const worker = yield* startProxiedWorker
        yield* jobEnded(job, worker)
        const keys = (resource: "customers" | "segments", key: string) =>
          Effect.map(sandbox.control.records(account.apiKey, resource), (rs) => rs.map((r) => String(r[key])).sort())
        assert.deepStrictEqual(
          yield* keys("customers", "externalId"),
          Array.from({ length: rows }, (_, i) => `C-${i + 1}`).sort(),
          "one record per customer"
        )
        assert.deepStrictEqual(yield* keys("segments", "description"), ["Atacado", "Varejo"])
        assert.strictEqual((yield* Effect.promise(() => writes("customers"))).length, rows, "no customer sent twice")
        assert.strictEqual((yield* Effect.promise(() => writes("segments"))).length, 2, "no segment sent twice")
      }),
    { timeout: 300_000 }
  )
})
