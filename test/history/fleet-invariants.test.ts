/**
 * The fleet histories' checks can fail (fleet.ts, `checkFleet`): a job that never ended, a job that ended failed
 * although nothing stopped it, two records of one key, an address over its budget in one window (counted over
 * both sandboxes), a rate-limit answer, requests after an account's removal and writes to its old address after a
 * move beyond what was in flight — and a clean history passes.
 */
import { assert, describe, it } from "@effect/vitest"
import type { RequestLogEntry } from "../../src/sandbox/Sandbox.js"
import { checkFleet, crashes, fleetRate } from "./fleet.js"

const request = (at: number, client: string, apiKey: string, method = "POST", status = 201): RequestLogEntry => ({
  at,
  method,
  path: "/v2/customers",
  status,
  apiKey,
  applied: true,
  client: `::ffff:${client}`,
  inFlight: 1
})

const job = (id: string, account: number, keys: Array<string>) => ({ id, account, keys, step: 0, cancelled: false })
const accounts = [{ at: 0 as const, removed: false }, { at: 0 as const, removed: false }]
const records = (keys: Array<string>) => keys.map((k, i) => ({ id: i + 1, externalId: k }))

describe("the fleet histories' checks", () => {
  it("a clean history passes", () => {
    const found = checkFleet(
      { jobs: [job("j1", 0, ["H0-01", "H0-02"])], changes: [], accounts },
      [{ id: "j1", code: 0, state: "done" }],
      [[request(1_000, "127.0.0.31", "s0-key-0"), request(1_100, "127.0.0.31", "s0-key-0")], []],
      (s, a) => (s === 0 && a === 0 ? records(["H0-01", "H0-02"]) : [])
    )
    assert.deepStrictEqual(found, [])
  })

  it("a lost job, a job that did not end well, a missing record and a second record of a key are found", () => {
    const found = checkFleet(
      { jobs: [job("j1", 0, ["H0-01"]), job("j2", 0, ["H0-02"]), job("j3", 1, ["H1-01"])], changes: [], accounts },
      [{ id: "j1", code: null, state: undefined }, { id: "j2", code: 2, state: "failed" }, {
        id: "j3",
        code: 0,
        state: "done"
      }],
      [[], []],
      (s, a) => (s === 1 && a === 0 ? records(["H0-05", "H0-05"]) : [])
    )
    assert.strictEqual(found.length, 4, found.join("\n"))
    assert.match(found[0]!, /\(lost\) job j1 .* never ended/)
    assert.match(found[1]!, /\(lost\) job j2 .* ended failed, exit 2, not done/)
    assert.match(found[2]!, /\(lost\) job j3 ended done without records H1-01/)
    assert.match(found[3]!, /\(one\) 2 records of H0-05 \(acct0, sandbox 1\)/)
  })

  it("an address over its budget across both sandboxes, and a rate-limit answer, are found", () => {
    const half = Math.ceil(fleetRate.limit / 2) + 1
    const burst = (s: number, status = 201) =>
      Array.from({ length: half }, (_, i) => request(5_000 + i * 10 + s, "127.0.0.32", `s${s}-key-0`, "POST", status))
    const found = checkFleet({ jobs: [], changes: [], accounts }, [], [burst(0), burst(1, 429)], () => [])
    assert.deepStrictEqual(found, [
      `(budget) 127.0.0.32 sent ${2 * half} requests in ${fleetRate.windowMs} ms (budget ${fleetRate.limit})`,
      `(budget) ${half} requests answered with a rate limit`
    ])
  })

  it("requests after a removal and writes to an old address beyond those in flight are found", () => {
    const changes = [
      { account: 0, step: 3, from: 0 as const, at: 10_000, tolerance: 1 },
      { account: 1, step: 4, from: undefined, at: 20_000, tolerance: 2 }
    ]
    const logs = [
      [
        // acct0 moved off sandbox 0 at 10 s: one write may follow, the second may not; reads are not writes.
        request(10_001, "127.0.0.31", "s0-key-0"),
        request(10_002, "127.0.0.31", "s0-key-0", "PUT"),
        request(10_003, "127.0.0.31", "s0-key-0", "GET", 200),
        // acct1 removed at 20 s: three requests after it, two may.
        request(20_001, "127.0.0.31", "s0-key-1"),
        request(20_002, "127.0.0.31", "s0-key-1", "GET", 200)
      ],
      [request(20_003, "127.0.0.31", "s1-key-1")]
    ] as const
    const found = checkFleet({ jobs: [], changes, accounts }, [], logs, () => [])
    assert.deepStrictEqual(found, [
      "(moved) 2 writes of acct0 to its old address (sandbox 0) after it moved at step 3 (1 may)",
      "(removed) 3 requests of acct1 after its removal at step 4 (2 may)"
    ])
  })

  it("a job no worker can serve that ran, ended otherwise, without the refusals, or that status shows otherwise", () => {
    const refused = { ...job("newer-2", 0, []), refused: true }
    const error =
      "no worker can run it (refused by 2): worker w0: it needs job format 3; worker w-drain: it needs job format 3"
    const well = {
      id: "newer-2",
      code: 2,
      state: "failed",
      error,
      status: { state: "failed", exitCode: 2, error },
      journal: 0
    }
    const check = (end: typeof well) =>
      checkFleet({ jobs: [refused], changes: [], accounts }, [end], [[], []], () => [])
    assert.deepStrictEqual(check(well), [])
    // Taken and run as if the worker knew its format.
    assert.deepStrictEqual(
      check({ ...well, code: 0, state: "done", error: "", status: { ...well.status }, journal: 4 }),
      [
        "(refused) job newer-2 (step 0) ended done, exit 0, not failed with exit 2",
        "(refused) job newer-2 (step 0): its error does not give the workers' refusals: \"\"",
        "(refused) job newer-2 (step 0): 4 journal lines, something of it was run",
        "(refused) job newer-2 (step 0): status shows {\"state\":\"failed\",\"exitCode\":2,\"error\":" +
        `${JSON.stringify(error)}}, wait ended {"state":"done","exitCode":0,"error":""}`
      ]
    )
    // Failed, but for another reason; `status` still saying it is queued.
    assert.deepStrictEqual(
      check({ ...well, error: "job newer-2 has no source file", status: { ...well.status, state: "queued" } }).map((
        l
      ) => l.slice(0, 60)),
      [
        "(refused) job newer-2 (step 0): its error does not give the ",
        "(refused) job newer-2 (step 0): status shows {\"state\":\"queue"
      ]
    )
    // Never ended: lost.
    assert.deepStrictEqual(check({ ...well, code: null as unknown as number, state: undefined as unknown as string }), [
      "(lost) job newer-2 (step 0) never ended: wait did not return"
    ])
  })

  it("a worker or command that died of an uncaught error or a defect is a crash; one that stopped as documented is not", () => {
    // What a worker printed in the CI run of stop 44 (abridged).
    const uncaught = [
      "worker w-lose: budget 4/2s, 2 jobs at once",
      "worker w-lose: job j-part0001 (chunk customers) lease 1",
      "node:events:502",
      "      throw er; // Unhandled 'error' event",
      "error: terminating connection due to administrator command",
      "",
      "Node.js v20.20.2",
      ""
    ].join("\n")
    const defect = "worker w1 ready\nfsm-bulk: unexpected failure\nError: boom\n"
    const stopped = [
      "worker w-lose: its hold on --egress-id w-lose was lost: stopping; 2 part(s) handed back",
      "fsm-bulk: the fleet store cannot be used: Node.js v20 is not the point here",
      ""
    ].join("\n")
    const found = crashes([
      { name: "worker w0", text: uncaught },
      { name: "worker w1", text: defect },
      { name: "worker w2", text: stopped }
    ])
    assert.deepStrictEqual(found.map((l) => l.split("\n", 1)[0]), [
      "(crash) worker w0 died of an uncaught error:",
      "(crash) worker w1 died of an uncaught error:"
    ])
    assert.include(found[0], "terminating connection due to administrator command")
    assert.include(found[0], "Node.js v20.20.2")
    assert.deepStrictEqual(crashes([{ name: "worker w2", text: stopped }]), [])
  })
})
