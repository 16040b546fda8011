/**
 * What a `submit` killed with -9 leaves (issue 29), on each backend with the real servers and the built CLI. The kill
 * lands where the old `submit` had stored the file and its parts but no job (FSM_FLEET_DEBUG_KILL_BEFORE_STORE):
 *
 * - the store holds no file that no job refers to (before: the customer's file and every part stayed in the store
 *   with no job, and nothing ever removed them): the files are stored with the jobs, in one atomic step;
 * - its scratch folder in the temp dir (a copy of the file, the validation report, the parts) is removed by the next
 *   `submit` (before: it stayed for good);
 * - killed while it stores its parts in batches (FSM_FLEET_DEBUG_KILL_WHILE_STAGING: after the first batch): the store
 *   had received parts while the file was still being split (its last part was never written), nothing of it is
 *   visible (`status` lists no job, every stored file belongs to a job being stored), a worker's sweep reclaims it
 *   all, and the file submitted again runs once (before: every part was held in memory and stored in one step).
 *
 * The submits killed and the worker are spawned (a kill -9 is the point); the next submit, `status` and `wait` run in
 * the test's process through the commands' own functions (./in-process.ts `*As`, the next submit's scratch folder in
 * the test's TMPDIR as the spawned one's was): a spawned command costs about a second of CPU before it does anything.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { existsSync, mkdirSync, readdirSync } from "node:fs"
import * as Path from "node:path"
import { customersFile, startDrillSandbox, tempDir } from "../drills/support.js"
import { statusListAs, submitImportAs, waitAs } from "./in-process.js"
import {
  availableBackends,
  type Backend,
  eventually,
  fleetEnv,
  initFleet,
  query,
  runCli,
  startFleetBackend,
  startWorker
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

/** The store's files, each with whether a job of that id exists. */
const storedFiles = (url: string) =>
  Effect.promise(async (): Promise<ReadonlyArray<{ job: string; name: string; orphan: boolean }>> => {
    if (url.startsWith("redis")) {
      const client = new Redis(url)
      try {
        const keys = await client.keys("fsm-bulk:job:*:files")
        const all = await Promise.all(keys.map(async (key) => {
          const job = key.slice("fsm-bulk:job:".length, -":files".length)
          const orphan = (await client.exists(`fsm-bulk:job:${job}`)) === 0
          return (await client.hkeys(key)).map((name) => ({ job, name, orphan }))
        }))
        return all.flat()
      } finally {
        await client.quit()
      }
    }
    return (await query(
      url,
      `SELECT f.job, f.name, NOT EXISTS (SELECT 1 FROM fsm_bulk.jobs j WHERE j.id = f.job) AS orphan
       FROM fsm_bulk.files f`
    )) as Array<{ job: string; name: string; orphan: boolean }>
  })

/** The state of every job record in the store (staged ones included). */
const jobStates = (url: string) =>
  Effect.promise(async (): Promise<ReadonlyArray<string>> => {
    if (url.startsWith("redis")) {
      const client = new Redis(url)
      try {
        const keys = (await client.keys("fsm-bulk:job:*")).filter((k) => k.split(":").length === 3)
        return Promise.all(keys.map(async (k) => (await client.hget(k, "state")) ?? "none"))
      } finally {
        await client.quit()
      }
    }
    return ((await query(url, `SELECT state FROM fsm_bulk.jobs`)) as Array<{ state: string }>).map((r) => r.state)
  })

/** The submits' scratch folders in `tmp` (each test's own TMPDIR: other files' submits run at the same time). */
const submitFolders = (tmp: string) => new Set(readdirSync(tmp).filter((n) => n.startsWith("fsm-submit-")))

/**
 * A fleet on `backend` with account `acme` on a fresh sandbox (`sandbox` options added), its own TMPDIR (`tmp`: the
 * submits' scratch folders are counted there) and `run`: the CLI with the fleet's environment (plus `env`).
 */
const acmeFleet = (
  backend: Backend,
  options: Omit<Parameters<typeof startDrillSandbox>[0] & object, "accounts"> = {},
  env: Record<string, string> = {}
) =>
  Effect.gen(function*() {
    const server = yield* startFleetBackend(backend)
    const sandbox = yield* startDrillSandbox({ ...options, accounts: [{ apiKey: "acme-key", apiToken: "acme-token" }] })
    const dir = yield* tempDir
    const tmp = Path.join(dir, "tmp")
    mkdirSync(tmp)
    const fleet = fleetEnv(server.url, { TMPDIR: tmp, ...env })
    const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
      Effect.promise(() => runCli(args, { ...fleet, ...extra }))
    yield* initFleet(server.url, [{ name: "acme", baseUrl: sandbox.url, apiKey: "acme-key", apiToken: "acme-token" }])
    return { server, sandbox, dir, tmp, env: fleet, run }
  })

