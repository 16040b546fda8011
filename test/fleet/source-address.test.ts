/**
 * Two egress ids on one source address (issue 29, 3c): the API counts its budget per address, so two workers
 * leaving from one address with different egress ids would each spend the address's whole budget. The hold of a
 * worker's egress id holds its `--source-address` too: a second id on the same address is refused, naming the
 * first; another address, or the same one once the first worker is gone, is fine.
 *
 * On the live clock (`scopedLive`): the store and the servers are real, and a test clock would hold any wait the code
 * under test makes through Effect's clock for ever. Each step has a bound of its own and says which it was, and the
 * holds are let go with the test's scope whatever happens: in two whole `npm test` runs on PostgreSQL this test hung
 * past its 120 s (11 s alone and beside the other fleet files), once in both tries, and the hold still open then kept
 * the store's pool from closing (a hook timed out after it). The next hang names its step.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Scope } from "effect"
import { openStore } from "../../src/fleet/Stores.js"
import { availableBackends, startFleetBackend } from "./support.js"

/** `effect`, failing with `step`'s name if it takes longer than 30 s (it takes well under a second). */
const step = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, {
    duration: Duration.seconds(30),
    onTimeout: () => new Error(`the step "${name}" did not end within 30 s`)
  })

describe.each(availableBackends)("source addresses on $backend", ({ backend }) => {
  it.scopedLive("a second egress id on one source address is refused, naming the first", () =>
    Effect.gen(function*() {
      const server = yield* step("start the store's server", startFleetBackend(backend))
      const store = yield* step("open the store", openStore(server.url))
      yield* step("init", store.init)
      /** A hold kept until `Scope.close`, or the test's end. */
      const held = (id: string, address: string) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
          yield* step(`hold ${id} on ${address}`, Scope.extend(store.holdEgress(id, address), scope))
          return scope
        })
      const first = yield* held("host-a", "127.0.0.21")

      const second = yield* Effect.exit(step("refuse host-b", Effect.scoped(store.holdEgress("host-b", "127.0.0.21"))))
      assert.isTrue(Exit.isFailure(second), "a second egress id on the address is refused")
      const why = String(Exit.isFailure(second) ? second.cause : "")
      assert.include(why, "--source-address 127.0.0.21")
      assert.include(why, "--egress-id host-a", "the refusal names the worker already on the address")
      // Refused as a whole: its egress id is not left held.
      yield* step("host-b on another address", Effect.scoped(store.holdEgress("host-b", "127.0.0.22")))

      // Another address, or no address given, is fine.
      const other = yield* held("host-c", "127.0.0.22")
      yield* step("host-d on no address", Effect.scoped(store.holdEgress("host-d")))
      // Once the first worker is gone, its address is free for another id.
      yield* Scope.close(first, Exit.void)
      yield* step("host-b on the first's address", Effect.scoped(store.holdEgress("host-b", "127.0.0.21")))
      yield* Scope.close(other, Exit.void)
    }), {
    timeout: 120_000,
    // One retry while the hang's cause is not known (above).
    retry: 1
  })
})
