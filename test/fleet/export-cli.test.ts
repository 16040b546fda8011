/**
 * `submit export` end to end, spawned as users run it, against a throwaway PostgreSQL and the real sandbox: bad
 * names, dates and flags are refused before anything is queued (exit 2); a worker runs the export and `fetch`
 * writes the export directory that `verify` passes; a worker killed mid-export is taken over, the export is run
 * again from scratch, and what `fetch` writes is that one run's files.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { customersFile, startDrillSandbox, tempDir } from "../drills/support.js"
import { importInto } from "../import/support.js"
import { fleetEnv, initFleet, lastJson, query, runCli, startPostgres, startWorker } from "./support.js"

/**
 * A fleet with account `acme` holding 30 customers, imported in process (the set-up, not the point: a spawned
 * `import` cost a CLI start per test).
 */
const fleetWithCustomers = (leaseMs: number) =>
  Effect.gen(function*() {
    const pgServer = yield* startPostgres
    const sandbox = yield* startDrillSandbox({ rate: { limit: 10_000, windowMs: 1_000 } })
    const dir = yield* tempDir
    const env = fleetEnv(pgServer.url, { FSM_FLEET_LEASE_MS: String(leaseMs) })
    const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
      Effect.promise(() => runCli(args, { ...env, ...extra }))
    const acme = sandbox.accounts[0]!
    yield* initFleet(pgServer.url, [{ name: "acme", baseUrl: sandbox.url, ...acme }])
    const input = customersFile(dir, "clientes.csv", 30, [])
    const imported = yield* importInto(sandbox, {
      resource: "customers",
      file: input.file,
      runDir: Path.join(dir, "seed")
    }, acme.apiKey)
    assert.strictEqual(imported.exitCode, 0)
    assert.strictEqual((yield* sandbox.control.records(acme.apiKey, "customers")).length, 30)
    return { pgServer, sandbox, dir, env, run }
  })

describe("fleet: submit export", () => {
  it.scopedLive(
    "checked before queueing, run by a worker, fetched as an export directory that verify passes",
    () =>
      Effect.gen(function*() {
        const { dir, env, pgServer, run } = yield* fleetWithCustomers(30_000)

        const unknown = yield* run(["submit", "export", "clientes", "--account", "acme"])
        assert.strictEqual(unknown.code, 2, unknown.stderr)
        assert.include(unknown.stderr, "clientes")
        const mixed = yield* run([
          "submit",
          "export",
          "customers",
          "--account",
          "acme",
          "--format",
          "xlsx",
          "--excel-br"
        ])
        assert.strictEqual(mixed.code, 2, mixed.stderr)
        const date = yield* run(["submit", "export", "tickets", "--account", "acme", "--since", "2025-13-01"])
        assert.strictEqual(date.code, 2, date.stderr)
        const nobody = yield* run(["submit", "export", "customers", "--account", "nobody-here"])
        assert.strictEqual(nobody.code, 2)
        assert.include(nobody.stderr, `no account "nobody-here"`)
        assert.deepStrictEqual(
          yield* Effect.promise(() => query(pgServer.url, "SELECT count(*)::int AS n FROM fsm_bulk.jobs")),
          [{ n: 0 }]
        )

        const submitted = yield* run(["submit", "export", "customers", "--account", "acme", "--excel-br", "--json"])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string
        assert.match(job, /^[0-9a-f-]{36}$/)

        const worker = yield* startWorker(["--egress-id", "w11", "--source-address", "127.0.0.11"], env)
        const waited = yield* run(["wait", job, "--json"])
        assert.strictEqual(waited.code, 0, `${waited.stdout}\n${waited.stderr}\n${worker.stderr()}`)
        assert.strictEqual(lastJson(waited.stdout).state, "done")
        assert.strictEqual(lastJson(waited.stdout).rows, 30)

        const out = Path.join(dir, "fetched")
        const fetched = yield* run(["fetch", job, "--out", out])
        assert.strictEqual(fetched.code, 0, fetched.stderr)
        const manifest = JSON.parse(readFileSync(Path.join(out, "manifest.json"), "utf8"))
        assert.deepStrictEqual(manifest.csv, { delimiter: ";", decimal: "," })
        assert.deepStrictEqual(manifest.resources.map((r: { name: string; rows: number }) => [r.name, r.rows]), [[
          "customers",
          30
        ]])
        const verified = yield* run(["verify", out])
        assert.strictEqual(verified.code, 0, verified.stderr)
        assert.strictEqual((yield* run(["fetch", job, "--out", out])).code, 2, "fetch never overwrites")
      }),
    { timeout: 300_000 }
  )

  it.scopedLive(
    "a worker killed mid-export: the next one exports again from scratch, one run's files kept",
    () =>
      Effect.gen(function*() {
        const { dir, env, run, sandbox } = yield* fleetWithCustomers(2_000)
        const submitted = yield* run(["submit", "export", "--account", "acme", "--json"])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const job = lastJson(submitted.stdout).job as string

        // A slow worker, killed after a few of the export's list calls.
        const first = yield* startWorker(
          ["--egress-id", "w12", "--source-address", "127.0.0.12", "--rate", "4/1s"],
          env
        )
        const fromFirst = Effect.map(sandbox.control.requests, (log) =>
          log.filter((e) => e.client?.replace(/^::ffff:/, "") === "127.0.0.12").length)
        const deadline = Date.now() + 60_000
        while ((yield* fromFirst) < 6) {
          assert.isBelow(Date.now(), deadline, `no requests: ${first.stderr()}`)
          yield* Effect.sleep(100)
        }
        first.child.kill("SIGKILL")
        yield* Effect.promise(() =>
          first.exit
        )

        const next = yield* startWorker(["--egress-id", "w13", "--source-address", "127.0.0.13"], env)
        const waited = yield* run(["wait", job])
        assert.strictEqual(waited.code, 0, `${waited.stderr}\n${next.stderr()}`)
        const out = Path.join(dir, "fetched")
        assert.strictEqual((yield* run(["fetch", job, "--out", out])).code, 0)
        const verified = yield* run(["verify", out, "--json"])
        assert.strictEqual(verified.code, 0, verified.stdout)
        const manifest = JSON.parse(readFileSync(Path.join(out, "manifest.json"), "utf8"))
        // Every file fetched is one the manifest lists (or its fingerprints): nothing of the killed run's.
        const listed = new Set<string>(["manifest.json"])
        for (const r of manifest.resources as Array<{ file: string; fingerprints?: string }>) {
          listed.add(r.file)
          if (r.fingerprints !== undefined) listed.add(r.fingerprints)
        }
        assert.deepStrictEqual(readdirSync(out).filter((f) => !listed.has(f)), [])
        assert.strictEqual(
          manifest.resources.find((r: { name: string }) => r.name === "customers").rows,
          30
        )
      }),
    { timeout: 300_000 }
  )
})
