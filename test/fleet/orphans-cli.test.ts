/**
 * What a `submit` killed with -9 leaves (issue 29), on each backend with the real servers and the built CLI. The kill
 * lands where the old `submit` had stored the file and its parts but no job (FSM_FLEET_DEBUG_KILL_BEFORE_STORE):
 *
 * - the store holds no file that no job refers to (before: the customer's file and every part stayed in the store
 *   with no job, and nothing ever removed them): the files are stored with the jobs, in one atomic step;
 * - its scratch folder in the temp dir (a copy of the file, the validation report, the parts) is removed by the next
 *   `submit` (before: it stayed for good).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { existsSync, mkdirSync, readdirSync } from "node:fs"
import * as Path from "node:path"
import { customersFile, startDrillSandbox, tempDir } from "../drills/support.js"
import { availableBackends, fleetEnv, initFleet, lastJson, query, runCli, startFleetBackend } from "./support.js"

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

/** The submits' scratch folders in `tmp` (each test's own TMPDIR: other files' submits run at the same time). */
const submitFolders = (tmp: string) => new Set(readdirSync(tmp).filter((n) => n.startsWith("fsm-submit-")))

describe("a killed submit leaves nothing behind (issue 29)", () => {
  each(
    "no stored file without its job, and its temp folder removed by the next submit ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const sandbox = yield* startDrillSandbox({ accounts: [{ apiKey: "acme-key", apiToken: "acme-token" }] })
        const dir = yield* tempDir
        const tmp = Path.join(dir, "tmp")
        mkdirSync(tmp)
        const env = fleetEnv(server.url, { TMPDIR: tmp })
        const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
          Effect.promise(() => runCli(args, { ...env, ...extra }))
        yield* initFleet(server.url, [{
          name: "acme",
          baseUrl: sandbox.url,
          apiKey: "acme-key",
          apiToken: "acme-token"
        }])
        // 30 rows in parts of 10: the file and three parts, all customer data.
        const input = customersFile(dir, "clientes.csv", 30)
        const args = ["submit", "import", "customers", input.file, "--account", "acme", "--chunk-rows", "10", "--json"]

        const before = submitFolders(tmp)
        const killed = yield* run(args, { FSM_FLEET_DEBUG_KILL_BEFORE_STORE: "1" })
        assert.strictEqual(killed.code, null, `the submit was killed: ${killed.stdout}\n${killed.stderr}`)
        const left = [...submitFolders(tmp)].filter((n) => !before.has(n))
        assert.strictEqual(left.length, 1, "the killed submit left its scratch folder (the case to clean)")

        assert.deepStrictEqual(yield* storedFiles(server.url), [], "no file stored without its job")

        const submitted = yield* run(args)
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        assert.isFalse(existsSync(Path.join(tmp, left[0]!)), "the next submit removed the killed one's folder")
        const files = yield* storedFiles(server.url)
        assert.strictEqual(files.length, 4, JSON.stringify(files))
        assert.deepStrictEqual(files.filter((f) => f.orphan), [], "every stored file has its job")
        assert.isTrue(files.some((f) => f.job === lastJson(submitted.stdout).job && f.name === "source/clientes.csv"))
      }),
    { timeout: 240_000 }
  )
})
