/**
 * Two egress ids on one source address (issue 29, 3c): the API counts its budget per address, so two workers
 * leaving from one address with different egress ids would each spend the address's whole budget. The hold of a
 * worker's egress id holds its `--source-address` too: a second id on the same address is refused, naming the
 * first; another address, or the same one once the first worker is gone, is fine.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { openStore } from "../../src/fleet/Stores.js"
import { availableBackends, startFleetBackend } from "./support.js"

describe.each(availableBackends)("source addresses on $backend", ({ backend }) => {
  it.scoped("a second egress id on one source address is refused, naming the first", () =>
    Effect.gen(function*() {
      const server = yield* startFleetBackend(backend)
      const store = yield* openStore(server.url)
      yield* store.init
      const first = yield* Scope.make()
      yield* Scope.extend(store.holdEgress("host-a", "127.0.0.21"), first)

      const second = yield* Effect.exit(Effect.scoped(store.holdEgress("host-b", "127.0.0.21")))
      assert.isTrue(Exit.isFailure(second), "a second egress id on the address is refused")
      const why = String(Exit.isFailure(second) ? second.cause : "")
      assert.include(why, "--source-address 127.0.0.21")
      assert.include(why, "--egress-id host-a", "the refusal names the worker already on the address")
      // Refused as a whole: its egress id is not left held.
      yield* Effect.scoped(store.holdEgress("host-b", "127.0.0.22"))

      // Another address, or no address given, is fine.
      const other = yield* Scope.make()
      yield* Scope.extend(store.holdEgress("host-c", "127.0.0.22"), other)
      yield* Effect.scoped(store.holdEgress("host-d"))
      // Once the first worker is gone, its address is free for another id.
      yield* Scope.close(first, Exit.void)
      yield* Effect.scoped(store.holdEgress("host-b", "127.0.0.21"))
      yield* Scope.close(other, Exit.void)
    }), {
    timeout: 120_000,
    // Once, in a whole `npm test` on PostgreSQL, this test hung past its timeout (alone and beside the other fleet
    // files it takes 11 s); the cause is not found yet. One retry keeps CI meaningful while it is looked for.
    retry: 1
  })
})
