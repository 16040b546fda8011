/**
 * A worker says a job ended only when the store recorded its end (issue 29). Its run is over and the lease still
 * held when it checked, and in the instant before it writes the job's outputs and end, the job is taken from it:
 * another worker takes the lease over, or `cancel` raises its epoch. The store then refuses the end; the worker
 * must say it lost the lease, and to what (as it does for a lease lost during the run), and neither say "done" or
 * "failed" nor write its reports over the job's. Before, the end's refusal went unseen: the worker said
 * `job J done (exit 0)` for a job still running under another worker, or cancelled, and stored its reports. A job
 * that has not ended (taken over) goes back to the queue: the run fails as a hand-back does, and only a cancelled one
 * leaves the queue. The lease's holder may run nothing (a takeover on Redis whose worker gave up on it, landing when
 * its connection was back), and the queue dropped a job nobody ran (issue 29).
 *
 * In process, a worker's job runner (src/fleet/JobRunner.ts, as `fsm-bulk worker` builds it: its account clients,
 * the store outlasting faults) runs the job the queue would give it, against the real store (a throwaway PostgreSQL,
 * a throwaway redis-server) and the sandbox over loopback. The store is the real one, whose first write of the
 * job's end (an output, or the end itself) first takes the job away, for real, through the store's own operations:
 * the instant a spawned worker cannot be stopped in without a hook of its own. A part whose end was recorded, found
 * again in the queue, settles its job at once (second describe).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { makeBudget } from "../../src/client/Budget.js"
import { defaultBudgetMargin } from "../../src/client/Config.js"
import { makeAccountClients } from "../../src/fleet/AccountClients.js"
import type { FleetError } from "../../src/fleet/Errors.js"
import { makeJobRunner } from "../../src/fleet/JobRunner.js"
import { currentFence } from "../../src/fleet/Lease.js"
import type { FleetStore, NewJob } from "../../src/fleet/Store.js"
import { openStore } from "../../src/fleet/Stores.js"
import { outlastingStore } from "../../src/fleet/Transient.js"
import { startDrillSandbox, tempDir } from "../drills/support.js"
import { freezingProxy, throughProxy } from "./freezing-proxy.js"
import { submitCustomers, submitOnboarding } from "./in-process.js"
import { takenLease } from "./store-fixtures.js"
import { availableBackends, fleetKey, initFleet, startFleetBackend } from "./support.js"
import { clientesCsv, customerCsvDirectory } from "./workbook.js"

const leaseMs = 30_000

/**
 * The store as it is, except that the first write of a job's end (an output `out/…`, the end itself) first runs
 * `takeAway(job)` on the store: the job is taken from the worker in that instant.
 */
const takenAtItsEnd = (
  store: FleetStore,
  takeAway?: (store: FleetStore, job: string) => Effect.Effect<unknown, FleetError>
) => {
  let taken = false
  const first = (job: string): Effect.Effect<void, FleetError> =>
    Effect.suspend(() => {
      if (takeAway === undefined || taken) return Effect.void
      taken = true
      return Effect.asVoid(takeAway(store, job))
    })
  const outputFirst = <A>(job: string, name: string, write: Effect.Effect<A, FleetError>) =>
    name.startsWith("out/") ? Effect.zipRight(first(job), write) : write
  return {
    ...store,
    putFile: (job, name, content) => outputFirst(job, name, store.putFile(job, name, content)),
    putFileUnderLease: (job, epoch, name, content) =>
      outputFirst(job, name, store.putFileUnderLease(job, epoch, name, content)),
    finishJob: (id, epoch, end) => Effect.zipRight(first(id), store.finishJob(id, epoch, end)),
    failJob: (id, epoch, end) => Effect.zipRight(first(id), store.failJob(id, epoch, end))
  } satisfies FleetStore
}

