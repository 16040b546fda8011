/**
 * A job claimed by a worker whose data the store fails to give back at that instant (issue 29, round 2), on each
 * backend with the real servers and the built CLI: an onboarding of a customer's pt-BR workbook (about 70 KB), or an
 * import of a pt-BR CSV (Windows-1252, `;`, Portuguese headers, about 70 KB), is queued, then the store fails only where
 * the worker reads the job's files, for longer than a 3 s lease, while everything else answers (the lease, the job's
 * record, its end):
 *
 * - PostgreSQL: the `files` table locked; for the onboarding every session under a 1 s `statement_timeout` (each
 *   read times out), for the import none (each read waits for the store's answer timeout, as on a server that stopped
 *   answering);
 * - Redis: a client whose answer exceeds 32 KB has its connection killed (`client-output-buffer-limit`): the read of
 *   the file, never the small answers.
 *
 * The hand-back comes within the lease: the worker stops trying the read before its lease would lapse (Transient.ts),
 * so it says `handed back` at most 2 × lease + 5 s after it said it took the lease (both lines' arrival times).
 * Before (issue 29), on Redis and on PostgreSQL without a statement timeout, a try waited for the store's answer
 * timeout (at least 10 s) and the retries' window began only at the first failure: a second try of 10 s always
 * followed, the hand-back came 20 s or more after the lease, another worker unable to take the job meanwhile. The
 * bound is not a timing on a loaded machine: the new worker's own timers end the read a lease after it starts, 8 s
 * of slack left for a starved process, while the old code could not be under 20 s however idle the machine.
 *
 * The job must go back to the queue (`handed back`, the store's failure as the reason), never end failed for a store
 * fault, and once the fault ends run to `done`, one record per key. Spawned: the worker, which is the point; the
 * job is queued and its end read in process (test/fleet/in-process.ts: what `submit` and `wait` do, without a CLI
 * start each; `wait`'s exit codes are test/fleet/cli.test.ts's). Before: on PostgreSQL an
 * onboarding whose source could not be read ended failed for good (exit 3, "the fleet store … cannot be used") as soon
 * as the store wrote its end; on Redis the read never ended (the client sent it again at each reconnection, without a
 * timeout): the job stayed running, its lock renewed, for as long as the fault lasted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import pg from "pg"
import { customersFile } from "../drills/support.js"
import { ended, submitCustomers, submitOnboarding } from "./in-process.js"
import {
  acmeFleet,
  availableBackends,
  type Backend,
  eventually,
  startPostgres,
  startRedis,
  startWorker,
  withStore
} from "./support.js"
import { customerWorkbook } from "./workbook.js"

/**
 * Customers a job makes: few, as what is tested is the read of the job's files before any row; the files are made
 * larger than Redis's 32 KB by their names (a workbook's random noise, a CSV's addresses).
 */
const customers = 60
const leaseMs = 3_000

/**
 * A backend whose reads of job files can be made to fail: `hold` starts the fault and gives what ends it, `reached`
 * says whether a worker has reached the write of a job's end while the fault holds (PostgreSQL: the statement that
 * replaces its outputs waits on the lock; on Redis that write is small and passes).
 */
