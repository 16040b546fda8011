/**
 * Small fleet defects of issue 29, each as a user meets it with the built CLI: `fetch --out` onto an existing file
 * (a clear message, exit 2, the file untouched), `cancel` of a name that is not a job (on Redis, `JOB:files` named
 * the job's files), a malformed fleet address (its password never printed), and `--chunk-rows 1` on a large file
 * (at most 1,000 parts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { maxParts } from "../../src/fleet/Submit.js"
import { customersFile, startDrillSandbox, tempDir } from "../drills/support.js"
import { availableBackends, fleetEnv, initFleet, lastJson, runCli, startFleetBackend, withStore } from "./support.js"

const each = it.scopedLive.each(availableBackends)

describe("fleet defects (issue 29)", () => {
  each("fetch onto a file, cancel of what is not a job, a part cap ($backend)", (b) =>
    Effect.gen(function*() {
      const server = yield* startFleetBackend(b.backend)
      const sandbox = yield* startDrillSandbox({ accounts: [{ apiKey: "k", apiToken: "t" }] })
      const dir = yield* tempDir
      const env = fleetEnv(server.url)
      const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
        Effect.promise(() => runCli(args, { ...env, ...extra }))
      yield* initFleet(server.url, [{ name: "acme", baseUrl: sandbox.url, apiKey: "k", apiToken: "t" }])
      // --chunk-rows 1 on 1,001 rows: at most 1,000 parts (2 rows each), not 1,001.
      const input = customersFile(dir, "clientes.csv", maxParts + 1)
      const submitted = yield* run([
        "submit",
        "import",
        "customers",
        input.file,
        "--account",
        "acme",
        "--json",
        "--chunk-rows",
        "1"
      ])
      assert.strictEqual(submitted.code, 0, submitted.stderr)
      const job = lastJson(submitted.stdout).job as string
      assert.strictEqual(lastJson(submitted.stdout).chunks, Math.ceil((maxParts + 1) / 2))
      const parts = yield* withStore(server.url, (store) => store.parts(job))
      assert.strictEqual(parts.length, Math.ceil((maxParts + 1) / 2))

      // Cancel: a name that is not a job is said to be none, also when it names a job's other keys.
      for (const name of [`${job}:files`, `${job}:lease`, `${job}:parts`, "no-such-job"]) {
        const cancelled = yield* run(["cancel", name])
        assert.strictEqual(cancelled.code, 2, `${name}: ${cancelled.stdout}${cancelled.stderr}`)
        assert.include(cancelled.stderr, `no job ${name}`)
      }
      assert.strictEqual((yield* run(["cancel", job])).code, 0)

      // fetch --out onto an existing file: a clear message, exit 2, the file as it was.
      const file = Path.join(dir, "ocupado.txt")
      writeFileSync(file, "meu arquivo")
      const fetched = yield* run(["fetch", job, "--out", file])
      assert.strictEqual(fetched.code, 2, fetched.stderr)
      assert.include(fetched.stderr, "is a file, not a directory")
      assert.notInclude(fetched.stderr, "    at ")
      assert.strictEqual(readFileSync(file, "utf8"), "meu arquivo")
    }), { timeout: 180_000 })

  it.live("a malformed fleet address is refused without printing its password", () =>
    Effect.gen(function*() {
      for (const url of ["postgres://fsm:s3cr/t@db.internal:notaport/fleet", "redis://:s3cr@t@redis:port/0"]) {
        const ran = yield* Effect.promise(() => runCli(["status"], fleetEnv(url)))
        assert.strictEqual(ran.code, 2, ran.stderr)
        assert.include(ran.stderr, "is not an address")
        assert.notInclude(ran.stderr, "s3cr")
      }
    }), { timeout: 60_000 })
})
