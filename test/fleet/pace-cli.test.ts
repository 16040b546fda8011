/**
 * A worker whose one part keeps its budget full leaves the queue's other parts to a worker that comes free (issue 29,
 * the fleet's tail): worker `wa` (`--jobs 4 --rate 1/1s`) alone when four parts of 20 rows are queued, then worker
 * `wb`, idle, once `wa` sends. Before, `wa` filled its four job slots at once: its parts waited on its budget, sent
 * in turn at one a second for 80 s, while `wb` found the queue empty and stayed idle (the scale smoke's tail: 11 / 9 / 10
 * parts to three workers, one address done 10.5 s before the last). Now `wa` holds its part and at most the next (taken
 * when the part's rows left fit in two seconds of its budget), and `wb` takes the rest as it comes free: two parts each
 * (a part is 20 s at one a second, so `wb`'s start, a few seconds on a loaded machine, does not decide it). The
 * budget is one request a second so that one part fills it even on a loaded machine: at 4 a second, with load 10 on two
 * cores, a part's store writes held it to 2.7 rows a second, its budget had room, and `wa` rightly took a second part.
 *
 * Judged from the store (which worker owns each part while `wa` sends, and which ran each part), never from timings;
 * then the job ends with every record once. Real worker processes on PostgreSQL and Redis; the submission in process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { openStore } from "../../src/fleet/Stores.js"
import { customersFile } from "../drills/support.js"
import { ended, submitCustomers } from "./in-process.js"
import { acmeBetaFleet, availableBackends, eventually, startWorker } from "./support.js"

const rowsPerPart = 20

describe("fleet: a worker takes a further part only when its budget has room", () => {
  it.scopedLive.each(availableBackends)(
    "a worker whose part fills its budget leaves the other parts to an idle worker ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { dir, env, sandbox, server } = yield* acmeBetaFleet(b.backend, 4_000)
        const store = yield* Effect.orDie(openStore(server.url))
        const busy = yield* startWorker(["--egress-id", "wa", "--jobs", "4", "--rate", "1/1s"], env)
        const stderr = () => `wa:\n${busy.stderr()}`
        yield* eventually("wa is ready", () => busy.stderr().includes("ready"), 60_000, stderr)

        const input = customersFile(dir, "clientes.csv", 4 * rowsPerPart)
        const parent = yield* submitCustomers(server.url, input.file, "acme", rowsPerPart)
        const parts = (yield* Effect.orDie(store.parts(parent))).map((p) => p.id)
        assert.strictEqual(parts.length, 4)
        const rowsOf = (ids: ReadonlyArray<string>) => Effect.runPromise(Effect.forEach(ids, (id) => store.job(id)))

        // Until `wa` has sent rows of a part: its budget (one a second) is full from then on.
        const sending = async () => {
          for (const row of await rowsOf(parts)) {
            if (row.owner !== "wa") continue
            if ((await Effect.runPromise(store.journalLines(row.id))).length > 3) return true
          }
          return false
        }
        yield* eventually("wa sends rows of a part", sending, 120_000, stderr)
        const held = (yield* Effect.promise(() => rowsOf(parts))).filter((row) => row.owner === "wa")
        // Its part, and the next once that part's rows left fit in two seconds of its budget (2 rows): never all four.
        assert.isAtMost(held.length, 2, `${held.map((row) => `${row.id} ${row.state}`).join(", ")}\n${stderr()}`)

        const idle = yield* startWorker(["--egress-id", "wb", "--jobs", "4", "--rate", "1/1s"], env)
        const both = () => `${stderr()}\nwb:\n${idle.stderr()}`
        const waited = yield* ended(server.url, parent, 240_000, both)
        assert.deepStrictEqual([waited.state, waited.exit_code], ["done", 0], both())

        // Which worker ran each part: the idle worker took its share instead of waiting on the busy one's budget.
        const owners = (yield* Effect.promise(() => rowsOf(parts))).map((row) => row.owner)
        const taken = both().split("\n").filter((line) => / lease \d+$/.test(line)).join("\n")
        console.info(`${b.backend}: parts run by ${owners.join(" / ")}\n${taken}`)
        assert.isAtLeast(owners.filter((o) => o === "wb").length, 2, `${owners.join(" / ")}\n${both()}`)
        assert.deepStrictEqual(owners.filter((o) => o !== "wa" && o !== "wb"), [], owners.join(" / "))

        const records = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
        assert.deepStrictEqual(records.map((c) => String(c.externalId)).sort(), [...input.valid].sort())
      }),
    { timeout: 360_000 }
  )
})
