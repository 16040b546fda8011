/**
 * A killed worker's job is taken over by a busy survivor's takeover slot (issue 29): within the lease (plus the
 * queue's stall check and a pickup) even when every survivor's job slots are busy with long jobs (it waited 28–38 s,
 * until a survivor finished a job), and before any new part queued meanwhile reaches that slot (the slot was given
 * whatever the queue handed out next and put new parts back one after another; on PostgreSQL, where a stalled job
 * goes back at the end of the queue, the killed worker's parts waited 42–53 s behind them). The second is asserted
 * from the queue's own history (its event log: which job was made active when) and the fleet store's leases.
 * Real worker processes, killed with -9, on PostgreSQL and Redis; `submit`, `cancel` and `wait` are made in process
 * (./in-process.ts): the workers are the point, and a spawned command costs seconds under load.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { openStore } from "../../src/fleet/Stores.js"
import { customersFile } from "../drills/support.js"
import { cancelJob, ended, submitCustomers } from "./in-process.js"
import { acmeBetaFleet, availableBackends, type Backend, eventually, queueEvents, startWorker } from "./support.js"

const each = it.scopedLive.each(availableBackends)

const leaseMs = 4_000
/**
 * The goal is lease + 2 s from the kill to the takeover. A spawned worker on this 2-core machine, shared by other
 * test files, can be late to a timer by a second or more: the assertion allows 3 s of scheduling on top. The old
 * code took until a survivor finished its 60 s job.
 */
const schedulingAllowanceMs = 3_000

/**
 * Two survivors with one job slot each, both busy with a long job (2,400 rows at 10 a second, for account `beta`:
 * longer than both scenarios below, which share the fleet; cancelled once the second's takeover is checked), and
 * `victimOf`: a victim worker sending `rows` rows of a job for account `account` (`victimRate` a second), not yet
 * killed. The victim's job lasts rows / victimRate seconds if it is not killed; what the survivor sends after the
 * takeover shares its 10 a second with its long job (the budget is the worker's): a slow victim keeps the job running
 * as long with fewer rows left for the survivor to send.
 */
