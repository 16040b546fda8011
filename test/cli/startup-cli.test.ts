/**
 * Start-up stays light: every spawned command pays for what the CLI loads before it runs, so `--version`, `--help`
 * and `validate` of a small file must not load the heavy modules only some commands need (exceljs, pg, ioredis,
 * bullmq, the sandbox's server). The modules are recorded by a `--import` hook (a resolve hook for ES modules and
 * a wrapper of `Module._load` for CommonJS) that appends each resolved name to a file, so this is evidence of what
 * was loaded, not a timing. docs/benchmarks.md has the start-up figures.
 *
 * It is also the guard of the bundle (scripts/bundle.mjs, docs/development.md "The build"): the shipped
 * dist/bin.js loads our modules and the Effect packages from itself and its chunks (dist/bin-*.js), never from
 * tsc's dist/**.js or from node_modules, and fast-check (which effect/Schema imports for its arbitraries) is not
 * in what it loads. What a chunk holds is read from its source map (`sources`: src/… and node_modules/…).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { inSourcePositions } from "../../src/cli/SourcePositions.js"
import { ended, submitCustomers } from "../fleet/in-process.js"
import { acmeFleet, availableBackends, eventually, fleetEnv, startFleetBackend, startWorker } from "../fleet/support.js"
import { bin, startTestSandbox } from "../import/support.js"
import { spawned } from "../spawned.js"
import { bundleFiles } from "./support.js"

/** Packages that only some commands use: loaded on demand, never at start-up. */
const heavyPackages = ["exceljs", "pg", "ioredis", "bullmq"]

/**
 * Packages no command uses, which reach the bundle only through an index's namespace (`import { Args } from
 * "@effect/cli"` keeps all of Args, with its YAML/TOML/INI file parsers; eslint.config.mjs forbids such imports).
 */
const unusedPackages = ["fast-check", "yaml", "toml", "ini"]

const hooks = `import { appendFileSync } from "node:fs"
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(process.env.LOADED_OUT, resolved.url + "\\n")
  return resolved
}
`
const recorder = (hooksUrl: string) =>
  `import { register, createRequire } from "node:module"
import { appendFileSync } from "node:fs"
register(${JSON.stringify(hooksUrl)})
const Module = createRequire(import.meta.url)("node:module")
const load = Module._load
Module._load = function (request, parent, isMain) {
  const loaded = load.apply(this, arguments)
  try { appendFileSync(process.env.LOADED_OUT, Module._resolveFilename(request, parent, isMain) + "\\n") } catch {}
  return loaded
}
`

/** The command line and environment of the built CLI run with the recorder, and the file it records into. */
const recorded = (dir: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  const out = Path.join(dir, `loaded-${args.join("-").replace(/\W/g, "")}.txt`)
  writeFileSync(out, "")
  return {
    argv: ["--import", pathToFileURL(Path.join(dir, "recorder.mjs")).href, bin, ...args],
    options: { cwd: dir, env: { ...env, LOADED_OUT: out, NO_COLOR: "1" } },
    /** The resolved file names of every module the run loaded. */
    names: () => [...new Set(readFileSync(out, "utf8").split("\n").filter((l) => l !== ""))]
  }
}

/** Runs the built CLI with the recorder; its exit code and the resolved file names of every module it loaded. */
const loadedBy = (dir: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) =>
  Effect.suspend(() => {
    const r = recorded(dir, args, env)
    return spawned(process.execPath, r.argv, r.options).pipe(
      Effect.map((run) => ({ status: run.status, stdout: run.stdout, stderr: run.stderr, names: r.names() }))
    )
  })

/**
 * `loadedBy` without blocking this process: for a command that talks to a server this process runs (the test's
 * sandbox answers only while the test's event loop turns; a spawnSync would hold it until the command gave up).
 */
