/**
 * The fleet's packages (BullMQ, pg, ioredis), each loaded when a command first needs it, never at start-up
 * (test/cli/startup-cli.test.ts), and given as the package's CommonJS `module.exports`. All three are CommonJS: Node's
 * `import()` of one gives `module.exports` as `default` beside the names it finds in the text, the bundle's chunks
 * (scripts/bundle.mjs bundles them) give `default` only; reading the names from `default` is right under both.
 */
import type { Scope } from "effect"
import * as Effect from "effect/Effect"
import type { Pool, PoolConfig } from "pg"

const exportsOf = <M>(m: M): M => (m as { readonly default?: M }).default ?? m

/** BullMQ: the queue engine, on both backends (submit, cancel, worker, `fleet init`'s tables). */
export const loadBullmq = Effect.promise(() => import("bullmq").then(exportsOf))

/** pg: the store and the takeover claim on PostgreSQL, through `scopedPgPool`. */
const loadPg = Effect.promise(() => import("pg").then(exportsOf))

const ignore = () => undefined

/**
 * A pg pool for the scope whose connections never end the process when they fail. pg's client emits `error` when its
 * connection fails or the server ends it (`pg_terminate_backend`, a restart, an idle timeout), and Node throws an
 * `error` nobody listens to. The pool listens only while a connection is idle, `pool.query` while its statement runs;
 * a connection checked out and between two statements (a transaction's, the egress hold's) had no listener, and a
 * worker whose sessions were ended died with a stack trace instead of stopping as documented (issue 29, the CI run of
 * stop 44). Here every connection listens from its opening to its end: its failure reaches the store as the failure
 * of its next statement, and the pool does not take it back (pg-pool drops a connection that failed at its release).
 * Every pool of the fleet is made here (test/fleet/pg-fatal.test.ts).
 */
export const scopedPgPool = (config: PoolConfig): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.flatMap(loadPg, (pg) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool(config)
        pool.on("error", ignore)
        // Emitted for each new connection before it is handed out, while the pool's own idle listener is still on.
        pool.on("connect", (client) => client.on("error", ignore))
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.ignore)
    ))

/** ioredis: the store and the takeover claim on Redis. */
export const loadIoredis = Effect.promise(() => import("ioredis").then(exportsOf))