const busyFleet = (backend: Backend) =>
  Effect.gen(function*() {
    // The long jobs work for another account than the victims' jobs, and each victim's job for an account of its
    // own (acme, gamma): its records are counted alone.
    const { dir, env, sandbox, server } = yield* acmeBetaFleet(backend, leaseMs)
    const submit = (file: string, account: string, chunkRows?: number) =>
      submitCustomers(server.url, file, account, chunkRows)
    // Every read of the fleet's state through one store opened for the test (the polls read every 100 ms: a store
    // opened for each read cost 8–12 ms of the test's CPU and, on PostgreSQL, a server process).
    const store = yield* Effect.orDie(openStore(server.url))
    const owner = (job: string) => Effect.map(store.job(job), (row) => row.owner)

    const long = customersFile(dir, "longo.csv", 2_400)
    const survivors = [
      yield* startWorker(["--egress-id", "wb", "--jobs", "1", "--rate", "10/1s"], env),
      yield* startWorker(["--egress-id", "wc", "--jobs", "1", "--rate", "10/1s"], env)
    ]
    const busy = [
      yield* submit(long.file, "beta"),
      yield* submit(long.file, "beta")
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
    const busyStates = Effect.orDie(Effect.forEach(busy, (id) => store.job(id)))

    const victimOf = (egressId: string, account: number, rows: number, victimRate: number) =>
      Effect.gen(function*() {
        const name = ["acme", "beta", "gamma"][account]!
        const victim = yield* startWorker(
          ["--egress-id", egressId, "--jobs", "1", "--rate", `${victimRate}/1s`],
          env
        )
        const input = customersFile(dir, `clientes-${egressId}.csv`, rows)
        const job = yield* submit(input.file, name)
        yield* eventually(
          "the victim sends",
          async () =>
            (await Effect.runPromise(owner(job))) === egressId &&
            (await Effect.runPromise(store.journalLines(job))).length > 10,
          120_000,
          () => victim.stderr()
        )
        /** Waits for a survivor to own the job. */
        const takenOver = eventually(
          "a survivor takes the job over",
          async () => {
            const now = await Effect.runPromise(owner(job))
            return now === "wb" || now === "wc"
          },
          120_000,
          detail
        )
        /** Every record of the victim's job once, the job finished from its journal. */
        const finishedOnce = Effect.gen(function*() {
          const waited = yield* ended(server.url, job, 240_000, detail)
          assert.deepStrictEqual([waited.state, waited.exit_code], ["done", 0], detail())
          const records = yield* sandbox.control.records(sandbox.accounts[account]!.apiKey, "customers")
          assert.deepStrictEqual(records.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
        })
        return { victim, job, takenOver, finishedOnce }
      })
    return { server, store, dir, submit, detail, busy, busyStates, victimOf }
  })

describe("fleet takeover", () => {
  // Both scenarios on one busy fleet a backend, one after the other (each was a test with a fleet of its own: the
  // fleet's set-up, two survivors made busy, is most of a scenario's time).
  each(
    "a killed worker's job is taken over within lease + 2 s while every survivor is busy, and before any new part " +
      "reaches a busy survivor's takeover slot ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { busy, busyStates, detail, dir, server, store, submit, victimOf } = yield* busyFleet(b.backend)

        // Within lease + 2 s. 20 rows at 4 a second (5 s): killed after 10 journal lines, the rest are what the
        // takeover sends.
        {
          const { finishedOnce, job, takenOver, victim } = yield* victimOf("wa", 0, 20, 4)
          const killed = Date.now()
          victim.child.kill("SIGKILL")
          yield* Effect.promise(() => victim.exit)

          yield* takenOver
          const takenAfter = Date.now() - killed
          console.info(`${b.backend}: taken over ${takenAfter} ms after the kill (lease ${leaseMs} ms)`)
          assert.isAtMost(
            takenAfter,
            leaseMs + 2_000 + schedulingAllowanceMs,
            `taken over ${takenAfter} ms after the kill (lease ${leaseMs} ms)\n${detail()}`
          )
          // The survivor prints its lease once it has taken the job: the store may say so a moment before.
          const printed = new RegExp(`job ${job} \\(import customers\\) lease 2`)
          yield* eventually("the survivor prints lease 2 (one takeover)", () => printed.test(detail()), 60_000, detail)
          // Both long jobs are still running: the job was taken by a busy worker's takeover slot.
          const states = yield* busyStates
          assert.deepStrictEqual(states.map((row) => row.state), ["running", "running"])
          yield* finishedOnce
        }

        // Before any new part. 40 rows at 2 a second (20 s, as 80 rows at 4 a second and 200 rows at 10 a second
        // before): it still runs when killed, after the parts below were submitted (seconds under load); the survivor
        // then has about 30 rows to send. For account `gamma`: its records are counted alone.
        {
          const { finishedOnce, job, takenOver, victim } = yield* victimOf("wd", 2, 40, 2)
          // New parts queued while every job slot of the fleet is busy: 8 parts of 50 rows (for the other account:
          // the victim's records are counted alone).
          const many = customersFile(dir, "novos.csv", 400)
          const parent = yield* submit(many.file, "beta", 50)
          const parts = (yield* Effect.orDie(store.parts(parent))).map((p) => p.id)
          assert.strictEqual(parts.length, 8)

          victim.child.kill("SIGKILL")
          yield* Effect.promise(() => victim.exit)
          const atKill = yield* Effect.orDie(store.job(job))
          assert.strictEqual(atKill.state, "running", "the victim's job was still running when it was killed")
          yield* takenOver

          // Taken by a busy survivor's takeover slot: both long jobs still run, and no new part was ever leased.
          const states = yield* busyStates
          assert.deepStrictEqual(states.map((row) => row.state), ["running", "running"], detail())
          const leases = yield* Effect.orDie(Effect.forEach(parts, (id) => store.lease(id)))
          assert.deepStrictEqual(leases, parts.map(() => undefined), detail())
          // In the queue's history, the job's second activation (the takeover) comes before any part was made
          // active: no new part reached a takeover slot, not even to be put back.
          const events = yield* Effect.promise(() => queueEvents(server.url))
          const activations = events.flatMap((e, i) => e.event === "active" && e.job === job ? [i] : [])
          assert.isAtLeast(activations.length, 2, JSON.stringify(events))
          const partsActive = events.filter((e, i) =>
            i < activations[1]! && parts.includes(e.job) && e.event === "active"
          )
          assert.deepStrictEqual(partsActive, [], "parts made active before the takeover")
          const putBack = events.filter((e) => parts.includes(e.job) && e.event === "delayed")
          assert.deepStrictEqual(putBack, [], "parts put back by a takeover slot")
          // The long jobs have kept the survivors busy long enough: cancelled, they leave the budget to the job.
          for (const job of busy) yield* cancelJob(server.url, job)
          yield* finishedOnce
        }
      }),
    { timeout: 480_000 }
  )
})