const loadedByAsync = (dir: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  Effect.async<{ status: number | null; stderr: string; names: ReadonlyArray<string> }>((resume) => {
    const r = recorded(dir, args, env)
    const child = spawn(process.execPath, r.argv, { ...r.options, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.on("close", (status) => resume(Effect.succeed({ status, stderr, names: r.names() })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const packageOf = (name: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(name)?.[1]

/** Packages the bundle holds: loading one of them from node_modules means dist/bin.js is not the bundle. */
const bundledPackages = ["effect", "@effect/cli", "@effect/platform", "@effect/platform-node", "csv-parse", "yauzl"]

const heavyIn = (names: ReadonlyArray<string>) => {
  const sources = bundleFiles(names).flatMap((b) => b.sources)
  return [
    ...new Set([
      ...[...names, ...sources].flatMap((n) => {
        const pkg = packageOf(n)
        return pkg !== undefined && [...heavyPackages, ...unusedPackages].includes(pkg) ? [pkg] : []
      }),
      // the sandbox's command module is light; its server (routes, store, seed) loads only when it runs
      ...sources.flatMap((n) => {
        const sandbox = /\/src\/sandbox\/(\w+)\.ts$/.exec(n)
        return sandbox !== null && sandbox[1] !== "Command" ? [`src/sandbox/${sandbox[1]}.ts`] : []
      })
    ])
  ]
}

/**
 * The commands' implementations a run loaded (`src/<dir>/Handlers.ts`, the main module of each pipeline, the HTTP
 * client, the sandbox's server): each is loaded by `import()` when its command runs (src/cli/Lazy.ts), never by the
 * command tree every command builds.
 */
const mainModule =
  /\/(src\/(?:import\/(?:Pipeline|ValidateRun)|export\/Export|fleet\/Queue|onboard\/Onboard|undo\/Undo|client\/HttpAdapter)\.ts)$/
/** What `validate` and `import` load of it: the import's implementation (with the client and signing), nothing else. */
const importImplementation = [
  "src/client/HttpAdapter.ts",
  "src/evidence/Handlers.ts",
  "src/import/Handlers.ts",
  "src/import/Pipeline.ts",
  "src/import/ValidateRun.ts",
  "src/undo/Undo.ts"
]

const implementationsIn = (names: ReadonlyArray<string>) =>
  [
    ...new Set(
      bundleFiles(names).flatMap((b) => b.sources).flatMap((n) => {
        const handlers = /\/src\/(\w+)\/(\w*Handlers)\.ts$/.exec(n)
        if (handlers !== null) return [`src/${handlers[1]}/${handlers[2]}.ts`]
        const main = mainModule.exec(n)
        if (main !== null) return [main[1]!]
        return /\/src\/sandbox\/(Sandbox|Routes)\.ts$/.test(n) ? ["the sandbox"] : []
      })
    )
  ].sort()

/** The fleet's packages, bundled in chunks of their own (scripts/bundle.mjs): loaded by the fleet's commands only. */
const fleetPackages = ["pg", "ioredis", "bullmq"]

/** The fleet's packages a run loaded from node_modules instead of the bundle's chunks. */
const fleetUnbundledIn = (names: ReadonlyArray<string>) => [
  ...new Set(names.flatMap((n) => {
    const pkg = packageOf(n)
    return pkg !== undefined && fleetPackages.includes(pkg) ? [`node_modules/${pkg}`] : []
  }))
]

/** What says the CLI ran unbundled: our modules from tsc's dist/**.js, a bundled package from node_modules. */
const unbundledIn = (names: ReadonlyArray<string>) => [
  ...new Set(
    names.flatMap((n) => {
      const pkg = packageOf(n)
      if (pkg !== undefined) return bundledPackages.includes(pkg) ? [`node_modules/${pkg}`] : []
      const ours = /\/dist\/(.+\.js)$/.exec(n)
      return ours !== null && !/^bin(-[\w-]+)?\.js$/.test(ours[1]!) ? [`dist/${ours[1]}`] : []
    })
  )
]

describe("start-up", () => {
  it("--version, --help and validate of a 3-row file run from the bundle and load none of the heavy modules", {
    timeout: 120_000
  }, () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(Path.join(tmpdir(), "fsm-startup-"))
      try {
        writeFileSync(Path.join(dir, "hooks.mjs"), hooks)
        writeFileSync(Path.join(dir, "recorder.mjs"), recorder(pathToFileURL(Path.join(dir, "hooks.mjs")).href))
        // a file like the users': Windows-1252, `;`, a Portuguese header
        writeFileSync(Path.join(dir, "segmentos.csv"), Buffer.from("Descri\xe7\xe3o;\nAlfa;\nBeta;\nGama;\n", "latin1"))
        const own: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<string>]> = [
          [["--version"], []],
          [["--help"], []],
          [["validate", "segments", "segmentos.csv"], importImplementation]
        ]
        for (const [args, implementations] of own) {
          const run = yield* loadedBy(dir, args)
          assert.strictEqual(run.status, 0, `${args.join(" ")}: ${run.stderr}`)
          // the recorder saw the bundle, and the bundle holds our modules and effect's: an empty list below is evidence
          const sources = bundleFiles(run.names).flatMap((b) => b.sources)
          assert.isTrue(
            run.names.some((n) => n.endsWith("/dist/bin.js")),
            `${args.join(" ")}: the recorder saw nothing`
          )
          assert.deepStrictEqual(unbundledIn(run.names), [], `${args.join(" ")}: dist/bin.js is not the bundle`)
          assert.isTrue(
            sources.some((n) => n.endsWith("/src/Cli.ts")),
            `${args.join(" ")}: no src/Cli.ts in the bundle`
          )
          assert.isTrue(
            sources.some((n) => packageOf(n) === "effect"),
            `${args.join(" ")}: no effect module in the bundle`
          )
          assert.deepStrictEqual(heavyIn(run.names), [], `${args.join(" ")} loaded modules it does not use`)
          assert.deepStrictEqual(
            implementationsIn(run.names),
            implementations,
            `${args.join(" ")} loaded other commands' implementations`
          )
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }).pipe(Effect.runPromise))

  // A fleet command loads its backend's package only, and the queue engine only where it queues: on PostgreSQL,
  // `accounts add`, `accounts list`, `status` and `wait` load pg and neither bullmq nor ioredis; on Redis, ioredis
  // and neither bullmq nor pg. And the fleet's packages come from the bundle's chunks, never module by module from
  // node_modules (also for `submit`, which loads bullmq: its chunk holds what bullmq requires, ioredis and pg, loaded
  // with it but not run, which the source maps cannot tell; so only where they come from is checked there).
  it.scopedLive.each(availableBackends)(
    "fleet commands load their backend's package only, from the bundle ($backend)",
    (b) =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(b.backend)
        const dir = mkdtempSync(Path.join(tmpdir(), "fsm-startup-fleet-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        writeFileSync(Path.join(dir, "hooks.mjs"), hooks)
        writeFileSync(Path.join(dir, "recorder.mjs"), recorder(pathToFileURL(Path.join(dir, "hooks.mjs")).href))
        writeFileSync(Path.join(dir, "segmentos.csv"), Buffer.from("Descri\xe7\xe3o;\nAlfa;\nBeta;\nGama;\n", "latin1"))
        const env = fleetEnv(url, { FSM_API_KEY: "chave", FSM_API_TOKEN: "segredo" })
        const own = b.backend === "postgres" ? "pg" : "ioredis"
        const run = (args: ReadonlyArray<string>, code = 0) =>
          Effect.gen(function*() {
            const ran = yield* loadedBy(dir, args, env)
            assert.strictEqual(ran.status, code, `${args.join(" ")}: ${ran.stderr}`)
            assert.isTrue(
              ran.names.some((n) => n.endsWith("/dist/bin.js")),
              `${args.join(" ")}: the recorder saw nothing`
            )
            assert.deepStrictEqual(
              fleetUnbundledIn(ran.names),
              [],
              `${args.join(" ")}: a fleet package not from the bundle`
            )
            return ran
          })
        yield* run(["fleet", "init"])
        // each loads its own handlers' module: `accounts` fleet/Handlers.ts (with the client's settings, for the
        // credentials `add` reads), `status` and `wait` fleet/JobHandlers.ts and the queue's settings, and neither
        // the import pipeline nor the client (fleet/SubmitHandlers.ts and the worker have them)
        const handlersIn = (names: ReadonlyArray<string>) =>
          implementationsIn(names).filter((m) => m.endsWith("Handlers.ts") || m === "the sandbox")
        for (const args of [["accounts", "add", "acme", "--base-url", "http://127.0.0.1:9/v2"], ["accounts", "list"]]) {
          const ran = yield* run(args)
          assert.deepStrictEqual(heavyIn(ran.names), [own], `${args.join(" ")} loaded packages it does not use`)
          assert.deepStrictEqual(
            handlersIn(ran.names),
            ["src/fleet/Handlers.ts"],
            `${args.join(" ")} loaded other commands' implementations`
          )
        }
        const jobHandlers = ["src/fleet/JobHandlers.ts", "src/fleet/Queue.ts"]
        const status = yield* run(["status"])
        assert.deepStrictEqual(heavyIn(status.names), [own], "status loaded packages it does not use")
        assert.deepStrictEqual(
          implementationsIn(status.names),
          jobHandlers,
          "status loaded other commands' implementations"
        )
        // a job that has ended (cancelled), for `wait`: it exits 3 at once
        const job = (yield* run(["submit", "import", "segments", "segmentos.csv", "--account", "acme"])).stdout.trim()
        yield* run(["cancel", job])
        const waited = yield* run(["wait", job], 3)
        assert.deepStrictEqual(heavyIn(waited.names), [own], "wait loaded packages it does not use")
        assert.deepStrictEqual(
          implementationsIn(waited.names),
          jobHandlers,
          "wait loaded other commands' implementations"
        )
      }),
    { timeout: 120_000 }
  )

  // A worker loads what a job runs when the first job of its kind arrives (src/fleet/JobRunner.ts): it is ready
  // without the import pipeline, onboarding or export, and an import job loads the pipeline only. One backend is
  // enough: what it loads of the store is the test above's. The worker is recorded through NODE_OPTIONS (the
  // recorder as an `--import`), so it is spawned as the fleet's tests spawn it.
  const workerBackend = availableBackends.find((b) => b.backend === "redis") ?? availableBackends[0]
  it.scopedLive.skipIf(workerBackend === undefined)(
    "a fleet worker is ready without the import pipeline, onboarding or export; its first import loads the pipeline",
    () =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(workerBackend!.backend)
        const fleet = yield* acmeFleet(url)
        writeFileSync(Path.join(fleet.dir, "hooks.mjs"), hooks)
        writeFileSync(
          Path.join(fleet.dir, "recorder.mjs"),
          recorder(pathToFileURL(Path.join(fleet.dir, "hooks.mjs")).href)
        )
        const out = Path.join(fleet.dir, "loaded-worker.txt")
        writeFileSync(out, "")
        const names = () => [...new Set(readFileSync(out, "utf8").split("\n").filter((l) => l !== ""))]
        const worker = yield* startWorker(["--egress-id", "w-startup"], {
          ...fleet.env,
          NODE_OPTIONS: `--import ${pathToFileURL(Path.join(fleet.dir, "recorder.mjs")).href}`,
          LOADED_OUT: out
        })
        yield* eventually("the worker is ready", () => / ready/.test(worker.stderr()), 60_000, worker.stderr)
        const atReady = names()
        assert.isTrue(atReady.some((n) => n.endsWith("/dist/bin.js")), "the recorder saw nothing")
        // the worker's own modules and the client its jobs share are there: an empty list of the others is evidence
        assert.deepStrictEqual(
          implementationsIn(atReady),
          ["src/client/HttpAdapter.ts", "src/fleet/Handlers.ts", "src/fleet/Queue.ts"],
          "the worker loaded what no job has asked for yet"
        )
        // a file like the users': Windows-1252, `;`, Portuguese headers, a decimal comma
        const rows = Array.from({ length: 3 }, (_, i) => `C-${i};Padaria S\xe3o Jo\xe3o ${i};-23,56${i}7`)
        const file = Path.join(fleet.dir, "clientes.csv")
        writeFileSync(file, Buffer.from(["C\xf3digo;Nome;latitude", ...rows, ""].join("\r\n"), "latin1"))
        const job = yield* submitCustomers(url, file, "acme")
        const row = yield* ended(url, job, 60_000, worker.stderr)
        assert.deepStrictEqual([row.state, row.exit_code], ["done", 0], worker.stderr())
        const stored = yield* fleet.sandbox.control.records(fleet.account.apiKey, "customers")
        assert.deepStrictEqual(
          stored.filter((c) => c["externalId"] === "C-2").map((c) => c["description"]),
          ["Padaria S\u00e3o Jo\u00e3o 2"]
        )
        assert.deepStrictEqual(
          implementationsIn(names()),
          ["src/client/HttpAdapter.ts", "src/fleet/Handlers.ts", "src/fleet/Queue.ts", "src/import/Pipeline.ts"],
          "an import job loaded more than the import pipeline"
        )
        worker.child.kill("SIGTERM")
        assert.strictEqual(yield* Effect.promise(() => worker.exit), 0, worker.stderr())
      }),
    { timeout: 120_000 }
  )

  // What a worker loads when a job arrives must still be there: fsm-bulk reinstalled under a running worker (npm
  // replaces dist/, and the chunks' names change with their content) leaves it without the code of the jobs it has
  // not run yet. Such a worker stops (exit 2, saying why) and hands the job back: nothing is wrong with the job (a
  // refusal would end it failed when it was the only worker), and the worker restarted runs it. A copy of the
  // build (its files, package.json and node_modules beside them, as installed) loses the import job's chunk after
  // the worker is ready.
  it.scopedLive.skipIf(workerBackend === undefined)(
    "a worker whose import code is gone by its first import job stops (exit 2) and hands the job back for its restart",
    () =>
      Effect.gen(function*() {
        const { url } = yield* startFleetBackend(workerBackend!.backend)
        const fleet = yield* acmeFleet(url)
        const installed = Path.join(fleet.dir, "installed")
        const built = Path.dirname(bin)
        mkdirSync(Path.join(installed, "dist"), { recursive: true })
        for (const f of readdirSync(built).filter((f) => /^bin(-[\w-]+)?\.js$/.test(f))) {
          copyFileSync(Path.join(built, f), Path.join(installed, "dist", f))
        }
        copyFileSync(Path.join(built, "..", "package.json"), Path.join(installed, "package.json"))
        symlinkSync(Path.join(built, "..", "node_modules"), Path.join(installed, "node_modules"))
        const worker = yield* Effect.acquireRelease(
          Effect.sync(() => {
            const child = spawn(process.execPath, [
              Path.join(installed, "dist", "bin.js"),
              "worker",
              "--egress-id",
              "w1"
            ], {
              env: fleet.env,
              stdio: ["ignore", "ignore", "pipe"]
            })
            let stderr = ""
            child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
            const exit = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
            return { child, stderr: () => stderr, exit }
          }),
          (w) => Effect.sync(() => w.child.exitCode === null && w.child.signalCode === null && w.child.kill("SIGKILL"))
        )
        yield* eventually("the worker is ready", () => / ready/.test(worker.stderr()), 60_000, worker.stderr)
        const importChunk = readdirSync(Path.join(installed, "dist")).filter((f) => /^bin-ImportRun-\w+\.js$/.test(f))
        assert.strictEqual(importChunk.length, 1, "no chunk of its own for fleet/ImportRun.ts")
        rmSync(Path.join(installed, "dist", importChunk[0]!))
        const file = Path.join(fleet.dir, "clientes.csv")
        writeFileSync(file, Buffer.from("C\xf3digo;Nome\r\nC-1;Padaria S\xe3o Jo\xe3o\r\n", "latin1"))
        const job = yield* submitCustomers(url, file, "acme")
        assert.strictEqual(yield* Effect.promise(() => worker.exit), 2, worker.stderr())
        assert.include(worker.stderr(), "cannot load its code for import jobs")
        assert.include(worker.stderr(), "Restart the worker")
        assert.include(worker.stderr(), `job ${job} handed back: this worker cannot load`)
        assert.deepStrictEqual(yield* fleet.sandbox.control.records(fleet.account.apiKey, "customers"), [])
        // Nothing is wrong with the job: the worker restarted (from an intact install) runs it, once.
        const restarted = yield* startWorker(["--egress-id", "w1"], fleet.env)
        const row = yield* ended(url, job, 60_000, restarted.stderr)
        assert.deepStrictEqual([row.state, row.exit_code], ["done", 0], `${row.error ?? ""}\n${restarted.stderr()}`)
        const records = yield* fleet.sandbox.control.records(fleet.account.apiKey, "customers")
        assert.deepStrictEqual(records.map((r) => r.externalId), ["C-1"], "one record for the row")
      }),
    { timeout: 120_000 }
  )

  // The CLI talks HTTP through node:http's half of @effect/platform-node's client (src/cli/NodeHttp.ts): its undici
  // half, about 1 MB of bundle, is compiled and run by nothing it uses. The import runs against a sandbox of this
  // process over loopback, so it is spawned without blocking the event loop that sandbox answers on.
  it.scopedLive(
    "an import of a small pt-BR file talks HTTP through node:http and loads no undici",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = mkdtempSync(Path.join(tmpdir(), "fsm-startup-import-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        writeFileSync(Path.join(dir, "hooks.mjs"), hooks)
        writeFileSync(Path.join(dir, "recorder.mjs"), recorder(pathToFileURL(Path.join(dir, "hooks.mjs")).href))
        // a file like the users': Windows-1252, `;`, CRLF, Portuguese headers, a decimal comma
        const rows = Array.from({ length: 20 }, (_, i) => `C-${i};Padaria S\xe3o Jo\xe3o ${i};-23,56${i}`)
        writeFileSync(
          Path.join(dir, "clientes.csv"),
          Buffer.from(["C\xf3digo;Nome;latitude", ...rows, ""].join("\r\n"), "latin1")
        )
        const account = sandbox.accounts[0]!
        const run = yield* loadedByAsync(dir, ["import", "clientes", "clientes.csv", "--out", "run"], {
          ...process.env,
          FSM_BASE_URL: sandbox.url,
          FSM_API_KEY: account.apiKey,
          FSM_API_TOKEN: account.apiToken
        })
        assert.strictEqual(run.status, 0, run.stderr)
        assert.strictEqual(JSON.parse(readFileSync(Path.join(dir, "run", "summary.json"), "utf8")).counts.created, 20)
        const stored = yield* sandbox.control.records(account.apiKey, "customers")
        // read as the users' file says: Windows-1252 and `;`
        assert.deepStrictEqual(
          stored.filter((c) => c["externalId"] === "C-7").map((c) => c["description"]),
          ["Padaria S\u00e3o Jo\u00e3o 7"]
        )
        const sources = bundleFiles(run.names).flatMap((b) => b.sources)
        // evidence that the recorder saw the client: node:http's client of @effect/platform-node is in what loaded
        assert.isTrue(
          sources.some((n) => /@effect\/platform-node\/.*NodeHttpClient/.test(n)),
          "no NodeHttpClient in what the import loaded"
        )
        const undici = [...new Set([...run.names, ...sources].flatMap((n) => packageOf(n) === "undici" ? [n] : []))]
        assert.deepStrictEqual(undici.slice(0, 3), [], `the import loaded undici (${undici.length} files)`)
        assert.deepStrictEqual(heavyIn(run.names), [], "the import loaded modules it does not use")
        assert.deepStrictEqual(
          implementationsIn(run.names),
          importImplementation,
          "the import loaded other commands' implementations (or the sandbox's)"
        )
      }),
    { timeout: 120_000 }
  )

  it("an unexpected failure's stack names positions in src/, not in the bundle", () => {
    // a frame in the bundle, at the code of a known line of src/bin.ts
    const code = "jsonAsked(process.argv)"
    const at = (text: string) => {
      const lines = text.split("\n")
      const line = lines.findIndex((l) => l.includes(code))
      return { line: line + 1, column: lines[line]!.indexOf(code) + 1 }
    }
    const inBundle = at(readFileSync(bin, "utf8"))
    const inSource = at(readFileSync(Path.join(import.meta.dirname, "..", "..", "src", "bin.ts"), "utf8"))
    const binUrl = pathToFileURL(bin).href
    const stack = `Error: boom\n    at main (${binUrl}:${inBundle.line}:${inBundle.column})\n    at node:internal/x:1:2`
    const source = pathToFileURL(Path.join(import.meta.dirname, "..", "..", "src", "bin.ts")).href
    assert.strictEqual(
      inSourcePositions(stack),
      `Error: boom\n    at main (${source}:${inSource.line}:${inSource.column})\n    at node:internal/x:1:2`
    )
    // a path without file:// is mapped the same way; a file without a map beside it is left as it is
    assert.include(inSourcePositions(`at ${bin}:${inBundle.line}:${inBundle.column}`), `/src/bin.ts:${inSource.line}:`)
    assert.strictEqual(inSourcePositions("at /nowhere/x.js:1:1"), "at /nowhere/x.js:1:1")
  })
})
