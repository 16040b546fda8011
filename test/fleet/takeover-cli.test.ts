/**
 * A killed worker's job is taken over within the lease (plus the queue's stall check and a pickup) even when every
 * survivor's job slots are busy with long jobs (issue 29: it waited 28–38 s, until a survivor finished a job).
 * Real worker processes, killed with -9, on PostgreSQL and Redis.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { customersFile, startDrillSandbox, tempDir } from "../drills/support.js"
import {
  availableBackends,
  eventually,
  fleetEnv,
  initFleet,
  lastJson,
  runCli,
  startFleetBackend,
  startWorker,
  withStore
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

const leaseMs = 4_000
/**
 * The goal is lease + 2 s from the kill to the takeover. A spawned worker on this 2-core machine, shared by other
 * test files, can be late to a timer by a second or more: the assertion allows 3 s of scheduling on top. The old
 * code took until a survivor finished its 60 s job.
 */
const schedulingAllowanceMs = 3_000

describe("fleet takeover", () => {
  each(
    "a killed worker's job is taken over within lease + 2 s while every survivor is busy ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const sandbox = yield* startDrillSandbox({
          rate: { limit: 10_000, windowMs: 1_000 },
          accounts: [{ apiKey: "sandbox-key", apiToken: "sandbox-token" }, {
            apiKey: "beta-key",
            apiToken: "beta-token"
          }]
        })
        const dir = yield* tempDir
        const env = fleetEnv(server.url, { FSM_FLEET_LEASE_MS: String(leaseMs) })
        const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
          Effect.promise(() => runCli(args, { ...env, ...extra }))
        // The long jobs work for another account than the victim's job: its records are counted alone.
        yield* initFleet(server.url, [
          { name: "acme", baseUrl: sandbox.url, ...sandbox.accounts[0]! },
          { name: "beta", baseUrl: sandbox.url, ...sandbox.accounts[1]! }
        ])
        const account = sandbox.accounts[0]!
        const submit = (file: string, to = "acme") =>
          Effect.map(run(["submit", "import", "customers", file, "--account", to, "--json"]), (r) => {
            assert.strictEqual(r.code, 0, r.stderr)
            return lastJson(r.stdout).job as string
          })
        const owner = (job: string) => withStore(server.url, (store) => Effect.map(store.job(job), (row) => row.owner))

        // Two survivors, one job slot each, both busy with a long job (600 rows at 10 a second).
        const long = customersFile(dir, "longo.csv", 600)
        const survivors = [
          yield* startWorker(["--egress-id", "wb", "--jobs", "1", "--rate", "10/1s"], env),
          yield* startWorker(["--egress-id", "wc", "--jobs", "1", "--rate", "10/1s"], env)
        ]
        const busy = [yield* submit(long.file, "beta"), yield* submit(long.file, "beta")]
        const detail = () => survivors.map((w) => w.stderr()).join("\n")
        yield* eventually(
          "both survivors busy",
          async () => {
            const owners = await Promise.all(busy.map((job) => Effect.runPromise(owner(job))))
            return owners.includes("wb") && owners.includes("wc")
          },
          120_000,
          detail
        )

        // The victim takes the next job and is killed -9 in the middle of it.
        const victim = yield* startWorker(["--egress-id", "wa", "--jobs", "1", "--rate", "10/1s"], env)
        // 40 rows at 10 a second: killed after 10 of them, the rest (up to 30) are what the takeover sends.
        const input = customersFile(dir, "clientes.csv", 40)
        const job = yield* submit(input.file)
        yield* eventually(
          "the victim sends",
          async () =>
            (await Effect.runPromise(owner(job))) === "wa" &&
            (await Effect.runPromise(withStore(server.url, (store) => store.journalLines(job)))).length > 10,
          120_000,
          () => victim.stderr()
        )
        const killed = Date.now()
        victim.child.kill("SIGKILL")
        yield* Effect.promise(() => victim.exit)

        yield* eventually(
          "a survivor takes the job over",
          async () => {
            const now = await Effect.runPromise(owner(job))
            return now === "wb" || now === "wc"
          },
          120_000,
          detail
        )
        const takenAfter = Date.now() - killed
        console.info(`${b.backend}: taken over ${takenAfter} ms after the kill (lease ${leaseMs} ms)`)
        assert.isAtMost(
          takenAfter,
          leaseMs + 2_000 + schedulingAllowanceMs,
          `taken over ${takenAfter} ms after the kill (lease ${leaseMs} ms)\n${detail()}`
        )
        assert.match(detail(), new RegExp(`job ${job} \\(import customers\\) lease 2`))
        // Both long jobs are still running: the job was taken by a busy worker's takeover slot.
        const states = yield* withStore(server.url, (store) => Effect.forEach(busy, (id) => store.job(id)))
        assert.deepStrictEqual(states.map((row) => row.state), ["running", "running"])

        // And it is finished from the journal: every record once.
        const waited = yield* run(["wait", job])
        assert.strictEqual(waited.code, 0, `${waited.stderr}\n${detail()}`)
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
      }),
    { timeout: 300_000 }
  )
})
