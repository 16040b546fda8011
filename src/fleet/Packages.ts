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
 * The pg pool setting under which every connection listens for its errors from its opening to its end: each pool of
 * the fleet has it, ours (`scopedPgPool`) and BullMQ's (its `connection` settings go to its pool). pg's client emits
 * `error` when its connection fails or the server ends it (`pg_terminate_backend`, a restart, an idle timeout), and
 * Node throws an `error` nobody listens to. A pool listens only while a connection is idle, `pool.query` while its
 * statement runs; a connection checked out between two statements (a transaction's, the egress hold's, a statement's
 * answered but not yet given back, BullMQ's start-up checks) had no listener, and a worker whose sessions were ended
 * died of it with a stack trace instead of stopping as documented (issue 29, the CI run of stop 44). With one, the
 * failure reaches the caller as its next statement's, and the pool drops the connection when it is given back.
 * pg-pool calls `onConnect` on each new connection before handing it out, while its own idle listener is still on.
 * test/fleet/pg-fatal.test.ts. BullMQ's worker would open its LISTEN connection as a `pg.Client` of its own, which
 * `onConnect` does not reach (and BullMQ hears its errors only once it is connected, not while closing it): the
 * worker is given a pool of ours instead, and takes that connection from it (`startEngineWorker`, Queue.ts).
 */
export const errorsHeard: Pick<PoolConfig, "onConnect"> = { onConnect: (client) => void client.on("error", ignore) }

/** A pg pool for the scope, ended with it (`errorsHeard`; a failing idle connection is dropped quietly). */
export const scopedPgPool = (config: PoolConfig): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.flatMap(loadPg, (pg) =>
    Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ ...config, ...errorsHeard }).on("error", ignore)),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.ignore)
    ))

/** ioredis: the store and the takeover claim on Redis. */
export const loadIoredis = Effect.promise(() => import("ioredis").then(exportsOf))
