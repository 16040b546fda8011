/**
 * The pace holds back BullMQ's own fetch (`_getNextJob`, private in its types; `pacedFetch` in src/fleet/Queue.ts):
 * BullMQ's API has no way to hold a worker's next fetch and still leave the queue's wake-up to the workers that may
 * take a job (docs/fleet.md, "When a worker takes a further job"). A BullMQ without that method would leave the job
 * slots unpaced without a word, so a worker checks it before it is made, and stops at its start. Shown on the
 * BullMQ installed (both backends' workers have it: this fails once an upgrade drops it) and on a class without it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as bullmq from "bullmq"
import { checkPaceable } from "../../src/fleet/Queue.js"

describe("the pace's hold on BullMQ's fetch", () => {
  it("the installed BullMQ's workers have the fetch the pace holds back, on both backends", () => {
    assert.doesNotThrow(() => checkPaceable(bullmq.withBackend(bullmq.createPostgresBackend).Worker.prototype))
    assert.doesNotThrow(() => checkPaceable(bullmq.withBackend(bullmq.createRedisBackend).Worker.prototype))
  })

  it("a worker without it is refused before it is made, saying why", () => {
    class Unpaceable {
      async getNextJob() {}
    }
    assert.throws(
      () => checkPaceable(Unpaceable.prototype),
      /no _getNextJob .* not the version fsm-bulk was built with/
    )
  })
})