const filesFault = (backend: Backend, statementTimeout: string | undefined) =>
  Effect.gen(function*() {
    if (backend === "redis") {
      const redis = yield* startRedis
      const limit = (value: string) =>
        Effect.promise(async () => {
          const client = new Redis(redis.url)
          try {
            await client.config("SET", "client-output-buffer-limit", value)
          } finally {
            await client.quit()
          }
        })
      return {
        url: redis.url,
        hold: () => Effect.as(limit("normal 32kb 32kb 0"), limit("normal 0 0 0")),
        reached: () => Promise.resolve(false)
      }
    }
    const server = yield* startPostgres
    const admin = new pg.Client({ connectionString: server.url })
    yield* Effect.promise(() => admin.connect())
    yield* Effect.addFinalizer(() => Effect.promise(() => admin.end().catch(() => undefined)))
    // A watcher of its own, polling every 20 ms on one connection: the write of the job's end waits 1 s at a time.
    const watcher = new pg.Client({ connectionString: server.url })
    yield* Effect.promise(() => watcher.connect())
    yield* Effect.addFinalizer(() => Effect.promise(() => watcher.end().catch(() => undefined)))
    if (statementTimeout !== undefined) {
      yield* Effect.promise(() =>
        admin.query(`ALTER DATABASE ${server.database} SET statement_timeout = '${statementTimeout}'`)
      )
    }
    const seen = { end: false, watching: false }
    const watch = async () => {
      while (seen.watching && !seen.end) {
        const waiting = await watcher.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%starts_with(name, ''out/'')%'`
        )
        seen.end = waiting.rows.length > 0
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    const hold = () =>
      Effect.promise(async () => {
        await admin.query("BEGIN")
        await admin.query("LOCK TABLE fsm_bulk.files IN ACCESS EXCLUSIVE MODE")
        seen.watching = true
        const watching = watch()
        return Effect.promise(async () => {
          seen.watching = false
          await watching
          await admin.query("COMMIT")
        })
      })
    const reached = () => Promise.resolve(seen.end)
    return { url: server.url, hold, reached }
  })

/**
 * A customer's pt-BR CSV (Windows-1252, `;`, CRLF, Portuguese headers read through a `--map` profile), ~70 KB: each
 * name carries an address, so that the file is past Redis's 32 KB with few rows (each row is a POST to the sandbox).
 */
const customersCsv = (dir: string) => {
  const source = customersFile(dir, "plain.csv", customers)
  const [, ...rows] = readFileSync(source.file, "utf8").trimEnd().split("\n")
  const address = " - Rua São João, ".concat("Praça da Sé, Largo do Arouche, ".repeat(36)).trimEnd()
  const text = [
    "Código;Nome;CPF/CNPJ",
    ...rows.map((r) => r.replaceAll(",", ";").replace(/Cliente (\d+)/, `Ação São João $1${address}`))
  ].join("\r\n") + "\r\n"
  const file = Path.join(dir, "clientes.csv")
  writeFileSync(file, Buffer.from(text, "latin1"))
  const profile = Path.join(dir, "clientes.map.json")
  writeFileSync(
    profile,
    JSON.stringify({
      resource: "customers",
      columns: { "Código": "externalId", "Nome": "name", "CPF/CNPJ": "cpfCnpj" }
    })
  )
  return {
    submit: (url: string) => submitCustomers(url, file, "acme", 10_000, profile),
    keys: source.valid,
    segments: 0
  }
}

/** What is submitted: how it is queued (as `submit` queues it), the customers' keys it makes, and the segments. */
const kinds = [
  {
    kind: "an onboarding whose workbook",
    pgStatementTimeout: "1s" as string | undefined,
    make: (dir: string) =>
      Effect.map(customerWorkbook(dir, customers, 1_000), (w) => ({
        // `w.maps` are `--map` arguments: their values, as the command reads them.
        submit: (url: string) => submitOnboarding(url, w.file, "acme", w.maps.filter((_, i) => i % 2 === 1)),
        keys: Array.from({ length: customers }, (_, i) => `C-${i + 1}`),
        segments: 2
      }))
  },
  {
    kind: "an import whose CSV file",
    pgStatementTimeout: undefined,
    make: (dir: string) => Effect.sync(() => customersCsv(dir))
  }
]

describe("a claimed job whose data the store cannot give back (issue 29)", () => {
  it.scopedLive.each(availableBackends.flatMap((b) => kinds.map((k) => ({ ...b, ...k }))))(
    "$kind cannot be read is handed back, then runs to done ($backend)",
    (c) =>
      Effect.gen(function*() {
        const fault = yield* filesFault(c.backend, c.pgStatementTimeout)
        const { dir, env, sandbox } = yield* acmeFleet(fault.url, { env: { FSM_FLEET_LEASE_MS: String(leaseMs) } })
        const input = yield* c.make(dir)
        const job = yield* input.submit(fault.url)

        const end = yield* fault.hold()
        const worker = yield* startWorker(["--egress-id", "w-read", "--rate", "1000/1s"], env)
        // When each of the worker's lines arrived (its stderr as it comes), to time the hand-back from the lease.
        const arrived: Array<{ readonly at: number; readonly text: string }> = []
        let seen = ""
        worker.child.stderr!.on("data", (d: Buffer) => {
          seen += d.toString()
          arrived.push({ at: Date.now(), text: seen })
        })
        const firstAt = (what: string) => arrived.find((a) => a.text.includes(what))?.at
        const state = () =>
          Effect.runPromise(
            withStore(fault.url, (store) => store.job(job)).pipe(
              Effect.map((row) => row.state),
              Effect.orElseSucceed(() => "unreadable")
            )
          )
        // Until the job is handed back, or (the old way) it reached its end with the fault still there.
        yield* eventually(
          "the job is handed back, or its end is written",
          async () =>
            worker.stderr().includes(`job ${job} handed back`) ||
            ["done", "failed"].includes(await state()) ||
            (await fault.reached()),
          120_000,
          () => worker.stderr()
        )
        yield* end
        const leased = firstAt(`job ${job} (`)
        const back = firstAt(`job ${job} handed back`)
        assert.isDefined(leased, worker.stderr())
        assert.isDefined(back, `not handed back while the fault held\n${worker.stderr()}`)
        assert.isAtMost(
          back! - leased!,
          2 * leaseMs + 5_000,
          `handed back ${back! - leased!} ms after the lease was taken, past the lease\n${worker.stderr()}`
        )

        const row = yield* ended(fault.url, job, 180_000, () => worker.stderr())
        // What `wait` exits with: the job's exit code once it is done.
        assert.deepStrictEqual([row.state, row.exit_code], ["done", 0], `${row.error ?? ""}\n${worker.stderr()}`)
        assert.include(worker.stderr(), `job ${job} handed back: the fleet store`, "handed back for the store")
        // For its read, not its lease: the lease's confirmations have connections of their own (heartbeat21), so a
        // read's connection killed under it no longer takes them down too (Redis) nor keeps them waiting (PostgreSQL).
        assert.notInclude(worker.stderr(), "could not confirm lease", "handed back for the read, not the lease")
        assert.notInclude(worker.stderr(), `job ${job} failed`)
        const records = yield* sandbox.control.records("acme-key", "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.keys].sort(), "one record per key")
        assert.strictEqual((yield* sandbox.control.records("acme-key", "segments")).length, input.segments)
      }),
    { timeout: 360_000 }
  )
})
