import { assert, describe, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import type { ApiRequest } from "../../src/client/Api.js"
import { resource } from "../../src/Resources.js"
import { makeClient, requestsTo, startTestSandbox } from "./support.js"

const customers = resource("customers")
const newCustomer = (externalId: string): ApiRequest => ({
  method: "POST",
  path: "/customers",
  body: { externalId, name: `Padaria São João ${externalId}` },
  correlation: { resource: customers, key: "externalId", value: externalId }
})

/** The current tracer, with the name of every span it starts recorded in `names`. */
const recording = (names: Array<string>) =>
  Effect.map(Effect.tracer, (inner) =>
    Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return inner.span(name, ...rest)
      },
      context: (f, fiber) => inner.context(f, fiber)
    }))

describe("a request's cost", () => {
  it.scopedLive("a request starts no span: none of ours, none of the HTTP client's (issue 29: per-row work)", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const api = yield* makeClient(sandbox)
      // The login is made by the first request; what is counted is the steady state of a run's rows.
      assert.strictEqual((yield* api.request(newCustomer("CLI-0"))).status, 201)
      const names: Array<string> = []
      const tracer = yield* recording(names)
      const replies = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => newCustomer(`CLI-${i + 1}`)),
        (req) => api.request(req),
        { concurrency: 4 }
      ).pipe(Effect.withTracer(tracer))
      assert.deepStrictEqual(replies.map((r) => r.status), Array.from({ length: 20 }, () => 201))
      // Each still has its own request id, as the reports show it.
      assert.strictEqual(new Set(replies.map((r) => r.evidence.requestId)).size, 20)
      assert.strictEqual(requestsTo(yield* sandbox.control.requests, "POST", /\/customers$/).length, 21)
      assert.deepStrictEqual(names, [])
    }))
})
