/**
 * A killed worker's job is taken over by a busy survivor's takeover slot while new parts wait in the queue, before
 * any of them reaches that slot (issue 29: the slot was given whatever the queue handed out next and put new parts
 * back one after another; on PostgreSQL, where a stalled job goes back at the end of the queue, the killed worker's
 * parts waited 42–53 s behind them). Asserted from the queue's own history (its event log: which job was made active
 * when) and the fleet store's leases, not from timings. Real worker processes, killed with -9, on PostgreSQL and Redis.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { customersFile, startDrillSandbox, tempDir } from "../drills/support.js"
import {
  availableBackends,
  eventually,
  fleetEnv,
  initFleet,
  lastJson,
  query,
  runCli,
  startFleetBackend,
  startWorker,
  withStore
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

const leaseMs = 4_000

/** The queue's event log in its order: each event's name and job. */
const queueEvents = (url: string): Promise<ReadonlyArray<{ readonly event: string; readonly job: string }>> =>
  url.startsWith("redis")
    ? (async () => {
      const client = new Redis(url)
      try {
        const entries = await client.xrange("bull:fsm-bulk:events", "-", "+")
        return entries.map(([, fields]) => {
          const map = new Map<string, string>()
          for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!)
          return { event: map.get("event") ?? "", job: map.get("jobId") ?? "" }
        })
      } finally {
        await client.quit()
      }
    })()
    : query(
      url,
      "SELECT event, data->>'jobId' AS job FROM bullmq.event WHERE queue = 'fsm-bulk' ORDER BY id"
    ) as Promise<Array<{ event: string; job: string }>>

describe("fleet takeover with new parts queued", () => {
  each(
    "a killed worker's job is taken before any new part reaches a busy survivor's takeover slot ($backend)",
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
        const run = (args: ReadonlyArray<string>) => Effect.promise(() => runCli(args, env))
        yield* initFleet(server.url, [
          { name: "acme", baseUrl: sandbox.url, ...sandbox.accounts[0]! },
          { name: "beta", baseUrl: sandbox.url, ...sandbox.accounts[1]! }
        ])
        const account = sandbox.accounts[0]!
        const submit = (args: ReadonlyArray<string>) =>
          Effect.map(run(["submit", "import", "customers", ...args, "--json"]), (r) => {
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
        const busy = [
          yield* submit([long.file, "--account", "beta"]),
          yield* submit([long.file, "--account", "beta"])
        ]
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

        // The victim takes the next job and sends part of it (200 rows at 10 a second: it still runs when killed,
        // after the parts below were submitted).
        const victim = yield* startWorker(["--egress-id", "wa", "--jobs", "1", "--rate", "10/1s"], env)
        const input = customersFile(dir, "clientes.csv", 200)
        const job = yield* submit([input.file, "--account", "acme"])
        yield* eventually(
          "the victim sends",
          async () =>
            (await Effect.runPromise(owner(job))) === "wa" &&
            (await Effect.runPromise(withStore(server.url, (store) => store.journalLines(job)))).length > 10,
          120_000,
          () => victim.stderr()
        )
        // New parts queued while every job slot of the fleet is busy: 8 parts of 50 rows (for the other account: the
        // victim's records are counted alone).
        const many = customersFile(dir, "novos.csv", 400)
        const parent = yield* submit([many.file, "--account", "beta", "--chunk-rows", "50"])
        const parts = (yield* withStore(server.url, (store) => store.parts(parent))).map((p) => p.id)
        assert.strictEqual(parts.length, 8)

        victim.child.kill("SIGKILL")
        yield* Effect.promise(() => victim.exit)
        const atKill = yield* withStore(server.url, (store) => store.job(job))
        assert.strictEqual(atKill.state, "running", "the victim's job was still running when it was killed")
        yield* eventually(
          "a survivor takes the job over",
          async () => {
            const now = await Effect.runPromise(owner(job))
            return now === "wb" || now === "wc"
          },
          120_000,
          detail
        )

        // Taken by a busy survivor's takeover slot: both long jobs still run, and no new part was ever leased.
        const states = yield* withStore(server.url, (store) => Effect.forEach(busy, (id) => store.job(id)))
        assert.deepStrictEqual(states.map((row) => row.state), ["running", "running"], detail())
        const leases = yield* withStore(server.url, (store) => Effect.forEach(parts, (id) => store.lease(id)))
        assert.deepStrictEqual(leases, parts.map(() => undefined), detail())
        // In the queue's history, the job's second activation (the takeover) comes before any part was made active:
        // no new part reached a takeover slot, not even to be put back.
        const events = yield* Effect.promise(() => queueEvents(server.url))
        const activations = events.flatMap((e, i) => e.event === "active" && e.job === job ? [i] : [])
        assert.isAtLeast(activations.length, 2, JSON.stringify(events))
        const partsActive = events.filter((e, i) =>
          i < activations[1]! && parts.includes(e.job) && e.event === "active"
        )
        assert.deepStrictEqual(partsActive, [], "parts made active before the takeover")
        const putBack = events.filter((e) => parts.includes(e.job) && e.event === "delayed")
        assert.deepStrictEqual(putBack, [], "parts put back by a takeover slot")

        // And it is finished from the journal: every record once.
        const waited = yield* run(["wait", job])
        assert.strictEqual(waited.code, 0, `${waited.stderr}\n${detail()}`)
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
      }),
    { timeout: 300_000 }
  )
})