/** A worker's job runner on `store`, built as `fsm-bulk worker` builds it; what it says, line by line. */
const jobRunner = (store: FleetStore) =>
  Effect.gen(function*() {
    const said: Array<string> = []
    const rate = { limit: 1_000, windowMs: 1_000 }
    const outlasting = outlastingStore(store, leaseMs, () => Effect.void)
    const { watchAccount } = yield* makeAccountClients({
      store: outlasting,
      key: Buffer.from(fleetKey, "base64"),
      rate,
      budget: yield* makeBudget(rate, defaultBudgetMargin(rate.windowMs)),
      sourceAddress: undefined,
      fenceOf: () => ({ refusal: () => currentFence()?.refusal() }),
      scope: yield* Effect.scope
    })
    const runner = makeJobRunner({
      store: outlasting,
      egressId: "w-end",
      owner: "w-end/1",
      leaseMs,
      workRoot: yield* tempDir,
      say: (line) => Effect.sync(() => void said.push(line)),
      shutdown: yield* Deferred.make<void>(),
      unfit: yield* Deferred.make<FleetError>(),
      watchAccount
    })
    return { runner, said }
  })

/** A fleet on `backend` with account `acme` on a fresh sandbox: the store, and a pt-BR customers file of 3 rows. */
const fleet = (backend: "postgres" | "redis") =>
  Effect.gen(function*() {
    const { url } = yield* startFleetBackend(backend)
    const sandbox = yield* startDrillSandbox({
      rate: { limit: 10_000, windowMs: 1_000 },
      accounts: [{ apiKey: "acme-key", apiToken: "acme-token" }]
    })
    yield* initFleet(url, [{ name: "acme", baseUrl: sandbox.url, apiKey: "acme-key", apiToken: "acme-token" }])
    const store = yield* Effect.orDie(openStore(url))
    return { url, store, sandbox, file: clientesCsv(yield* tempDir, 3).file }
  })

const takenOver = (store: FleetStore, job: string) => takenLease(store, job, "w-other/1")
const cancelled = (store: FleetStore, job: string) => store.cancelJob(job)

describe("a worker whose job is taken from it as it ends the job", () => {
  for (const { backend } of availableBackends) {
    it.scopedLive(
      `holding its lease to the end, it records the job done and says so (${backend})`,
      () =>
        Effect.gen(function*() {
          const { file, store, url } = yield* fleet(backend)
          const job = yield* submitCustomers(url, file, "acme")
          const { runner, said } = yield* jobRunner(takenAtItsEnd(store))
          yield* runner.runJob({ job })
          assert.include(said, `worker w-end: job ${job} done (exit 0)`, said.join("\n"))
          assert.strictEqual((yield* store.job(job)).state, "done")
          assert.isNotEmpty(yield* store.files(job, "out/"), "its reports are stored")
        }).pipe(Effect.orDie),
      120_000
    )

    for (
      const [how, takeAway, said] of [
        ["taken over by another worker", takenOver, "another worker has it"],
        ["cancelled", cancelled, "the job was cancelled"]
      ] as const
    ) {
      it.scopedLive(
        `${how}: it says the lease lost, not done, and stores no report (${backend})`,
        () =>
          Effect.gen(function*() {
            const { file, store, url } = yield* fleet(backend)
            const job = yield* submitCustomers(url, file, "acme")
            const runner = yield* jobRunner(takenAtItsEnd(store, takeAway))
            const run = yield* Effect.either(runner.runner.runJob({ job }))
            const log = runner.said.join("\n")
            const ends = runner.said.filter((l) => /^worker w-end: job \S+ (done|failed)/.test(l))
            assert.deepStrictEqual(ends, [], `it does not say the job ended, it said: ${ends.join(" | ")}`)
            assert.include(runner.said, `worker w-end: job ${job}: lease 1 lost; ${said}`, log)
            assert.strictEqual((yield* store.job(job)).state, how === "cancelled" ? "cancelled" : "running")
            assert.isEmpty(yield* store.files(job, "out/"), "none of its reports replaced the job's")
            // What the queue is told (Worker.ts: a run that succeeds is removed from the queue): a cancelled job has
            // ended and leaves it; one that has not ended goes back to it (handedBack), whoever holds its lease.
            assert.strictEqual(
              run._tag === "Left" ? String(run.left) : "left the queue",
              how === "cancelled" ? "left the queue" : `Error: job ${job} handed back by w-end`
            )
          }).pipe(Effect.orDie),
        120_000
      )
    }

    it.scopedLive(`a failure it cannot record is not said either (${backend})`, () =>
      Effect.gen(function*() {
        const { store } = yield* fleet(backend)
        // An import without its source file ends failed (`job J has no source file`), under its lease.
        yield* store.addJob(part("nosource", null))
        const { runner, said } = yield* jobRunner(takenAtItsEnd(store, takenOver))
        const run = yield* Effect.flip(runner.runJob({ job: "nosource" }))
        const log = said.join("\n")
        const ends = said.filter((l) => /^worker w-end: job \S+ (done|failed)/.test(l))
        assert.deepStrictEqual(ends, [], `it does not say the job failed, it said: ${ends.join(" | ")}`)
        assert.include(said, "worker w-end: job nosource: lease 1 lost; another worker has it", log)
        assert.strictEqual((yield* store.job("nosource")).state, "running")
        assert.strictEqual(String(run), "Error: job nosource handed back by w-end", "it goes back to the queue")
      }).pipe(Effect.orDie), 120_000)
  }
})

