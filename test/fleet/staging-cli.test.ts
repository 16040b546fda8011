/**
 * A staged `submit` (issue 29: the file and its parts stored in batches while the file is split, then published in
 * one step), on each backend with the real servers and the built CLI:
 *
 * - a Windows-1252 file with `;`, accents and CRLF stored in pieces of 700 bytes, the answers of one piece and of one
 *   batch of parts lost after the store had them (`FSM_FLEET_DEBUG_LOSE_ANSWER`, so each is asked again): one job,
 *   each part stored once with one file, the stored source byte for byte the user's file, and the job run from it
 *   (one record per row) is fetched with that same file;
 * - `cancel` of a submission still being stored (left so by a submit killed while staging) is refused, exit 2, and
 *   the submission stays staged, so that the reclaim still removes it (it marked it cancelled: the reclaim never
 *   removed it, nor its files).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { customersFile } from "../drills/support.js"
import {
  acmeFleet,
  availableBackends,
  lastJson,
  query,
  runCliWithin,
  startFleetBackend,
  startWorker,
  withStore
} from "./support.js"

const each = it.scopedLive.each(availableBackends)

/** The state of every job record in the store, staged ones included, by id. */
const jobStates = (url: string) =>
  Effect.promise(async (): Promise<Record<string, string>> => {
    if (url.startsWith("redis")) {
      const client = new Redis(url)
      try {
        const keys = (await client.keys("fsm-bulk:job:*")).filter((k) => k.split(":").length === 3)
        const states = await Promise.all(
          keys.map(async (k) => [k.split(":")[2]!, (await client.hget(k, "state")) ?? "none"])
        )
        return Object.fromEntries(states)
      } finally {
        await client.quit()
      }
    }
    const rows = (await query(url, `SELECT id, state FROM fsm_bulk.jobs`)) as Array<{ id: string; state: string }>
    return Object.fromEntries(rows.map((r) => [r.id, r.state]))
  })

/** The pieces of staged files left in the store (PostgreSQL: rows of `file_pieces`; Redis: `JOB:staged…` keys). */
const stagedPieces = (url: string) =>
  Effect.promise(async (): Promise<number> => {
    if (url.startsWith("redis")) {
      const client = new Redis(url)
      try {
        return (await client.keys("fsm-bulk:job:*:staged*")).length
      } finally {
        await client.quit()
      }
    }
    return Number(((await query(url, `SELECT count(*) AS n FROM fsm_bulk.file_pieces`)) as Array<{ n: string }>)[0]!.n)
  })

