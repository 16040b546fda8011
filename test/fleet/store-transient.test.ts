/**
 * Which store failures pass (Store.ts, `isTransient`, the one place both backends and the queue engine's calls are
 * classified): tried again within the lease (`Unavailable`), or the store's refusal, not tried again (`Refused`).
 */
import { assert, describe, it } from "@effect/vitest"
import { isTransient, storeFailure } from "../../src/fleet/Store.js"

/** A PostgreSQL error as `pg` gives it: a SQLSTATE with its severity. */
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: "ERROR" })
/** A Redis error reply as ioredis gives it. */
const replyError = (message: string) => Object.assign(new Error(message), { name: "ReplyError" })
/** A Node system error. */
const systemError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code })

describe("isTransient", () => {
  it("passes: lost or refused connections, timeouts, restarts, full disks, Redis loading", () => {
    for (
      const cause of [
        pgError("57P01", "terminating connection due to administrator command"),
        pgError("57014", "canceling statement due to statement timeout"),
        pgError("57P03", "the database system is starting up"),
        pgError("08006", "connection failure"),
        pgError("53100", "could not extend file: No space left on device"),
        pgError("40P01", "deadlock detected"),
        pgError("55P03", "could not obtain lock"),
        replyError("LOADING Redis is loading the dataset in memory"),
        replyError("MISCONF Errors writing to the AOF file"),
        replyError("READONLY You can't write against a read only replica."),
        replyError("BUSY Redis is busy running a script."),
        systemError("ECONNREFUSED"),
        systemError("ECONNRESET"),
        systemError("EPIPE"),
        new Error("Connection terminated unexpectedly"),
        new Error("Connection is closed."),
        Object.assign(new Error("Reached the max retries per request limit (which is 3)."), {
          name: "MaxRetriesPerRequestError"
        })
      ]
    ) assert.isTrue(isTransient(cause), cause.message)
  })

  it("does not pass: the store's own refusal of a statement or a script", () => {
    for (
      const cause of [
        pgError("42P01", `relation "fsm_bulk.jobs" does not exist`),
        pgError("23505", "duplicate key value violates unique constraint"),
        pgError("42501", "permission denied for table jobs"),
        pgError("28P01", "password authentication failed"),
        replyError("WRONGTYPE Operation against a key holding the wrong kind of value"),
        replyError("ERR Error running script"),
        replyError("NOAUTH Authentication required.")
      ]
    ) assert.isFalse(isTransient(cause), cause.message)
  })

  it("names the reason: Unavailable (tried again) or Refused, the address without its password", () => {
    const url = "postgres://fsm:secret@db:5432/fsm"
    const passing = storeFailure(url, pgError("57014", "canceling statement due to statement timeout"))
    assert.strictEqual(passing.reason, "Unavailable")
    const refused = storeFailure(url, pgError("42P01", "relation does not exist"))
    assert.strictEqual(refused.reason, "Refused")
    assert.notInclude(refused.message, "secret")
  })
})