/**
 * A takeover whose worker gave up on it, landing later (Redis): worker A's connection to the store goes silent (the
 * freezing proxy) as A asks for the job's lease; A gives up on the answer (after 1 s, sooner than its store would: a
 * take the store itself gave up on, at its answer timeout, no longer lands, ./late-take-cli.test.ts). The path is reset
 * as the job's worker, B, ends the job, and ioredis sends A's command again at its reconnection: the lease is A's,
 * which runs nothing. B must leave the job to the queue, not as done: before, B's run succeeded (the queue removed the
 * job) and the job stayed `running` under a lease nobody held for ever (issue 29).
 */
const staleTakeover = (url: string) =>
  Effect.gen(function*() {
    // The path freezes as A's take leaves it (the server's clock, read just before, answered).
    const proxy = yield* freezingProxy(Number(new URL(url).port), undefined, "w-gone/1")
    const gone = yield* Effect.orDie(openStore(throughProxy(url, proxy)))
    yield* Effect.orDie(gone.job("none").pipe(Effect.ignore))
    return (store: FleetStore, job: string) =>
      Effect.gen(function*() {
        const asked = yield* Effect.either(Effect.timeout(gone.takeOpenLease(job, "w-gone/1"), 1_000))
        assert.strictEqual(asked._tag, "Left", "worker A gave up on its takeover")
        assert.isAtLeast(proxy.frozen.connections, 1, "worker A's connection to the store is frozen")
        proxy.reset()
        // A's connection back: what it asks now is answered after what it had asked before.
        yield* gone.lease(job)
        return yield* store.lease(job)
      })
  })

describe("a worker whose job's lease a takeover given up on takes at its end (redis)", () => {
  it.scopedLive.skipIf(!availableBackends.some((b) => b.backend === "redis"))(
    "gives the job back to the queue instead of leaving it to a lease nobody runs under",
    () =>
      Effect.gen(function*() {
        const { file, store, url } = yield* fleet("redis")
        const job = yield* submitCustomers(url, file, "acme")
        const takeAway = yield* staleTakeover(url)
        let holder: unknown
        const { runner, said } = yield* jobRunner(
          takenAtItsEnd(store, (s, id) => Effect.tap(takeAway(s, id), (lease) => (holder = lease)))
        )
        const run = yield* Effect.either(runner.runJob({ job }))
        const log = said.join("\n")
        assert.deepStrictEqual(holder, { epoch: 2, owner: "w-gone/1" }, "A's takeover landed at its reconnection")
        assert.include(said, `worker w-end: job ${job}: lease 1 lost; another worker has it`, log)
        assert.strictEqual((yield* store.job(job)).state, "running")
        assert.strictEqual(
          run._tag === "Left" ? String(run.left) : "left the queue",
          `Error: job ${job} handed back by w-end`,
          `the job goes back to the queue: ${log}`
        )
      }).pipe(Effect.orDie),
    120_000
  )
})

