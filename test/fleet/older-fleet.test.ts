/**
 * A PostgreSQL fleet made by an older version, without a table this one writes (`file_pieces`: the staged `submit`
 * stores its file's pieces there, a worker's sweep removes them). Every command but `fleet init` asks the store
 * whether it is ready (`requireInit`): such a fleet is refused with what it lacks and the command that adds it,
 * instead of a `submit` failing mid-way with "relation does not exist" and each worker sweep failing. `fleet init`
 * (the store's `init`), run again, adds it and keeps the fleet's jobs.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { initialisedPostgres } from "./support.js"

describe("a fleet made by an older version", () => {
  it.scopedLive(
    "is refused until fleet init adds the tables it lacks, and keeps its jobs",
    () =>
      Effect.gen(function*() {
        const { db: c, store } = yield* initialisedPostgres
        yield* store.addJob({
          id: "old-1",
          kind: "import",
          account: "acme",
          resource: "customers",
          spec: {},
          rows: 3,
          parent: null
        })
        yield* Effect.promise(() => c.query(`DROP TABLE fsm_bulk.file_pieces`))

        const refused = yield* Effect.exit(store.requireInit)
        assert.isTrue(Exit.isFailure(refused), "a fleet without file_pieces is not ready")
        const text = JSON.stringify(refused)
        assert.include(text, "fsm_bulk.file_pieces")
        assert.include(text, "fsm-bulk fleet init")
        assert.notInclude(text, "not initialised", "it is an older fleet, not an empty database")

        yield* store.init
        yield* store.requireInit
        assert.strictEqual((yield* store.job("old-1")).rows, 3, "the fleet's jobs are kept")
      }),
    { timeout: 120_000 }
  )
})
