/**
 * A job slot that comes free takes a killed worker's stranded parts before any new part (issue 29): a worker killed
 * holding three parts, one survivor with one job slot (busy) and one takeover slot, new parts queued before and after
 * the kill. The takeover slot takes one stranded part; when the survivor's job slot comes free (its long job
 * cancelled), it must claim the other stranded parts first. Before, it took what the queue's own fetch gave: on
 * PostgreSQL a stalled part goes back at the end of the queue, so the new parts went first and the stranded ones
 * waited for them. Asserted from the queue's own event log (which job was made active, in order), never from timings;
 * then the killed worker's job ends with every record once. Real worker processes, killed with -9, on PostgreSQL and
 * Redis.
 *
 * And a busy survivor takes over more stranded parts than one takeover slot: a worker killed holding two parts, one
 * survivor whose two job slots are busy with long jobs. It had one takeover slot: the second part waited for the first
 * taken-over part to end (16.6–17.3 s with a 4 s lease and parts of 60 rows here; 10.8–15.1 s with a 6 s lease in
 * the scale smoke). Now a worker runs up to `--jobs` taken-over jobs besides its job slots: both parts are made
 * active again before any job of the survivor ends (the old code took the second once the first was done), and within
 * the lease + 2 s of the kill, both judged from the queue's own event log (its order, and its times on the store's
 * clock).
 *
 * The workers are spawned (their kill is the point); `submit`, `cancel` and `wait` are made in process
 * (./in-process.ts), and the victims' parts are small, so that what follows the takeover is seconds, not minutes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { openStore } from "../../src/fleet/Stores.js"
import { customersFile } from "../drills/support.js"
import { cancelJob, ended, submitCustomers } from "./in-process.js"
import { acmeBetaFleet, availableBackends, eventually, queueLog, startWorker } from "./support.js"

const each = it.scopedLive.each(availableBackends)

/**
 * What both scenarios read from the store: a parent's parts, jobs' owners, the wait for the victim to send, and the
 * queue's event log with the store's clock (`queue`). All through one store and one connection to the queue's log
 * opened for the test (the polls read every 100 ms: a store or a connection opened for each read cost 8–12 ms of the
 * test's CPU and, on PostgreSQL, a server process; the log's polls had opened 30–67 a test, 165 in the file's four).
 */
const storeReads = (url: string) =>
  Effect.zipWith(Effect.orDie(openStore(url)), queueLog(url), (store, log) => {
    const partsOf = (parent: string) => Effect.map(Effect.orDie(store.parts(parent)), (rows) => rows.map((p) => p.id))
    const owners = (ids: ReadonlyArray<string>) => Effect.runPromise(Effect.forEach(ids, (id) => store.job(id)))
    const lines = (id: string, state: string) =>
      Effect.runPromise(store.journalLines(id)).then((all) => all.filter((l) => l.includes(`"state":"${state}"`)))
    // A row on its way: its `sending` line is written once the import queued it for the client, before its request
    // waits for a permit and the budget (it may still be unanswered).
    const sending = (id: string) => lines(id, "sending").then((sent) => sent.length > 0)
    /** The rows of each job answered so far (their `done` lines): what a failed check at the kill says. */
    const answered = (ids: ReadonlyArray<string>) =>
      Promise.all(ids.map((id) => lines(id, "done").then((done) => done.length)))
    /** Until the victim (egress id `wa`) owns every one of `parts` and has rows of each on their way. */
    const victimSends = (label: string, parts: ReadonlyArray<string>, stderr: () => string) =>
      eventually(
        label,
        async () =>
          (await owners(parts)).every((row) => row.owner === "wa") &&
          (await Promise.all(parts.map(sending))).every(Boolean),
        120_000,
        stderr
      )
    return { partsOf, owners, answered, victimSends, queue: log }
  })

const leaseMs = 4_000