describe("a staged submit (issue 29)", () => {
  each(
    "stored in pieces with answers lost: stored once, the same bytes, run and fetched with them ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(b.backend)
        const { account, dir, env, run, sandbox } = yield* acmeFleet(url, { env: { FSM_FLEET_LEASE_MS: "3000" } })
        // 60 rows as a Brazilian implementer's export: `;`, accents, CRLF, Windows-1252 (about 3.4 KB: 5 pieces).
        const input = customersFile(dir, "plain.csv", 60)
        const text = readFileSync(input.file, "utf8").trimEnd().split("\n")
          .map((line, i) =>
            i === 0 ? line.replaceAll(",", ";") : line.replaceAll(",", ";").replace("Cliente", "Ação São João")
          )
          .join("\r\n") + "\r\n"
        const bytes = Buffer.from(text, "latin1")
        const file = Path.join(dir, "clientes.csv")
        writeFileSync(file, bytes)

        const submitted = yield* run(
          ["submit", "import", "customers", file, "--account", "acme", "--chunk-rows", "20", "--json"],
          { FSM_FLEET_STAGE_BYTES: "700", FSM_FLEET_DEBUG_LOSE_ANSWER: "stageFile,stageParts" }
        )
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        assert.include(submitted.stderr, "the answer of stageFile was lost", "a piece's answer was lost")
        assert.include(submitted.stderr, "the answer of stageParts was lost", "a batch's answer was lost")
        const job = lastJson(submitted.stdout).job as string
        assert.strictEqual(lastJson(submitted.stdout).chunks, 3)

        const stored = yield* withStore(url, (store) =>
          Effect.gen(function*() {
            const parts = yield* store.parts(job)
            const files = yield* Effect.forEach([job, ...parts.map((p) => p.id)], (id) => store.files(id, "source/"))
            return { parts: parts.map((p) => p.state), files }
          }))
        assert.deepStrictEqual(stored.parts, ["queued", "queued", "queued"], "three parts, once each")
        assert.deepStrictEqual(stored.files.map((f) => f.length), [1, 1, 1, 1], "one source file each")
        assert.strictEqual(stored.files[0]![0]!.name, "source/clientes.csv")
        assert.isTrue(
          Buffer.from(stored.files[0]![0]!.content).equals(bytes),
          "the stored file is the user's, byte for byte"
        )
        assert.deepStrictEqual(Object.values(yield* jobStates(url)).sort(), ["queued", "queued", "queued", "queued"])
        assert.strictEqual(yield* stagedPieces(url), 0, "the pieces were joined into the file")

        const worker = yield* startWorker(["--egress-id", "w-staged"], env)
        const waited = yield* Effect.promise(() => runCliWithin(["wait", job, "--json"], env, 120_000))
        assert.strictEqual(waited.code, 0, `${waited.stdout}\n${waited.stderr}\n${worker.stderr()}`)
        const records = yield* sandbox.control.records(account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId).sort(), [...input.valid].sort(), "one record per row")
        assert.isTrue(
          records.some((r) => JSON.stringify(r).includes("\"Ação São João 7\"")),
          `the accents reached the server: ${JSON.stringify(records[6])}`
        )
        const out = Path.join(dir, "fetched")
        const fetched = yield* run(["fetch", job, "--out", out])
        assert.strictEqual(fetched.code, 0, fetched.stderr)
        assert.isTrue(readFileSync(Path.join(out, "source", "clientes.csv")).equals(bytes), "fetched byte for byte")
      }),
    { timeout: 240_000 }
  )

  each(
    "cancel of a submission still being stored is refused, and the reclaim still removes it ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(b.backend)
        const { dir, run } = yield* acmeFleet(url)
        const input = customersFile(dir, "clientes.csv", 30)
        const killed = yield* run(
          ["submit", "import", "customers", input.file, "--account", "acme", "--chunk-rows", "2", "--json"],
          { FSM_FLEET_STAGE_BYTES: "1", FSM_FLEET_DEBUG_KILL_WHILE_STAGING: "1" }
        )
        assert.strictEqual(killed.code, null, `the submit was killed while staging: ${killed.stdout}\n${killed.stderr}`)
        const staged = yield* jobStates(url)
        const parent = Object.keys(staged).find((id) => !id.includes("-part"))
        const part = Object.keys(staged).find((id) => id.includes("-part"))
        assert.isDefined(parent, JSON.stringify(staged))
        assert.isDefined(part, JSON.stringify(staged))

        for (const id of [parent!, part!]) {
          const cancelled = yield* run(["cancel", id, "--json"])
          assert.strictEqual(cancelled.code, 2, `${cancelled.stdout}\n${cancelled.stderr}`)
          assert.include(cancelled.stderr, `${id} is not a job: a submission still being stored by \`submit\``)
        }
        assert.deepStrictEqual(yield* jobStates(url), staged, "nothing changed: still staged")
        assert.isAbove(yield* stagedPieces(url), 0, "its source file was staged before its parts")
        const reclaimed = yield* withStore(url, (store) => store.reclaimStaging(0))
        assert.strictEqual(reclaimed, 1, "the reclaim removes it")
        assert.deepStrictEqual(yield* jobStates(url), {})
        assert.strictEqual(yield* stagedPieces(url), 0, "its file's pieces removed with it")
      }),
    { timeout: 240_000 }
  )
})