describe("a killed submit leaves nothing behind (issue 29)", () => {
  each(
    "no stored file without its job, and its temp folder removed by the next submit ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { dir, env, run, server, tmp } = yield* acmeFleet(b.backend)
        // 30 rows in parts of 10: the file and three parts, all customer data.
        const input = customersFile(dir, "clientes.csv", 30)
        const args = ["submit", "import", "customers", input.file, "--account", "acme", "--chunk-rows", "10", "--json"]

        const before = submitFolders(tmp)
        const killed = yield* run(args, { FSM_FLEET_DEBUG_KILL_BEFORE_STORE: "1" })
        assert.strictEqual(killed.code, null, `the submit was killed: ${killed.stdout}\n${killed.stderr}`)
        const left = [...submitFolders(tmp)].filter((n) => !before.has(n))
        assert.strictEqual(left.length, 1, "the killed submit left its scratch folder (the case to clean)")

        // Killed before its jobs were published: what it stored is staged, each file with its (staged) job.
        const staged = yield* storedFiles(server.url)
        assert.deepStrictEqual(staged.filter((f) => f.orphan), [], "no file stored without its job")
        assert.deepStrictEqual((yield* jobStates(server.url)).filter((s) => s !== "staging"), [], "nothing visible")

        // The next submit reclaims what was staged and left (here at once: a test's reclaim age).
        const submitted = yield* submitImportAs({ ...env, FSM_FLEET_STAGING_RECLAIM_MS: "1" }, input.file, "acme", {
          chunkRows: 10
        })
        assert.strictEqual(submitted.code, 0, JSON.stringify(submitted))
        assert.isFalse(existsSync(Path.join(tmp, left[0]!)), "the next submit removed the killed one's folder")
        const files = yield* storedFiles(server.url)
        assert.strictEqual(files.length, 4, JSON.stringify(files))
        assert.deepStrictEqual(files.filter((f) => f.orphan), [], "every stored file has its job")
        assert.isTrue(files.some((f) => f.job === submitted.value?.job && f.name === "source/clientes.csv"))
      }),
    { timeout: 240_000 }
  )

  each(
    "killed while storing its parts in batches: nothing visible, reclaimed by a worker, submitted again once ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { dir, env, run, sandbox, server, tmp } = yield* acmeFleet(
          b.backend,
          { rate: { limit: 10_000, windowMs: 1_000 } },
          { FSM_FLEET_LEASE_MS: "2000" }
        )
        // 30 rows in parts of 2: 15 parts; a batch of one part each (FSM_FLEET_STAGE_BYTES=1).
        const input = customersFile(dir, "clientes.csv", 30)
        const args = ["submit", "import", "customers", input.file, "--account", "acme", "--chunk-rows", "2", "--json"]
        const killed = yield* run(args, { FSM_FLEET_STAGE_BYTES: "1", FSM_FLEET_DEBUG_KILL_WHILE_STAGING: "1" })
        assert.strictEqual(killed.code, null, `the submit was killed while staging: ${killed.stdout}\n${killed.stderr}`)

        // The store had its first batch while the file was still being split: the last part was never written.
        const [folder] = [...submitFolders(tmp)]
        assert.isDefined(folder, "the killed submit's scratch folder")
        assert.isTrue(existsSync(Path.join(tmp, folder!, "source", "clientes.csv")), "its copy of the file")
        assert.isFalse(existsSync(Path.join(tmp, folder!, "chunk-0015.csv")), "the split had not reached the last part")
        const staged = yield* storedFiles(server.url)
        const stagedParts = staged.filter((f) => f.name.startsWith("source/chunk-"))
        assert.isAbove(stagedParts.length, 0, JSON.stringify(staged))
        assert.isBelow(stagedParts.length, 15, JSON.stringify(staged))
        assert.deepStrictEqual(staged.filter((f) => f.orphan), [], "every stored file belongs to a job")
        assert.deepStrictEqual(
          [...new Set(yield* jobStates(server.url))],
          ["staging"],
          "its jobs are staged, nothing else"
        )
        const listed = yield* statusListAs(env)
        assert.strictEqual(listed.code, 0, JSON.stringify(listed))
        assert.deepStrictEqual(listed.value, [], "status lists no job of it")

        // A worker's sweep reclaims it (a test's reclaim age), files and all.
        const worker = yield* startWorker(
          ["--egress-id", "w-reclaim", "--rate", "1000/1s", "--jobs", "4"],
          { ...env, FSM_FLEET_STAGING_RECLAIM_MS: "500" }
        )
        yield* eventually(
          "the worker reclaims the staged submission",
          async () => (await Effect.runPromise(storedFiles(server.url))).length === 0,
          60_000,
          worker.stderr
        )
        assert.deepStrictEqual(yield* jobStates(server.url), [])
        assert.include(worker.stderr(), "removed 1 submission(s) whose submit stopped while storing their parts")

        // Submitted again: it runs once, one record per valid row.
        const submitted = yield* submitImportAs({ ...env, FSM_FLEET_STAGE_BYTES: "1" }, input.file, "acme", {
          chunkRows: 2
        })
        assert.strictEqual(submitted.code, 0, JSON.stringify(submitted))
        const job = submitted.value!.job
        assert.strictEqual(submitted.value?.chunks, 15)
        const waited = yield* waitAs(env, job, 120_000)
        assert.strictEqual(waited.code, 0, `${JSON.stringify(waited)}\n${worker.stderr()}`)
        const records = yield* sandbox.control.records("acme-key", "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
        const files = yield* storedFiles(server.url)
        assert.strictEqual(files.filter((f) => f.name.startsWith("source/")).length, 16, JSON.stringify(files))
        assert.deepStrictEqual(files.filter((f) => f.orphan), [])
      }),
    { timeout: 300_000 }
  )
})
