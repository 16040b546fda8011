/**
 * The egress id is fenced like a job's lease (issue 29, 3b): on Redis the id is a key with an expiry, so a worker
 * paused past it can find, when it wakes, that another worker took the id. Its requests must not leave meanwhile:
 * the hold's fence (read where the bytes leave) refuses once the last confirmation is half the expiry old, and its
 * gate (before each request) confirms again and finds the id lost.
 *
 * The pause is real: the test process blocks in `spawnSync` while a child process, the "second worker", waits for
 * the key to lapse and takes the id. The hold reads Effect's Clock (fleet/Lease.ts), so the test runs on the live
 * clock (`scopedLive`): under the TestClock the pause would never age the hold.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Redis } from "ioredis"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { openStore } from "../../src/fleet/Stores.js"
import { backends, startFleetBackend } from "./support.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** Blocks this process (a pause: no timer, no renewal runs) until a child took `key` once it lapsed. */
const pausedWhileAnotherTakes = (url: string, key: string) => {
  const child = spawnSync(process.execPath, [
    "-e",
    `const { Redis } = require("ioredis")
     const r = new Redis(${JSON.stringify(url)})
     const take = async () => {
       while ((await r.set(${JSON.stringify(key)}, "second-host/2/y", "PX", 60000, "NX")) !== "OK") {
         await new Promise((ok) => setTimeout(ok, 20))
       }
       await r.quit()
     }
     take().catch((e) => { console.error(e); process.exit(1) })`
  ], { cwd: root, encoding: "utf8", timeout: 60_000 })
  if (child.status !== 0) throw new Error(`the second worker failed: ${child.stderr}`)
}

describe.skipIf(!backends.find((b) => b.backend === "redis")!.available)("the egress id's fence on redis", () => {
  it.scopedLive(
    "a worker paused past its egress key, woken after another took the id, may send nothing",
    () =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend("redis")
        const store = yield* openStore(server.url)
        yield* store.init
        const before = process.env.FSM_FLEET_EGRESS_MS
        process.env.FSM_FLEET_EGRESS_MS = "600"
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            if (before === undefined) delete process.env.FSM_FLEET_EGRESS_MS
            else process.env.FSM_FLEET_EGRESS_MS = before
          })
        )
        const hold = yield* store.holdEgress("e-paused")
        assert.isUndefined(hold.refusal(), "a fresh hold lets requests leave")
        assert.isTrue(yield* hold.gate)

        pausedWhileAnotherTakes(server.url, "fsm-bulk:egress:e-paused")
        // Woken: before any timer or renewal has run, a request's bytes are refused where they leave.
        const why = hold.refusal()
        assert.isDefined(why, "the fence refuses a write under an unconfirmed egress id")
        assert.include(why!, "--egress-id e-paused")
        // The gate before the next request asks the store, finds the id taken, and the hold ends.
        const lost = yield* Effect.fork(hold.lost)
        assert.isFalse(yield* hold.gate)
        assert.include(hold.refusal()!, "another worker has it")
        yield* Fiber.join(lost)
        const other = new Redis(server.url)
        yield* Effect.addFinalizer(() => Effect.promise(() => other.quit()))
        assert.strictEqual(yield* Effect.promise(() => other.get("fsm-bulk:egress:e-paused")), "second-host/2/y")
      }),
    { timeout: 60_000 }
  )
})
