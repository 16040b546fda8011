/**
 * The fleet's packages (BullMQ, pg, ioredis), each loaded when a command first needs it, never at start-up
 * (test/cli/startup-cli.test.ts), and given as the package's CommonJS `module.exports`. All three are CommonJS: Node's
 * `import()` of one gives `module.exports` as `default` beside the names it finds in the text, the bundle's chunks
 * (scripts/bundle.mjs bundles them) give `default` only; reading the names from `default` is right under both.
 */
import * as Effect from "effect/Effect"

const exportsOf = <M>(m: M): M => (m as { readonly default?: M }).default ?? m

/** BullMQ: the queue engine, on both backends (submit, cancel, worker, `fleet init`'s tables). */
export const loadBullmq = Effect.promise(() => import("bullmq").then(exportsOf))

/** pg: the store and the takeover claim on PostgreSQL. */
export const loadPg = Effect.promise(() => import("pg").then(exportsOf))

/** ioredis: the store and the takeover claim on Redis. */
export const loadIoredis = Effect.promise(() => import("ioredis").then(exportsOf))