const part = (id: string, parent: string | null): NewJob => ({
  id,
  kind: parent === null ? "import" : "chunk",
  account: "acme",
  resource: "customers",
  spec: { resource: "customers" },
  rows: 1,
  parent
})

describe("an onboarding cancelled as its worker ends it", () => {
  for (const { backend } of availableBackends) {
    it.scopedLive(
      `its worker says it was cancelled, not taken by another worker (${backend})`,
      () =>
        Effect.gen(function*() {
          const { sandbox, store, url } = yield* fleet(backend)
          const { input, maps } = customerCsvDirectory(yield* tempDir, 3)
          const job = yield* submitOnboarding(url, input, "acme", maps.filter((_, i) => i % 2 === 1))
          // `cancel` in the instant before the job's end (its files and outcome in one step) is written.
          const cancelledAtEnd: FleetStore = {
            ...store,
            endWhole: (id, epoch, outputs, end) =>
              Effect.zipRight(store.cancelJob(id), store.endWhole(id, epoch, outputs, end))
          }
          const { runner, said } = yield* jobRunner(cancelledAtEnd)
          yield* runner.runJob({ job })
          const lost = said.filter((l) => l.includes("lost"))
          assert.deepStrictEqual(
            lost,
            [`worker w-end: job ${job}: lease 1 lost; the job was cancelled`],
            lost.join(" | ")
          )
          assert.strictEqual((yield* store.job(job)).state, "cancelled")
          const records = yield* sandbox.control.records("acme-key", "customers")
          assert.lengthOf(records, 3, `the onboarding ran to its end: ${said.join("\n")}`)
        }).pipe(Effect.orDie),
      120_000
    )
  }
})

describe("a part found ended when the queue gives it", () => {
  for (const { backend } of availableBackends) {
    it.scopedLive(`ends its job at once when every part has ended (${backend})`, () =>
      Effect.gen(function*() {
        const { store } = yield* fleet(backend)
        yield* store.addJob(part("p", null))
        const parts = ["p-part0001", "p-part0002"]
        for (const id of parts) yield* store.addJob(part(id, "p"))
        // Each part's end recorded under its lease; the job not settled (its last part's worker stopped there).
        for (const [i, id] of parts.entries()) {
          const epoch = yield* takenLease(store, id, "w-stopped/1")
          assert.isTrue(yield* store.finishJob(id, epoch, { exitCode: i, summary: {}, rows: 1 }))
        }
        assert.strictEqual((yield* store.job("p")).state, "queued")
        // The queue gives the last part again (it never heard of its end).
        const { runner, said } = yield* jobRunner(store)
        yield* runner.runJob({ job: "p-part0002" })
        const row = yield* store.job("p")
        assert.deepStrictEqual([row.state, row.exit_code], ["done", 1], said.join("\n"))
        assert.include(said, "worker w-end: job p: its part p-part0002 had ended, and so had the others: it ends now")
        // Given again once the job ended: nothing more to do, nothing said.
        yield* runner.runJob({ job: "p-part0001" })
        assert.lengthOf(said, 1)
      }).pipe(Effect.orDie), 120_000)

    it.scopedLive(`leaves its job while another part has not ended (${backend})`, () =>
      Effect.gen(function*() {
        const { store } = yield* fleet(backend)
        yield* store.addJob(part("q", null))
        for (const id of ["q-part0001", "q-part0002"]) yield* store.addJob(part(id, "q"))
        const epoch = yield* takenLease(store, "q-part0001", "w-stopped/1")
        assert.isTrue(yield* store.finishJob("q-part0001", epoch, { exitCode: 0, summary: {}, rows: 1 }))
        const { runner, said } = yield* jobRunner(store)
        yield* runner.runJob({ job: "q-part0001" })
        assert.strictEqual((yield* store.job("q")).state, "queued")
        assert.deepStrictEqual(said, [])
      }).pipe(Effect.orDie), 120_000)
  }
})
