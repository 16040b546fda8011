/**
 * `submit onboard` with the answers of its staging and publishing steps lost after the store committed them (issue 29,
 * round 2), on each backend with the real servers and the built CLI: `FSM_FLEET_DEBUG_LOSE_ANSWER` with `OP*` loses the
 * first answer of every call of the staging job, each piece of each file (pieces of 256 bytes), the heartbeat's
 * touches, the publishing step and the queued mark, so each is asked again after it was stored. A customer's pt-BR
 * input: a workbook (sheets `Segmentos`, `Clientes`) or a directory of Windows-1252 CSV files (`;`, CRLF), Portuguese
 * headers read through `--map` profiles. What must hold: one job, stored once, queued; its input files byte for byte
 * the user's; nothing left staged; run by a worker, one record per key.
 *
 * The submit (what it says of each lost answer is asserted) and the worker are spawned; the `wait` for the job's end
 * runs in the test's process (./in-process.ts `waitAs`): a spawned command costs about a second of CPU.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { waitAs } from "./in-process.js"
import {
  acmeFleet,
  availableBackends,
  lastJson,
  runCliWithin,
  stagedSubmissions,
  startFleetBackend,
  startWorker,
  withStore
} from "./support.js"
import { customerCsvDirectory, customerWorkbook } from "./workbook.js"

const customers = 40

/** Each operation of a staged submission, every call's first answer lost. */
const lost = ["stageJob", "stageFile", "touchStaging", "publishJobs", "markQueued"]

/** The two kinds of input: its path, `--map` arguments, and the files the store must keep (`source/NAME`: bytes). */
const inputs = [
  {
    kind: "workbook",
    make: (dir: string) =>
      Effect.map(customerWorkbook(dir, customers), (w) => ({
        input: w.file,
        maps: w.maps,
        files: { "source/cadastro.xlsx": readFileSync(w.file) } as Record<string, Buffer>
      }))
  },
  {
    kind: "directory of CSV files",
    make: (dir: string) =>
      Effect.sync(() => {
        const d = customerCsvDirectory(dir, customers)
        return {
          input: d.input,
          maps: d.maps,
          files: Object.fromEntries(Object.entries(d.files).map(([name, bytes]) => [`source/cadastro/${name}`, bytes]))
        }
      })
  }
]

const cases = availableBackends.flatMap((b) => inputs.map((i) => ({ ...b, ...i })))

describe("submit onboard with the answers of its store steps lost (issue 29)", () => {
  it.scopedLive.each(cases)(
    "a $kind is stored once, byte for byte, and run once per key ($backend)",
    (c) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(c.backend)
        const { dir, env, sandbox } = yield* acmeFleet(url, { env: { FSM_FLEET_LEASE_MS: "3000" } })
        const input = yield* c.make(dir)
        const submitted = yield* Effect.promise(() =>
          runCliWithin(["submit", "onboard", input.input, ...input.maps, "--account", "acme", "--json"], {
            ...env,
            FSM_FLEET_STAGE_BYTES: "256",
            FSM_FLEET_DEBUG_LOSE_ANSWER: lost.map((op) => `${op}*`).join(",")
          }, 180_000)
        )
        assert.strictEqual(submitted.code, 0, `${submitted.stdout}\n${submitted.stderr}`)
        for (const op of ["stageJob", "stageFile", "publishJobs", "markQueued"]) {
          assert.include(submitted.stderr, `the answer of ${op} was lost`, `${op}'s answer was lost`)
        }
        const pieces = submitted.stderr.split("the answer of stageFile was lost").length - 1
        const bytes = Object.values(input.files).reduce((n, b) => n + b.length, 0)
        assert.isAtLeast(pieces, Math.ceil(bytes / 256), "every piece's answer was lost once")
        const job = lastJson(submitted.stdout).job as string

        const stored = yield* withStore(url, (store) =>
          Effect.gen(function*() {
            const jobs = yield* store.recentJobs(100)
            const parts = yield* store.parts(job)
            const files = yield* store.files(job, "source/")
            return { jobs: jobs.map((j) => [j.id, j.kind, j.state]), parts: parts.length, files }
          })).pipe(Effect.orDie)
        assert.deepStrictEqual(stored.jobs, [[job, "onboard", "queued"]], "one job, stored once, queued")
        assert.strictEqual(stored.parts, 0)
        assert.deepStrictEqual(stored.files.map((f) => f.name), Object.keys(input.files).sort())
        for (const f of stored.files) {
          assert.isTrue(f.content.equals(input.files[f.name]!), `${f.name}: the user's bytes, byte for byte`)
        }
        assert.deepStrictEqual(yield* stagedSubmissions(url), [], "nothing left staged")

        const worker = yield* startWorker(["--egress-id", "w-answers", "--rate", "1000/1s"], env)
        const waited = yield* waitAs(env, job, 180_000)
        assert.strictEqual(waited.code, 0, `${JSON.stringify(waited)}\n${worker.stderr()}`)
        const records = yield* sandbox.control.records("acme-key", "customers")
        assert.deepStrictEqual(
          records.map((r) => r.externalId).sort(),
          Array.from({ length: customers }, (_, i) => `C-${i + 1}`).sort(),
          "one record per key"
        )
        assert.isTrue(
          records.some((r) => JSON.stringify(r).includes("Padaria São João 7")),
          `the accents reached the server: ${JSON.stringify(records[6])}`
        )
        assert.deepStrictEqual(
          (yield* sandbox.control.records("acme-key", "segments")).map((r) => r.description).sort(),
          ["Atacado", "Varejo"]
        )
      }),
    { timeout: 360_000 }
  )
})