describe("fleet takeover by job slots", () => {
  each(
    "a free job slot starts every stranded part before any new part ($backend)",
    (b) =>
      Effect.gen(function*() {
        // The killed worker's job is for `acme`, everything else for `beta`: its records are counted alone.
        // `acme`'s own budget (3/2s) below its workers': a worker runs its parts together (Pace.ts).
        const { dir, env, sandbox, server } = yield* acmeBetaFleet(b.backend, leaseMs, { acme: "3/2s" })
        const submit = (file: string, account: string, chunkRows?: number) =>
          submitCustomers(server.url, file, account, chunkRows)
        const { answered, owners, partsOf, queue, victimSends } = yield* storeReads(server.url)

        // The survivor: one job slot, busy with a long job, and its takeover slot.
        const survivor = yield* startWorker(["--egress-id", "wb", "--jobs", "1", "--rate", "10/1s"], env)
        const busy = yield* submit(customersFile(dir, "longo.csv", 900).file, "beta")
        yield* eventually(
          "the survivor runs the long job",
          async () => (await owners([busy]))[0]!.owner === "wb",
          120_000,
          survivor.stderr
        )

        // The victim: three job slots, each sending a part of 30 rows (3 every 2 s between them, `acme`'s budget: 40 s
        // a part as the parts take turns, 20 s should one part run alone until the others are claimed), so each still
        // runs at the kill, with most of its rows left for the survivor to send after the takeover. At 3 a second,
        // parts taking turns (client/Lanes.ts) had two of the three done before the kill once, on a loaded machine.
        // Its own budget sends all three parts' 90 rows within the pace's horizon (2 s at 90/2s, Pace.ts), so it takes
        // each part as soon as it knows the rows of the last, and the three start together. At 30/2s it took the third
        // only once the second had sent for a window (its budget never full), and in a clean-clone run (and here
        // under two busy loops) the second part's look-up, asked again alone, waited until the first part had sent
        // all its rows (client/Lanes.ts, fleet/AccountClients.ts): the first part ran alone and was done at the kill.
        const victim = yield* startWorker(["--egress-id", "wa", "--jobs", "3", "--rate", "90/2s"], env)
        const input = customersFile(dir, "clientes.csv", 90)
        const parent = yield* submit(input.file, "acme", 30)
        const stranded = yield* partsOf(parent)
        assert.strictEqual(stranded.length, 3)
        yield* victimSends("the victim sends all three parts", stranded, victim.stderr)
        // New parts queued while every job slot is busy, and more once the victim is dead.
        const newParts = (name: string, rows: number) =>
          Effect.flatMap(
            submit(customersFile(dir, name, rows).file, "beta", 20),
            partsOf
          )
        const before = yield* newParts("novos.csv", 80)
        victim.child.kill("SIGKILL")
        yield* Effect.promise(() => victim.exit)
        const atKill = yield* Effect.promise(() => owners(stranded))
        assert.deepStrictEqual(
          atKill.map((row) => [row.state, row.owner]),
          stranded.map(() => ["running", "wa"]),
          `rows answered of each part at the kill: ${(yield* Effect.promise(() => answered(stranded))).join(", ")}`
        )
        const after = yield* newParts("depois.csv", 40)
        const fresh = [...before, ...after]
        assert.strictEqual(fresh.length, 6)

        // The takeover slot takes one stranded part; then the survivor's job slot comes free.
        yield* eventually(
          "the survivor's takeover slot takes a stranded part",
          async () => (await owners(stranded)).some((row) => row.owner === "wb"),
          120_000,
          survivor.stderr
        )
        yield* cancelJob(server.url, busy)

        // Until every stranded part was made active again (taken over) or a new part was made active at all.
        const activations = async () => {
          const events = (await queue.timed()).map(({ event, job }, i) => ({ event, job, i }))
          const active = events.filter((e) => e.event === "active")
          return {
            events,
            takenOver: stranded.map((id) => active.filter((e) => e.job === id)[1]?.i),
            firstFresh: active.find((e) => fresh.includes(e.job))?.i
          }
        }
        yield* eventually(
          "every stranded part taken over, or a new part started",
          async () => {
            const seen = await activations()
            return seen.firstFresh !== undefined || seen.takenOver.every((i) => i !== undefined)
          },
          180_000,
          survivor.stderr
        )
        const seen = yield* Effect.promise(activations)
        const order = JSON.stringify(seen.events.filter((e) => e.event === "active"))
        for (const [n, at] of seen.takenOver.entries()) {
          assert.isDefined(at, `stranded part ${stranded[n]} not taken over before a new part started: ${order}`)
          if (seen.firstFresh !== undefined) {
            assert.isBelow(at!, seen.firstFresh, `a new part started before stranded part ${stranded[n]}: ${order}`)
          }
        }

        // The killed worker's job ends, every record once (one holder at a time: nothing sent twice).
        const waited = yield* ended(server.url, parent, 240_000, survivor.stderr)
        assert.deepStrictEqual([waited.state, waited.exit_code], ["done", 0], survivor.stderr())
        const records = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
        assert.deepStrictEqual(records.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
      }),
    { timeout: 420_000 }
  )
})

/**
 * What the lease + 2 s goal allows on this 2-core machine shared by other test files: a spawned worker can be late to
 * a timer by a second or more (as test/fleet/takeover-cli.test.ts allows). The old code took until a long job ended.
 */
const schedulingAllowanceMs = 3_000

describe("fleet takeover of more parts than one takeover slot", () => {
  each(
    "a busy survivor takes over every part of a killed worker before its own jobs end, within the lease + 2 s " +
      "($backend)",
    (b) =>
      Effect.gen(function*() {
        // The accounts' own budgets below their workers': a worker runs their jobs together (Pace.ts).
        const { dir, env, sandbox, server } = yield* acmeBetaFleet(b.backend, leaseMs, { acme: "2/1s", beta: "10/1s" })
        const submit = (file: string, account: string, chunkRows?: number) =>
          submitCustomers(server.url, file, account, chunkRows)
        const { owners, partsOf, queue, victimSends } = yield* storeReads(server.url)

        // The survivor: two job slots, both busy with long jobs (600 rows each, sharing `beta`'s 10 a second: two
        // minutes).
        const survivor = yield* startWorker(["--egress-id", "wb", "--jobs", "2", "--rate", "20/1s"], env)
        const long = customersFile(dir, "longo.csv", 600).file
        const busy = [
          yield* submit(long, "beta"),
          yield* submit(long, "beta")
        ]
        yield* eventually(
          "the survivor runs both long jobs",
          async () => (await owners(busy)).every((row) => row.owner === "wb" && row.state === "running"),
          120_000,
          survivor.stderr
        )

        // The victim: two job slots, each sending a part of 40 rows (`acme`'s 2 a second between them: 40 s a part,
        // 20 s should one part get the whole budget).
        const victim = yield* startWorker(["--egress-id", "wa", "--jobs", "2", "--rate", "20/1s"], env)
        const input = customersFile(dir, "clientes.csv", 80)
        const parent = yield* submit(input.file, "acme", 40)
        const stranded = yield* partsOf(parent)
        assert.strictEqual(stranded.length, 2)
        yield* victimSends("the victim sends both parts", stranded, victim.stderr)

        // The kill, timed on the store's clock before it (so the time to the takeover is never understated).
        const killedAt = yield* Effect.promise(queue.now)
        victim.child.kill("SIGKILL")
        yield* Effect.promise(() => victim.exit)
        const atKill = yield* Effect.promise(() => owners(stranded))
        assert.deepStrictEqual(atKill.map((row) => [row.state, row.owner]), stranded.map(() => ["running", "wa"]))

        // Until both parts were made active again (taken over), or a job ended: a long one, or a part taken over (the
        // old code's one takeover slot took the second part only once the first was done).
        const held = [...busy, ...stranded]
        const seen = async () => {
          const events = await queue.timed()
          const active = events.map((e, i) => ({ ...e, i })).filter((e) => e.event === "active")
          return {
            events,
            takenOver: stranded.map((id) => active.filter((e) => e.job === id)[1]),
            firstEnd: events.findIndex((e) => held.includes(e.job) && (e.event === "completed" || e.event === "failed"))
          }
        }
        yield* eventually(
          "both stranded parts taken over, or a job ended",
          async () => {
            const now = await seen()
            return now.firstEnd >= 0 || now.takenOver.every((e) => e !== undefined)
          },
          240_000,
          survivor.stderr
        )
        const log = yield* Effect.promise(seen)
        const order = JSON.stringify(log.events.filter((e) => e.event !== "progress"))
        for (const [n, taken] of log.takenOver.entries()) {
          assert.isDefined(taken, `stranded part ${stranded[n]} not taken over before a job ended: ${order}`)
          if (log.firstEnd >= 0) {
            assert.isBelow(taken!.i, log.firstEnd, `a job ended before part ${stranded[n]} was taken: ${order}`)
          }
          const after = taken!.at - killedAt
          console.info(`${b.backend}: part ${n + 1} taken over ${after} ms after the kill (lease ${leaseMs} ms)`)
          assert.isAtMost(after, leaseMs + 2_000 + schedulingAllowanceMs, `part ${stranded[n]}: ${order}`)
        }
        // Both by the busy survivor (its lease in the store follows the queue's claim), its long jobs still its own.
        yield* eventually(
          "the survivor holds both parts' leases",
          async () => (await owners([...stranded, ...busy])).every((row) => row.owner === "wb"),
          60_000,
          survivor.stderr
        )
        // The long jobs have kept the survivor busy long enough: cancelled, they leave its budget to the parts.
        for (const job of busy) yield* cancelJob(server.url, job)

        // The killed worker's job ends, every record once.
        const waited = yield* ended(server.url, parent, 240_000, survivor.stderr)
        assert.deepStrictEqual([waited.state, waited.exit_code], ["done", 0], survivor.stderr())
        const records = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
        assert.deepStrictEqual(records.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
      }),
    { timeout: 480_000 }
  )
})
