/**
 * The fleet's store as its commands open it (`status`, `wait`, `submit`, `accounts`, `worker`…): its URL read, the
 * tables checked in place, and a short fault outlasted for up to a lease. Apart from the commands' handlers so that
 * each handler module (Handlers.ts, JobHandlers.ts, FetchHandlers.ts, SubmitHandlers.ts) loads only what its
 * commands run (docs/development.md, "The build").
 */
import * as Effect from "effect/Effect"
import { say } from "../console/Output.js"
import type { FleetError } from "./Errors.js"
import { fleetUrl, leaseMs } from "./Queue.js"
import { openStore } from "./Stores.js"
import { openOutlasting, outlastingStore } from "./Transient.js"

/** The store of an initialised fleet, for the command's scope (test/fleet/in-process.ts opens it so too). */
export const fleetStore = (text: string) =>
  Effect.gen(function*() {
    const url = yield* fleetUrl(text)
    // A short store fault (a server restarting, a killed connection, a statement timeout) is outlasted for up to a
    // lease, as a worker outlasts it (Transient.ts): `wait` keeps waiting, `submit` stores and queues its job once.
    const windowMs = yield* leaseMs
    const stored = yield* openOutlasting(openStore(url), windowMs, sayRetry)
    const store = outlastingStore(stored, windowMs, sayRetry)
    yield* store.requireInit
    // `stored` is the store as it is, for the worker, which outlasts faults its own way.
    return { url, store, stored }
  })

/** Says that the store failed and is tried again: once for each new failure, not at every retry. */
let lastRetry = ""
/** Forgets the last failure said, as a new process starts (for test runners that keep modules between files). */
export const forgetLastRetry = (): void => {
  lastRetry = ""
}
const sayRetry = (e: FleetError) =>
  Effect.suspend(() => {
    if (e.message === lastRetry) return Effect.void
    lastRetry = e.message
    return say(`the fleet store failed, trying again (for up to a lease, FSM_FLEET_LEASE_MS): ${e.message}`)
  })
